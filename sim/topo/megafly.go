package topo

import "fmt"

// Megafly is a Megafly / Dragonfly+ network (docs/model.md §3.1). Each of G groups
// has L leaf and S spine switches forming a complete bipartite graph; a
// leaf has n nodes, a spine h global links, and every pair of groups is
// joined by exactly one global link.
//
// Numbering: switches group by group, in each group the leaves 0..L-1
// then the spines 0..S-1 (switch g·(L+S)+l is leaf l of group g, switch
// g·(L+S)+L+x is spine x). Node (g·L+l)·n+p is on port p of leaf l of
// group g. Leaf ports: 0..n-1 nodes, n+x spine x. Spine ports: 0..L-1
// leaf l, L+i global link i.
//
// Wiring (docs/model.md §3.1): global port i of spine x of group g goes to group
// (g + d) mod G with d = 1 + i + h·x; ports with d ≥ G are unconnected (only
// when G < S·h+1). The cable arrives at the port of the peer group that
// points back, offset G − d.
//
// Routing (docs/model.md §3.1, paper 000 §4.2): a leaf sends a packet for its own
// nodes down; for another leaf of its group up to spine dst mod S (D-mod-k);
// for another group up to the spine that owns the global link to that
// group. A spine sends a packet for its own group down to the destination
// leaf and one for another group over its global link to that group; a
// spine without that link (a state minimal routing never produces) sends it
// down to leaf dst mod L, which routes it as above.
type Megafly struct {
	name                 string
	groups, leaves       int
	spines, nodesPerLeaf int
	globals              int
	radix                int // 0: ports in use per role
	perGroup             int // leaves + spines
}

func newMegafly(c Config) *Megafly {
	return &Megafly{
		name:         fmt.Sprintf("megafly-%d", c.Groups*c.Leaves*c.NodesPerSwitch),
		groups:       c.Groups,
		leaves:       c.Leaves,
		spines:       c.Spines,
		nodesPerLeaf: c.NodesPerSwitch,
		globals:      c.GlobalLinks,
		radix:        c.Radix,
		perGroup:     c.Leaves + c.Spines,
	}
}

// Name implements Topology.
func (m *Megafly) Name() string { return m.name }

// Nodes implements Topology.
func (m *Megafly) Nodes() int { return m.groups * m.leaves * m.nodesPerLeaf }

// Switches implements Topology.
func (m *Megafly) Switches() int { return m.groups * m.perGroup }

// Groups is the number of groups.
func (m *Megafly) Groups() int { return m.groups }

// SwitchGroup is the group of switch s.
func (m *Megafly) SwitchGroup(s int) int { return s / m.perGroup }

// Radix implements Topology: the configured radix, or the ports in use
// (leaf: nodes + spines, spine: leaves + global links).
func (m *Megafly) Radix(s int) int {
	if m.radix != 0 {
		return m.radix
	}
	if s%m.perGroup < m.leaves {
		return m.nodesPerLeaf + m.spines
	}
	return m.leaves + m.globals
}

// SwitchRole implements Topology: "leaf" or "spine".
func (m *Megafly) SwitchRole(s int) string {
	if s%m.perGroup < m.leaves {
		return "leaf"
	}
	return "spine"
}

// Attach implements Topology.
func (m *Megafly) Attach(node int) (sw, port int) {
	leaf := node / m.nodesPerLeaf // global leaf index g·L + l
	g, l := leaf/m.leaves, leaf%m.leaves
	return g*m.perGroup + l, node % m.nodesPerLeaf
}

// globalPeer returns the far end of global port i of spine x in group g.
func (m *Megafly) globalPeer(g, x, i int) (End, bool) {
	d := 1 + i + m.globals*x
	if d >= m.groups {
		return End{}, false
	}
	g2 := (g + d) % m.groups
	back := m.groups - d - 1 // offset − 1 of the way back
	x2, i2 := back/m.globals, back%m.globals
	return End{Kind: SwitchEnd, ID: int32(g2*m.perGroup + m.leaves + x2), Port: int32(m.leaves + i2)}, true
}

// PortPeer implements Topology.
func (m *Megafly) PortPeer(s, p int) (End, bool) {
	g, r := s/m.perGroup, s%m.perGroup
	if r < m.leaves { // leaf r
		if p < m.nodesPerLeaf {
			return End{Kind: NodeEnd, ID: int32((g*m.leaves+r)*m.nodesPerLeaf + p)}, true
		}
		if x := p - m.nodesPerLeaf; x < m.spines {
			return End{Kind: SwitchEnd, ID: int32(g*m.perGroup + m.leaves + x), Port: int32(r)}, true
		}
		return End{}, false
	}
	x := r - m.leaves
	if p < m.leaves {
		return End{Kind: SwitchEnd, ID: int32(g*m.perGroup + p), Port: int32(m.nodesPerLeaf + x)}, true
	}
	if i := p - m.leaves; i < m.globals {
		return m.globalPeer(g, x, i)
	}
	return End{}, false
}

// Links implements Topology: per group, the node cables, then the
// leaf–spine cables; then the global cables, each once from its
// lower-numbered group.
func (m *Megafly) Links() []Link {
	nLocal := m.groups * m.leaves * m.spines
	nGlobal := m.groups * (m.groups - 1) / 2
	links := make([]Link, 0, m.Nodes()+nLocal+nGlobal)
	for node := range m.Nodes() {
		sw, p := m.Attach(node)
		links = append(links, Link{
			A:     End{Kind: NodeEnd, ID: int32(node)},
			B:     End{Kind: SwitchEnd, ID: int32(sw), Port: int32(p)},
			Class: Injection,
		})
	}
	for g := range m.groups {
		for l := range m.leaves {
			for x := range m.spines {
				links = append(links, Link{
					A:     End{Kind: SwitchEnd, ID: int32(g*m.perGroup + l), Port: int32(m.nodesPerLeaf + x)},
					B:     End{Kind: SwitchEnd, ID: int32(g*m.perGroup + m.leaves + x), Port: int32(l)},
					Class: Local,
				})
			}
		}
	}
	for g := range m.groups {
		for x := range m.spines {
			for i := range m.globals {
				peer, ok := m.globalPeer(g, x, i)
				if !ok || int(peer.ID)/m.perGroup < g {
					continue
				}
				links = append(links, Link{
					A:     End{Kind: SwitchEnd, ID: int32(g*m.perGroup + m.leaves + x), Port: int32(m.leaves + i)},
					B:     peer,
					Class: Global,
				})
			}
		}
	}
	return links
}

// Route implements Topology (see the type's comment for the rules).
func (m *Megafly) Route(s, dst int) int {
	g, r := s/m.perGroup, s%m.perGroup
	leaf := dst / m.nodesPerLeaf
	gd, ld := leaf/m.leaves, leaf%m.leaves
	if r < m.leaves { // leaf
		switch {
		case g != gd:
			d := (gd - g + m.groups) % m.groups
			return m.nodesPerLeaf + (d-1)/m.globals
		case r == ld:
			return dst % m.nodesPerLeaf
		default:
			return m.nodesPerLeaf + dst%m.spines
		}
	}
	if g == gd {
		return ld
	}
	d := (gd - g + m.groups) % m.groups
	if (d-1)/m.globals == r-m.leaves {
		return m.leaves + (d-1)%m.globals
	}
	return dst % m.leaves
}

// Distance implements Topology.
func (m *Megafly) Distance(s, dst int) int {
	g, r := s/m.perGroup, s%m.perGroup
	leaf := dst / m.nodesPerLeaf
	gd, ld := leaf/m.leaves, leaf%m.leaves
	if r < m.leaves {
		switch {
		case g != gd:
			return 4 // up, global, down, node
		case r == ld:
			return 1
		default:
			return 3 // up, down, node
		}
	}
	if g == gd {
		return 2
	}
	d := (gd - g + m.groups) % m.groups
	if (d-1)/m.globals == r-m.leaves {
		return 3 // global, down, node
	}
	return 5 // down, then a leaf's 4
}
