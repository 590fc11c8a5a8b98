package topo

import "fmt"

// HyperX is the HyperX of Ahn, Binkert, Davis, McLaren and Schreiber (SC
// 2009): switches on an L-dimensional lattice S_0×…×S_{L−1}, each linked
// (K = 1 link per pair) to every switch that differs from it in exactly
// one coordinate, with T nodes per switch. The flattened butterfly (paper
// 004: 8×8 routers, 8 nodes each; kind fbfly) is the HyperX whose S_i are
// equal; both kinds build this type and differ only in their name and
// defaults.
//
// Ports: 0..T−1 nodes, then for each dimension i the S_i − 1 other switches
// of its row in coordinate order (port off_i + t for coordinate t below the
// switch's own, off_i + t − 1 above it, with off_i = T + Σ_{j<i}(S_j − 1));
// ports beyond are unconnected.
//
// Routing: dimension order, one hop straight to the destination's
// coordinate in each dimension that differs, first dimension first.
// MinimalPorts gives every differing dimension (each order of the
// dimensions is a minimal path).
type HyperX struct {
	grid
	name string
	off  []int // first port of each dimension
}

// FlatButterfly is the flattened butterfly (kind fbfly): a HyperX.
type FlatButterfly = HyperX

func newHyperX(c Config) *HyperX {
	g := newGrid(c)
	h := &HyperX{grid: g, name: fmt.Sprintf("%s-%d", c.Kind, g.Nodes()), off: make([]int, len(g.dims))}
	p := g.perSw
	for i, k := range g.dims {
		h.off[i] = p
		p += k - 1
	}
	return h
}

// Name implements Topology.
func (h *HyperX) Name() string { return h.name }

func (h *HyperX) port(i, own, to int) int {
	if to < own {
		return h.off[i] + to
	}
	return h.off[i] + to - 1
}

// PortPeer implements Topology.
func (h *HyperX) PortPeer(s, p int) (End, bool) {
	if p < h.perSw {
		return End{Kind: NodeEnd, ID: int32(s*h.perSw + p)}, true
	}
	for i, k := range h.dims {
		if p >= h.off[i]+k-1 {
			continue
		}
		own := h.coord(s, i)
		to := p - h.off[i]
		if to >= own {
			to++
		}
		peer := s + (to-own)*h.stride[i]
		return End{Kind: SwitchEnd, ID: int32(peer), Port: int32(h.port(i, to, own))}, true
	}
	return End{}, false
}

// Links implements Topology: the node cables, then every switch's cables
// to higher coordinates, dimension by dimension.
func (h *HyperX) Links() []Link {
	n := 0
	for _, k := range h.dims {
		n += h.sw / k * k * (k - 1) / 2
	}
	links := make([]Link, 0, h.Nodes()+n)
	links = h.injectionLinks(links)
	for s := range h.sw {
		for i, k := range h.dims {
			own := h.coord(s, i)
			for to := own + 1; to < k; to++ {
				p := h.port(i, own, to)
				peer, _ := h.PortPeer(s, p)
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
func (h *HyperX) Route(s, dst int) int {
	ds := dst / h.perSw
	for i := range h.dims {
		if c, cd := h.coord(s, i), h.coord(ds, i); c != cd {
			return h.port(i, c, cd)
		}
	}
	return dst % h.perSw
}

// Distance implements Topology.
func (h *HyperX) Distance(s, dst int) int {
	ds := dst / h.perSw
	n := 1
	for i := range h.dims {
		if h.coord(s, i) != h.coord(ds, i) {
			n++
		}
	}
	return n
}

// MinimalPorts implements MultiPath: the port to the destination's
// coordinate in every dimension that differs, in dimension order (Route's
// port first), or the node's port on its own switch.
func (h *HyperX) MinimalPorts(s, dst int, buf []int) []int {
	ds := dst / h.perSw
	buf = buf[:0]
	for i := range h.dims {
		if c, cd := h.coord(s, i), h.coord(ds, i); c != cd {
			buf = append(buf, h.port(i, c, cd))
		}
	}
	if len(buf) == 0 {
		buf = append(buf, dst%h.perSw)
	}
	return buf
}
