package topo

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// mustBuild builds c or fails the test.
func mustBuild(tb testing.TB, c Config) Topology {
	tb.Helper()
	t, err := Build(c)
	if err != nil {
		tb.Fatalf("Build(%+v): %v", c, err)
	}
	return t
}

// small lists instances small enough to check every (switch, node) pair.
func small() []Config {
	return []Config{
		{Kind: KindMegafly, Leaves: 2, Spines: 2, NodesPerSwitch: 2, GlobalLinks: 2},
		{Kind: KindMegafly, Leaves: 3, Spines: 2, NodesPerSwitch: 2, GlobalLinks: 3},
		{Kind: KindMegafly, Leaves: 2, Spines: 3, NodesPerSwitch: 1, GlobalLinks: 2, Groups: 4},
		{Kind: KindMegafly, Leaves: 3, Spines: 2, NodesPerSwitch: 2, GlobalLinks: 2, Groups: 1},
		{Kind: KindMegafly, Radix: 8},
		{Kind: KindMegafly, Radix: 12, Leaves: 3},
		{Kind: KindFatTree, Radix: 4},
		{Kind: KindFatTree, Radix: 6},
		{Kind: KindFatTree, Radix: 4, Levels: 4},
		{Kind: KindFatTree, Radix: 8, Levels: 2},
		{Kind: KindFatTree, Radix: 6, Levels: 1},
		{Kind: KindRLFT, Radix: 4},
		{Kind: KindRLFT, Radix: 6},
		{Kind: KindRLFT, Radix: 8},
		{Kind: KindRLFT, Radix: 4, Levels: 4},
		{Kind: KindRLFT, Radix: 10, Levels: 2},
		{Kind: KindTorus3D, Dims: []int{3, 4, 5}, NodesPerSwitch: 1},
		{Kind: KindTorus3D, Dims: []int{2, 2, 2}, NodesPerSwitch: 2},
		{Kind: KindTorus3D, Dims: []int{1, 3, 4}, NodesPerSwitch: 1},
		{Kind: KindTorus3D, Dims: []int{4, 4, 4}, NodesPerSwitch: 2, Radix: 10},
		{Kind: KindTorus3D, Dims: []int{4, 4, 4}, NodesPerSwitch: 2, Trunk: 4},
		{Kind: KindTorus3D, Dims: []int{2, 3, 1}, NodesPerSwitch: 3, Trunk: 2, Radix: 20},
		{Kind: KindDragonfly, Routers: 4, NodesPerSwitch: 2, GlobalLinks: 2},
		{Kind: KindDragonfly, Routers: 3, NodesPerSwitch: 1, GlobalLinks: 2, Groups: 5},
		{Kind: KindDragonfly, Radix: 7},
		{Kind: KindFBFly, Dims: []int{4, 4}, NodesPerSwitch: 2},
		{Kind: KindFBFly, Dims: []int{3, 5, 2}, NodesPerSwitch: 1},
		{Kind: KindFBFly, Dims: []int{8}, NodesPerSwitch: 4},
		{Kind: KindHyperX, Dims: []int{3, 4}, NodesPerSwitch: 2},
		{Kind: KindHyperX, Dims: []int{2, 3, 4}, NodesPerSwitch: 1},
		{Kind: KindHyperX, Dims: []int{5, 1, 2}, NodesPerSwitch: 3, Radix: 12},
	}
}

// defaults lists the default network of every kind (and the 1024-host tree).
func defaults() []Config {
	var cs []Config
	for _, k := range Kinds() {
		cs = append(cs, Config{Kind: k})
	}
	return append(cs, Config{Kind: KindRLFT, Radix: 16})
}

// walk follows Route from switch s to node dst. It returns the number of
// links crossed and the number of Global links among them, or fails.
func walk(tb testing.TB, t Topology, s, dst int) (hops, globals int) {
	tb.Helper()
	start := s
	for range 4 * (t.Switches() + 1) {
		p := t.Route(s, dst)
		if p < 0 || p >= t.Radix(s) {
			tb.Fatalf("%s: Route(%d, %d) = port %d, radix %d", t.Name(), s, dst, p, t.Radix(s))
		}
		peer, ok := t.PortPeer(s, p)
		if !ok {
			tb.Fatalf("%s: Route(%d, %d) = unconnected port %d (from switch %d)", t.Name(), s, dst, p, start)
		}
		hops++
		if peer.Kind == NodeEnd {
			if int(peer.ID) != dst {
				tb.Fatalf("%s: route from switch %d to node %d ends at node %d", t.Name(), start, dst, peer.ID)
			}
			return hops, globals
		}
		if isGlobal(t, s, p) {
			globals++
		}
		s = int(peer.ID)
	}
	tb.Fatalf("%s: route from switch %d to node %d does not terminate", t.Name(), start, dst)
	return 0, 0
}

func isGlobal(t Topology, s, p int) bool {
	switch t := t.(type) {
	case *Megafly:
		return t.SwitchRole(s) == "spine" && p >= t.leaves
	case *Dragonfly:
		return p >= t.globalBase
	}
	return false
}

// bfs returns the switch-graph distances from switch s over the cables.
func bfs(t Topology, s int) []int {
	dist := make([]int, t.Switches())
	for i := range dist {
		dist[i] = -1
	}
	dist[s] = 0
	queue := []int{s}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for p := range t.Radix(u) {
			e, ok := t.PortPeer(u, p)
			if ok && e.Kind == SwitchEnd && dist[e.ID] < 0 {
				dist[e.ID] = dist[u] + 1
				queue = append(queue, int(e.ID))
			}
		}
	}
	return dist
}

// checkRoute checks one (switch, node) pair: the walk terminates, its
// length is Distance, and it is a shortest path where the topology
// promises one (see minimalFrom).
func checkRoute(tb testing.TB, t Topology, s, dst int, dist []int) {
	tb.Helper()
	hops, globals := walk(tb, t, s, dst)
	if d := t.Distance(s, dst); d != hops {
		tb.Fatalf("%s: Distance(%d, %d) = %d, walked %d", t.Name(), s, dst, d, hops)
	}
	sw, _ := t.Attach(dst)
	best := dist[sw] + 1
	if globals > 1 {
		tb.Fatalf("%s: route from switch %d to node %d crosses %d global links", t.Name(), s, dst, globals)
	}
	switch {
	case hops < best:
		tb.Fatalf("%s: route from switch %d to node %d: %d links, shorter than BFS %d?", t.Name(), s, dst, hops, best)
	case minimalFrom(t, s) && hops != best:
		tb.Fatalf("%s: route from switch %d to node %d: %d links, shortest path %d", t.Name(), s, dst, hops, best)
	case hops > best+1:
		tb.Fatalf("%s: route from switch %d to node %d: %d links, shortest path %d", t.Name(), s, dst, hops, best)
	}
}

// minimalFrom says whether routes from switch s are graph-shortest paths:
// always for fat trees, tori and flattened butterflies; from the leaves of a
// Megafly (a spine without the global link to the destination group, which
// no route visits, detours by a leaf); never promised for the dragonfly,
// whose local–global–local routing can be one link longer than a path over
// two global links.
func minimalFrom(t Topology, s int) bool {
	switch t.(type) {
	case *Megafly:
		return t.SwitchRole(s) == "leaf"
	case *Dragonfly:
		return false
	}
	return true
}

func TestRoutesSmallAllPairs(t *testing.T) {
	for _, c := range small() {
		tp := mustBuild(t, c)
		t.Run(fmt.Sprintf("%s/%v", tp.Name(), c), func(t *testing.T) {
			for s := range tp.Switches() {
				dist := bfs(tp, s)
				for dst := range tp.Nodes() {
					checkRoute(t, tp, s, dst, dist)
				}
			}
		})
	}
}

// TestRoutesDefaultsSampled checks the default networks: every node-bearing
// switch to a sample of nodes, and a sample of other switches.
func TestRoutesDefaultsSampled(t *testing.T) {
	for _, c := range defaults() {
		tp := mustBuild(t, c)
		t.Run(tp.Name(), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(1, uint64(tp.Nodes())))
			sources := rng.Perm(tp.Switches())[:min(tp.Switches(), 60)]
			for _, s := range sources {
				dist := bfs(tp, s)
				for range 400 {
					checkRoute(t, tp, s, rng.IntN(tp.Nodes()), dist)
				}
			}
		})
	}
}

// TestDragonflyDetours measures how often local–global–local is longer
// than the shortest path (documented in docs/topologies.md).
func TestDragonflyDetours(t *testing.T) {
	tp := mustBuild(t, Config{Kind: KindDragonfly})
	var longer, total int
	for s := range tp.Switches() {
		dist := bfs(tp, s)
		for dst := range tp.Nodes() {
			sw, _ := tp.Attach(dst)
			if sw == s {
				continue
			}
			total++
			if tp.Distance(s, dst) > dist[sw]+1 {
				longer++
			}
		}
	}
	t.Logf("%s: l-g-l longer than the shortest path for %d of %d router→node pairs (%.2f %%)",
		tp.Name(), longer, total, 100*float64(longer)/float64(total))
	if longer == 0 || longer*10 > total {
		t.Errorf("unexpected share of detours: %d of %d", longer, total)
	}
}

// TestWiring checks that Links lists every cable once, uses each switch
// port and each NIC at most once, and agrees with PortPeer and Attach.
func TestWiring(t *testing.T) {
	for _, c := range append(small(), defaults()...) {
		tp := mustBuild(t, c)
		t.Run(tp.Name(), func(t *testing.T) { checkWiring(t, tp) })
	}
}

func checkWiring(tb testing.TB, tp Topology) {
	tb.Helper()
	type port struct{ s, p int32 }
	seen := map[port]End{}
	nic := make([]bool, tp.Nodes())
	use := func(a, b End) {
		switch a.Kind {
		case NodeEnd:
			if a.ID < 0 || int(a.ID) >= tp.Nodes() || a.Port != 0 {
				tb.Fatalf("%s: bad NIC end %+v", tp.Name(), a)
			}
			if nic[a.ID] {
				tb.Fatalf("%s: node %d cabled twice", tp.Name(), a.ID)
			}
			nic[a.ID] = true
			sw, p := tp.Attach(int(a.ID))
			if b.Kind != SwitchEnd || int(b.ID) != sw || int(b.Port) != p {
				tb.Fatalf("%s: node %d cabled to %+v, Attach says %d/%d", tp.Name(), a.ID, b, sw, p)
			}
		case SwitchEnd:
			if a.ID < 0 || int(a.ID) >= tp.Switches() || a.Port < 0 || int(a.Port) >= tp.Radix(int(a.ID)) {
				tb.Fatalf("%s: bad switch end %+v", tp.Name(), a)
			}
			k := port{a.ID, a.Port}
			if _, dup := seen[k]; dup {
				tb.Fatalf("%s: switch %d port %d used twice", tp.Name(), a.ID, a.Port)
			}
			seen[k] = b
			if peer, ok := tp.PortPeer(int(a.ID), int(a.Port)); !ok || peer != b {
				tb.Fatalf("%s: PortPeer(%d, %d) = %+v %v, cable goes to %+v", tp.Name(), a.ID, a.Port, peer, ok, b)
			}
		}
	}
	links := tp.Links()
	for _, l := range links {
		if l.A == l.B {
			tb.Fatalf("%s: self-loop %+v", tp.Name(), l)
		}
		if (l.Class == Injection) != (l.A.Kind == NodeEnd || l.B.Kind == NodeEnd) {
			tb.Fatalf("%s: link %+v has class %d", tp.Name(), l, l.Class)
		}
		use(l.A, l.B)
		use(l.B, l.A)
	}
	for n, ok := range nic {
		if !ok {
			tb.Fatalf("%s: node %d has no cable", tp.Name(), n)
		}
	}
	// Every port PortPeer calls connected is a cable of Links.
	for s := range tp.Switches() {
		for p := range tp.Radix(s) {
			peer, ok := tp.PortPeer(s, p)
			if got, listed := seen[port{int32(s), int32(p)}]; ok != listed || (ok && got != peer) {
				tb.Fatalf("%s: PortPeer(%d, %d) = %+v %v but Links has %+v %v", tp.Name(), s, p, peer, ok, got, listed)
			}
		}
	}
	if again := tp.Links(); len(again) != len(links) || (len(links) > 0 && again[len(again)-1] != links[len(links)-1]) {
		tb.Fatalf("%s: Links is not deterministic", tp.Name())
	}
}

// TestMegaflyGlobalLinks checks docs/model.md §3.1: every pair of groups is joined
// by exactly one global link, each spine carries at most h of them, and
// the default has docs/model.md §3.1's wiring rule.
func TestMegaflyGlobalLinks(t *testing.T) {
	cases := []Config{
		Default(),
		{Kind: KindMegafly, Leaves: 2, Spines: 3, NodesPerSwitch: 1, GlobalLinks: 2, Groups: 4},
		{Kind: KindMegafly, Radix: 8},
		{Kind: KindMegafly, Radix: 36},
	}
	for _, c := range cases {
		tp := mustBuild(t, c).(*Megafly)
		t.Run(tp.Name(), func(t *testing.T) {
			g := tp.Groups()
			pairs := map[[2]int]int{}
			perSpine := map[int32]int{}
			for _, l := range tp.Links() {
				if l.Class != Global {
					continue
				}
				a, b := tp.SwitchGroup(int(l.A.ID)), tp.SwitchGroup(int(l.B.ID))
				if a == b || tp.SwitchRole(int(l.A.ID)) != "spine" || tp.SwitchRole(int(l.B.ID)) != "spine" {
					t.Fatalf("bad global link %+v", l)
				}
				pairs[[2]int{min(a, b), max(a, b)}]++
				perSpine[l.A.ID]++
				perSpine[l.B.ID]++
			}
			if len(pairs) != g*(g-1)/2 {
				t.Fatalf("%d group pairs joined, want %d", len(pairs), g*(g-1)/2)
			}
			for p, n := range pairs {
				if n != 1 {
					t.Fatalf("groups %v joined by %d links", p, n)
				}
			}
			for s, n := range perSpine {
				if n > tp.globals {
					t.Fatalf("spine %d has %d global links", s, n)
				}
			}
		})
	}
	// docs/model.md §3.1: spine x of group g carries the links to (g + 1 + i + 8x) mod 65.
	tp := mustBuild(t, Default()).(*Megafly)
	for g := range 65 {
		for x := range 8 {
			for i := range 8 {
				peer, ok := tp.PortPeer(g*16+8+x, 8+i)
				if want := (g + 1 + i + 8*x) % 65; !ok || tp.SwitchGroup(int(peer.ID)) != want {
					t.Fatalf("group %d spine %d global %d → %+v, want group %d", g, x, i, peer, want)
				}
			}
		}
	}
}

// TestMegaflyRoutingRules checks docs/model.md §3.1's rules on the default: the
// intra-group spine is dst mod 8, the inter-group spine owns the link.
func TestMegaflyRoutingRules(t *testing.T) {
	tp := mustBuild(t, Default()).(*Megafly)
	for dst := range tp.Nodes() {
		gd, ld := dst/64, dst/8%8
		leaf := gd*16 + (ld+1)%8 // another leaf of dst's group
		if p := tp.Route(leaf, dst); p != 8+dst%8 {
			t.Fatalf("leaf %d to node %d: port %d, want spine %d", leaf, dst, p, dst%8)
		}
		src := ((gd + 3) % 65) * 16 // leaf 0 of a group at offset 62
		p := tp.Route(src, dst)
		spine, _ := tp.PortPeer(src, p)
		peer, _ := tp.PortPeer(int(spine.ID), tp.Route(int(spine.ID), dst))
		if tp.SwitchGroup(int(peer.ID)) != gd {
			t.Fatalf("node %d: spine %d does not own the link to group %d", dst, spine.ID, gd)
		}
	}
}

func TestSizes(t *testing.T) {
	cases := []struct {
		c                             Config
		name                          string
		nodes, switches, cables, t7   int
		roles                         map[string]int
		injection, local, global, rad int
	}{
		{Default(), "megafly-4160", 4160, 1040, 10400, 20800,
			map[string]int{"leaf": 520, "spine": 520}, 4160, 4160, 2080, 16},
		{Config{Kind: KindTorus3D}, "torus3d-4000", 4000, 1000, 7000, 28000,
			map[string]int{"router": 1000}, 4000, 3000, 0, 24},
		{Config{Kind: KindRLFT}, "rlft-4394", 4394, 845, 4394 + 338*13*2, 26364,
			map[string]int{"leaf": 338, "middle": 338, "top": 169}, 4394, 338 * 26, 0, 26},
		{Config{Kind: KindRLFT, Radix: 16}, "rlft-1024", 1024, 320, 1024 + 128*8*2, 320*16 + 1024,
			map[string]int{"leaf": 128, "middle": 128, "top": 64}, 1024, 2048, 0, 16},
		{Config{Kind: KindFatTree}, "fattree-512", 512, 192, 512 + 2*64*8, 192*16 + 512,
			map[string]int{"leaf": 64, "middle": 64, "top": 64}, 512, 1024, 0, 16},
		{Config{Kind: KindDragonfly}, "dragonfly-1056", 1056, 264, 1056 + 33*28 + 33*16, 264*15 + 1056,
			map[string]int{"router": 264}, 1056, 33 * 28, 528, 15},
		{Config{Kind: KindFBFly}, "fbfly-512", 512, 64, 512 + 2*8*28, 64*22 + 512,
			map[string]int{"router": 64}, 512, 448, 0, 22},
		// 4×4×4 switches of radix 4 + 3·3 = 13; each of the 3 dimensions has
		// 16 rows of 4 switches, 6 cables per row.
		{Config{Kind: KindHyperX}, "hyperx-256", 256, 64, 256 + 3*16*6, 64*13 + 256,
			map[string]int{"router": 64}, 256, 288, 0, 13},
		// 3×4 with 2 nodes per switch: each switch has (3−1)+(4−1) = 5
		// switch links, 12·5/2 = 30 cables, plus 24 injection cables.
		{Config{Kind: KindHyperX, Dims: []int{3, 4}, NodesPerSwitch: 2}, "hyperx-24", 24, 12, 24 + 30, 12*7 + 24,
			map[string]int{"router": 12}, 24, 30, 0, 7},
		{Config{Kind: KindMegafly, Radix: 36}, "megafly-105300", 105300, 11700, 105300 * 2.5, 11700*36 + 105300,
			map[string]int{"leaf": 5850, "spine": 5850}, 105300, 105300, 52650, 36},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tp := mustBuild(t, tc.c)
			d := Describe(tp)
			if tp.Name() != tc.name || d.Nodes != tc.nodes || d.Switches != tc.switches || d.Cables != tc.cables ||
				d.Table7Links != tc.t7 || Table7Links(tp) != tc.t7 || tp.Radix(0) != tc.rad {
				t.Fatalf("got %s: %d nodes, %d switches, %d cables, %d Table 7 links, radix %d; want %s %d %d %d %d %d",
					tp.Name(), d.Nodes, d.Switches, d.Cables, d.Table7Links, tp.Radix(0),
					tc.name, tc.nodes, tc.switches, tc.cables, tc.t7, tc.rad)
			}
			if d.InjectionCables != tc.injection || d.LocalCables != tc.local || d.GlobalCables != tc.global {
				t.Fatalf("cables by class %d/%d/%d, want %d/%d/%d", d.InjectionCables, d.LocalCables, d.GlobalCables,
					tc.injection, tc.local, tc.global)
			}
			if fmt.Sprint(d.Roles) != fmt.Sprint(tc.roles) {
				t.Fatalf("roles %v, want %v", d.Roles, tc.roles)
			}
			t.Logf("\n%s", d)
		})
	}
}

// TestMegaflyDefaultAllPairs checks every leaf → node route of the paper's
// network (docs/model.md §3.1) against BFS.
func TestMegaflyDefaultAllPairs(t *testing.T) {
	if testing.Short() {
		t.Skip("all pairs of the 4160-node Megafly; -short samples them in TestRoutesDefaultsSampled")
	}
	tp := mustBuild(t, Default())
	for s := range tp.Switches() {
		if tp.SwitchRole(s) != "leaf" {
			continue
		}
		dist := bfs(tp, s)
		for dst := range tp.Nodes() {
			checkRoute(t, tp, s, dst, dist)
		}
	}
}

// TestFatTreePods: a fat tree's groups are its pods: every switch below
// the top is in the pod of the nodes under it, every pod has its leaves and
// middles, and the top switches are dealt evenly among the pods.
func TestFatTreePods(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		pods int
	}{
		{Config{Kind: KindRLFT, Radix: 16, Levels: 3}, 16},
		{Config{Kind: KindFatTree, Radix: 8, Levels: 3}, 4},
		{Config{Kind: KindRLFT, Radix: 8, Levels: 2}, 8},
	} {
		tp, err := Build(c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		ft := tp.(*FatTree)
		if ft.Groups() != c.pods {
			t.Fatalf("%+v: %d groups, want %d", c.cfg, ft.Groups(), c.pods)
		}
		perPod := make([]int, c.pods)
		for s := range ft.Switches() {
			g := ft.SwitchGroup(s)
			if g < 0 || g >= c.pods {
				t.Fatalf("%+v: switch %d in group %d", c.cfg, s, g)
			}
			perPod[g]++
		}
		for node := range ft.Nodes() {
			leaf, _ := ft.Attach(node)
			if want := node * c.pods / ft.Nodes(); ft.SwitchGroup(leaf) != want {
				t.Errorf("%+v: node %d's leaf in group %d, want %d", c.cfg, node, ft.SwitchGroup(leaf), want)
			}
		}
		if lo, hi := slices.Min(perPod), slices.Max(perPod); hi-lo > 1 {
			t.Errorf("%+v: pods of %d to %d switches", c.cfg, lo, hi)
		}
		// A link between two switches below the top stays in a pod.
		for _, l := range ft.Links() {
			if l.A.Kind != SwitchEnd || l.B.Kind != SwitchEnd {
				continue
			}
			a, b := int(l.A.ID), int(l.B.ID)
			if ft.Level(a) < ft.Levels() && ft.Level(b) < ft.Levels() && ft.SwitchGroup(a) != ft.SwitchGroup(b) {
				t.Errorf("%+v: link %d–%d between pods below the top", c.cfg, a, b)
			}
		}
	}
}
