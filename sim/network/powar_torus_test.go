package network

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lpictl/lpictl/sim/eee"
	"github.com/lpictl/lpictl/sim/topo"
)

// trunkTorus is a 4×4×2 torus with 2 nodes per switch and trunk-wide
// aggregated links: ports 0–1 nodes, member j of aggregate a at 2+4a+j.
func trunkTorus(t testing.TB, trunk int) *topo.Torus {
	tp, err := topo.Build(topo.Config{Kind: topo.KindTorus3D, Dims: []int{4, 4, 2}, NodesPerSwitch: 2, Trunk: trunk})
	if err != nil {
		t.Fatal(err)
	}
	return tp.(*topo.Torus)
}

// memberSends returns the packets sent by the switches' aggregate members,
// by member index, and the total over all ports.
func memberSends(n *Network, tp *topo.Torus) (by []uint64, total uint64) {
	by = make([]uint64, tp.Trunk())
	n.Ports(func(r *PortRow) {
		total += r.Sent
		if r.Kind != "switch" {
			return
		}
		if _, j, ok := tp.Aggregate(r.Local); ok {
			by[j] += r.Sent
		}
	})
	return by, total
}

// TestPOWARTorusGathers: uniform traffic at 5 % load on the 4×4×2 torus
// with 4-wide trunks. By hand: a link of an aggregate carries at most
// 400 Gb/s × 10 µs = 500 000 B per checking cycle; at 5 % injection and
// ≈ 2.5 switch hops per packet over 6 aggregates per switch of 2 nodes the
// mean aggregate load is ≈ 0.05 × 2 × 2.5 / 6 ≈ 4 % of one member, far
// below Ton = 0.5, so Algorithm 3 keeps Sel = 1 on almost every aggregate
// and cycle: member 0 of each aggregate carries nearly everything
// (Algorithm 1 can only pick selectable members; with all of them busy
// the packet queues on member 0 too). Minimal routing sends to member
// dst mod 4, about a quarter each. Every packet arrives, the paths are
// minimal (the ports' sends add up to minimal routing's), the run is the
// same twice, and POWAR's ports are on less of the time. Both settings of
// torus_adaptive.
func TestPOWARTorusGathers(t *testing.T) {
	tp := trunkTorus(t, 4)
	wl := synthetic("uniform", 9600, 0.05, 100*time.Microsecond)
	res := func(p Params) (Result, []uint64, uint64) {
		n := build(t, tp, p)
		attachConfig(t, n, wl, 5)
		r := run(t, n)
		by, total := memberSends(n, tp)
		return r, by, total
	}
	minP := table6(eee.DeepSleep, 10*time.Microsecond)
	minP.POWAR = DefaultPOWAR()
	minP.POWAR.Report = true
	mn, byM, sentM := res(minP)
	var aggM uint64
	for _, c := range byM {
		aggM += c
	}
	for j, c := range byM {
		if 3*c > aggM { // a quarter each, give or take
			t.Errorf("minimal: member %d sent %d of %d aggregate packets (%v): dst mod 4 should spread them", j, c, aggM, byM)
		}
	}
	for _, adaptive := range []bool{false, true} {
		p := powarParams(10 * time.Microsecond)
		p.POWAR.TorusAdaptive = adaptive
		pw, by, sent := res(p)
		pw2, _, _ := res(p)
		if !reflect.DeepEqual(pw, pw2) {
			t.Fatalf("adaptive %v: POWAR twice with the same seed:\n%+v\n%+v", adaptive, pw, pw2)
		}
		if pw.Packets == 0 || pw.Packets != mn.Packets || pw.Messages != mn.Messages {
			t.Fatalf("adaptive %v: POWAR delivered %d packets / %d messages, minimal %d / %d", adaptive, pw.Packets, pw.Messages, mn.Packets, mn.Messages)
		}
		if sent != sentM {
			t.Fatalf("adaptive %v: ports sent %d packets with POWAR, %d with minimal routing: a path is not minimal", adaptive, sent, sentM)
		}
		var agg uint64
		for _, c := range by {
			agg += c
		}
		if agg != aggM || 10*by[0] < 9*agg {
			t.Errorf("adaptive %v: member 0 sent %d of %d aggregate packets (%v): want ≥ 90 %%", adaptive, by[0], agg, by)
		}
		if pw.PowarModel.PortOn >= mn.PowarModel.PortOn {
			t.Errorf("adaptive %v: POWAR ports on %.3f, minimal %.3f: want less", adaptive, pw.PowarModel.PortOn, mn.PowarModel.PortOn)
		}
		st := pw.PowarRouting
		if st.Adaptive == 0 || st.MeanSelectable < 1 || st.MeanSelectable > 1.2*float64(1+btoi(adaptive)*2) {
			t.Errorf("adaptive %v: decisions %+v", adaptive, *st)
		}
		t.Logf("adaptive %v: members POWAR %v, minimal %v; ports on %.3f vs %.3f; exec %.2f vs %.2f µs; %+v",
			adaptive, by, byM, pw.PowarModel.PortOn, mn.PowarModel.PortOn, pw.ExecTimeS*1e6, mn.ExecTimeS*1e6, *st)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestPOWARTorusFirstOn: First-On makes every member selectable (4 per
// aggregate), so the members share the load more than under POWAR.
func TestPOWARTorusFirstOn(t *testing.T) {
	tp := trunkTorus(t, 4)
	p := powarParams(10 * time.Microsecond)
	p.POWAR.FirstOn = true
	n := build(t, tp, p)
	attachConfig(t, n, synthetic("uniform", 9600, 0.05, 50*time.Microsecond), 5)
	r := run(t, n)
	if r.PowarRouting.MeanSelectable != 4 {
		t.Errorf("First-On: mean selectable %v, want 4 (the DOR aggregate's members)", r.PowarRouting.MeanSelectable)
	}
}

// TestPOWARTorusTrunkOne: with trunk 1 and torus_adaptive false the
// adaptive set is the DOR port alone, so POWAR routes every packet as
// minimal routing does: the same run time, latencies and per-port sends;
// and a torus built with trunk 1 runs exactly as one built without it.
func TestPOWARTorusTrunkOne(t *testing.T) {
	plain, err := topo.Build(topo.Config{Kind: topo.KindTorus3D, Dims: []int{4, 4, 2}, NodesPerSwitch: 2})
	if err != nil {
		t.Fatal(err)
	}
	one := trunkTorus(t, 1)
	wl := synthetic("uniform", 9600, 0.1, 50*time.Microsecond)
	res := func(tp topo.Topology, p Params) (Result, []uint64) {
		n := build(t, tp, p)
		attachConfig(t, n, wl, 7)
		r := run(t, n)
		var sent []uint64
		n.Ports(func(r *PortRow) { sent = append(sent, r.Sent) })
		return r, sent
	}
	minP := table6(eee.DeepSleep, 10*time.Microsecond)
	a, sa := res(plain, minP)
	b, sb := res(one, minP)
	if !reflect.DeepEqual(a, b) || !reflect.DeepEqual(sa, sb) {
		t.Fatalf("trunk 1 differs from the plain torus:\n%+v\n%+v", a, b)
	}
	pw, sp := res(one, powarParams(10*time.Microsecond))
	if pw.Packets != a.Packets || pw.ExecTimeS != a.ExecTimeS || pw.LatencyS != a.LatencyS || !reflect.DeepEqual(sp, sa) {
		t.Fatalf("POWAR on trunk 1 differs from DOR: exec %v vs %v, latency %+v vs %+v", pw.ExecTimeS, a.ExecTimeS, pw.LatencyS, a.LatencyS)
	}
	if pw.PowarRouting.Adaptive != 0 {
		t.Errorf("trunk 1: %d adaptive decisions, want none (one candidate per hop)", pw.PowarRouting.Adaptive)
	}
}

// datelineTorus is a 4×4×2 torus with 4 nodes per switch and trunk-wide
// aggregates, with or without the dateline classes.
func datelineTorus(t testing.TB, trunk int, dateline bool) *topo.Torus {
	tp, err := topo.Build(topo.Config{Kind: topo.KindTorus3D, Dims: []int{4, 4, 2}, NodesPerSwitch: 4, Trunk: trunk, Dateline: dateline})
	if err != nil {
		t.Fatal(err)
	}
	return tp.(*topo.Torus)
}

// TestTorusDatelineNoDeadlock: uniform traffic at 60 % load (9600 B,
// 50 µs) on the 4×4×2 torus with 4 nodes per switch, one cable per
// neighbour (Table 7's wiring) and 2-wide trunks, always on. Dimension-
// order routing with one traffic class closes a cycle of paused links on
// the wrap-around rings (the run stops with packets left); with
// topology.dateline the hops travel in their dateline classes (the
// network's two traffic classes) and the same traffic completes: every
// packet arrives, none is dropped, the run is byte-identical twice.
// POWAR (torus_adaptive false, deep sleep; deciding at arrival, and with
// torus_wait at the head of the input buffer, where the class of the hop
// is the DOR aggregate's, whichever member is chosen later) and ECMP on
// the dateline torus complete too (their choices keep dimension order,
// each hop in its class).
func TestTorusDatelineNoDeadlock(t *testing.T) {
	wl := synthetic("uniform", 9600, 0.6, 50*time.Microsecond)
	p := table6(eee.AlwaysOn, 0)
	for _, trunk := range []int{1, 2} {
		n := build(t, datelineTorus(t, trunk, false), p)
		if n.vc != nil {
			t.Fatalf("trunk %d: two classes without the dateline", trunk)
		}
		attachConfig(t, n, wl, 1)
		if err := n.Run(context.Background(), 0, nil); err == nil {
			t.Fatalf("trunk %d, no dateline: the run completed; want a deadlock on the wrap-around rings", trunk)
		} else {
			t.Logf("trunk %d, no dateline: %v", trunk, err)
		}
		tp := datelineTorus(t, trunk, true)
		res := func(p Params) (Result, []uint64) {
			n := build(t, tp, p)
			if n.vc == nil {
				t.Fatalf("trunk %d: one class with the dateline", trunk)
			}
			attachConfig(t, n, wl, 1)
			r := run(t, n)
			var sent []uint64
			n.Ports(func(r *PortRow) { sent = append(sent, r.Sent) })
			return r, sent
		}
		a, sa := res(p)
		b, sb := res(p)
		if !reflect.DeepEqual(a, b) || !reflect.DeepEqual(sa, sb) {
			t.Fatalf("trunk %d, dateline: two runs differ:\n%+v\n%+v", trunk, a, b)
		}
		if a.Packets == 0 || a.Dropped != 0 {
			t.Fatalf("trunk %d, dateline: %d packets, %d dropped", trunk, a.Packets, a.Dropped)
		}
		ecmp := p
		ecmp.Routing = RoutingECMP
		wait := powarParams(10 * time.Microsecond)
		wait.POWAR.TorusWait = true
		for _, q := range []Params{powarParams(10 * time.Microsecond), wait, ecmp} {
			r, _ := res(q)
			if r.Packets != a.Packets || r.Messages != a.Messages || r.Dropped != 0 {
				t.Errorf("trunk %d, dateline %v: %d packets / %d messages (%d dropped), DOR %d / %d", trunk, q.Routing, r.Packets, r.Messages, r.Dropped, a.Packets, a.Messages)
			}
		}
		t.Logf("trunk %d, dateline: %d packets, exec %.1f µs", trunk, a.Packets, a.ExecTimeS*1e6)
	}
}

// TestPOWARTorusDatelineGathers: TestPOWARTorusGathers's light load on
// the 4×4×2 torus with 4-wide trunks and the dateline. Every member
// carries both dateline classes, so each aggregate is one Algorithm 3
// aggregate of 4 members starting at Sel = 1, as without the dateline: at
// ≈ 4 % of a member's load POWAR sends nearly everything on member 0;
// minimal routing spreads over dst mod 4. P is the dimension-order
// aggregate: one selectable member of four (First-On: four).
// torus_adaptive is refused with the dateline.
func TestPOWARTorusDatelineGathers(t *testing.T) {
	tp, err := topo.Build(topo.Config{Kind: topo.KindTorus3D, Dims: []int{4, 4, 2}, NodesPerSwitch: 2, Trunk: 4, Dateline: true})
	if err != nil {
		t.Fatal(err)
	}
	tr := tp.(*topo.Torus)
	wl := synthetic("uniform", 9600, 0.05, 100*time.Microsecond)
	res := func(p Params) (Result, []uint64) {
		n := build(t, tr, p)
		attachConfig(t, n, wl, 5)
		r := run(t, n)
		by, _ := memberSends(n, tr)
		return r, by
	}
	mn, byM := res(table6(eee.DeepSleep, 10*time.Microsecond))
	for j := 1; j < 4; j++ {
		if 2*byM[j] < byM[0] {
			t.Errorf("minimal: members %v: dst mod 4 should spread the aggregate", byM)
		}
	}
	pw, by := res(powarParams(10 * time.Microsecond))
	if pw.Packets != mn.Packets {
		t.Fatalf("%d packets, minimal %d", pw.Packets, mn.Packets)
	}
	if agg := by[0] + by[1] + by[2] + by[3]; 10*by[0] < 9*agg {
		t.Errorf("members %v: want member 0 to carry ≥ 90 %%", by)
	}
	st := pw.PowarRouting
	if st.MeanSelectable < 1 || st.MeanSelectable > 1.2 {
		t.Errorf("mean selectable %v, want ≈ 1 of the aggregate's 4", st.MeanSelectable)
	}
	t.Logf("members POWAR %v, minimal %v; %+v", by, byM, *st)
	p := powarParams(10 * time.Microsecond)
	p.POWAR.TorusAdaptive = true
	if _, err := New(tr, p); err == nil || !strings.Contains(err.Error(), "routing.powar.torus_adaptive: cannot be combined with topology.dateline") {
		t.Errorf("torus_adaptive with dateline: error %v", err)
	}
	p = powarParams(10 * time.Microsecond)
	p.POWAR.FirstOn = true
	if r, _ := res(p); r.PowarRouting.MeanSelectable != 4 {
		t.Errorf("First-On with dateline: mean selectable %v, want 4 (the aggregate's members)", r.PowarRouting.MeanSelectable)
	}
}

// BenchmarkRoutingDecisionTorus extends BenchmarkRoutingDecision to the
// paper's 4×4×4 torus with 4 nodes per switch and 4-wide trunks: the
// topology's Route (DOR, member dst mod 4) against POWAR on the DOR
// aggregate (torus_adaptive false, the default) and on every minimal
// aggregate (torus_adaptive true), over random (switch, node) pairs, a
// decision every 10 ns of simulated time, the pending count undone after
// each so that ports stay free. The -dateline cases are the same on the
// torus with topology.dateline (the hop classes), without
// torus_adaptive, which the dateline refuses.
func BenchmarkRoutingDecisionTorus(b *testing.B) {
	for _, dl := range []bool{false, true} {
		tp, err := topo.Build(topo.Config{Kind: topo.KindTorus3D, Dims: []int{4, 4, 4}, Trunk: 4, Dateline: dl})
		if err != nil {
			b.Fatal(err)
		}
		suffix := ""
		if dl {
			suffix = "-dateline"
		}
		benchRoutingDecisionTorus(b, tp, suffix)
	}
}

func benchRoutingDecisionTorus(b *testing.B, tp topo.Topology, suffix string) {
	sw, dst := make([]int32, 1<<12), make([]int32, 1<<12)
	for i := range sw {
		sw[i], dst[i] = int32((i*7919)%tp.Switches()), int32((i*104729+13)%tp.Nodes())
	}
	for _, c := range []struct {
		name     string
		r        Routing
		adaptive bool
	}{{"minimal", RoutingMinimal, false}, {"powar", RoutingPOWAR, false}, {"powar-adaptive", RoutingPOWAR, true}} {
		if c.adaptive && suffix != "" {
			continue // torus_adaptive is refused with the dateline
		}
		b.Run(c.name+suffix, func(b *testing.B) {
			p := table6(eee.AlwaysOn, 0)
			if c.r == RoutingPOWAR {
				p = powarParams(time.Microsecond)
				p.POWAR.TorusAdaptive = c.adaptive
			}
			n, err := New(tp, p)
			if err != nil {
				b.Fatal(err)
			}
			loopRoutingDecisions(b, n, sw, dst, 0)
		})
	}
}

// BenchmarkTorus256 is the events/s of the paper's 4×4×4 torus (4 nodes
// per switch, 4-wide trunks, 256 nodes) under uniform traffic at 5 %
// load (9600 B messages, deep sleep, PerfBoundCorrect), 20 µs of
// generation then drained, with DOR and with POWAR (torus_adaptive false).
// (At 10 % POWAR's consolidation onto member 0 closes a cycle of paused
// links without a dateline, see docs/simulator.md "POWAR".) The
// -dateline cases run the torus with topology.dateline.
func BenchmarkTorus256(b *testing.B) {
	for _, c := range []struct {
		name     string
		r        Routing
		dateline bool
	}{{"minimal", RoutingMinimal, false}, {"powar", RoutingPOWAR, false}, {"minimal-dateline", RoutingMinimal, true}, {"powar-dateline", RoutingPOWAR, true}} {
		b.Run(c.name, func(b *testing.B) {
			p := deepSleepPBC()
			p.Routing = c.r
			p.POWAR = DefaultPOWAR()
			benchReplay(b, topo.Config{Kind: topo.KindTorus3D, Dims: []int{4, 4, 4}, Trunk: 4, Dateline: c.dateline}, p, synthetic("uniform", 9600, 0.05, 20*time.Microsecond))
		})
	}
}

// TestPOWARWaitWakes: the paper's wait without polling (routing.powar.retry
// unset): a waiting head is retried when a port of its candidate set is
// released or a checking cycle begins. On the 8-ary 2-tree (POWAR and
// Round-Robin) and the 4×4×2 dateline torus with torus_wait, at t_PDT 0
// under deep sleep and 60 % uniform load (many waits), every packet
// arrives, the run is the same twice, packets did wait, and the retries
// are far fewer than with a retry every 10 ns. (Checked while writing it
// with a 1 ns poll beside the events: no poll ever found a port usable
// that no event had announced, on these and on always-on runs.)
func TestPOWARWaitWakes(t *testing.T) {
	fat := kAry2Tree(t)
	tor := datelineTorus(t, 4, true)
	for _, c := range []struct {
		name string
		tp   topo.Topology
		set  func(*POWAR)
	}{
		{"fattree-powar", fat, func(*POWAR) {}},
		{"fattree-round-robin", fat, func(c *POWAR) { c.RoundRobin = true }},
		{"torus-wait", tor, func(c *POWAR) { c.TorusWait = true }},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := func(retry int64) Result {
				p := powarParams(0)
				c.set(&p.POWAR)
				p.POWAR.Retry = retry
				n := build(t, c.tp, p)
				attachConfig(t, n, synthetic("uniform", 9600, 0.6, 20*time.Microsecond), 1)
				return run(t, n)
			}
			a, b, poll := res(0), res(0), res(10_000)
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("two runs differ:\n%+v\n%+v", a, b)
			}
			if a.Packets != poll.Packets || a.Dropped != 0 {
				t.Fatalf("%d packets (%d dropped), polling %d", a.Packets, a.Dropped, poll.Packets)
			}
			w, pw := a.PowarRouting, poll.PowarRouting
			if w.Waited == 0 || 10*w.Retries > pw.Retries {
				t.Errorf("waited %d, retries %d; polling every 10 ns: waited %d, retries %d", w.Waited, w.Retries, pw.Waited, pw.Retries)
			}
			t.Logf("exec %.2f µs (polling %.2f µs), waited %d, retries %d (polling %d)", a.ExecTimeS*1e6, poll.ExecTimeS*1e6, w.Waited, w.Retries, pw.Retries)
		})
	}
}
