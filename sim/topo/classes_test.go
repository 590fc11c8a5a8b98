package topo

import (
	"slices"
	"testing"
)

// TestDragonflyHopClass: the dragonfly of 9 groups of 4 routers with 2
// nodes and 2 global links each (ports 0–1 nodes, 2–4 local, 5–6
// global), worked by hand: class 1 only on a local hop in the
// destination's group.
func TestDragonflyHopClass(t *testing.T) {
	d := mustBuild(t, Config{Kind: KindDragonfly, Routers: 4, NodesPerSwitch: 2, GlobalLinks: 2}).(*Dragonfly)
	if Classes(d, false) == nil || Classes(d, true) == nil {
		t.Fatal("Classes(dragonfly) is nil")
	}
	for _, c := range []struct {
		name         string
		s, dst, port int
		class        int
	}{
		// Router 0 to node 2 on router 1 of its group: local port 2.
		{"own group", 0, 2, 2, 1},
		// Router 0 owns the global link to group 1 (offset 1, link 0).
		{"global", 0, 8, 5, 0},
		// Router 1 to group 1: local to router 0, the owner, port 2.
		{"source group", 1, 8, 2, 0},
		// That link lands on router 3 of group 1 (switch 7); node 8 is
		// on router 0 (switch 4): local port 2, after the global hop.
		{"destination group", 7, 8, 2, 1},
		// At the destination router: the node's port.
		{"node", 4, 8, 0, 0},
	} {
		if got := d.Route(c.s, c.dst); got != c.port {
			t.Errorf("%s: Route(%d, %d) = %d, want %d", c.name, c.s, c.dst, got, c.port)
		}
		if got := d.HopClass(c.s, c.dst, c.port); got != c.class {
			t.Errorf("%s: HopClass(%d, %d, %d) = %d, want %d", c.name, c.s, c.dst, c.port, got, c.class)
		}
	}
	if e, _ := d.PortPeer(0, 5); e.ID != 7 {
		t.Errorf("global link 0 of router 0 lands on switch %d, want 7", e.ID)
	}
	for _, tp := range []Topology{
		mustBuild(t, Config{Kind: KindMegafly}),
		mustBuild(t, Config{Kind: KindHyperX}),
		mustBuild(t, Config{Kind: KindTorus3D, Trunk: 2}),
	} {
		if Classes(tp, false) != nil {
			t.Errorf("%s: Classes not nil", tp.Name())
		}
	}
}

// TestHyperXHopClass: ECMP's classes on a HyperX of two dimensions (3×4,
// one node per switch: switch x + 3y, ports 1–2 x, 3–5 y), by hand: class
// 0 on either first hop of a path over two switch links, class 1 on the
// hop that reaches the destination's switch. Minimal routing needs none,
// nor does a HyperX of one dimension (one switch link) or of three (ECMP
// is refused there).
func TestHyperXHopClass(t *testing.T) {
	h := mustBuild(t, Config{Kind: KindHyperX, Dims: []int{3, 4}, NodesPerSwitch: 1}).(*HyperX)
	if Classes(h, false) != nil || Classes(h, true) == nil {
		t.Fatal("2-D HyperX: want classes with multipath only")
	}
	for _, c := range []struct {
		name         string
		s, dst, port int
		class        int
	}{
		{"(0,0)→(2,3) over x first", 0, 11, 2, 0},
		{"(0,0)→(2,3) over y first", 0, 11, 5, 0},
		{"(2,0)→(2,3): last hop", 2, 11, 5, 1},
		{"(0,3)→(2,3): last hop", 9, 11, 2, 1},
		{"at the destination: node port", 11, 11, 0, 0},
	} {
		if mp := h.MinimalPorts(c.s, c.dst, nil); !slices.Contains(mp, c.port) {
			t.Errorf("%s: port %d not in MinimalPorts %v", c.name, c.port, mp)
		}
		if got := h.HopClass(c.s, c.dst, c.port); got != c.class {
			t.Errorf("%s: HopClass(%d, %d, %d) = %d, want %d", c.name, c.s, c.dst, c.port, got, c.class)
		}
	}
	if Classes(mustBuild(t, Config{Kind: KindHyperX, Dims: []int{3, 1, 4}}), true) == nil {
		t.Error("3×1×4 HyperX (two dimensions of more than one switch): no classes")
	}
	for _, dims := range [][]int{{3, 4, 3}, {8}} {
		if Classes(mustBuild(t, Config{Kind: KindHyperX, Dims: dims}), true) != nil {
			t.Errorf("HyperX %v: classes", dims)
		}
	}
}
