package powar

// Aggregates is Algorithm 3 (paper 002 §3.3, torus with aggregated links)
// for every switch of a network: each aggregate (a switch's trunk of
// parallel cables in one direction) has its own selectable prefix of
// members and checking-cycle counter, kept as a [Switch] whose RRP is
// unused (the round-robin pointer is per switch, in the caller). The
// selectable count of an aggregate starts at a given count (1, or every
// member), grows by one when the
// bytes routed onto the aggregate in a checking cycle exceed Ton × Sel ×
// capacity, shrinks by one below Toff × Sel × capacity, never below 1 nor
// above the aggregate's width; elapsed cycles are applied lazily, at the
// aggregate's next use (as [Switch.Advance]). The zero value is not
// ready: use [NewAggregates].
type Aggregates struct {
	agg   []Switch // switch × per + aggregate
	per   int      // aggregates per switch
	width int      // members per aggregate
}

// NewAggregates is the state of switches switches with per aggregates of
// width members each, every aggregate at cycle 0 with min(initial, width)
// selectable members (at least one).
func NewAggregates(switches, per, width, initial int) *Aggregates {
	a := &Aggregates{agg: make([]Switch, switches*per), per: per, width: max(1, width)}
	for i := range a.agg {
		a.agg[i] = NewSwitch(min(initial, a.width))
	}
	return a
}

// Width is the number of members of an aggregate.
func (a *Aggregates) Width() int { return a.width }

// Sel brings aggregate agg of switch sw to checking cycle now and returns
// its selectable count: its members 0..Sel−1 are selectable. capacity is
// the bytes one member forwards in a checking cycle.
func (a *Aggregates) Sel(t Thresholds, sw, agg int, now int64, capacity float64) int {
	s := &a.agg[sw*a.per+agg]
	s.Advance(t, now, a.width, capacity)
	return int(s.Sel)
}

// Add counts bytes routed onto aggregate agg of switch sw in checking
// cycle now (the cycle the aggregate was brought to by [Aggregates.Sel]).
func (a *Aggregates) Add(t Thresholds, sw, agg int, now int64, capacity float64, bytes int64) {
	s := &a.agg[sw*a.per+agg]
	s.Advance(t, now, a.width, capacity)
	s.Count += bytes
}

// How says which branch of the selection chose the port.
type How uint8

// Branches of [SelectAggregated].
const (
	// AdaptiveAwake: an awake, free, selectable port of P.
	AdaptiveAwake How = iota
	// AdaptiveSleeping: a sleeping one (no awake one was free).
	AdaptiveSleeping
	// Deterministic: nothing in P was usable; a free selectable member of
	// the deterministic aggregate D.
	Deterministic
	// Queued: nothing was usable (the paper's NULL); the packet waits at
	// the first selectable member of D in round-robin order.
	Queued
)

// SelectAggregated is Algorithm 1 when the deterministic output D is an
// aggregate of ports (a torus with aggregated links), over the switch's
// ports as bits. adaptive is the set P, det the members of D, selectable,
// free (not busy) and awake the ports' states; rrp the switch's
// round-robin pointer.
//
//   - P: the first awake port of P ∩ selectable ∩ free in round-robin order
//     from rrp, else the first sleeping one; rrp moves past it.
//   - D (P had nothing usable): among D ∩ selectable ∩ free, awake before
//     sleeping, the first in round-robin order from rrp; rrp is not moved
//     (the paper's Algorithm 1 moves it only on adaptive choices).
//   - Neither: the packet must queue somewhere: the first member of D ∩
//     selectable in round-robin order (all of D if none is selectable,
//     which Algorithm 3's Sel ≥ 1 rules out); rrp moves past it, as the
//     fat-tree fallback does.
//
// det must not be empty.
func SelectAggregated(adaptive, det, selectable, free, awake uint64, rrp int) (port, next int, how How) {
	if e := adaptive & selectable & free; e != 0 {
		p, nx, _ := Select(e, awake, rrp)
		if awake&(1<<uint(p)) != 0 {
			return p, nx, AdaptiveAwake
		}
		return p, nx, AdaptiveSleeping
	}
	if e := det & selectable & free; e != 0 {
		m := e & awake
		if m == 0 {
			m = e
		}
		return First(m, rrp), rrp, Deterministic
	}
	m := det & selectable
	if m == 0 {
		m = det
	}
	p := First(m, rrp)
	return p, p + 1, Queued
}
