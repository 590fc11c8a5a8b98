package emulate

import (
	"testing"
)

// TestEmuTail checks the lazy accounting of an idle period in progress
// (what status adds after the last departure) against sim/eee's
// Link.Finish rule, on every boundary.
func TestEmuTail(t *testing.T) {
	tm := emuTiming{sleepFW: 200, wakeFW: 375, sleepDS: 2000, wakeDS: 4480, hold: 10_000}
	const free, pdt = 1000, 500
	type want struct {
		add          [numEmulatedStates]uint64
		cur          State
		downs, deeps uint64
	}
	tests := []struct {
		name string
		mode Mode
		now  uint64
		want want
	}{
		{"before the last departure", ModeDeepSleep, free - 1, want{cur: StateWake}},
		{"always-on never sleeps", ModeAlwaysOn, free + 1e9, want{add: [5]uint64{1e9}, cur: StateWake}},
		{"awake before t_PDT", ModeDeepSleep, free + 499, want{add: [5]uint64{499}, cur: StateWake}},
		{"at t_PDT: nothing gone down yet", ModeDeepSleep, free + 500, want{add: [5]uint64{500}, cur: StateWake}},
		{"going down", ModeDeepSleep, free + 501, want{add: [5]uint64{500, 1}, cur: StateGoingDown, downs: 1}},
		{"going down ends", ModeDeepSleep, free + 2500, want{add: [5]uint64{500, 2000}, cur: StateGoingDown, downs: 1}},
		{"deep sleep", ModeDeepSleep, free + 3000, want{add: [5]uint64{500, 2000, 0, 500}, cur: StateDeepSleep, downs: 1}},
		{"fast wake", ModeFastWake, free + 3000, want{add: [5]uint64{500, 200, 2300}, cur: StateFastWake, downs: 1}},
		{"hybrid in fast wake", ModeHybrid, free + 700 + 10_000, want{add: [5]uint64{500, 200, 10_000}, cur: StateFastWake, downs: 1}},
		{"hybrid deepened", ModeHybrid, free + 700 + 10_001, want{add: [5]uint64{500, 200, 10_000, 1}, cur: StateDeepSleep, downs: 1, deeps: 1}},
	}
	for _, tc := range tests {
		add, cur, downs, deeps := emuTail(tm, tc.mode, pdt, free, tc.now)
		got := want{add, cur, downs, deeps}
		if got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
		var sum uint64
		for _, v := range add {
			sum += v
		}
		if tc.now > free && sum != tc.now-free {
			t.Errorf("%s: tail sums to %d, want %d", tc.name, sum, tc.now-free)
		}
	}
}
