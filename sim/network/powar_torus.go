package network

import (
	"math/bits"

	"github.com/lpictl/lpictl/sim/powar"
	"github.com/lpictl/lpictl/sim/topo"
)

// powarTorus is POWAR's state on a torus3d whose neighbour links are
// aggregates (topology.trunk): Algorithm 3's selectable prefix of every
// aggregate of every switch (powar.Aggregates; the round-robin pointer
// stays per switch, in powarState.sw) and whether the adaptive set spans
// every minimal aggregate or only the dimension-order one. One managed
// aggregate per torus aggregate, with or without topology.dateline: every
// member carries both dateline classes (sim/network/vc.go), and the class
// of a hop is the aggregate's, whichever member carries it.
type powarTorus struct {
	t        *topo.Torus
	agg      *powar.Aggregates
	adaptive bool
}

// torusAggregates is the number of aggregates of a torus3d switch: one per
// dimension and direction.
const torusAggregates = 6

// newPOWARTorus needs no check of the port count: the network refuses
// switches of more than 64 ports, so every port is a bit of a uint64.
func newPOWARTorus(t *topo.Torus, c *POWAR) *powarTorus {
	return &powarTorus{t: t, agg: powar.NewAggregates(t.Switches(), torusAggregates, t.Trunk(), c.Initial),
		adaptive: c.TorusAdaptive}
}

// routePOWARTorus returns packet pk's output port (global index) at
// switch sw at time now on a torus3d. At the destination's switch the
// port is its NIC's. Elsewhere the routing function gives the adaptive set
// P (every member of every minimal aggregate with torus_adaptive, else the
// members of the DOR aggregate) and the deterministic output D (the DOR
// aggregate); each managed aggregate's first Sel members are
// selectable (Algorithm 3, brought to the current checking cycle here),
// and powar.SelectAggregated applies Algorithm 1. The packet's bytes count
// on the chosen port's managed aggregate.
//
// With the paper's wait (powarState.wait) the choice among the members is
// made when the packet heads its input buffer (decidePOWAR, through
// selectPOWARTorus), and a packet that finds nothing usable waits there
// instead of queueing.
func (n *Network) routePOWARTorus(sw int32, pk *packet, now int64) int32 {
	s := n.pw
	t := s.tr.t
	base := n.swBase[sw]
	dAgg := t.RouteAggregate(int(sw), int(pk.dst))
	if dAgg < 0 {
		g := base + int32(t.Route(int(sw), int(pk.dst)))
		if !s.wait {
			s.pending[g]++
		}
		return g
	}
	if s.wait {
		if s.tr.adaptive || t.Trunk() > 1 {
			return ^(base + int32(t.AggregatePort(dAgg, 0)))
		}
		// One member and nothing else: no choice, so no wait (as a fat
		// tree's descent); counted in pending at the request.
		g, _ := n.selectPOWARTorus(sw, pk, now, dAgg, false)
		return g
	}
	g, _ := n.selectPOWARTorus(sw, pk, now, dAgg, false)
	s.pending[g]++
	return g
}

// selectPOWARTorus is the decision of routePOWARTorus for a packet whose
// next hop is dimension-order aggregate dAgg: the output port (global
// index), or ok false if wait and nothing was usable (the paper's NULL).
func (n *Network) selectPOWARTorus(sw int32, pk *packet, now int64, dAgg int, wait bool) (int32, bool) {
	s := n.pw
	tr := s.tr
	t := tr.t
	base := n.swBase[sw]
	var cand []int
	if tr.adaptive {
		cand = n.ecmp.mp.MinimalPorts(int(sw), int(pk.dst), n.ecmp.cand)
	} else {
		cand = n.ecmp.cand[:0]
		for j := range t.Trunk() {
			cand = append(cand, t.AggregatePort(dAgg, j))
		}
	}
	cycle := now / s.cycle
	var adaptive, det, sel uint64
	key, lim := -1, t.Trunk()
	for _, p := range cand { // grouped by aggregate, members in order
		a, j, _ := t.Aggregate(p)
		if a != key {
			key = a
			if !s.firstOn {
				lim = tr.agg.Sel(s.th, int(sw), a, cycle, s.capacity)
			}
		}
		b := uint64(1) << uint(p)
		adaptive |= b
		if a == dAgg {
			det |= b
		}
		if j >= lim {
			continue
		}
		sel |= b
	}
	var c uint8 // the class the packet goes on in (tested only by the wait)
	if wait && n.vc != nil {
		c = pk.vcNext
	}
	free, awake := n.freeAwake(sw, sel, now, c)
	s.cand = adaptive
	st := &s.sw[sw]
	p, next, how := powar.SelectAggregated(adaptive, det, sel, free, awake, int(st.RRP))
	if wait && how == powar.Queued {
		return 0, false
	}
	st.RRP = uint8(next)
	if len(cand) > 1 {
		switch how {
		case powar.AdaptiveSleeping:
			s.stats.Sleeping++
		case powar.Queued:
			s.stats.Fallback++
		}
		s.stats.Adaptive++
		s.stats.selSum += uint64(bits.OnesCount64(sel))
	}
	a, _, _ := t.Aggregate(p)
	tr.agg.Add(s.th, int(sw), a, cycle, s.capacity, int64(pk.size))
	return base + int32(p), true
}
