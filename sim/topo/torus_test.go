package topo

import (
	"slices"
	"strings"
	"testing"
)

// TestTorusTrunkPorts checks the aggregated-link port numbering worked out
// by hand from the rule c + (2i+dir)·w + j on the 4×4×4 torus with 4 nodes
// per switch and 4-wide trunks (paper 002): ports 0–3 nodes, 4–7 the +x
// aggregate, 8–11 −x, 12–15 +y, 16–19 −y, 20–23 +z, 24–27 −z.
func TestTorusTrunkPorts(t *testing.T) {
	tp := mustBuild(t, Config{Kind: KindTorus3D, Dims: []int{4, 4, 4}, Trunk: 4}).(*Torus)
	if tp.Radix(0) != 28 || tp.Trunk() != 4 {
		t.Fatalf("radix %d trunk %d, want 28 4", tp.Radix(0), tp.Trunk())
	}
	cases := []struct {
		s, p int
		want End
		ok   bool
	}{
		{0, 3, End{Kind: NodeEnd, ID: 3}, true},
		// switch 0 (0,0,0) +x member 2 (port 6) → switch 1, −x member 2 (port 10).
		{0, 6, End{Kind: SwitchEnd, ID: 1, Port: 10}, true},
		// switch 0 −x member 0 (port 8) → switch 3 (3,0,0), +x member 0 (port 4).
		{0, 8, End{Kind: SwitchEnd, ID: 3, Port: 4}, true},
		// switch 0 −y member 3 (port 19) → switch 12 (0,3,0), +y member 3 (port 15).
		{0, 19, End{Kind: SwitchEnd, ID: 12, Port: 15}, true},
		// switch 21 (1,1,1) +z member 1 (port 21) → switch 37 (1,1,2), −z member 1 (port 25).
		{21, 21, End{Kind: SwitchEnd, ID: 37, Port: 25}, true},
	}
	for _, c := range cases {
		got, ok := tp.PortPeer(c.s, c.p)
		if got != c.want || ok != c.ok {
			t.Errorf("PortPeer(%d, %d) = %+v %v, want %+v %v", c.s, c.p, got, ok, c.want, c.ok)
		}
	}
	// Route: switch 0 to node 4·21+3 = 87 on switch 21 (1,1,1): DOR takes
	// +x, member 87 mod 4 = 3: port 7. MinimalPorts: +x, +y, +z, all members.
	if p := tp.Route(0, 87); p != 7 {
		t.Errorf("Route(0, 87) = %d, want 7", p)
	}
	want := []int{4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23}
	if got := tp.MinimalPorts(0, 87, nil); !slices.Equal(got, want) {
		t.Errorf("MinimalPorts(0, 87) = %v, want %v", got, want)
	}
	// Switch 0 to node 4·2 = 8 on switch 2 (2,0,0): offset k/2, both ways;
	// DOR takes +, member 8 mod 4 = 0.
	if p := tp.Route(0, 8); p != 4 {
		t.Errorf("Route(0, 8) = %d, want 4", p)
	}
	if got := tp.MinimalPorts(0, 8, nil); !slices.Equal(got, []int{4, 5, 6, 7, 8, 9, 10, 11}) {
		t.Errorf("MinimalPorts(0, 8) = %v", got)
	}
	// Nodes 16–19 on switch 4 (0,1,0) and 32–35 on switch 8 (0,2,0): +y,
	// member dst mod 4.
	for _, dst := range []int{16, 17, 18, 19, 32, 33, 34, 35} {
		if p := tp.Route(0, dst); p != 12+dst%4 {
			t.Errorf("Route(0, %d) = %d, want %d (member dst mod 4)", dst, p, 12+dst%4)
		}
	}
	if a, j, ok := tp.Aggregate(17); a != 3 || j != 1 || !ok {
		t.Errorf("Aggregate(17) = %d %d %v, want 3 1 true", a, j, ok)
	}
	if _, _, ok := tp.Aggregate(2); ok {
		t.Error("Aggregate(2): a node port is no aggregate")
	}
	if tp.RouteAggregate(21, 87) != -1 || tp.RouteAggregate(0, 87) != 0 || tp.RouteAggregate(0, 4*3) != 1 {
		t.Errorf("RouteAggregate: %d %d %d, want -1 0 1", tp.RouteAggregate(21, 87), tp.RouteAggregate(0, 87), tp.RouteAggregate(0, 12))
	}
}

// TestTorusTrunkSizes: 64 switches × 3 dimensions × 4 cables = 768 local
// cables plus 256 node cables; radix 4 + 2·3·4 = 28; Table 7 links 64·28 +
// 256. Trunk 2 keeps the default radix 24 (4 + 12 ports needed) and has
// 384 local cables; trunk 8 needs 4 + 48 = 52 ports.
func TestTorusTrunkSizes(t *testing.T) {
	for _, c := range []struct {
		c                   Config
		cables, local, rad  int
		unconnected, table7 int
	}{
		{Config{Kind: KindTorus3D, Dims: []int{4, 4, 4}, Trunk: 4}, 1024, 768, 28, 0, 64*28 + 256},
		{Config{Kind: KindTorus3D, Dims: []int{4, 4, 4}, Trunk: 2}, 640, 384, 24, 64 * 8, 64*24 + 256},
		{Config{Kind: KindTorus3D, Dims: []int{4, 4, 4}, Trunk: 8}, 256 + 64*24, 64 * 24, 52, 0, 64*52 + 256},
		{Config{Kind: KindTorus3D, Dims: []int{4, 4, 4}, Trunk: 1}, 256 + 192, 192, 24, 64 * 14, 64*24 + 256},
	} {
		tp := mustBuild(t, c.c)
		d := Describe(tp)
		if d.Cables != c.cables || d.LocalCables != c.local || tp.Radix(0) != c.rad || d.UnconnectedPorts != c.unconnected || d.Table7Links != c.table7 {
			t.Errorf("trunk %d: %d cables (%d local), radix %d, %d unconnected, %d Table 7; want %d (%d) %d %d %d",
				c.c.Trunk, d.Cables, d.LocalCables, tp.Radix(0), d.UnconnectedPorts, d.Table7Links,
				c.cables, c.local, c.rad, c.unconnected, c.table7)
		}
	}
}

// TestTorusTrunkOneUnchanged: trunk 1 (and 0) is the plain torus: the same
// links in the same order, the same routes and minimal ports, and the
// plain torus's ports c+2i (+) and c+2i+1 (−).
func TestTorusTrunkOneUnchanged(t *testing.T) {
	for _, dims := range [][]int{{4, 4, 4}, {3, 2, 5}} {
		plain := mustBuild(t, Config{Kind: KindTorus3D, Dims: dims, NodesPerSwitch: 2}).(*Torus)
		one := mustBuild(t, Config{Kind: KindTorus3D, Dims: dims, NodesPerSwitch: 2, Trunk: 1}).(*Torus)
		if !slices.Equal(plain.Links(), one.Links()) || plain.Radix(0) != one.Radix(0) || plain.Name() != one.Name() {
			t.Fatalf("%v: trunk 1 differs from the plain torus", dims)
		}
		for s := range plain.Switches() {
			for i := range 3 {
				if p, ok := plain.PortPeer(s, 2+2*i); ok && p.Port != int32(2+2*i+1) {
					t.Fatalf("switch %d + port of dimension %d cabled to port %d, want %d", s, i, p.Port, 2+2*i+1)
				}
			}
			for dst := range plain.Nodes() {
				if plain.Route(s, dst) != one.Route(s, dst) ||
					!slices.Equal(plain.MinimalPorts(s, dst, nil), one.MinimalPorts(s, dst, nil)) {
					t.Fatalf("%v: switch %d node %d routes differ", dims, s, dst)
				}
			}
		}
	}
}

// TestTorusTrunkMembersParallel: every member j of an aggregate is cabled
// to member j of the neighbour's opposite aggregate, and all members of an
// aggregate reach the same switch.
func TestTorusTrunkMembersParallel(t *testing.T) {
	tp := mustBuild(t, Config{Kind: KindTorus3D, Dims: []int{2, 3, 4}, NodesPerSwitch: 1, Trunk: 3}).(*Torus)
	for s := range tp.Switches() {
		for agg := range 6 {
			first, _ := tp.PortPeer(s, tp.AggregatePort(agg, 0))
			for j := range 3 {
				p := tp.AggregatePort(agg, j)
				e, ok := tp.PortPeer(s, p)
				if !ok || e.ID != first.ID {
					t.Fatalf("switch %d aggregate %d member %d: %+v, want switch %d", s, agg, j, e, first.ID)
				}
				ra, rj, _ := tp.Aggregate(int(e.Port))
				if ra != agg^1 || rj != j {
					t.Fatalf("switch %d aggregate %d member %d lands on aggregate %d member %d", s, agg, j, ra, rj)
				}
				back, _ := tp.PortPeer(int(e.ID), int(e.Port))
				if back != (End{Kind: SwitchEnd, ID: int32(s), Port: int32(p)}) {
					t.Fatalf("PortPeer not symmetric at switch %d port %d", s, p)
				}
			}
		}
	}
}

func TestTorusTrunkConfig(t *testing.T) {
	checkValidate(t, []validateCase{
		{Config{Kind: KindTorus3D, Trunk: 4, Radix: 27}, "topology.radix: 27 is too small for a torus3d switch with 4 nodes and a 4-cable trunk to a neighbour each way in every dimension (needs 28 ports)"},
		{Config{Kind: KindHyperX, Trunk: 2}, "topology.trunk: not used by kind hyperx"},
		{Config{Kind: KindFBFly, Trunk: 2}, "topology.trunk: not used by kind fbfly"},
		{Config{Kind: KindMegafly, Trunk: 2}, "topology.trunk: not used by kind megafly"},
		{Config{Kind: KindTorus3D, Trunk: -1}, "topology.trunk: must be positive"},
		{Config{Kind: KindTorus3D, Trunk: 5000}, "topology.trunk: 5000 exceeds the limit of 4096"},
		{Config{Kind: KindTorus3D, Trunk: 4, Radix: 28}, ""},
	})
}

// validateCase is a config and the start of its Validate error ("": valid).
type validateCase struct {
	c    Config
	want string
}

// checkValidate checks each case's error: none when want is "", else one
// line starting with want.
func checkValidate(t *testing.T, cases []validateCase) {
	t.Helper()
	for _, c := range cases {
		err := c.c.Validate()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v", c.c, err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("%+v: %v, want %q", c.c, err, c.want)
		case err != nil && strings.Contains(err.Error(), "\n"):
			t.Errorf("%+v: error spans lines: %q", c.c, err)
		}
	}
}
