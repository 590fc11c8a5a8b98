package topo

import "fmt"

// grid numbers the switches of a torus or HyperX (flattened butterfly) by their
// coordinates, the first dimension varying fastest:
// s = c_0 + k_0·(c_1 + k_1·(c_2 + …)). Node s·c+p is on port p of switch s.
type grid struct {
	dims   []int // k_i
	stride []int // k_0·…·k_{i−1}
	sw     int   // switches
	perSw  int   // nodes per switch (c)
	radix  int
}

func newGrid(c Config) grid {
	g := grid{dims: append([]int(nil), c.Dims...), stride: make([]int, len(c.Dims)), sw: 1,
		perSw: c.NodesPerSwitch, radix: c.Radix}
	for i, k := range c.Dims {
		g.stride[i] = g.sw
		g.sw *= k
	}
	return g
}

func (g *grid) coord(s, i int) int { return s / g.stride[i] % g.dims[i] }

// Nodes implements Topology.
func (g *grid) Nodes() int { return g.sw * g.perSw }

// Switches implements Topology.
func (g *grid) Switches() int { return g.sw }

// Radix implements Topology.
func (g *grid) Radix(int) int { return g.radix }

// SwitchRole implements Topology: every switch is a "router".
func (g *grid) SwitchRole(int) string { return "router" }

// Attach implements Topology.
func (g *grid) Attach(node int) (sw, port int) { return node / g.perSw, node % g.perSw }

// Dims returns the number of switches along each dimension.
func (g *grid) Dims() []int { return append([]int(nil), g.dims...) }

func (g *grid) injectionLinks(links []Link) []Link {
	for node := range g.Nodes() {
		links = append(links, Link{
			A:     End{Kind: NodeEnd, ID: int32(node)},
			B:     End{Kind: SwitchEnd, ID: int32(node / g.perSw), Port: int32(node % g.perSw)},
			Class: Injection,
		})
	}
	return links
}

// Torus is a torus of switches (paper 000 Table 7: 10×10×10, 4 nodes per
// switch). Ports: 0..c−1 nodes, then two per dimension i: c+2i towards
// +1 (coordinate k_i−1 wraps to 0) and c+2i+1 towards −1; ports from
// c+2·dims up to the radix are unconnected (the default radix is 24, see
// Table7Links). The + port of a switch is cabled to the − port of its +1
// neighbour, so a ring of two switches has two cables between them and a
// ring of one has none (both ports unconnected).
//
// Routing: dimension order (first dimension first); in each dimension the
// shorter way round the ring, and the + direction when both are equally
// long (even k, offset k/2).
type Torus struct {
	grid
	name string
}

func newTorus(c Config) *Torus {
	g := newGrid(c)
	return &Torus{grid: g, name: fmt.Sprintf("torus3d-%d", g.Nodes())}
}

// Name implements Topology.
func (t *Torus) Name() string { return t.name }

// PortPeer implements Topology.
func (t *Torus) PortPeer(s, p int) (End, bool) {
	if p < t.perSw {
		return End{Kind: NodeEnd, ID: int32(s*t.perSw + p)}, true
	}
	q := p - t.perSw
	i, dir := q/2, q%2
	if i >= len(t.dims) || t.dims[i] == 1 {
		return End{}, false
	}
	k, c := t.dims[i], t.coord(s, i)
	next := (c + 1) % k // dir 0: +1
	if dir == 1 {
		next = (c + k - 1) % k
	}
	peer := s + (next-c)*t.stride[i]
	return End{Kind: SwitchEnd, ID: int32(peer), Port: int32(t.perSw + 2*i + 1 - dir)}, true
}

// Links implements Topology: the node cables, then for every switch and
// dimension the cable from its + port.
func (t *Torus) Links() []Link {
	links := make([]Link, 0, t.Nodes()+t.sw*len(t.dims))
	links = t.injectionLinks(links)
	for s := range t.sw {
		for i := range t.dims {
			p := t.perSw + 2*i
			if peer, ok := t.PortPeer(s, p); ok {
				links = append(links, Link{
					A:     End{Kind: SwitchEnd, ID: int32(s), Port: int32(p)},
					B:     peer,
					Class: Local,
				})
			}
		}
	}
	return links
}

// Route implements Topology.
func (t *Torus) Route(s, dst int) int {
	ds := dst / t.perSw
	for i, k := range t.dims {
		c, cd := t.coord(s, i), t.coord(ds, i)
		if c == cd {
			continue
		}
		fwd := (cd - c + k) % k
		if fwd <= k-fwd {
			return t.perSw + 2*i
		}
		return t.perSw + 2*i + 1
	}
	return dst % t.perSw
}

// Distance implements Topology.
func (t *Torus) Distance(s, dst int) int {
	ds := dst / t.perSw
	n := 1
	for i, k := range t.dims {
		fwd := (t.coord(ds, i) - t.coord(s, i) + k) % k
		n += min(fwd, k-fwd)
	}
	return n
}
