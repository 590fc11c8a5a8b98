package powar

import (
	"math/rand/v2"
	"testing"
)

// TestStepSequence: a switch with 4 up ports, capacity 100 bytes per port
// per cycle, Ton 0.5, Toff 0.25, starting with 1 selectable port; the
// utilisation of each cycle is count / (sel · 100), worked by hand.
func TestStepSequence(t *testing.T) {
	th := DefaultThresholds()
	seq := 1
	for _, c := range []struct {
		count float64
		want  int
		why   string
	}{
		{50, 1, "u = 50/100 = 0.5: not above Ton"},
		{60, 2, "u = 0.6 > 0.5: enable port 2"},
		{120, 3, "u = 120/200 = 0.6: enable port 3"},
		{160, 4, "u = 160/300 = 0.533: enable port 4"},
		{390, 4, "u = 0.975 but all 4 selectable"},
		{100, 4, "u = 100/400 = 0.25: not below Toff"},
		{90, 3, "u = 0.225 < 0.25: disable port 4"},
		{80, 3, "u = 80/300 = 0.267: hysteresis band, no change"},
		{70, 2, "u = 0.233: disable port 3"},
		{0, 1, "u = 0: disable port 2"},
		{0, 1, "u = 0 but at least one stays selectable"},
	} {
		sel := th.Step(seq, 4, c.count, 100)
		if sel != c.want {
			t.Fatalf("sel %d, count %v: got %d, want %d (%s)", seq, c.count, sel, c.want, c.why)
		}
		seq = sel
	}
}

// TestAdvanceLazy: applying the elapsed cycles at the next decision equals
// stepping every cycle (the counted cycle, then idle ones).
func TestAdvanceLazy(t *testing.T) {
	th := DefaultThresholds()
	rng := rand.New(rand.NewPCG(3, 4))
	for range 5000 {
		group := 1 + rng.IntN(8)
		s := Switch{Cycle: rng.Int64N(100), Count: rng.Int64N(1000), Sel: uint8(1 + rng.IntN(group))}
		to := s.Cycle + rng.Int64N(12)
		want := int(s.Sel)
		if to > s.Cycle {
			want = th.Step(want, group, float64(s.Count), 100)
			for c := s.Cycle + 1; c < to; c++ {
				want = th.Step(want, group, 0, 100)
			}
		}
		before := s
		s.Advance(th, to, group, 100)
		if int(s.Sel) != want || s.Cycle != max(before.Cycle, to) || (to > before.Cycle && s.Count != 0) {
			t.Fatalf("%+v advanced to %d (group %d): %+v, want sel %d", before, to, group, s, want)
		}
	}
}

func TestThresholdsValidate(t *testing.T) {
	if err := DefaultThresholds().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		th   Thresholds
		want string
	}{
		{Thresholds{On: 0.5, Off: 0}, "routing.powar.t_off: must be > 0, got 0"},
		{Thresholds{On: 0.4, Off: 0.25}, "routing.powar.t_on: must be ≥ 2 × routing.powar.t_off (0.25), got 0.4"},
		{Thresholds{On: 1.5, Off: 0.25}, "routing.powar.t_on: must be ≤ 1, got 1.5"},
	} {
		if err := c.th.Validate(); err == nil || err.Error() != c.want {
			t.Errorf("%+v: %v, want %q", c.th, err, c.want)
		}
	}
	if s := NewSwitch(0); s.Sel != 1 {
		t.Errorf("NewSwitch(0).Sel = %d, want 1", s.Sel)
	}
}

// TestAdvanceOn: the on-times AdvanceOn adds equal stepping cycle by cycle
// and adding the cycle to every selectable port of each cycle, over random
// counts and gaps, and the state it leaves is Advance's.
func TestAdvanceOn(t *testing.T) {
	th := DefaultThresholds()
	rng := rand.New(rand.NewPCG(7, 8))
	const group, capacity, cycle = 4, 100.0, 10
	lazy, step := NewSwitch(group), NewSwitch(group)
	var onLazy, onStep [group]int64
	now := int64(0)
	for range 500 {
		now += int64(rng.IntN(6))
		count := int64(rng.IntN(300))
		lazy.AdvanceOn(th, now, group, capacity, cycle, onLazy[:])
		for step.Cycle < now { // one cycle at a time
			for j := range int(step.Sel) {
				onStep[j] += cycle
			}
			step.Advance(th, step.Cycle+1, group, capacity)
		}
		lazy.Count += count
		step.Count += count
		if lazy != step || onLazy != onStep {
			t.Fatalf("at cycle %d: lazy %+v %v, stepped %+v %v", now, lazy, onLazy, step, onStep)
		}
	}
}
