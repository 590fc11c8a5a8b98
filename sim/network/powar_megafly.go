package network

import (
	"fmt"

	"github.com/lpictl/lpictl/sim/powar"
	"github.com/lpictl/lpictl/sim/topo"
)

// POWAR on the Megafly with non-minimal paths (routing.powar.non_minimal).
//
// A packet for another group that has not detoured yet (!pk.detour) has,
// at a switch of its source group, the minimal candidate (Route's port:
// the leaf's spine that owns the link to the destination's group, or that
// spine's global link) and the non-minimal ones
// (topo.Megafly.NonMinimalPorts: paths gs → gi → gd through an allowed
// intermediate group, deadlock-free with one traffic class; the proof is
// in sim/topo/megafly_nonminimal.go). Algorithm 1's round-robin order from
// the switch's pointer picks, among the selectable candidates that are not
// busy, in this order:
//
//  1. an awake minimal port;
//  2. an awake non-minimal port (a detour over awake links instead of
//     waking one);
//  3. a sleeping minimal port;
//  4. a sleeping non-minimal port;
//  5. none free (the paper's NULL): the minimal port, busy or not
//     selectable; at a spine that has no minimal port (reached by a
//     leaf's detour) the first non-minimal one in round-robin order.
//
// At a leaf the selectable candidates are Algorithm 2's prefix of its up
// ports, whose checking-cycle counter counts every byte the leaf routes
// up (intra-group, inter-group and transit); at a spine every candidate is
// selectable. A leaf that picks a non-minimal spine leaves the packet
// undetoured: that spine, which does not own the link to the destination's
// group (a state nothing else produces), then picks among its global links
// to allowed intermediates by steps 2, 4 and 5, and marks the packet
// detoured (pk.detour, which only TCEP's PAL uses otherwise). A detoured
// packet follows Route: in the intermediate group straight on, or down to
// leaf dst mod L and up to the owner of the link onwards. pk.hops is set to
// the non-minimal path's length at each choice (a leaf announces its
// spine's shortest path). Destinations in the switch's group keep POWAR's
// minimal behaviour.

// powarMegafly is POWAR's state for non-minimal candidates on the Megafly.
type powarMegafly struct {
	m     *topo.Megafly
	buf   []int // non-minimal candidates of one decision
	stats POWARNonMinimal
}

// POWARNonMinimal counts POWAR's decisions with non-minimal candidates on
// the Megafly (routing.powar.non_minimal).
type POWARNonMinimal struct {
	// Decisions counts the routing decisions with at least one
	// non-minimal candidate.
	Decisions uint64 `json:"decisions"`
	// Detours counts the packets sent on a non-minimal path (one per
	// packet, counted when its intermediate group is chosen).
	Detours uint64 `json:"detours"`
	// FromLeaf counts the detours begun at the source leaf (a spine other
	// than the minimal one); the others begin at the minimal spine.
	FromLeaf uint64 `json:"from_leaf"`
	// Transits counts the detours whose intermediate group forwards them
	// down and up (a local transit) rather than straight on.
	Transits uint64 `json:"transits"`
	// AwakeDetours counts the non-minimal choices of an awake port while
	// the minimal one was not awake, free and selectable (step 2).
	AwakeDetours uint64 `json:"awake_detours"`
	// Sleeping counts the decisions that chose a port whose link was not
	// awake (steps 3 and 4).
	Sleeping uint64 `json:"chose_sleeping"`
	// Fallback counts the decisions with no free selectable candidate.
	Fallback uint64 `json:"fallback_busy"`
	// ExtraHops is the links the detours added to their packets' paths.
	ExtraHops uint64 `json:"extra_hops"`
}

func newPOWARMegafly(m *topo.Megafly, _ *Params) (*powarMegafly, error) {
	r := 0
	for s := range m.Switches() {
		r = max(r, m.Radix(s))
	}
	if r > 64 {
		return nil, fmt.Errorf("routing.powar.non_minimal: the megafly's switches have %d ports, POWAR handles at most 64", r)
	}
	return &powarMegafly{m: m, buf: make([]int, 0, r)}, nil
}

// powarNonMinimal returns the non-minimal decision counts, nil when the
// run has no non-minimal candidates (for the summary).
func (n *Network) powarNonMinimal() *POWARNonMinimal {
	if n.pw == nil || n.pw.mf == nil {
		return nil
	}
	st := n.pw.mf.stats
	return &st
}

// routePOWARMegafly returns packet pk's output port (global index) at
// switch sw at time now, with non-minimal candidates.
func (n *Network) routePOWARMegafly(sw int32, pk *packet, now int64) int32 {
	m := n.pw.mf.m
	s, dst := int(sw), int(pk.dst)
	var p int
	switch {
	case m.SwitchGroup(s) == m.NodeGroup(dst): // POWAR's minimal behaviour
		c := n.ecmp.mp.MinimalPorts(s, dst, n.ecmp.cand)
		p = c[0]
		if len(c) > 1 {
			p, _ = n.selectPOWAR(sw, c, now, pk.size, false)
		}
	case pk.detour: // on its way through the intermediate group
		p = m.Route(s, dst)
		if m.IsLeaf(s) {
			n.countUp(sw, now, pk.size)
		}
	default:
		p = n.selectNonMinimal(sw, pk, now)
	}
	g := n.swBase[sw] + int32(p)
	n.pw.pending[g]++
	return g
}

// countUp counts size bytes routed up at leaf sw in its checking cycle
// (after bringing its selectable count to the cycle of now) and returns
// the number of selectable up ports.
func (n *Network) countUp(sw int32, now int64, size int32) int {
	s := n.pw
	k := s.mf.m.SpineCount()
	st := &s.sw[sw]
	nsel := k
	if !s.firstOn {
		st.Advance(s.th, now/s.cycle, k, s.capacity)
		nsel = min(int(st.Sel), k)
	}
	st.Count += int64(size)
	return nsel
}

// selectNonMinimal is the decision at a switch of pk's source group for a
// destination in another group (steps 1–5 above).
func (n *Network) selectNonMinimal(sw int32, pk *packet, now int64) int {
	s := n.pw
	mf := s.mf
	m := mf.m
	si, dst := int(sw), int(pk.dst)
	leaf := m.IsLeaf(si)
	pmin := m.Route(si, dst)
	var minM uint64
	if leaf || pmin >= m.LeafCount() { // a spine's minimal port is its global link
		minM = 1 << uint(pmin)
	} else {
		pmin = -1 // reached by a leaf's detour: only non-minimal ports
	}
	var nonM uint64
	for _, q := range m.NonMinimalPorts(si, dst, mf.buf) {
		nonM |= 1 << uint(q)
	}
	sel := minM | nonM
	if leaf {
		nsel := n.countUp(sw, now, pk.size)
		sel &= (1<<uint(nsel) - 1) << uint(m.NodesPerLeaf()) // Algorithm 2's prefix
	}
	if nonM == 0 {
		return pmin
	}
	mf.stats.Decisions++
	free, awake := n.freeAwake(sw, sel, now, 0)
	st := &s.sw[sw]
	rrp := int(st.RRP)
	p := -1
	for i, c := range [4]uint64{awake & minM, awake & nonM, free & minM, free & nonM} {
		if c == 0 {
			continue
		}
		p = powar.First(c, rrp)
		switch i {
		case 1:
			mf.stats.AwakeDetours++
		case 2, 3:
			mf.stats.Sleeping++
		}
		break
	}
	if p < 0 {
		mf.stats.Fallback++
		p = pmin
		if p < 0 {
			p = powar.First(nonM, rrp)
		}
	}
	st.RRP = uint8(p + 1)
	if nonM&(1<<uint(p)) != 0 {
		d := uint8(m.NonMinimalDistance(si, dst, p))
		mf.stats.ExtraHops += uint64(d - pk.hops)
		pk.hops = d
		if leaf {
			mf.stats.FromLeaf++
		} else {
			pk.detour = true
			mf.stats.Detours++
			if d > 4 {
				mf.stats.Transits++
			}
		}
	}
	return p
}
