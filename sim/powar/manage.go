package powar

import "fmt"

// Thresholds are Algorithm 2's utilisation thresholds.
type Thresholds struct {
	On, Off float64 // Ton, Toff
}

// DefaultThresholds are the paper's Ton = 0.5, Toff = 0.25.
func DefaultThresholds() Thresholds { return Thresholds{On: 0.5, Off: 0.25} }

// Validate checks the paper's constraints that need no topology:
// 0 < Toff, Ton ≥ 2·Toff (no selectable/non-selectable cycling), Ton ≤ 1.
// (Ton < U_MAX, the topology's maximum link utilisation under uniform
// traffic, is the user's to respect.) Errors name the scenario keys.
func (t Thresholds) Validate() error {
	switch {
	case !(t.Off > 0):
		return fmt.Errorf("routing.powar.t_off: must be > 0, got %v", t.Off)
	case !(t.On <= 1):
		return fmt.Errorf("routing.powar.t_on: must be ≤ 1, got %v", t.On)
	case !(t.On >= 2*t.Off):
		return fmt.Errorf("routing.powar.t_on: must be ≥ 2 × routing.powar.t_off (%v), got %v", t.Off, t.On)
	}
	return nil
}

// Step is one checking cycle of Algorithm 2 for a switch with group up
// ports of which the first sel (≥ 1) are selectable, count flits (or bytes)
// forwarded on them during the cycle and capacity the flits (bytes) one
// port can forward in a cycle: the utilisation count / (sel · capacity)
// above Ton makes the next port selectable, below Toff the last one
// non-selectable, keeping at least one. It returns the new sel: one change
// at most, ports enabled in index order and disabled in reverse.
func (t Thresholds) Step(sel, group int, count, capacity float64) int {
	u := count / (float64(sel) * capacity)
	switch {
	case u > t.On && sel < group:
		return sel + 1
	case u < t.Off && sel > 1:
		return sel - 1
	}
	return sel
}

// Switch is one switch's POWAR state: its selectable up ports (a prefix
// of Sel ports of its adaptive group), the round-robin pointer and the
// current checking cycle's counter. The zero value is not ready: use
// [NewSwitch].
type Switch struct {
	Cycle int64  // index of the checking cycle Count belongs to
	Count int64  // bytes forwarded on the adaptive ports in cycle Cycle
	Sel   uint8  // Num_Sel_Ports (≥ 1)
	RRP   uint8  // round-robin pointer (a switch-local port)
	_     uint16 // padding
}

// NewSwitch is a switch at cycle 0 with sel selectable ports (at least
// 1, at most 255; [Switch.Advance] lowers it to the group's size): 1 is
// the selectable set at its smallest, a number ≥ the group every port
// selectable (the paper leaves the initial count open).
func NewSwitch(sel int) Switch { return Switch{Sel: uint8(min(255, max(1, sel)))} }

// Advance brings the switch to checking cycle now (≥ its current cycle),
// applying Step once per elapsed cycle: with Count for the cycle it was
// counted in and zero for the cycles after it (nothing was forwarded in
// them), lazily, as if each cycle's check had run at its end. group is the
// size of the adaptive group, capacity a port's bytes per cycle.
//
// A selectable count above group (a switch started with every port
// selectable, [NewSwitch]) is first lowered to group.
func (s *Switch) Advance(t Thresholds, now int64, group int, capacity float64) {
	if int(s.Sel) > group {
		s.Sel = uint8(max(1, group))
	}
	if now <= s.Cycle {
		return
	}
	sel := t.Step(int(s.Sel), group, float64(s.Count), capacity)
	// Idle cycles only remove ports (utilisation 0 < Toff): one per cycle
	// down to one.
	idle := now - s.Cycle - 1
	if d := int64(sel - 1); idle > d {
		idle = d
	}
	sel -= int(idle)
	s.Sel, s.Cycle, s.Count = uint8(sel), now, 0
}

// AdvanceOn is [Switch.Advance] that also adds to on[j], for every port j
// of the selectable prefix, the time (ps, cycle per checking cycle) of each
// checking cycle it completes: the time each port spent in the selectable
// set (Alonso's set of switched-on ports, which the paper's Alonso
// configuration powers on and off by these thresholds). on has one entry
// per port of the group, in order.
func (s *Switch) AdvanceOn(t Thresholds, now int64, group int, capacity float64, cycle int64, on []int64) {
	if int(s.Sel) > group {
		s.Sel = uint8(max(1, group))
	}
	if now <= s.Cycle {
		return
	}
	for j := range min(int(s.Sel), len(on)) {
		on[j] += cycle // the counted cycle
	}
	sel := t.Step(int(s.Sel), group, float64(s.Count), capacity)
	// Idle cycle k (0 ≤ k < idle) runs with max(1, sel−k) selectable.
	idle := now - s.Cycle - 1
	for j := range min(sel, len(on)) {
		n := idle
		if j > 0 {
			n = min(idle, int64(sel-j))
		}
		on[j] += n * cycle
	}
	s.Advance(t, now, group, capacity)
}
