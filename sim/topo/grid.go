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
// switch). Each neighbour link is an aggregate (trunk) of w parallel
// cables, w = topology.trunk (default 1; paper 002: a 4×4×4 torus with
// 4-wide aggregates). Ports: 0..c−1 nodes, then for dimension i and
// direction dir (0 towards +1, coordinate k_i−1 wrapping to 0; 1 towards
// −1) the aggregate's members c + (2i+dir)·w + j, j = 0..w−1; ports from
// c+2·dims·w up to the radix are unconnected (the default radix is
// max(24, c+2·dims·w), see Table7Links). Member j of a switch's +
// aggregate is cabled to member j of its +1 neighbour's − aggregate, so a
// ring of two switches has two aggregates between them and a ring of one
// has none (its ports unconnected). With w = 1 these are the ports c+2i
// and c+2i+1 of the plain torus. Nodes keep one NIC each (paper 002's
// 4-wide node aggregate is not modelled).
//
// Routing: dimension order (first dimension first); in each dimension the
// shorter way round the ring, and the + direction when both are equally
// long (even k, offset k/2). Within the aggregate, member dst mod w, so
// that the destinations share its cables.
//
// Dateline (topology.dateline, any w): every hop has a class, 0 or 1, the
// two virtual channels of Dally and Seitz's dateline scheme, which the
// simulator carries as its two traffic classes (PFC priorities, each with
// its own input and output buffer on every member, so a paused class
// blocks no other; sim/network/vc.go). The class is their routing
// function for a ring (Dally and Seitz 1987, "Deadlock-free message
// routing in multiprocessor interconnection networks"), which compares
// the current coordinate with the destination's: a hop in dimension i
// from coordinate c towards the destination's cd is class 0 while the
// rest of the packet's path in that dimension still crosses the ring's
// wrap-around link of its direction (the dateline: the + link from k−1
// to 0, cd < c; the − link from 0 to k−1, cd > c), the hop over the wrap
// link included, and class 1 after it or when the path never crosses it
// (HopClass). So a packet moves to class 1 when it crosses the dateline
// of the ring it travels, and takes the class of the next dimension's
// rule when it turns (class 0 if it will cross that ring's dateline,
// else 1). (The textbook variant that starts every packet of a dimension
// in class 0 is acyclic too; this one needs no state on the packet and
// spreads the load over both classes.) Route and MinimalPorts are the
// same with or without the dateline, so the dateline costs no cable:
// every member carries both classes.
//
// Why the channel dependency graph of dimension-order routing is then
// acyclic (a channel is a member in one direction in one class): a packet
// never changes direction within a dimension and moves to higher
// dimensions only, so a cycle would lie in one class of one direction of
// one ring. There, class-0 hops leave coordinates 1..k−1 (+; 0..k−2 for
// −) and end with the wrap link, after which the packet is class 1: the
// class-0 channels form a path ending at the wrap link, no dependency
// leads from it to another class-0 channel. Class-1 channels exclude the
// wrap link, so they form a path too (0→1→…→k−1 for +), and no
// dependency leads from class 1 back to class 0 within a dimension. Every
// dependency thus goes forward along one of these paths, from class 0 to
// class 1, or to a higher dimension: no cycle, so no deadlock under PFC
// whatever the load (tested on the CDG of small tori, and by sim/scenario
// against the refusals). With a dateline MinimalPorts keeps dimension
// order (every member of the dimension-order aggregate): adaptive
// routing across dimensions (ECMP or POWAR's torus_adaptive over every
// minimal aggregate) closes cycles between dimensions that two classes do
// not break (sim/scenario refuses it).
type Torus struct {
	grid
	name     string
	trunk    int  // w: cables per aggregate (≥ 1)
	dateline bool // hops carry the dateline classes, see HopClass
}

func newTorus(c Config) *Torus {
	g := newGrid(c)
	return &Torus{grid: g, name: fmt.Sprintf("torus3d-%d", g.Nodes()), trunk: max(1, c.Trunk), dateline: c.Dateline}
}

// Dateline reports whether the hops carry the dateline classes
// (topology.dateline): the routing is then deadlock-free only with
// HopClass's two traffic classes, and MinimalPorts keeps dimension order.
func (t *Torus) Dateline() bool { return t.dateline }

// HopClass implements HopClasser: the dateline class of the hop from
// switch s towards node dst over port p, p being one that Route or
// MinimalPorts returns for them: on an aggregate 2i+dir, 0 if the rest of
// the path in dimension i crosses the wrap-around link of direction dir,
// the hop over it included, and 1 otherwise; 0 on a node port. It does
// not depend on whether the torus has a dateline.
func (t *Torus) HopClass(s, dst, p int) int {
	agg, _, ok := t.Aggregate(p)
	if !ok {
		return 0
	}
	i := agg / 2
	return datelineClass(t.coord(s, i), t.coord(dst/t.perSw, i), agg%2)
}

// datelineClass is HopClass from the coordinates: going + (dir 0) the
// path from c to cd crosses the link from k−1 to 0 iff cd < c; going −,
// the link from 0 to k−1 iff cd > c.
func datelineClass(c, cd, dir int) int {
	if (dir == 0 && cd < c) || (dir == 1 && cd > c) {
		return 0
	}
	return 1
}

// Name implements Topology.
func (t *Torus) Name() string { return t.name }

// Trunk returns the number of cables per aggregate (≥ 1).
func (t *Torus) Trunk() int { return t.trunk }

// Aggregate returns the aggregate that port p of a switch belongs to: its
// dimension i and direction dir (0: +, 1: −) as the index 2i+dir, and the
// member j; ok is false for a node port or an unconnected one beyond the
// aggregates.
func (t *Torus) Aggregate(p int) (agg, member int, ok bool) {
	q := p - t.perSw
	if q < 0 || q >= 2*len(t.dims)*t.trunk {
		return 0, 0, false
	}
	return q / t.trunk, q % t.trunk, true
}

// AggregatePort returns the port of member j of aggregate agg (2i+dir).
func (t *Torus) AggregatePort(agg, member int) int { return t.perSw + agg*t.trunk + member }

// PortPeer implements Topology.
func (t *Torus) PortPeer(s, p int) (End, bool) {
	if p < t.perSw {
		return End{Kind: NodeEnd, ID: int32(s*t.perSw + p)}, true
	}
	agg, j, ok := t.Aggregate(p)
	i, dir := agg/2, agg%2
	if !ok || t.dims[i] == 1 {
		return End{}, false
	}
	k, c := t.dims[i], t.coord(s, i)
	next := (c + 1) % k // dir 0: +1
	if dir == 1 {
		next = (c + k - 1) % k
	}
	peer := s + (next-c)*t.stride[i]
	return End{Kind: SwitchEnd, ID: int32(peer), Port: int32(t.AggregatePort(2*i+1-dir, j))}, true
}

// Links implements Topology: the node cables, then for every switch and
// dimension the cables of its + aggregate, member by member.
func (t *Torus) Links() []Link {
	links := make([]Link, 0, t.Nodes()+t.sw*len(t.dims)*t.trunk)
	links = t.injectionLinks(links)
	for s := range t.sw {
		for i := range t.dims {
			for j := range t.trunk {
				p := t.AggregatePort(2*i, j)
				if peer, ok := t.PortPeer(s, p); ok {
					links = append(links, Link{
						A:     End{Kind: SwitchEnd, ID: int32(s), Port: int32(p)},
						B:     peer,
						Class: Local,
					})
				}
			}
		}
	}
	return links
}

// RouteAggregate returns the aggregate (2i+dir) that dimension-order
// routing takes from switch s to node dst, or −1 at dst's switch.
func (t *Torus) RouteAggregate(s, dst int) int {
	ds := dst / t.perSw
	for i, k := range t.dims {
		c, cd := t.coord(s, i), t.coord(ds, i)
		if c == cd {
			continue
		}
		fwd := (cd - c + k) % k
		if fwd <= k-fwd {
			return 2 * i
		}
		return 2*i + 1
	}
	return -1
}

// Route implements Topology: RouteAggregate's aggregate, member dst mod w
// (with or without a dateline: the class is not a member, see HopClass).
func (t *Torus) Route(s, dst int) int {
	agg := t.RouteAggregate(s, dst)
	if agg < 0 {
		return dst % t.perSw
	}
	return t.AggregatePort(agg, dst%t.trunk)
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
