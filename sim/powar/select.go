package powar

import "math/bits"

// Select is Algorithm 1, POWAR's selection function, over the switch's
// ports as bits (port p is bit p, p < 64). eligible holds the adaptive
// candidates that are neither busy nor non-selectable (P ∩ ¬busy ∩
// selectable); awake those of them whose link is awake ("wake-up": in Wake
// and not committed to going down). rrp is the round-robin pointer: ports
// are examined in the order rrp, rrp+1, … (wrapping), as (rrp + i) mod
// Num_Ports does.
//
// It returns the first awake eligible port in that order, else the first
// eligible one (a sleeping port is woken only when no awake one is free),
// and rrp moved past it; ok is false when nothing is eligible (the paper's
// NULL: the caller falls back, see [First]).
func Select(eligible, awake uint64, rrp int) (port, next int, ok bool) {
	m := eligible & awake
	if m == 0 {
		m = eligible
	}
	if m == 0 {
		return 0, rrp, false
	}
	p := First(m, rrp)
	return p, p + 1, true
}

// First returns the first port of the non-empty set m in round-robin order
// from rrp: the lowest port ≥ rrp, else the lowest port. (Ports above the
// switch's highest are never in m, so wrapping at 64 is wrapping at the
// switch's port count.)
func First(m uint64, rrp int) int {
	if rrp < 64 {
		if hi := m &^ (1<<uint(rrp) - 1); hi != 0 {
			return bits.TrailingZeros64(hi)
		}
	}
	return bits.TrailingZeros64(m)
}
