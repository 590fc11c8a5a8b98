package topo

// MultiPath is implemented by topologies that can list every output port
// on a minimal path, for routing that spreads flows over equal-cost paths
// (ECMP in the simulator). Every topology of this package implements it.
type MultiPath interface {
	// MinimalPorts appends to buf[:0] and returns every output port of
	// switch s whose far end is one step closer to node dst under the
	// topology's minimal routing: from each of these ports the rest of the
	// path can be routed by Route (or by further MinimalPorts choices) and
	// crosses exactly Distance(s, dst) − 1 links, so hop counts are those
	// of Route. Route(s, dst) is always among them; the list has no
	// duplicates, is in a deterministic order and is never empty. buf
	// should hold Radix(s) ports so that nothing is allocated.
	//
	// Minimal means the topology's own path discipline: shortest paths in
	// the switch graph for fat trees, tori and HyperX/flattened
	// butterflies; for the Megafly and the dragonfly, shortest paths that
	// cross at most one global link (their routing's deadlock-avoidance
	// assumption), which are graph-shortest from a Megafly leaf; for a
	// torus with a dateline, the dimension-order aggregate's members (the
	// dateline's deadlock freedom needs dimension order).
	MinimalPorts(s, dst int, buf []int) []int
}

// MinimalPorts implements MultiPath: going up, every up port (each parent
// roots a subtree holding a shortest path); going down, the single port
// towards dst.
func (t *FatTree) MinimalPorts(s, dst int, buf []int) []int {
	i, a, _ := t.level(s)
	buf = buf[:0]
	if dst/t.span[i] == a {
		return append(buf, dst/t.span[i-1]%t.down[i])
	}
	for q := range t.up[i] {
		buf = append(buf, t.down[i]+q)
	}
	return buf
}

// MinimalPorts implements MultiPath: a leaf sends a packet for another leaf
// of its group up any spine; a spine that does not own the global link to
// the destination's group (a state Route never produces) sends it down to
// any leaf. Everything else has a single minimal port (one global link per
// pair of groups), Route's.
func (m *Megafly) MinimalPorts(s, dst int, buf []int) []int {
	g, r := s/m.perGroup, s%m.perGroup
	leaf := dst / m.nodesPerLeaf
	gd, ld := leaf/m.leaves, leaf%m.leaves
	buf = buf[:0]
	if r < m.leaves {
		if g == gd && r != ld {
			for x := range m.spines {
				buf = append(buf, m.nodesPerLeaf+x)
			}
			return buf
		}
		return append(buf, m.Route(s, dst))
	}
	if g != gd {
		if d := (gd - g + m.groups) % m.groups; (d-1)/m.globals != r-m.leaves {
			for l := range m.leaves {
				buf = append(buf, l)
			}
			return buf
		}
	}
	return append(buf, m.Route(s, dst))
}

// MinimalPorts implements MultiPath: in a dragonfly every pair of routers
// of a group shares one local link and every pair of groups one global
// link, so the local–global–local path is unique: Route's port.
func (d *Dragonfly) MinimalPorts(s, dst int, buf []int) []int {
	return append(buf[:0], d.Route(s, dst))
}

// MinimalPorts implements MultiPath: in every dimension that differs, the
// shorter way round the ring, or both ways when they are equally long
// (even side, offset half of it), dimension by dimension; every member of
// each of these aggregates, in port order. With a dateline the torus's
// path discipline is dimension order (the dateline keeps each dimension's
// hops deadlock-free, but a free choice of dimension order would close
// cycles of paused links across dimensions), so the ports are the members
// of the dimension-order aggregate: ECMP then hashes over them as a LAG
// does, and stays deadlock-free (each hop in its HopClass).
func (t *Torus) MinimalPorts(s, dst int, buf []int) []int {
	buf = buf[:0]
	if t.dateline {
		if agg := t.RouteAggregate(s, dst); agg >= 0 {
			return t.appendAggregate(buf, agg)
		}
		return append(buf, dst%t.perSw)
	}
	ds := dst / t.perSw
	for i, k := range t.dims {
		c, cd := t.coord(s, i), t.coord(ds, i)
		if c == cd {
			continue
		}
		fwd := (cd - c + k) % k
		if fwd <= k-fwd {
			buf = t.appendAggregate(buf, 2*i)
		}
		if fwd >= k-fwd {
			buf = t.appendAggregate(buf, 2*i+1)
		}
	}
	if len(buf) == 0 {
		buf = append(buf, dst%t.perSw)
	}
	return buf
}

func (t *Torus) appendAggregate(buf []int, agg int) []int {
	for j := range t.trunk {
		buf = append(buf, t.AggregatePort(agg, j))
	}
	return buf
}

// Interface checks.
var (
	_ MultiPath = (*FatTree)(nil)
	_ MultiPath = (*Megafly)(nil)
	_ MultiPath = (*Dragonfly)(nil)
	_ MultiPath = (*Torus)(nil)
	_ MultiPath = (*HyperX)(nil)
)
