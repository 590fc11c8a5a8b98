package topo

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"
)

// smallMegafly is the 5-group Megafly of the hand calculations: 2 leaves,
// 2 spines, 2 nodes per leaf, 2 global links per spine. Spine x of group g
// has global port i to group (g + 1 + i + 2x) mod 5: spine 0 owns offsets
// 1 and 2, spine 1 offsets 3 and 4. Switches per group: leaves 0, 1, spines
// 2, 3; leaf ports 0, 1 nodes and 2, 3 spines; spine ports 0, 1 leaves and
// 2, 3 global links. Node (g·2 + l)·2 + p.
func smallMegafly(t testing.TB) *Megafly {
	t.Helper()
	return mustBuild(t, Config{Kind: KindMegafly, Groups: 5, Leaves: 2, Spines: 2, NodesPerSwitch: 2, GlobalLinks: 2}).(*Megafly)
}

// TestMegaflyNonMinimalHand checks the allowed intermediates and the
// candidate ports against a hand calculation on smallMegafly. The owner of
// g → g2 is spine 0 when (g2 − g) mod 5 ∈ {1, 2}, else spine 1; gi is
// allowed from gs to gd when gi > gs and owner(gi → gd) ≥ owner(gi → gs).
func TestMegaflyNonMinimalHand(t *testing.T) {
	m := smallMegafly(t)
	// (gs, gd) → allowed gi with transit (T) or straight (S):
	//   (0,1): gi 2: owners to 1 and 0 both 1 → S; gi 3: to 1 spine 1, to 0
	//          spine 0 → T; gi 4: both spine 0 → S.
	//   (0,2): gi 1: to 2 spine 0 < to 0 spine 1 → no; gi 3: 1 > 0 → T;
	//          gi 4: to 2 spine 1 > to 0 spine 0 → T.
	//   (1,3): gi 2: to 3 spine 0 < to 1 spine 1 → no; gi 4: to 3 spine 1 >
	//          to 1 spine 0 → T.
	//   (2,0): gi 3: to 0 spine 0 < to 2 spine 1 → no; gi 4: 0 < 1 → no.
	//   (3,1): gi 4: to 1 spine 0 < to 3 spine 1 → no.
	want := map[[2]int]map[int]bool{ // gi → transit
		{0, 1}: {2: false, 3: true, 4: false},
		{0, 2}: {3: true, 4: true},
		{1, 3}: {4: true},
		{2, 0}: {},
		{3, 1}: {},
		{4, 0}: {},
	}
	for pair, w := range want {
		got := map[int]bool{}
		for gi := range 5 {
			if ok, tr := m.NonMinimalVia(pair[0], gi, pair[1]); ok {
				got[gi] = tr
			}
		}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("%d → %d: intermediates %v, want %v", pair[0], pair[1], got, w)
		}
	}
	for _, c := range []struct {
		name   string
		s, dst int
		ports  []int
		dist   []int
	}{
		// Leaf 0 of group 0 to node 4 (group 1): minimal spine 0; spine 1
		// owns the links to groups 3 (T) and 4 (S): 1 + 4 links.
		{"leaf 0→g1", 0, 4, []int{3}, []int{5}},
		// Spine 0 of group 0: port 2 is the minimal link to group 1, port 3
		// goes to group 2 (S): global, global, down, node.
		{"spine 0→g1", 2, 4, []int{3}, []int{4}},
		// Spine 1: port 2 to group 3 (T: 6 links), port 3 to group 4 (S).
		{"spine 1→g1", 3, 4, []int{2, 3}, []int{6, 4}},
		// To group 2 only the transits through 3 and 4, both on spine 1.
		{"leaf 0→g2", 0, 8, []int{3}, []int{7}},
		{"spine 0→g2", 2, 8, nil, nil},
		{"spine 1→g2", 3, 8, []int{2, 3}, []int{6, 6}},
		// Group 3 to group 1: no intermediate above 3 is allowed.
		{"g3 leaf→g1", 12, 4, nil, nil},
		{"g3 spine 1→g1", 15, 4, nil, nil},
		// Inside the group: nothing.
		{"leaf 0→leaf 1", 0, 2, nil, nil},
		{"spine 0→g0", 2, 1, nil, nil},
	} {
		buf := make([]int, 0, m.Radix(c.s))
		got := m.NonMinimalPorts(c.s, c.dst, buf)
		if len(got) != len(c.ports) || (len(got) > 0 && !reflect.DeepEqual(got, c.ports)) {
			t.Errorf("%s: ports %v, want %v", c.name, got, c.ports)
			continue
		}
		for i, p := range got {
			if d := m.NonMinimalDistance(c.s, c.dst, p); d != c.dist[i] {
				t.Errorf("%s: port %d distance %d, want %d", c.name, p, d, c.dist[i])
			}
		}
	}
	// Not candidates: the minimal ports and node ports.
	for _, c := range [][3]int{{0, 4, 2}, {2, 4, 2}, {0, 4, 0}, {2, 4, 0}, {0, 2, 3}} {
		if d := m.NonMinimalDistance(c[0], c[1], c[2]); d != 0 {
			t.Errorf("switch %d to %d port %d: distance %d, want 0 (not a candidate)", c[0], c[1], c[2], d)
		}
	}
	if a := testing.AllocsPerRun(100, func() {
		m.NonMinimalPorts(3, 4, make([]int, 0, 8)[:0])
	}); a > 1 {
		t.Errorf("NonMinimalPorts allocates %v times", a)
	}
}

// nonMinShapes are small Megaflies: full ones, ones with unconnected
// global ports (G < S·h + 1) and one with a single global link per spine.
var nonMinShapes = []Config{
	{Kind: KindMegafly, Groups: 5, Leaves: 2, Spines: 2, NodesPerSwitch: 1, GlobalLinks: 2},
	{Kind: KindMegafly, Groups: 3, Leaves: 2, Spines: 2, NodesPerSwitch: 1, GlobalLinks: 1},
	{Kind: KindMegafly, Groups: 7, Leaves: 2, Spines: 3, NodesPerSwitch: 1, GlobalLinks: 2},
	{Kind: KindMegafly, Groups: 8, Leaves: 2, Spines: 3, NodesPerSwitch: 2, GlobalLinks: 3},
	{Kind: KindMegafly, Groups: 9, Leaves: 3, Spines: 4, NodesPerSwitch: 1, GlobalLinks: 2},
	{Kind: KindMegafly, Groups: 10, Leaves: 2, Spines: 3, NodesPerSwitch: 1, GlobalLinks: 3},
	{Kind: KindMegafly, Groups: 13, Leaves: 2, Spines: 3, NodesPerSwitch: 1, GlobalLinks: 4},
	{Kind: KindMegafly, Groups: 17, Leaves: 2, Spines: 4, NodesPerSwitch: 1, GlobalLinks: 4},
	{Kind: KindMegafly, Groups: 12, Leaves: 2, Spines: 6, NodesPerSwitch: 1, GlobalLinks: 2},
}

// wiring is the global wiring read from PortPeer alone (not from the
// Megafly's arithmetic): link[g][g2] is the (spine switch, port) of g's
// link to g2, arrive[g][g2] the spine index in g2 where it lands.
type wiring struct {
	link   [][][2]int
	arrive [][]int
}

func readWiring(t *testing.T, m *Megafly) wiring {
	G := m.Groups()
	w := wiring{link: make([][][2]int, G), arrive: make([][]int, G)}
	for g := range G {
		w.link[g] = make([][2]int, G)
		w.arrive[g] = make([]int, G)
		for g2 := range G {
			w.link[g][g2] = [2]int{-1, -1}
		}
	}
	for s := range m.Switches() {
		if m.SwitchRole(s) != "spine" {
			continue
		}
		for p := range m.Radix(s) {
			peer, ok := m.PortPeer(s, p)
			if !ok || peer.Kind != SwitchEnd || m.SwitchGroup(int(peer.ID)) == m.SwitchGroup(s) {
				continue
			}
			g, g2 := m.SwitchGroup(s), m.SwitchGroup(int(peer.ID))
			w.link[g][g2] = [2]int{s, p}
			w.arrive[g][g2] = int(peer.ID) - g2*(m.leaves+m.spines) - m.leaves
		}
	}
	for g := range G {
		for g2 := range G {
			if g != g2 && w.link[g][g2][0] < 0 {
				t.Fatalf("%s: no link %d → %d", m.Name(), g, g2)
			}
		}
	}
	return w
}

// owner is the spine index of group g holding the link to g2, by wiring.
func (w wiring) owner(m *Megafly, g, g2 int) int {
	return w.link[g][g2][0] - g*(m.leaves+m.spines) - m.leaves
}

// TestMegaflyNonMinimalBrute checks NonMinimalVia, NonMinimalPorts and
// NonMinimalDistance against a brute-force reading of the wiring
// (PortPeer) on every switch and destination of small Megaflies, and walks
// every candidate path hop by hop (Route after the detour's first choices):
// it crosses exactly two global links, through the chosen intermediate,
// with the distance announced.
func TestMegaflyNonMinimalBrute(t *testing.T) {
	for _, c := range nonMinShapes {
		m := mustBuild(t, c).(*Megafly)
		t.Run(fmt.Sprintf("%s-g%d-s%d-h%d", m.Name(), c.Groups, c.Spines, c.GlobalLinks), func(t *testing.T) {
			w := readWiring(t, m)
			G := m.Groups()
			valid := func(gs, gi, gd int) (bool, bool) {
				if gi == gs || gi == gd || gs == gd || gi < gs {
					return false, false
				}
				a, b := w.arrive[gs][gi], w.owner(m, gi, gd)
				return b >= a, b != a
			}
			for gs := range G {
				for gi := range G {
					for gd := range G {
						ok, tr := valid(gs, gi, gd)
						gok, gtr := m.NonMinimalVia(gs, gi, gd)
						if ok != gok || (ok && tr != gtr) {
							t.Fatalf("via %d→%d→%d: %v/%v, want %v/%v", gs, gi, gd, gok, gtr, ok, tr)
						}
					}
				}
			}
			buf := make([]int, 0, 64)
			for s := range m.Switches() {
				g := m.SwitchGroup(s)
				for dst := range m.Nodes() {
					gd := m.NodeGroup(dst)
					var want []int
					wantDist := map[int]int{}
					if gd != g {
						for p := range m.Radix(s) {
							peer, ok := m.PortPeer(s, p)
							if !ok || peer.Kind != SwitchEnd {
								continue
							}
							best := 0
							for gi := range G {
								ok, tr := valid(g, gi, gd)
								if !ok {
									continue
								}
								d := 4
								if tr {
									d = 6
								}
								switch {
								case m.IsLeaf(s) && p != m.Route(s, dst) && w.link[g][gi][0] == int(peer.ID):
									d++
								case !m.IsLeaf(s) && w.link[g][gi] == [2]int{s, p}:
								default:
									continue
								}
								if best == 0 || d < best {
									best = d
								}
							}
							if best > 0 {
								want = append(want, p)
								wantDist[p] = best
							}
						}
					}
					got := m.NonMinimalPorts(s, dst, buf)
					if fmt.Sprint(got) != fmt.Sprint(want) {
						t.Fatalf("switch %d to %d: ports %v, want %v", s, dst, got, want)
					}
					for p := range m.Radix(s) {
						if d := m.NonMinimalDistance(s, dst, p); d != wantDist[p] {
							t.Fatalf("switch %d to %d port %d: distance %d, want %d", s, dst, p, d, wantDist[p])
						}
					}
					for _, p := range got {
						walkNonMinimal(t, m, s, dst, p)
					}
				}
			}
		})
	}
}

// walkNonMinimal follows port p of switch s, then (at a spine reached from
// a leaf) its shortest non-minimal port, then Route, to dst: the walk must
// end at dst's NIC after NonMinimalDistance(s, dst, p) links and cross two
// global links.
func walkNonMinimal(t *testing.T, m *Megafly, s, dst, p int) {
	t.Helper()
	want := m.NonMinimalDistance(s, dst, p)
	links, globals := 0, 0
	cur, port := s, p
	for step := 0; ; step++ {
		if step > 16 {
			t.Fatalf("switch %d port %d to %d: no end", s, p, dst)
		}
		peer, ok := m.PortPeer(cur, port)
		if !ok {
			t.Fatalf("switch %d port %d to %d: unconnected port %d of %d", s, p, dst, port, cur)
		}
		links++
		if peer.Kind == NodeEnd {
			if int(peer.ID) != dst {
				t.Fatalf("switch %d port %d to %d: delivered to %d", s, p, dst, peer.ID)
			}
			break
		}
		if m.SwitchGroup(int(peer.ID)) != m.SwitchGroup(cur) {
			globals++
		}
		next := int(peer.ID)
		port = m.Route(next, dst)
		if step == 0 && m.IsLeaf(s) {
			// The spine picks its shortest candidate.
			best := 0
			for _, q := range m.NonMinimalPorts(next, dst, nil) {
				if d := m.NonMinimalDistance(next, dst, q); best == 0 || d < best {
					best, port = d, q
				}
			}
			if best != want-1 {
				t.Fatalf("leaf %d port %d to %d: spine's best %d, leaf says %d", s, p, dst, best, want)
			}
		}
		cur = next
	}
	if links != want || globals != 2 {
		t.Fatalf("switch %d port %d to %d: %d links (%d global), want %d (2 global)", s, p, dst, links, globals, want)
	}
}

// cdg is a channel dependency graph: channels are (switch, output port)
// pairs, keyed s·64 + p.
type cdg map[int]map[int]bool

func (g cdg) path(ch []int) {
	for i := 1; i < len(ch); i++ {
		if g[ch[i-1]] == nil {
			g[ch[i-1]] = map[int]bool{}
		}
		g[ch[i-1]][ch[i]] = true
	}
}

// cyclic reports whether the graph has a cycle (iterative depth-first
// search, channels in ascending order).
func (g cdg) cyclic() bool {
	state := map[int]int{} // 1 on the stack, 2 done
	for _, u := range slices.Sorted(maps.Keys(g)) {
		if state[u] != 0 {
			continue
		}
		type frame struct {
			u    int
			next []int
		}
		succ := func(u int) []int { return slices.Sorted(maps.Keys(g[u])) }
		stack := []frame{{u, succ(u)}}
		state[u] = 1
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			if len(f.next) == 0 {
				state[f.u] = 2
				stack = stack[:len(stack)-1]
				continue
			}
			v := f.next[0]
			f.next = f.next[1:]
			switch state[v] {
			case 1:
				return true
			case 0:
				state[v] = 1
				stack = append(stack, frame{v, succ(v)})
			}
		}
	}
	return false
}

// channelPaths builds the CDG of every minimal path (intra-group: every
// spine; inter-group: Route) and of every non-minimal path gs → gi → gd
// that allow(gs, gi, gd, a, b) accepts, a and b being the arrival and
// departure spines in gi, with every leaf as the transit leaf (a superset
// of Route's dst mod L), enumerated from the wiring (PortPeer).
func channelPaths(t *testing.T, m *Megafly, allow func(gs, gi, gd, a, b int) bool) cdg {
	w := readWiring(t, m)
	per := m.leaves + m.spines
	ch := func(s, p int) int { return s*64 + p }
	up := func(g, l, x int) int { return ch(g*per+l, m.nodesPerLeaf+x) }
	down := func(g, x, l int) int { return ch(g*per+m.leaves+x, l) }
	glob := func(g, g2 int) int { return ch(w.link[g][g2][0], w.link[g][g2][1]) }
	G := m.Groups()
	graph := cdg{}
	for gs := range G {
		for gd := range G {
			for l := range m.leaves {
				for ld := range m.leaves {
					if gs == gd {
						if l != ld {
							for x := range m.spines {
								graph.path([]int{up(gs, l, x), down(gs, x, ld)})
							}
						}
						continue
					}
					y := w.arrive[gs][gd]
					graph.path([]int{up(gs, l, w.owner(m, gs, gd)), glob(gs, gd), down(gd, y, ld)})
					for gi := range G {
						if gi == gs || gi == gd {
							continue
						}
						a, b := w.arrive[gs][gi], w.owner(m, gi, gd)
						if !allow(gs, gi, gd, a, b) {
							continue
						}
						first := []int{up(gs, l, w.owner(m, gs, gi)), glob(gs, gi)}
						last := []int{glob(gi, gd), down(gd, w.arrive[gi][gd], ld)}
						if a == b {
							graph.path(append(append([]int{}, first...), last...))
							continue
						}
						for tl := range m.leaves {
							graph.path(append(append(append([]int{}, first...), down(gi, a, tl), up(gi, tl, b)), last...))
						}
					}
				}
			}
		}
	}
	return graph
}

// implPaths builds the CDG of the paths the candidates produce: minimal
// ones (every MinimalPorts choice at a source leaf, then Route), and from
// every source leaf each NonMinimalPorts spine then each of that spine's
// NonMinimalPorts, and from the minimal spine each of its NonMinimalPorts,
// then Route (transit leaf dst mod L).
func implPaths(t *testing.T, m *Megafly) cdg {
	graph := cdg{}
	walk := func(prefix []int, s, dst int) {
		p := append([]int{}, prefix...)
		for range 16 {
			q := m.Route(s, dst)
			peer, _ := m.PortPeer(s, q)
			if peer.Kind == NodeEnd {
				graph.path(p)
				return
			}
			p = append(p, s*64+q)
			s = int(peer.ID)
		}
		t.Fatalf("no route from %d to %d", s, dst)
	}
	next := func(s, p int) int {
		peer, _ := m.PortPeer(s, p)
		return int(peer.ID)
	}
	for s := range m.Switches() {
		if !m.IsLeaf(s) {
			continue
		}
		for dst := range m.Nodes() {
			for _, p := range m.MinimalPorts(s, dst, nil) {
				if peer, _ := m.PortPeer(s, p); peer.Kind == NodeEnd {
					continue
				}
				x := next(s, p)
				walk([]int{s*64 + p}, x, dst)
				if m.SwitchGroup(s) != m.NodeGroup(dst) {
					for _, q := range m.NonMinimalPorts(x, dst, nil) {
						walk([]int{s*64 + p, x*64 + q}, next(x, q), dst)
					}
				}
			}
			for _, p := range m.NonMinimalPorts(s, dst, nil) {
				x := next(s, p)
				qs := m.NonMinimalPorts(x, dst, nil)
				if len(qs) == 0 {
					t.Fatalf("leaf %d to %d: spine %d has no candidate", s, dst, x)
				}
				for _, q := range qs {
					walk([]int{s*64 + p, x*64 + q}, next(x, q), dst)
				}
			}
		}
	}
	return graph
}

// TestMegaflyNonMinimalCDG: the channel dependency graph of all minimal and
// allowed non-minimal paths is acyclic on every small shape (enumerated
// from the wiring, with any transit leaf, and as the candidates produce
// them), and dropping either restriction (gi > gs; b ≥ a) makes it cyclic
// on the 5-group Megafly.
func TestMegaflyNonMinimalCDG(t *testing.T) {
	rule := func(gs, gi, _, a, b int) bool { return gi > gs && b >= a }
	for _, c := range nonMinShapes {
		m := mustBuild(t, c).(*Megafly)
		if channelPaths(t, m, rule).cyclic() {
			t.Errorf("%+v: the allowed paths' CDG has a cycle", c)
		}
		if implPaths(t, m).cyclic() {
			t.Errorf("%+v: the candidates' CDG has a cycle", c)
		}
	}
	m := smallMegafly(t)
	if channelPaths(t, m, func(int, int, int, int, int) bool { return false }).cyclic() {
		t.Error("minimal paths alone: cyclic")
	}
	for name, allow := range map[string]func(gs, gi, gd, a, b int) bool{
		"any gi (b ≥ a)":       func(_, _, _, a, b int) bool { return b >= a },
		"any spines (gi > gs)": func(gs, gi, _, _, _ int) bool { return gi > gs },
	} {
		if !channelPaths(t, m, allow).cyclic() {
			t.Errorf("%s: want a cycle", name)
		}
	}
}
