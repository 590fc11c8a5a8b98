package topo

// HopClasser is implemented by topologies whose routing is deadlock-free
// only when each hop travels in one of two traffic classes (virtual
// channels; in the simulator PFC priorities, each with its own buffers,
// sim/network/vc.go): the channel dependency graph of the routing is
// acyclic over channels (switch, port, class) though not over (switch,
// port).
type HopClasser interface {
	// HopClass returns the class, 0 or 1, of the hop from switch s
	// towards node dst over port p, p being a port that Route or
	// MinimalPorts returns for s and dst. It depends on
	// nothing else (no state carried by the packet), allocates nothing,
	// and is 0 on a node port.
	HopClass(s, dst, p int) int
}

// Classes returns the hop classes that t's routing needs to be
// deadlock-free, or nil if it needs none or two classes cannot help:
// a torus3d with a dateline (the Dally–Seitz classes, Torus.HopClass)
// and the dragonfly (class 1 in the destination's group,
// Dragonfly.HopClass), with minimal routing (Route) and with multipath
// routing over MinimalPorts (multipath) alike; and, with multipath only,
// a HyperX or flattened butterfly of two dimensions of more than one
// switch (class 1 on the last switch hop, HyperX.HopClass; with one, a
// path has one switch link and needs no class). Every
// other topology's minimal routing is acyclic with one class
// (docs/simulator.md "Deadlocks"); multipath routing on a HyperX of three
// or more dimensions is not acyclic with two stateless classes, and
// sim/scenario refuses it.
func Classes(t Topology, multipath bool) HopClasser {
	switch v := t.(type) {
	case *Torus:
		if v.dateline {
			return v
		}
	case *Dragonfly:
		return v
	case *HyperX:
		if multipath && v.activeDims() == 2 {
			return v
		}
	}
	return nil
}

// HopClass implements HopClasser: the standard scheme for a dragonfly's
// minimal (local, global, local) routing with two virtual channels (Kim,
// Dally, Scott and Abts, ISCA 2008): class 0 on the hops in the source's
// group and on the global hop, class 1 on the local hop in the
// destination's group, after the global hop. A packet within one group
// takes its one local hop in class 1 too (it depends on nothing after
// it). Dependencies then run local 0 → global 0 → local 1 → node only:
// each path has at most one local hop per group, so no class-0 local
// channel waits for another, and a class-1 channel waits for no switch
// channel at all. One class is not enough: the same local channel is a
// path's last hop and another's first, and a cycle global → local →
// global → … closes through the groups.
func (d *Dragonfly) HopClass(s, dst, p int) int {
	if p >= d.localBase && p < d.globalBase && s/d.routers == dst/d.perRtr/d.routers {
		return 1
	}
	return 0
}

// HopClass implements HopClasser for multipath (ECMP) routing on a HyperX
// of two dimensions: class 1 on the hop that reaches the destination's
// switch (one dimension still differs at s), class 0 on a hop with two
// still to go; 0 on a node port. Every minimal path crosses at most two
// switch links, one per differing dimension in either order, so
// dependencies run class 0 → class 1 → node only: acyclic, where one
// class has the cycles of the two dimension orders (an x hop waiting for
// a y hop and a y hop for an x hop, round a square of switches). With
// three dimensions a class-0 hop may wait for another class-0 hop in any
// order, and the cycles come back (Classes returns nil there).
func (h *HyperX) HopClass(s, dst, p int) int {
	if p < h.perSw {
		return 0
	}
	ds := dst / h.perSw
	n := 0
	for i := range h.dims {
		if h.coord(s, i) != h.coord(ds, i) {
			n++
		}
	}
	if n == 1 {
		return 1
	}
	return 0
}

// activeDims is the number of dimensions of more than one switch.
func (h *HyperX) activeDims() int {
	n := 0
	for _, k := range h.dims {
		if k > 1 {
			n++
		}
	}
	return n
}

// Interface checks.
var (
	_ HopClasser = (*Torus)(nil)
	_ HopClasser = (*Dragonfly)(nil)
	_ HopClasser = (*HyperX)(nil)
)
