package scenario

import (
	"testing"
	"time"
)

// TestETA: the progress line's ETA was always "0s" (seconds used as
// nanoseconds; issue 24 item 15).
func TestETA(t *testing.T) {
	for _, c := range []struct {
		elapsed     time.Duration
		now, target int64
		want        time.Duration
		ok          bool
	}{
		{10 * time.Second, 1, 2, 10 * time.Second, true},     // half way: as long again
		{10 * time.Second, 1e9, 4e9, 30 * time.Second, true}, // a quarter: three times as long
		{90 * time.Second, 3e11, 5e11, time.Minute, true},    // 0.3 of 0.5 s simulated
		{1500 * time.Millisecond, 999, 1000, 0, true},        // rounded to the second
		{2 * time.Hour, 1, 3, 4 * time.Hour, true},           // long runs
		{time.Second, 0, 10, 0, false},                       // nothing simulated yet
		{time.Second, 5, 0, 0, false},                        // unknown target
		{time.Second, 10, 10, 0, false},                      // past the target
	} {
		got, ok := eta(c.elapsed, c.now, c.target)
		if got != c.want || ok != c.ok {
			t.Errorf("eta(%v, %d, %d) = %v, %v; want %v, %v", c.elapsed, c.now, c.target, got, ok, c.want, c.ok)
		}
	}
}
