package topo

// HopClasser is implemented by topologies whose routing is deadlock-free
// only when each hop travels in one of two traffic classes (virtual
// channels; in the simulator PFC priorities, each with its own buffers,
// sim/network/vc.go): the channel dependency graph of the routing is
// acyclic over channels (switch, port, class) though not over (switch,
// port).
type HopClasser interface {
	// HopClass returns the class, 0 or 1, of the hop from switch s
	// towards node dst over port p, p being a port that Route (or, where
	// Classes says so, MinimalPorts) returns for s and dst. It depends on
	// nothing else (no state carried by the packet), allocates nothing,
	// and is 0 on a node port.
	HopClass(s, dst, p int) int
}

// Classes returns the hop classes that t's routing needs to be
// deadlock-free, or nil if it needs none: a torus3d with a dateline (the
// Dally–Seitz classes, Torus.HopClass), with minimal routing (Route) and
// with multipath routing over MinimalPorts alike. Every other
// topology's minimal routing is acyclic with one class (docs/simulator.md
// "Deadlocks"). Whether multipath routing is acyclic with the returned
// classes is the caller's question (sim/scenario refuses what is not).
func Classes(t Topology) HopClasser {
	switch v := t.(type) {
	case *Torus:
		if v.dateline {
			return v
		}
	}
	return nil
}

// Interface checks.
var _ HopClasser = (*Torus)(nil)
