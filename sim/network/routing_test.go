package network

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/eee"
	"github.com/lpictl/lpictl/sim/topo"
)

// TestMix64 checks the SplitMix64 finaliser against the generator's
// published first output for seed 0 (state + golden gamma, then mixed).
func TestMix64(t *testing.T) {
	if got := mix64(0x9e3779b97f4a7c15); got != 0xe220a8397b1dcdaf {
		t.Fatalf("mix64 = %#x, want 0xe220a8397b1dcdaf", got)
	}
}

func TestParseRouting(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Routing
		ok   bool
	}{{"", RoutingMinimal, true}, {"minimal", RoutingMinimal, true}, {"ecmp", RoutingECMP, true}, {"adaptive", 0, false}} {
		got, err := ParseRouting(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseRouting(%q) = %v, %v", tc.in, got, err)
		}
		if tc.ok && tc.in != "" && got.String() != tc.in {
			t.Errorf("%v.String() = %q", got, got.String())
		}
	}
}

// TestECMPPickSpreads: over many flows each of n choices gets about 1/n.
func TestECMPPickSpreads(t *testing.T) {
	const flows, n = 80000, 8
	var count [n]int
	for f := range flows {
		count[ecmpPick(flowKey(int32(f), 0), 17, n)]++
	}
	for i, c := range count {
		if c < flows/n*9/10 || c > flows/n*11/10 {
			t.Errorf("choice %d taken by %d of %d flows", i, c, flows)
		}
	}
}

func fatTree(t testing.TB, radix int) topo.Topology {
	tp, err := topo.Build(topo.Config{Kind: topo.KindRLFT, Radix: radix, Levels: 3})
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// switchSends returns the packets sent by every switch port, by port.
func switchSends(n *Network) map[int]uint64 {
	m := map[int]uint64{}
	n.Ports(func(r *PortRow) {
		if r.Kind == "switch" && r.Sent > 0 {
			m[r.Port] = r.Sent
		}
	})
	return m
}

// TestECMPOneMessageOnePath: a message's packets all take one path of
// Hops(src, dst) links (so they arrive in order), and different flows of
// the same pair of leaves take different paths.
func TestECMPOneMessageOnePath(t *testing.T) {
	tp := fatTree(t, 8) // 128 nodes, 4 per leaf, 4 up ports per leaf and middle
	p := table6(eee.AlwaysOn, 0)
	p.Routing = RoutingECMP
	paths := map[string]bool{}
	for src := range 16 {
		dst := 127 - src
		n := build(t, tp, p)
		n.Inject(0, src, dst, 10*9600) // 10 packets
		r := run(t, n)
		if r.Packets != 10 || r.Messages != 1 {
			t.Fatalf("%d → %d: %d packets, %d messages delivered", src, dst, r.Packets, r.Messages)
		}
		sends := switchSends(n)
		hops := topo.Hops(tp, src, dst)
		if len(sends) != hops-1 { // switch ports on the path: every link but the injection
			t.Fatalf("%d → %d: %d switch ports sent (%v), want the %d of one path", src, dst, len(sends), sends, hops-1)
		}
		key := ""
		for port, c := range sends {
			if c != 10 {
				t.Fatalf("%d → %d: port %d sent %d of the 10 packets", src, dst, port, c)
			}
		}
		for port := range n.ports {
			if sends[port] > 0 {
				key += string(rune(port)) // ports in order: the path's signature
			}
		}
		paths[key] = true
	}
	// 16 flows over 16 leaf-to-leaf paths (4 up at the leaf, 4 at the
	// middle): a hash putting them all on one path would be broken.
	if len(paths) < 4 {
		t.Errorf("16 flows took only %d distinct paths", len(paths))
	}
}

// TestECMPDelivers runs uniform traffic through the replayer on a fat
// tree and a Megafly with ECMP: every packet arrives, the run is the same
// twice, and the ports' sends add up to the packets' hop counts (every
// path is minimal: Σ sent = Σ packets × links crossed, with minimal and
// with ECMP routing alike).
func TestECMPDelivers(t *testing.T) {
	for _, tc := range []struct {
		c    topo.Config
		load float64
	}{
		{topo.Config{Kind: topo.KindRLFT, Radix: 8, Levels: 3}, 0.3},
		{topo.Config{Kind: topo.KindMegafly, Groups: 5, Leaves: 2, Spines: 2, NodesPerSwitch: 2, GlobalLinks: 2}, 0.3},
		// ECMP on a torus can close a cycle of paused links (PFC without
		// virtual channels): a light load.
		{topo.Config{Kind: topo.KindTorus3D, Dims: []int{4, 4, 2}, NodesPerSwitch: 2}, 0.05},
		{topo.Config{Kind: topo.KindHyperX, Dims: []int{3, 4}, NodesPerSwitch: 2}, 0.3},
	} {
		load := tc.load
		tp, err := topo.Build(tc.c)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(tp.Name(), func(t *testing.T) {
			res := func(r Routing) (Result, uint64) {
				p := table6(eee.DeepSleep, 0)
				p.Predictor = predictor.Config{Kind: predictor.KindPerfBoundCorrect, WakeTime: predictor.Duration(4480 * time.Nanosecond)}
				p.Routing = r
				n := build(t, tp, p)
				attachConfig(t, n, synthetic("uniform", 30000, load, 20*time.Microsecond), 3)
				res := run(t, n)
				var sent uint64
				n.Ports(func(r *PortRow) { sent += r.Sent })
				return res, sent
			}
			a, sentA := res(RoutingECMP)
			b, _ := res(RoutingECMP)
			if a != b {
				t.Fatalf("ECMP twice with the same seed:\n%+v\n%+v", a, b)
			}
			if a.Packets == 0 || a.Packets != b.Packets {
				t.Fatalf("%d packets delivered", a.Packets)
			}
			m, sentM := res(RoutingMinimal)
			if m.Packets != a.Packets || m.Messages != a.Messages {
				t.Fatalf("minimal delivered %d packets / %d messages, ECMP %d / %d", m.Packets, m.Messages, a.Packets, a.Messages)
			}
			if sentA != sentM {
				t.Fatalf("ports sent %d packets with ECMP, %d with minimal routing: a path is not minimal", sentA, sentM)
			}
			t.Logf("exec time minimal %.3f µs, ECMP %.3f µs; mean latency %.3f / %.3f µs",
				m.ExecTimeS*1e6, a.ExecTimeS*1e6, m.LatencyS.Mean*1e6, a.LatencyS.Mean*1e6)
		})
	}
}

// TestECMPFatTreePermutation is the htsim comparison in small (k = 16 fat
// tree, 1024 hosts, 100 Gb/s, 9000 B, a random permutation of one flow per
// host, here 256 KB instead of 4 MB): D-mod-k gives every destination its
// own top switch and conflict-free descents, ECMP hashes flows onto paths
// independently, so flows collide on the way down too. It logs both
// finish times, the busiest switch port and the ports used; it asserts
// only that both deliver everything and that the runs differ.
func TestECMPFatTreePermutation(t *testing.T) {
	if testing.Short() {
		t.Skip("1024-host fat tree")
	}
	tp := fatTree(t, 16)
	perm := rand.New(rand.NewPCG(1, 2)).Perm(tp.Nodes())
	res := func(r Routing) (Result, uint64, int) {
		p := table6(eee.AlwaysOn, 0)
		p.RateBps, p.MTU = 100e9, 9000
		p.Propagation = 1000 * ns
		p.QueueBytes, p.PFCStop, p.PFCGo = 200000, 150000, 100000
		p.Routing = r
		n := build(t, tp, p)
		for src, dst := range perm {
			if src != dst {
				n.Inject(0, src, dst, 256000)
			}
		}
		res := run(t, n)
		var busiest uint64
		sends := switchSends(n)
		for _, c := range sends {
			busiest = max(busiest, c)
		}
		return res, busiest, len(sends)
	}
	m, bm, um := res(RoutingMinimal)
	e, be, ue := res(RoutingECMP)
	t.Logf("minimal: last flow done at %.1f µs, busiest switch port %d packets, %d ports used", m.ExecTimeS*1e6, bm, um)
	t.Logf("ECMP:    last flow done at %.1f µs, busiest switch port %d packets, %d ports used", e.ExecTimeS*1e6, be, ue)
	if m.Packets != e.Packets {
		t.Fatalf("delivered %d packets with minimal routing, %d with ECMP", m.Packets, e.Packets)
	}
	if m == e {
		t.Fatal("ECMP and minimal routing gave identical results")
	}
}
