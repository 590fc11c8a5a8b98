package topo

// Non-minimal paths on the Megafly, for power-aware routing (POWAR in the
// simulator) that may detour over awake links instead of waking a sleeping
// one.
//
// A non-minimal path from group gs to group gd ≠ gs crosses exactly two
// global links, gs → gi → gd, through an intermediate group gi. In gi the
// packet arrives at spine a (the spine that owns gi's link back to gs) and
// leaves from spine b (the owner of gi → gd): straight on when b = a, else
// down from a to a transit leaf t and up from t to b (Route does this: a
// spine without the link to the destination's group sends the packet down
// to leaf dst mod L, and a leaf sends a packet for another group up to the
// owner). With one traffic class under PFC (no virtual channels), two
// restrictions keep the network deadlock-free:
//
//	(G) gi > gs (group numbers);
//	(S) b ≥ a (spine indices in gi; b > a when a transit is needed).
//
// Why the channel dependency graph (CDG) of every minimal path and every
// allowed non-minimal path is acyclic. Its channels are the directed
// switch–switch links; its edges join consecutive channels of a path:
//
//	E1 up(l→x) → down(x→l')     intra-group path, same spine x;
//	E2 up(l→x) → global out of x (x owns it);
//	E3 global into spine y → down(y→l);
//	E4 global gs→gi → global gi→gd, straight on in gi: by (G), gi > gs;
//	E5 down(a→t) → up(t→b) in gi, a transit: by (S), b > a, and by (G)
//	   spine a owns a link to some group gs < gi.
//
// Inside one group only E1 and E5 join local channels: spine indices never
// decrease along them and E5 raises them, and there is no up→up or
// down→down edge, so a cycle of local channels would need an E5 and could
// not close. A cycle must therefore hold global channels, joining groups
// g_1 → g_2 → … → g_k → g_1 (k ≥ 2). Take the smallest group g_m of the
// cycle: its predecessor g_{m−1} is larger, so by (G) the cycle does not go
// straight on in g_m (E4), and it crosses g_m by E3, then E5 from the
// arrival spine a, then (E1 E5)* and E2 from a spine b > a. By E5's
// condition a owns the link to some gs < g_m, at offset G − g_m + gs ≥
// G − g_m from g_m. Global port i of spine x has offset 1 + i + h·x, so
// b > a makes the offset e of the link g_m → g_{m+1} larger than every
// offset a owns: e > G − g_m, hence g_{m+1} = g_m + e − G < g_m, against g_m
// being the smallest. So no cycle exists. (The argument "global→global
// dependencies raise the source group" alone is not enough: a transit's
// down and up channels are shared with packets ending and starting in gi.)
// Dropping either restriction closes cycles already on 5 groups × 2 spines
// × 2 global links (TestMegaflyNonMinimalCDG builds the graphs).

// LeafCount is the number of leaves per group.
func (m *Megafly) LeafCount() int { return m.leaves }

// SpineCount is the number of spines per group.
func (m *Megafly) SpineCount() int { return m.spines }

// NodesPerLeaf is the number of nodes per leaf: a leaf's ports
// 0..NodesPerLeaf−1 go to nodes, port NodesPerLeaf+x to spine x.
func (m *Megafly) NodesPerLeaf() int { return m.nodesPerLeaf }

// IsLeaf reports whether switch s is a leaf.
func (m *Megafly) IsLeaf(s int) bool { return s%m.perGroup < m.leaves }

// NodeGroup is the group of node dst.
func (m *Megafly) NodeGroup(dst int) int { return dst / m.nodesPerLeaf / m.leaves }

// GlobalOwner returns the spine (index in its group, 0..S−1) of group g
// that owns the global link to group g2 ≠ g.
func (m *Megafly) GlobalOwner(g, g2 int) int {
	return ((g2-g+m.groups)%m.groups - 1) / m.globals
}

// NonMinimalVia reports whether gi is an allowed intermediate group for a
// non-minimal path from group gs to group gd (gi ∉ {gs, gd}, gi > gs and
// GlobalOwner(gi, gd) ≥ GlobalOwner(gi, gs); see above), and whether the
// path needs a local transit (down and up) in gi.
func (m *Megafly) NonMinimalVia(gs, gi, gd int) (ok, transit bool) {
	if gi <= gs || gi == gd || gs == gd || gi >= m.groups || gd < 0 || gd >= m.groups {
		return false, false
	}
	a, b := m.GlobalOwner(gi, gs), m.GlobalOwner(gi, gd)
	return b >= a, b != a
}

// Distances of a non-minimal path from a spine of the source group (its
// global link to gi onwards, counting the final switch→NIC link): global,
// global, down, node; with a transit, global, down, up, global, down, node.
const (
	nonMinStraight = 4
	nonMinTransit  = 6
)

// nonMinGlobal returns the distance from spine x of group g over its
// global port i to a node of group gd on an allowed non-minimal path, or 0
// when the port is unconnected or leads to gd itself or to a group that is
// not an allowed intermediate.
func (m *Megafly) nonMinGlobal(g, x, i, gd int) int {
	d := 1 + i + m.globals*x
	if d >= m.groups {
		return 0
	}
	ok, transit := m.NonMinimalVia(g, (g+d)%m.groups, gd)
	switch {
	case !ok:
		return 0
	case transit:
		return nonMinTransit
	}
	return nonMinStraight
}

// NonMinimalPorts appends to buf[:0] and returns the output ports of switch
// s that start an allowed non-minimal path to node dst, for a packet that
// is still in its source group (s's group) and has not detoured: at a leaf,
// the spines other than the minimal one (Route's) that own a global link to
// an allowed intermediate group; at a spine, its global ports to allowed
// intermediate groups. The list is ascending and empty when dst is in s's
// group or no intermediate is allowed. buf should hold Radix(s) ports so
// that nothing is allocated. NonMinimalDistance gives each port's path
// length.
func (m *Megafly) NonMinimalPorts(s, dst int, buf []int) []int {
	g, r := s/m.perGroup, s%m.perGroup
	gd := m.NodeGroup(dst)
	buf = buf[:0]
	if g == gd {
		return buf
	}
	if r < m.leaves {
		x0 := m.GlobalOwner(g, gd)
		for x := range m.spines {
			if x != x0 && m.spineNonMin(g, x, gd) > 0 {
				buf = append(buf, m.nodesPerLeaf+x)
			}
		}
		return buf
	}
	x := r - m.leaves
	for i := range m.globals {
		if m.nonMinGlobal(g, x, i, gd) > 0 {
			buf = append(buf, m.leaves+i)
		}
	}
	return buf
}

// spineNonMin is the shortest allowed non-minimal distance from spine x of
// group g to a node of group gd (0: none).
func (m *Megafly) spineNonMin(g, x, gd int) int {
	best := 0
	for i := range m.globals {
		if d := m.nonMinGlobal(g, x, i, gd); d > 0 && (best == 0 || d < best) {
			best = d
		}
	}
	return best
}

// NonMinimalDistance is the number of links a packet crosses from switch s
// to node dst when it leaves s on port p, one of NonMinimalPorts(s, dst),
// and follows an allowed non-minimal path (counting the final switch→NIC
// link, as Distance does): from a spine, 4 when its intermediate group
// forwards it straight on and 6 with a local transit; from a leaf, one more
// than the shortest such path from spine p. It is 0 when p is not one of
// NonMinimalPorts(s, dst). A leaf's figure is a lower bound when the spine
// later picks a longer intermediate.
func (m *Megafly) NonMinimalDistance(s, dst, p int) int {
	g, r := s/m.perGroup, s%m.perGroup
	gd := m.NodeGroup(dst)
	if g == gd {
		return 0
	}
	if r < m.leaves {
		x := p - m.nodesPerLeaf
		if x < 0 || x >= m.spines || x == m.GlobalOwner(g, gd) {
			return 0
		}
		if d := m.spineNonMin(g, x, gd); d > 0 {
			return 1 + d
		}
		return 0
	}
	i := p - m.leaves
	if i < 0 || i >= m.globals {
		return 0
	}
	return m.nonMinGlobal(g, r-m.leaves, i, gd)
}
