package network

import (
	"reflect"
	"testing"
	"time"

	"github.com/lpictl/lpictl/sim/topo"
)

// smallMegaflyNM is the 5-group Megafly of sim/topo's hand calculations:
// 2 leaves, 2 spines, 2 nodes per leaf, 2 global links per spine; spine x
// of group g has global port i (switch port 2 + i) to group
// (g + 1 + i + 2x) mod 5. Switch g·4 + l is leaf l, g·4 + 2 + x spine x.
func smallMegaflyNM(t testing.TB) topo.Topology {
	tp, err := topo.Build(topo.Config{Kind: topo.KindMegafly, Groups: 5, Leaves: 2, Spines: 2, NodesPerSwitch: 2, GlobalLinks: 2})
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// nonMinParams: minimal POWAR decides at arrival and queues as the
// non-minimal paths do (routing.powar.queue), so that the two compare.
func nonMinParams(pdt time.Duration, on bool) Params {
	p := powarParams(pdt)
	p.POWAR.NonMinimal = on
	p.POWAR.Queue = true
	return p
}

// switchPortSent returns the packets sent by port p of switch s.
func switchPortSent(n *Network, s, p int) uint64 {
	var c uint64
	n.Ports(func(r *PortRow) {
		if r.Kind == "switch" && r.Device == s && r.Local == p {
			c = r.Sent
		}
	})
	return c
}

// TestPOWARMegaflyDetourAwake builds a link state by hand: after 500 µs
// every link is asleep (fixed t_PDT 100 µs, deep sleep). Two warm-up
// packets then wake the path node 0 → leaf 0 → spine 0 of group 0 → global
// to group 2 (node 0 to node 8) and the path group 2's spine 1 → global to
// group 1 → its spine 0 → leaf 0 → node 4 (node 8 to node 4). 50 µs
// later (all within t_PDT) node 0 sends to node 4. Minimal path: leaf 0,
// spine 0 of group 0, its global port 2 to group 1 (asleep), spine 1 of
// group 1, leaf 0 (that down link asleep too): 5 links and two wake-ups,
// 5 × perHop + 2 × t_w. With non-minimal candidates spine 0 takes its awake
// port 3 to group 2 (allowed: 2 > 0, group 2's spine 1 owns the links back
// to 0 and on to 1: straight on), then group 2's spine 1 its link to group
// 1, group 1's spine 0, leaf 0: 6 awake links, 6 × perHop, no wake-up.
// (First-On, so that the warm-ups take their minimal ports.)
func TestPOWARMegaflyDetourAwake(t *testing.T) {
	tp := smallMegaflyNM(t)
	const t0, t1 = 500 * us, 550 * us
	for _, c := range []struct {
		on   bool
		want int64
	}{{false, 5*perHop + 2*4480*ns}, {true, 6 * perHop}} {
		p := nonMinParams(100*time.Microsecond, c.on)
		p.POWAR.FirstOn = true
		n := build(t, tp, p)
		n.Inject(t0, 0, 8, 9600)
		n.Inject(t0, 8, 4, 9600)
		n.Inject(t1, 0, 4, 9600)
		r := run(t, n)
		if r.Packets != 3 {
			t.Fatalf("non-minimal %v: %d packets delivered", c.on, r.Packets)
		}
		if got := n.lastDelivery - t1; got != c.want {
			t.Errorf("non-minimal %v: latency %d ps, want %d", c.on, got, c.want)
		}
		// Spine 0 of group 0 (switch 2): port 2 to group 1, port 3 to group 2.
		p2, p3 := switchPortSent(n, 2, 2), switchPortSent(n, 2, 3)
		st := n.powarNonMinimal()
		if !c.on {
			if p2 != 1 || p3 != 1 || st != nil {
				t.Errorf("minimal: switch 2 sent %d on port 2, %d on port 3 (want 1, 1); stats %v", p2, p3, st)
			}
			continue
		}
		if p2 != 0 || p3 != 2 {
			t.Errorf("non-minimal: switch 2 sent %d on port 2, %d on port 3 (want 0, 2)", p2, p3)
		}
		// Decisions with non-minimal candidates: warm-up 1 at leaf 0 of
		// group 0 (minimal spine 0 asleep, chosen: sleeping); warm-up 2 at
		// leaf 0 of group 2 (spine 0 leads to group 3, allowed; minimal
		// spine 1 asleep, chosen: sleeping); the test packet at leaf 0
		// (spine 0 awake: minimal) and at spine 0 (the awake detour, one
		// extra link). Spine 0 of group 0 to group 2 and spine 1 of group 2
		// to group 1 have no allowed intermediate: no decision.
		want := POWARNonMinimal{Decisions: 4, Detours: 1, AwakeDetours: 1, Sleeping: 2, ExtraHops: 1}
		if *st != want {
			t.Errorf("non-minimal stats %+v, want %+v", *st, want)
		}
	}
}

// TestPOWARMegaflyNonMinimalLoad: uniform and tornado traffic at 100 %
// offered load on the small Megafly with non-minimal candidates: every
// packet arrives (no deadlock, nothing dropped), the run is the same
// twice, detours happen, and the ports' sends add up to the minimal run's
// plus the extra hops the detours announced (an independent count: every
// packet's path is exactly as long as announced).
func TestPOWARMegaflyNonMinimalLoad(t *testing.T) {
	tp := smallMegaflyNM(t)
	for _, pat := range []string{"uniform", "tornado"} {
		t.Run(pat, func(t *testing.T) {
			wl := synthetic(pat, 30000, 1, 30*time.Microsecond)
			res := func(on bool) (Result, uint64, *POWARNonMinimal) {
				n := build(t, tp, nonMinParams(time.Microsecond, on))
				attachConfig(t, n, wl, 3)
				r := run(t, n)
				var sent uint64
				n.Ports(func(r *PortRow) { sent += r.Sent })
				return r, sent, n.powarNonMinimal()
			}
			a, sentA, st := res(true)
			b, _, _ := res(true)
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("twice with the same seed:\n%+v\n%+v", a, b)
			}
			m, sentM, _ := res(false)
			if a.Packets == 0 || a.Packets != m.Packets || a.Messages != m.Messages || a.Dropped != 0 {
				t.Fatalf("non-minimal delivered %d packets / %d messages (%d dropped), minimal %d / %d",
					a.Packets, a.Messages, a.Dropped, m.Packets, m.Messages)
			}
			if st.Detours == 0 || st.ExtraHops < st.Detours {
				t.Errorf("stats %+v: want detours", *st)
			}
			if sentA != sentM+st.ExtraHops {
				t.Errorf("ports sent %d packets, minimal %d + extra hops %d = %d", sentA, sentM, st.ExtraHops, sentM+st.ExtraHops)
			}
			t.Logf("%s: exec %.2f µs (minimal POWAR %.2f), mean latency %.2f / %.2f µs, PFC pauses %d / %d; %+v",
				pat, a.ExecTimeS*1e6, m.ExecTimeS*1e6, a.LatencyS.Mean*1e6, m.LatencyS.Mean*1e6, a.PFCPauses, m.PFCPauses, *st)
		})
	}
}

// TestPOWARMegaflyNonMinimalIntraGroup: traffic that stays inside groups
// has no non-minimal candidate, so the run is identical with and without
// them (the leaves' counters see the same bytes).
func TestPOWARMegaflyNonMinimalIntraGroup(t *testing.T) {
	tp := smallMegaflyNM(t)
	res := func(on bool) Result {
		n := build(t, tp, nonMinParams(10*time.Microsecond, on))
		for i := range 200 {
			g := i % 5
			src, dst := g*4+i%4, g*4+(i/4+1+i%3)%4
			if src != dst {
				n.Inject(int64(i)*300*ns, src, dst, 20000)
			}
		}
		return run(t, n)
	}
	a, b := res(false), res(true)
	if nm := b.PowarNonMinimal; nm == nil || nm.Detours != 0 || nm.Decisions != 0 {
		t.Fatalf("intra-group traffic: non-minimal counts %+v, want present and zero", nm)
	}
	b.PowarNonMinimal = nil
	if a.Packets == 0 || !reflect.DeepEqual(a, b) {
		t.Fatalf("intra-group traffic: minimal POWAR %+v, non-minimal %+v", a, b)
	}
}

// BenchmarkRoutingDecisionMegafly is the cost of one POWAR decision on the
// 272-node Megafly (configs/sim/quick.yaml: 17 groups, radix 8) at a
// source leaf or at the minimal spine (alternately), minimal POWAR against
// non-minimal, as BenchmarkRoutingDecision (deep sleep, t_PDT 1 µs, a
// decision every 10 ns, pending counts undone, detour flags reset).
func BenchmarkRoutingDecisionMegafly(b *testing.B) {
	tp, err := topo.Build(topo.Config{Kind: topo.KindMegafly, Radix: 8})
	if err != nil {
		b.Fatal(err)
	}
	m := tp.(*topo.Megafly)
	sw, dst := make([]int32, 1<<12), make([]int32, 1<<12)
	for i := range sw {
		s, _ := tp.Attach((i * 7919) % tp.Nodes())
		d := (i*104729 + 13) % tp.Nodes()
		if x := tp.Route(s, d) - m.NodesPerLeaf(); i%2 == 1 && x >= 0 { // the leaf's minimal spine
			s = m.SwitchGroup(s)*(m.LeafCount()+m.SpineCount()) + m.LeafCount() + x
		}
		sw[i], dst[i] = int32(s), int32(d)
	}
	for _, on := range []bool{false, true} {
		name := "powar"
		if on {
			name = "powar-nonminimal"
		}
		b.Run(name, func(b *testing.B) {
			n, err := New(tp, nonMinParams(time.Microsecond, on))
			if err != nil {
				b.Fatal(err)
			}
			loopRoutingDecisions(b, n, sw, dst, 4)
		})
	}
}

// BenchmarkMegafly272POWAR: the 272-node Megafly under uniform traffic at
// 30 % load (9600 B messages, 100 µs of generation), PerfBoundCorrect,
// deep sleep: minimal POWAR against non-minimal (events/s).
func BenchmarkMegafly272POWAR(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "powar"
		if on {
			name = "powar-nonminimal"
		}
		b.Run(name, func(b *testing.B) {
			p := deepSleepPBC()
			p.Routing = RoutingPOWAR
			p.POWAR = DefaultPOWAR()
			p.POWAR.NonMinimal = on
			benchReplay(b, topo.Config{Kind: topo.KindMegafly, Radix: 8}, p, synthetic("uniform", 9600, 0.3, 100*time.Microsecond))
		})
	}
}
