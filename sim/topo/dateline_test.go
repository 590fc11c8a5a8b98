package topo

import (
	"fmt"
	"slices"
	"testing"
)

// ring is a torus whose only dimension of size > 1 is x (k switches, one
// node each), so that switch, node and x coordinate coincide.
func datelineRing(t *testing.T, k, trunk int, dateline bool) *Torus {
	t.Helper()
	return mustBuild(t, Config{Kind: KindTorus3D, Dims: []int{k, 1, 1}, NodesPerSwitch: 1, Trunk: trunk, Dateline: dateline}).(*Torus)
}

// TestDatelineClassTable is the class of every minimal hop of a ring of 4
// and of 5 (trunks of 1, 2 and 3 cables), worked by hand from the rule "class 0 while the rest of the
// path in the dimension crosses the wrap link of its direction (+: 3→0 or
// 4→0; −: 0→3 or 0→4), the hop over it included". Going + the path from
// c to cd crosses it iff it passes k−1, i.e. cd < c; going −, iff it
// passes 0, i.e. cd > c. Rows marked tie are offset k/2 on the ring of 4,
// where DOR (and so MinimalPorts, with a dateline) goes +.
func TestDatelineClassTable(t *testing.T) {
	type hop struct{ c, cd, dir, class int }
	cases := map[int][]hop{
		4: {
			// +: 0→1, 0→2 (0,1,2), 1→2, 1→3, 2→3: never wrap, class 1.
			{0, 1, 0, 1}, {0, 2, 0, 1}, {1, 2, 0, 1}, {1, 3, 0, 1}, {2, 3, 0, 1},
			// 2→0 is 2,3,0: crosses 3→0 later: class 0; 3→0 and 3→1
			// start with the wrap hop: class 0.
			{2, 0, 0, 0}, {3, 0, 0, 0}, {3, 1, 0, 0},
			// −: 0→3 is the wrap hop 0→3: class 0; 0→2 (tie) is 0,3,2: class 0.
			{0, 3, 1, 0}, {0, 2, 1, 0},
			// 1→0 never wraps: class 1; 1→3 (tie) is 1,0,3: class 0.
			{1, 0, 1, 1}, {1, 3, 1, 0},
			// 2→1, 2→0 (tie), 3→2, 3→1 (tie): never pass 0: class 1.
			{2, 1, 1, 1}, {2, 0, 1, 1}, {3, 2, 1, 1}, {3, 1, 1, 1},
		},
		5: {
			// +, up to 2 steps: 0→1, 0→2, 1→2, 1→3, 2→3, 2→4, 3→4: class 1.
			{0, 1, 0, 1}, {0, 2, 0, 1}, {1, 2, 0, 1}, {1, 3, 0, 1}, {2, 3, 0, 1}, {2, 4, 0, 1}, {3, 4, 0, 1},
			// 3→0 is 3,4,0: class 0; 4→0 and 4→1 are the wrap hop: class 0.
			{3, 0, 0, 0}, {4, 0, 0, 0}, {4, 1, 0, 0},
			// −: 0→4, 0→3 start with the wrap hop 0→4: class 0; 1→4 is
			// 1,0,4: class 0 (and then 0→4 class 0 too).
			{0, 4, 1, 0}, {0, 3, 1, 0}, {1, 4, 1, 0},
			// 1→0, 2→1, 2→0, 3→2, 3→1, 4→3, 4→2: never pass 0: class 1.
			{1, 0, 1, 1}, {2, 1, 1, 1}, {2, 0, 1, 1}, {3, 2, 1, 1}, {3, 1, 1, 1}, {4, 3, 1, 1}, {4, 2, 1, 1},
		},
	}
	for k, hops := range cases {
		// Every ordered pair c ≠ cd has one DOR direction, plus − at the tie.
		want := k * (k - 1)
		if k%2 == 0 {
			want += k
		}
		if len(hops) != want {
			t.Fatalf("k=%d: table has %d hops, want %d", k, len(hops), want)
		}
		for _, trunk := range []int{1, 2, 3} {
			tp := datelineRing(t, k, trunk, true)
			for _, c := range hops {
				// Every member of the aggregate carries both classes:
				// the class is the hop's, whatever the member.
				for j := range trunk {
					p := tp.AggregatePort(c.dir, j)
					if got := tp.HopClass(c.c, c.cd, p); got != c.class {
						t.Errorf("k=%d w=%d: HopClass %d→%d dir %d member %d = %d, want %d", k, trunk, c.c, c.cd, c.dir, j, got, c.class)
					}
				}
				// Route: member dst mod w of the DOR aggregate;
				// MinimalPorts: all its members.
				if tp.RouteAggregate(c.c, c.cd) == c.dir {
					if got, want := tp.Route(c.c, c.cd), tp.AggregatePort(c.dir, c.cd%trunk); got != want {
						t.Errorf("k=%d w=%d: Route(%d, %d) = %d, want %d", k, trunk, c.c, c.cd, got, want)
					}
					var want []int
					for j := range trunk {
						want = append(want, tp.AggregatePort(c.dir, j))
					}
					if mp := tp.MinimalPorts(c.c, c.cd, nil); !slices.Equal(mp, want) {
						t.Errorf("k=%d w=%d: MinimalPorts(%d, %d) = %v, want %v", k, trunk, c.c, c.cd, mp, want)
					}
				}
			}
		}
	}
}

// TestDatelineClassWalk checks datelineClass against a walk round the
// ring: for every minimal direction from c to cd on rings of 1 to 9,
// class 0 iff one of the remaining steps is the wrap link.
func TestDatelineClassWalk(t *testing.T) {
	for k := 1; k <= 9; k++ {
		for c := range k {
			for cd := range k {
				if c == cd {
					continue
				}
				fwd := (cd - c + k) % k
				for dir, steps := range []int{fwd, k - fwd} {
					if 2*steps > k {
						continue // not minimal
					}
					wrap, x := false, c
					for range steps {
						next := (x + 1) % k
						if dir == 1 {
							next = (x + k - 1) % k
						}
						wrap = wrap || (dir == 0 && x == k-1) || (dir == 1 && x == 0)
						x = next
					}
					if x != cd {
						t.Fatalf("walk %d→%d dir %d ended at %d", c, cd, dir, x)
					}
					if got := datelineClass(c, cd, dir); got != 1-dlBtoi(wrap) {
						t.Errorf("k=%d %d→%d dir %d: class %d, crosses the wrap link %v", k, c, cd, dir, got, wrap)
					}
				}
			}
		}
	}
}

func dlBtoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestDatelineRoutePorts: the 4×4×4 torus with 4 nodes per switch and
// 4-wide trunks (ports 4–7 +x, 8–11 −x, 12–15 +y, 24–27 −z), worked by
// hand. The dateline changes no port: Route takes member dst mod 4 of the
// dimension-order aggregate, MinimalPorts all its members; HopClass gives
// the hop's class.
func TestDatelineRoutePorts(t *testing.T) {
	tp := mustBuild(t, Config{Kind: KindTorus3D, Dims: []int{4, 4, 4}, Trunk: 4, Dateline: true}).(*Torus)
	if !tp.Dateline() || Classes(tp, false) == nil {
		t.Fatal("Dateline() false or no Classes")
	}
	cases := []struct {
		s, dst, route, class int
		minimal              []int
	}{
		// Switch 0 (0,0,0) to node 87 on switch 21 (1,1,1): +x, never
		// wrapping: class 1; 87 mod 4 = 3: port 7.
		{0, 87, 7, 1, []int{4, 5, 6, 7}},
		// Switch 3 (3,0,0) to node 5 on switch 1 (1,0,0): offset 2. DOR
		// goes + over the wrap 3→0: class 0, member 5 mod 4 = 1: port 5.
		// (The − way 3,2,1 is not offered: dimension order.)
		{3, 5, 5, 0, []int{4, 5, 6, 7}},
		// Switch 0 to node 8 on switch 2 (2,0,0): + is 0,1,2 (class 1,
		// member 0); the tie's − way is not offered.
		{0, 8, 4, 1, []int{4, 5, 6, 7}},
		// Switch 1 (1,0,0) to node 2 on switch 0: −x (1→0), class 1;
		// member 2: port 8 + 2.
		{1, 2, 10, 1, []int{8, 9, 10, 11}},
		// Switch 0 to node 4·48+1 = 193 on switch 48 (0,0,3): −z over
		// the wrap 0→3: class 0, member 1: port 24 + 1.
		{0, 193, 25, 0, []int{24, 25, 26, 27}},
		// At the destination's switch: the node's port, class 0.
		{21, 87, 3, 0, []int{3}},
	}
	plain := mustBuild(t, Config{Kind: KindTorus3D, Dims: []int{4, 4, 4}, Trunk: 4}).(*Torus)
	if Classes(plain, true) != nil {
		t.Error("Classes of a torus without dateline is not nil")
	}
	for _, c := range cases {
		if got := tp.Route(c.s, c.dst); got != c.route {
			t.Errorf("Route(%d, %d) = %d, want %d", c.s, c.dst, got, c.route)
		}
		if got := plain.Route(c.s, c.dst); got != c.route {
			t.Errorf("no dateline: Route(%d, %d) = %d, want %d", c.s, c.dst, got, c.route)
		}
		if got := tp.HopClass(c.s, c.dst, c.route); got != c.class {
			t.Errorf("HopClass(%d, %d, %d) = %d, want %d", c.s, c.dst, c.route, got, c.class)
		}
		if got := tp.MinimalPorts(c.s, c.dst, nil); !slices.Equal(got, c.minimal) {
			t.Errorf("MinimalPorts(%d, %d) = %v, want %v", c.s, c.dst, got, c.minimal)
		}
	}
}

// torusChannel is one class of one switch output port carrying
// switch-to-switch traffic: a cable's member in one traffic class, which
// has its own output and input buffer.
type torusChannel struct{ s, p, c int }

// torusCDG is a channel dependency graph: an edge a→b when a packet holding a
// may next request b.
type torusCDG map[torusChannel]map[torusChannel]bool

func (g torusCDG) add(a, b torusChannel) {
	if g[a] == nil {
		g[a] = map[torusChannel]bool{}
	}
	g[a][b] = true
}

// next is the switch at the far end of switch s's port p.
func torusNext(t *Torus, s, p int) int {
	e, ok := t.PortPeer(s, p)
	if !ok || e.Kind != SwitchEnd {
		panic(fmt.Sprintf("port %d of switch %d is no switch link", p, s))
	}
	return int(e.ID)
}

// class is the hop's class when the torus uses them (Classes), else 0.
func torusClass(t *Torus, s, dst, p int) int {
	if hc := Classes(t, true); hc != nil {
		return hc.HopClass(s, dst, p)
	}
	return 0
}

// routeCDG is the CDG of every path Route takes, source switch to every
// node.
func routeCDG(t *Torus) torusCDG {
	g := torusCDG{}
	for src := range t.Switches() {
		for dst := range t.Nodes() {
			var prev *torusChannel
			for s := src; s != dst/t.perSw; {
				p := t.Route(s, dst)
				c := torusChannel{s, p, torusClass(t, s, dst, p)}
				if prev != nil {
					g.add(*prev, c)
				}
				prev, s = &c, torusNext(t, s, c.p)
			}
		}
	}
	return g
}

// minimalCDG is the CDG of adaptive minimal routing over MinimalPorts
// (ECMP, POWAR with torus_adaptive): every choice at every switch.
func minimalCDG(t *Torus) torusCDG {
	g := torusCDG{}
	for s := range t.Switches() {
		for dst := range t.Nodes() {
			if s == dst/t.perSw {
				continue
			}
			for _, p := range t.MinimalPorts(s, dst, nil) {
				n := torusNext(t, s, p)
				if n == dst/t.perSw {
					continue
				}
				for _, q := range t.MinimalPorts(n, dst, nil) {
					g.add(torusChannel{s, p, torusClass(t, s, dst, p)}, torusChannel{n, q, torusClass(t, n, dst, q)})
				}
			}
		}
	}
	return g
}

// adaptiveClassCDG is the CDG of fully adaptive minimal routing (every
// minimal aggregate, in any dimension order: POWAR's torus_adaptive) with
// every hop in its dateline class: what torus_adaptive on a dateline
// torus would be.
func adaptiveClassCDG(t *Torus) torusCDG {
	g := torusCDG{}
	for s := range t.Switches() {
		for dst := range t.Nodes() {
			if s == dst/t.perSw {
				continue
			}
			for _, p := range t.MinimalPorts(s, dst, nil) {
				n := torusNext(t, s, p)
				if n == dst/t.perSw {
					continue
				}
				for _, q := range t.MinimalPorts(n, dst, nil) {
					g.add(torusChannel{s, p, t.HopClass(s, dst, p)}, torusChannel{n, q, t.HopClass(n, dst, q)})
				}
			}
		}
	}
	return g
}

// cyclic reports whether g has a cycle (Kahn's algorithm: whatever cannot
// be peeled off by in-degree 0 lies on or behind a cycle).
func torusCyclic(g torusCDG) bool {
	in := map[torusChannel]int{}
	for a, out := range g {
		in[a] += 0
		for b := range out {
			in[b]++
		}
	}
	var free []torusChannel
	for c, d := range in {
		if d == 0 {
			free = append(free, c)
		}
	}
	left := len(in)
	for len(free) > 0 {
		c := free[len(free)-1]
		free = free[:len(free)-1]
		left--
		for b := range g[c] {
			if in[b]--; in[b] == 0 {
				free = append(free, b)
			}
		}
	}
	return left > 0
}

// TestDatelineAcyclic builds the torusChannel dependency graph of all
// dimension-order paths on small tori (every source switch to every node,
// channels at member and class granularity) and checks it: acyclic with
// the dateline, cyclic without (the wrap-around rings); and the same for
// MinimalPorts (ECMP): with the dateline it keeps dimension order and
// hashes over the aggregate's members, each hop in its class, so it is
// acyclic too. A trunk of 1 is Table 7's torus: the classes need no
// second cable. Fully adaptive minimal routing (every minimal aggregate,
// POWAR's torus_adaptive) stays cyclic with the dateline classes: two
// classes cannot make it deadlock-free, so it is refused.
// (Rings of 3 have no cycle either way, minimal paths being one hop; and
// without the dateline a ring's members only close a cycle when member
// dst mod w recurs along it, which the node counts here ensure.)
func TestDatelineAcyclic(t *testing.T) {
	for _, c := range []struct {
		dims  []int
		nodes int
	}{{[]int{4, 4, 2}, 2}, {[]int{5, 3, 1}, 2}, {[]int{6, 2, 2}, 1}} {
		for _, trunk := range []int{1, 2, 4} {
			name := fmt.Sprintf("%v/%d/trunk%d", c.dims, c.nodes, trunk)
			with := mustBuild(t, Config{Kind: KindTorus3D, Dims: c.dims, NodesPerSwitch: c.nodes, Trunk: trunk, Dateline: true}).(*Torus)
			without := mustBuild(t, Config{Kind: KindTorus3D, Dims: c.dims, NodesPerSwitch: c.nodes, Trunk: trunk}).(*Torus)
			g := routeCDG(with)
			if len(g) == 0 {
				t.Fatalf("%s: empty CDG", name)
			}
			if torusCyclic(g) {
				t.Errorf("%s: DOR with dateline has a cyclic channel dependency graph", name)
			}
			if !torusCyclic(routeCDG(without)) {
				t.Errorf("%s: DOR without dateline has an acyclic channel dependency graph; want the wrap-around cycles", name)
			}
			if torusCyclic(minimalCDG(with)) {
				t.Errorf("%s: ECMP with dateline (members of the DOR aggregate) has a cyclic CDG", name)
			}
			if !torusCyclic(minimalCDG(without)) {
				t.Errorf("%s: adaptive minimal routing without dateline has an acyclic CDG; want cycles", name)
			}
			if !torusCyclic(adaptiveClassCDG(without)) {
				t.Errorf("%s: adaptive minimal routing with the dateline classes has an acyclic CDG; torus_adaptive's refusal assumes cycles", name)
			}
		}
	}
}

// TestDatelineConfig: one-line errors naming topology.dateline on other
// kinds; a dateline torus with any trunk.
func TestDatelineConfig(t *testing.T) {
	checkValidate(t, []validateCase{
		{Config{Kind: KindHyperX, Dateline: true}, "topology.dateline: not used by kind hyperx"},
		{Config{Kind: KindMegafly, Dateline: true}, "topology.dateline: not used by kind megafly"},
		{Config{Kind: KindTorus3D, Dateline: true}, ""},
		{Config{Kind: KindTorus3D, Trunk: 1, Dateline: true}, ""},
		{Config{Kind: KindTorus3D, Trunk: 2, Dateline: true}, ""},
		{Config{Kind: KindTorus3D, Trunk: 3, Dateline: true}, ""},
	})
}

// TestDatelineMinimalBFS: with the dateline every MinimalPorts port is
// still one step closer, all of them on the dimension-order aggregate,
// Route among them (member dst mod w), and each hop's class is that of
// the dimension-order hop it makes.
func TestDatelineMinimalBFS(t *testing.T) {
	tp := mustBuild(t, Config{Kind: KindTorus3D, Dims: []int{4, 3, 2}, NodesPerSwitch: 2, Trunk: 3, Dateline: true}).(*Torus)
	for s := range tp.Switches() {
		for dst := range tp.Nodes() {
			d := tp.Distance(s, dst)
			mp := tp.MinimalPorts(s, dst, nil)
			a := tp.RouteAggregate(s, dst)
			if a >= 0 {
				if want := tp.AggregatePort(a, dst%3); tp.Route(s, dst) != want {
					t.Fatalf("Route(%d, %d) = %d, want %d", s, dst, tp.Route(s, dst), want)
				}
			}
			if !slices.Contains(mp, tp.Route(s, dst)) {
				t.Fatalf("MinimalPorts(%d, %d) = %v lacks Route %d", s, dst, mp, tp.Route(s, dst))
			}
			for _, p := range mp {
				if p < tp.perSw {
					continue
				}
				if got := tp.Distance(torusNext(tp, s, p), dst); got != d-1 {
					t.Errorf("MinimalPorts(%d, %d) port %d leads %d from dst, want %d", s, dst, p, got, d-1)
				}
				if agg, _, _ := tp.Aggregate(p); agg != a {
					t.Errorf("MinimalPorts(%d, %d) port %d: aggregate %d, not the dimension-order %d", s, dst, p, agg, a)
				}
				if got, want := tp.HopClass(s, dst, p), tp.HopClass(s, dst, tp.Route(s, dst)); got != want {
					t.Errorf("MinimalPorts(%d, %d) port %d: class %d, Route's %d", s, dst, p, got, want)
				}
			}
		}
	}
}
