package network

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/eee"
	"github.com/lpictl/lpictl/sim/internal/graph"
	"github.com/lpictl/lpictl/sim/tcep"
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
	}{{"", RoutingMinimal, true}, {"minimal", RoutingMinimal, true}, {"ecmp", RoutingECMP, true}, {"powar", RoutingPOWAR, true}, {"ugal", RoutingUGAL, true}, {"adaptive", 0, false}} {
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
			if !reflect.DeepEqual(a, b) {
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

// powarParams is table6 in deep sleep (fixed t_PDT pdt) with POWAR routing,
// every switch starting with one selectable port (the tests' short runs
// see the gathering from the first packet on).
func powarParams(pdt time.Duration) Params {
	p := table6(eee.DeepSleep, pdt)
	p.Routing = RoutingPOWAR
	p.POWAR = DefaultPOWAR()
	p.POWAR.Initial = 1
	return p
}

// upSends returns, over the leaves of an 8-ary 2-tree (switches 0–7,
// up ports 8–15), the packets sent by each up port number.
func upSends(n *Network) [8]uint64 {
	var s [8]uint64
	n.Ports(func(r *PortRow) {
		if r.Kind == "switch" && r.Device < 8 && r.Local >= 8 {
			s[r.Local-8] += r.Sent
		}
	})
	return s
}

func kAry2Tree(t testing.TB) topo.Topology {
	tp, err := topo.Build(topo.Config{Kind: topo.KindFatTree, Radix: 16, Levels: 2})
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// TestPOWARConcentrates: on the paper's 8-ary 2-tree at low load, POWAR
// keeps one selectable up port per leaf most of the time, so up port 0
// (local 8) carries most of the leaves' upward traffic, while minimal
// routing (D-mod-k) and ECMP spread it; every packet arrives, the run is
// the same twice, paths stay minimal (the ports' sends add up to the same
// total), and POWAR's links are on less of the time.
func TestPOWARConcentrates(t *testing.T) {
	tp := kAry2Tree(t)
	wl := synthetic("uniform", 9600, 0.05, 100*time.Microsecond)
	res := func(p Params) (Result, [8]uint64, uint64) {
		n := build(t, tp, p)
		attachConfig(t, n, wl, 5)
		r := run(t, n)
		var sent uint64
		n.Ports(func(r *PortRow) { sent += r.Sent })
		return r, upSends(n), sent
	}
	pw, upP, sentP := res(powarParams(10 * time.Microsecond))
	pw2, _, _ := res(powarParams(10 * time.Microsecond))
	if !reflect.DeepEqual(pw, pw2) {
		t.Fatalf("POWAR twice with the same seed:\n%+v\n%+v", pw, pw2)
	}
	minP := table6(eee.DeepSleep, 10*time.Microsecond)
	minP.POWAR = DefaultPOWAR()
	minP.POWAR.Report = true
	mn, upM, sentM := res(minP)
	if pw.Packets == 0 || pw.Packets != mn.Packets || pw.Messages != mn.Messages {
		t.Fatalf("POWAR delivered %d packets / %d messages, minimal %d / %d", pw.Packets, pw.Messages, mn.Packets, mn.Messages)
	}
	if sentP != sentM {
		t.Fatalf("ports sent %d packets with POWAR, %d with minimal routing: a path is not minimal", sentP, sentM)
	}
	var total uint64
	for _, c := range upP {
		total += c
	}
	for q := 1; q < 8; q++ {
		if upP[0] <= upP[q] {
			t.Errorf("POWAR: up port 0 sent %d packets, up port %d %d (%v)", upP[0], q, upP[q], upP)
		}
	}
	if 2*upP[0] < total {
		t.Errorf("POWAR: up port 0 sent %d of %d upward packets (%v): want most", upP[0], total, upP)
	}
	for q := range 8 {
		if 4*upM[q] > total {
			t.Errorf("minimal: up port %d sent %d of %d upward packets (%v): D-mod-k should spread them", q, upM[q], total, upM)
		}
	}
	if pw.PowarModel == nil || mn.PowarModel == nil || pw.PowarRouting == nil || mn.PowarRouting != nil {
		t.Fatalf("powar blocks: POWAR %+v %+v, minimal %+v %+v", pw.PowarModel, pw.PowarRouting, mn.PowarModel, mn.PowarRouting)
	}
	if pw.PowarModel.PortOn >= mn.PowarModel.PortOn || pw.PowarModel.WNet >= mn.PowarModel.WNet {
		t.Errorf("POWAR ports on %.3f (W_net %.4f), minimal %.3f (%.4f): want less with POWAR",
			pw.PowarModel.PortOn, pw.PowarModel.WNet, mn.PowarModel.PortOn, mn.PowarModel.WNet)
	}
	st := pw.PowarRouting
	if st.Adaptive == 0 || st.MeanSelectable < 1 || st.MeanSelectable > 8 {
		t.Errorf("POWAR decisions: %+v", *st)
	}
	t.Logf("up ports: POWAR %v, minimal %v; ports on %.3f vs %.3f; exec %.2f vs %.2f µs; %+v",
		upP, upM, pw.PowarModel.PortOn, mn.PowarModel.PortOn, pw.ExecTimeS*1e6, mn.ExecTimeS*1e6, *st)
}

// TestPOWARModelBlock checks the powar_model block against the model
// applied by hand: always on, every port is on the whole run (W_net = 1
// under both readings) and W_nodes follows the nodes' utilisation.
func TestPOWARModelBlock(t *testing.T) {
	tp := kAry2Tree(t)
	p := table6(eee.AlwaysOn, 0)
	p.POWAR = DefaultPOWAR()
	p.POWAR.Report = true
	p.Power.NodeUtilisation = 0.6
	n := build(t, tp, p)
	n.Inject(0, 0, 63, 96000)
	r := run(t, n)
	m := r.PowarModel
	wNodes := 0.5 + 0.5*0.6
	wCluster := 0.15*1 + 0.85*wNodes
	if m == nil || m.PortOn != 1 || m.WNet != 1 || m.WNetNoFloor != 1 || math.Abs(m.WNodes-wNodes) > 1e-12 ||
		math.Abs(m.WCluster-wCluster) > 1e-12 || m.RunTimeS != r.ExecTimeS || math.Abs(m.ENetS-r.ExecTimeS) > 1e-18 {
		t.Fatalf("always-on powar_model %+v (exec %v), want W_net 1, W_nodes %v, W_cluster %v", m, r.ExecTimeS, wNodes, wCluster)
	}
}

// TestPOWARMegafly: POWAR on a Megafly (leaves choose among their spines
// for destinations in the group; every other hop has one minimal port)
// delivers everything, twice the same, and concentrates a leaf's
// intra-group traffic on its first spine at low load.
func TestPOWARMegafly(t *testing.T) {
	tp, err := topo.Build(topo.Config{Kind: topo.KindMegafly, Groups: 3, Leaves: 4, Spines: 4, NodesPerSwitch: 4, GlobalLinks: 2})
	if err != nil {
		t.Fatal(err)
	}
	res := func() Result {
		n := build(t, tp, powarParams(10*time.Microsecond))
		attachConfig(t, n, synthetic("uniform", 9600, 0.05, 50*time.Microsecond), 2)
		return run(t, n)
	}
	a, b := res(), res()
	if !reflect.DeepEqual(a, b) || a.Packets == 0 {
		t.Fatalf("Megafly POWAR: %+v vs %+v", a, b)
	}
	if a.PowarRouting.Adaptive == 0 || a.PowarRouting.MeanSelectable >= 2 {
		t.Errorf("Megafly POWAR decisions %+v: want adaptive leaf decisions with few selectable spines", *a.PowarRouting)
	}
}

// TestPOWARFirstOn: First-On (all ports selectable) still prefers awake
// ports, and sees all 8 up ports as selectable.
func TestPOWARFirstOn(t *testing.T) {
	p := powarParams(10 * time.Microsecond)
	p.POWAR.FirstOn = true
	n := build(t, kAry2Tree(t), p)
	attachConfig(t, n, synthetic("uniform", 9600, 0.05, 50*time.Microsecond), 5)
	r := run(t, n)
	if r.PowarRouting.MeanSelectable != 8 {
		t.Errorf("First-On: mean selectable %v, want 8", r.PowarRouting.MeanSelectable)
	}
}

// TestPOWARConfigErrors: the one-line errors of bad POWAR configurations.
func TestPOWARConfigErrors(t *testing.T) {
	dragonfly, err := topo.Build(topo.Config{Kind: topo.KindDragonfly, Routers: 3, NodesPerSwitch: 1, GlobalLinks: 2, Groups: 5})
	if err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name string
		tp   topo.Topology
		edit func(*Params)
		want string
	}{
		{"dragonfly", dragonfly, func(*Params) {}, "routing.kind: powar needs a fat tree (fattree, rlft), a megafly or a torus3d; dragonfly-15 is none of them"},
		{"gate", kAry2Tree(t), func(p *Params) { p.EndToEnd.Bound = 0.01 }, "routing.kind: powar cannot be combined with power.end_to_end.enabled"},
		{"t_off", kAry2Tree(t), func(p *Params) { p.POWAR.Thresholds.Off = 0 }, "routing.powar.t_off: must be > 0, got 0"},
		{"t_on", kAry2Tree(t), func(p *Params) { p.POWAR.Thresholds.On = 0.3 }, "routing.powar.t_on: must be ≥ 2 × routing.powar.t_off (0.25), got 0.3"},
		{"cycle", kAry2Tree(t), func(p *Params) { p.POWAR.Cycle = 0 }, "routing.powar.cycle: must be > 0, got 0 ps"},
		{"model", kAry2Tree(t), func(p *Params) { p.POWAR.Model.Net = 2 }, "routing.powar.model.net: must be in [0, 1], got 2"},
		{"initial", kAry2Tree(t), func(p *Params) { p.POWAR.Initial = 0 }, "routing.powar.initial_selectable: must be ≥ 1, got 0"},
		{"retry", kAry2Tree(t), func(p *Params) { p.POWAR.Retry = -1 }, "routing.powar.retry: must be ≥ 0, got -1 ps"},
		{"rr and first-on", kAry2Tree(t), func(p *Params) { p.POWAR.RoundRobin, p.POWAR.FirstOn = true, true }, "routing.powar.round_robin: cannot be combined with routing.powar.first_on"},
		{"alonso with LPI", kAry2Tree(t), func(p *Params) { p.POWAR.Alonso = true }, "routing.powar.alonso: needs power.mode always-on"},
		{"alonso and rr", kAry2Tree(t), func(p *Params) { p.POWAR.Alonso, p.POWAR.RoundRobin = true, true }, "routing.powar.alonso: cannot be combined"},
	} {
		p := powarParams(time.Microsecond)
		c.edit(&p)
		_, err := New(c.tp, p)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// TestPOWARAlonso: the paper's Alonso configuration on the 8-ary 2-tree
// (always on, Algorithm 2's selectable set as the switched-on up links,
// round-robin among them) delivers everything, twice the same, never
// waits for a wake-up, and its powar_model charges the up links only while
// selectable: the mean port on-time lies between the node links' share
// (64 of the 192 cabled switch ports, always on) and 1, and below the
// same run's without Alonso (every link on).
func TestPOWARAlonso(t *testing.T) {
	tp := kAry2Tree(t)
	res := func(alonso bool) Result {
		p := table6(eee.AlwaysOn, 0)
		p.Routing = RoutingPOWAR
		p.POWAR = DefaultPOWAR()
		p.POWAR.Alonso = alonso
		p.POWAR.RoundRobin = !alonso
		n := build(t, tp, p)
		attachConfig(t, n, synthetic("uniform", 9600, 0.05, 200*time.Microsecond), 3)
		return run(t, n)
	}
	a, b, rr := res(true), res(true), res(false)
	if !reflect.DeepEqual(a, b) || a.Packets == 0 || a.Packets != rr.Packets {
		t.Fatalf("Alonso: %d packets, again %d, Round-Robin %d", a.Packets, b.Packets, rr.Packets)
	}
	m := a.PowarModel
	if m == nil || !(m.PortOn > 64.0/192 && m.PortOn < 1) || m.WNet >= 1 || rr.PowarModel.PortOn != 1 {
		t.Fatalf("Alonso powar_model %+v (Round-Robin ports on %v): want 1/3 < ports on < 1", m, rr.PowarModel.PortOn)
	}
	if a.PowarRouting.Sleeping != 0 || a.PowarRouting.MeanSelectable >= 8 {
		t.Errorf("Alonso decisions %+v: want no sleeping port and fewer than 8 selectable", *a.PowarRouting)
	}
}

// hx1 is a 1-D HyperX of k routers with c nodes each, as the tests of PAL
// use it.
func hx1(t testing.TB, k, c int) topo.Topology {
	t.Helper()
	tp, err := topo.Build(topo.Config{Kind: topo.KindHyperX, Dims: []int{k}, NodesPerSwitch: c})
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// palAllOn is PAL over every link: TCEP with a deactivation epoch longer
// than any run (the sweeps' "pal-all-on", the analogue of the paper's
// UGAL_p).
func palAllOn(p Params) Params {
	p.TCEP = TCEP{Enabled: true, Config: tcep.DefaultConfig()}
	p.TCEP.DeactivationEpoch = 1_000_000 * us
	return p
}

// TestPALIntermediates: with the direct link congested, PAL detours
// through any other router of the row, chosen uniformly per packet —
// from the hub (0) and to it, and between the highest ids, which the
// earlier lower-id rule left without a detour (issue 25, defect 4).
func TestPALIntermediates(t *testing.T) {
	const k, draws = 8, 6000
	for _, tc := range []struct {
		name string
		c, t int
	}{{"hub-to-4", 0, 4}, {"4-to-hub", 4, 0}, {"7-to-6", 7, 6}, {"3-to-5", 3, 5}} {
		t.Run(tc.name, func(t *testing.T) {
			n := build(t, hx1(t, k, 1), palAllOn(table6(eee.AlwaysOn, 0)))
			g := n.swBase[tc.c] + int32(n.tc.port(0, tc.c, tc.t))
			n.palQ[g] = 1000 // far above 2·q(detour) + offset
			count := map[int32]int{}
			for range draws {
				pk := &packet{dst: int32(tc.t), size: 9600, hops: 1}
				out := n.routePAL(int32(tc.c), pk)
				if !pk.detour || out == g {
					t.Fatalf("no detour: out %d", out)
				}
				count[n.ports[n.ports[out].peer].sw]++
			}
			if len(count) != k-2 {
				t.Fatalf("intermediates %v, want every router but %d and %d", count, tc.c, tc.t)
			}
			for m, c := range count {
				if m == int32(tc.c) || m == int32(tc.t) || c < draws/(k-2)*8/10 || c > draws/(k-2)*12/10 {
					t.Errorf("intermediate %d taken %d times of %d", m, c, draws)
				}
			}
		})
	}
}

// TestPALTornadoThroughput: tornado on a 1-D HyperX of 8 routers with 3
// nodes each (24 nodes; node i sends to i + 11, so two of a router's nodes
// share one destination router) at 90 % load for 40 µs, always on.
// Minimal routing gives such a pair one link (a cap of 50 % a node), so
// the run takes about 1.8 times its duration; PAL over every link spreads
// it over the row and keeps up (issue 25, defect 4: with the lower-id rule
// the pairs with the hub had no detour).
func TestPALTornadoThroughput(t *testing.T) {
	tp := hx1(t, 8, 3)
	exec := func(p Params) float64 {
		n := build(t, tp, p)
		attachConfig(t, n, synthetic("tornado", 9600, 0.9, 40*time.Microsecond), 3)
		return run(t, n).ExecTimeS
	}
	minimal := exec(table6(eee.AlwaysOn, 0))
	pal := exec(palAllOn(table6(eee.AlwaysOn, 0)))
	t.Logf("tornado 90 %%: minimal %.1f µs, PAL %.1f µs", minimal*1e6, pal*1e6)
	if minimal < 65e-6 {
		t.Errorf("minimal %.1f µs: expected the 50 %% cap (about 72 µs)", minimal*1e6)
	}
	if pal > 48e-6 {
		t.Errorf("PAL %.1f µs: expected about the 40 µs of offered traffic", pal*1e6)
	}
}

// TestPALDeadlockFree: PAL with detours through any intermediate delivers
// everything at 100 % offered load with small buffers (pausing early), on
// a 2-D and a 3-D HyperX, every pattern, all links on and under TCEP.
func TestPALDeadlockFree(t *testing.T) {
	for _, dims := range [][]int{{4, 4}, {3, 3, 3}} {
		tp, err := topo.Build(topo.Config{Kind: topo.KindHyperX, Dims: dims, NodesPerSwitch: 2})
		if err != nil {
			t.Fatal(err)
		}
		for _, pattern := range []string{"uniform", "tornado", "bitreverse"} {
			if pattern == "bitreverse" && len(dims) == 3 {
				continue // 54 nodes: not a power of two
			}
			for _, allOn := range []bool{true, false} {
				p := table6(eee.DeepSleep, time.Microsecond)
				p.QueueBytes, p.PFCStop, p.PFCGo = 24000, 12000, 3200
				if allOn {
					p = palAllOn(p)
				} else {
					p.TCEP = TCEP{Enabled: true, Config: tcep.DefaultConfig()}
				}
				n := build(t, tp, p)
				attachConfig(t, n, synthetic(pattern, 9600, 1, 30*time.Microsecond), 11)
				if err := n.Run(t.Context(), 0, nil); err != nil {
					t.Errorf("%v %s all-on %v: %v", dims, pattern, allOn, err)
					continue
				}
				if c := n.Result().Consolidation; c.Violations != 0 {
					t.Errorf("%v %s all-on %v: %+v", dims, pattern, allOn, c)
				}
			}
		}
	}
}

// TestPALChannelDependenciesAcyclic checks the scheme behind PAL's deadlock
// freedom on a 2-D and a 3-D HyperX: every path PAL can take (dimension
// order; per dimension direct, or via any intermediate m, or via m and then
// the hub when m's direct link was gated meanwhile), with the class
// network.arrive gives each hop (1 after the dimension's intermediate, else
// 0), adds a dependency between consecutive (link, class) channels; the
// graph must be acyclic. Without the classes (one class) it is not, which
// is why the model needs them (vc.go).
func TestPALChannelDependenciesAcyclic(t *testing.T) {
	for _, dims := range [][]int{{4, 4}, {3, 4, 3}} {
		for _, classes := range []bool{true, false} {
			cyclic := palCDGCyclic(dims, classes)
			if cyclic == classes {
				t.Errorf("dims %v, two classes %v: cyclic %v", dims, classes, cyclic)
			}
		}
	}
}

// palCDGCyclic builds PAL's channel dependency graph on a HyperX of dims
// and reports whether it has a cycle. A channel is (from, to, class).
func palCDGCyclic(dims []int, classes bool) bool {
	type ch struct{ a, b, c int }
	S := 1
	for _, k := range dims {
		S *= k
	}
	coord := func(s, i int) int {
		for j := range i {
			s /= dims[j]
		}
		return s % dims[i]
	}
	with := func(s, i, v int) int {
		st := 1
		for j := range i {
			st *= dims[j]
		}
		return s + (v-coord(s, i))*st
	}
	edges := map[ch]map[ch]bool{}
	add := func(path []ch) {
		for j := 1; j < len(path); j++ {
			if edges[path[j-1]] == nil {
				edges[path[j-1]] = map[ch]bool{}
			}
			edges[path[j-1]][path[j]] = true
		}
	}
	cls := func(c int) int {
		if classes {
			return c
		}
		return 0
	}
	// paths extends each prefix ending at switch s by dimension i onward.
	var walk func(prefix []ch, s, d, i int)
	walk = func(prefix []ch, s, d, i int) {
		if i == len(dims) {
			add(prefix)
			return
		}
		c, cd := coord(s, i), coord(d, i)
		if c == cd {
			walk(prefix, s, d, i+1)
			return
		}
		t := with(s, i, cd)
		walk(append(slices.Clip(prefix), ch{s, t, 0}), t, d, i+1)
		for m := range dims[i] {
			if m == c || m == cd {
				continue
			}
			sm := with(s, i, m)
			walk(append(slices.Clip(prefix), ch{s, sm, 0}, ch{sm, t, cls(1)}), t, d, i+1)
			if m != 0 && c != 0 && cd != 0 {
				h := with(s, i, 0)
				walk(append(slices.Clip(prefix), ch{s, sm, 0}, ch{sm, h, cls(1)}, ch{h, t, cls(1)}), t, d, i+1)
			}
		}
	}
	for s := range S {
		for d := range S {
			if s != d {
				walk(nil, s, d, 0)
			}
		}
	}
	return graph.HasCycle(edges)
}

// TestUGAL: routing ugal (paper 004's UGAL_p baseline) is PAL over every
// link without the consolidation: the same run as PAL with nothing ever
// deactivated, reported in its own block; refused without fully connected
// dimensions.
func TestUGAL(t *testing.T) {
	tp := hx1(t, 8, 3)
	runWith := func(p Params) Result {
		n := build(t, tp, p)
		attachConfig(t, n, synthetic("tornado", 9600, 0.9, 40*time.Microsecond), 3)
		return run(t, n)
	}
	p := table6(eee.AlwaysOn, 0)
	p.Routing = RoutingUGAL
	u := runWith(p)
	pal := runWith(palAllOn(table6(eee.AlwaysOn, 0)))
	if u.UGAL == nil || u.Consolidation != nil || u.UGAL.NonMinimal == 0 {
		t.Fatalf("ugal %+v, consolidation %+v", u.UGAL, u.Consolidation)
	}
	if u.ExecTimeS != pal.ExecTimeS || u.UGAL.NonMinimal != pal.Consolidation.NonMinimal || u.Packets != pal.Packets {
		t.Errorf("ugal %v s, %d detours; PAL all on %v s, %d", u.ExecTimeS, u.UGAL.NonMinimal, pal.ExecTimeS, pal.Consolidation.NonMinimal)
	}
	if _, err := New(fatTree(t, 8), p); err == nil || err.Error() != "routing.kind: ugal needs topology.kind hyperx or fbfly (fully connected dimensions), not "+fatTree(t, 8).Name() {
		t.Errorf("fat tree: %v", err)
	}
}
