package eee

import (
	"math/rand/v2"
	"testing"
)

// TestAwakeAtHand checks AwakeAt at the edges of the timeline Need's doc
// gives (idle from 5 µs, t_PDT 1 µs, handshake H): awake before T for the
// owner and before T + H for the peer, then not.
func TestAwakeAtHand(t *testing.T) {
	const pdt = 1 * us
	H := int64(11280)
	T := 5*us + pdt
	for _, c := range []struct {
		name string
		mode Mode
		end  uint8
		at   int64
		want bool
	}{
		{"idle from", DeepSleep, 0, 5 * us, true},
		{"owner before T", DeepSleep, 0, T - 1, true},
		{"owner at T", DeepSleep, 0, T, false},
		{"peer at T", DeepSleep, 1, T, true},
		{"peer before T+H", DeepSleep, 1, T + H - 1, true},
		{"peer at T+H", DeepSleep, 1, T + H, false},
		{"low", DeepSleep, 1, T + 10*us, false},
		{"always-on", AlwaysOn, 0, T + 10*us, true},
	} {
		p := params(c.mode)
		var l Link
		l.Start(0, Never)
		l.Need(p, 0, 0)
		l.Release(5*us, 0, pdt)
		if got := l.AwakeAt(p, c.at, c.end); got != c.want {
			t.Errorf("%s: AwakeAt = %v, want %v", c.name, got, c.want)
		}
	}
	// Busy and going up: not awake until ReadyAt.
	p := params(DeepSleep)
	var l Link
	l.Start(0, pdt)
	ready, missed := l.Need(p, 10*us, 0)
	if !missed || l.AwakeAt(p, ready-1, 1) || !l.AwakeAt(p, ready, 1) {
		t.Errorf("going up: ready %d missed %v, AwakeAt(ready−1) %v, AwakeAt(ready) %v", ready, missed, l.AwakeAt(p, ready-1, 1), l.AwakeAt(p, ready, 1))
	}
}

// TestAwakeAtMatchesNeed drives links through random timelines of Need
// and Release in every mode and, before each step, asks AwakeAt at random
// times and ends: it must say awake exactly when Need on a copy of the
// link at that time and end reports no miss and no delay.
func TestAwakeAtMatchesNeed(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	pdts := []int64{0, 1, 500 * ns, 1 * us, 10 * us, Never}
	checks := 0
	for _, m := range []Mode{AlwaysOn, FastWake, DeepSleep, Hybrid} {
		p := params(m)
		for range 200 {
			var l Link
			l.Start(0, pdts[rng.IntN(len(pdts))])
			now := int64(0)
			var busy [2]bool
			for range 40 {
				// Queries at times from now on, before the next change.
				for range 4 {
					at := now + rng.Int64N(30*us)
					if rng.IntN(4) == 0 {
						at = now
					}
					end := uint8(rng.IntN(2))
					if busy[end] {
						continue // Need is for an end whose queue was empty
					}
					cp := l
					ready, missed := cp.Need(p, at, end)
					want := !missed && ready == at
					if got := l.AwakeAt(p, at, end); got != want {
						t.Fatalf("mode %v: AwakeAt(%d, end %d) = %v, Need gives ready %d missed %v (link %+v)", m, at, end, got, ready, missed, l)
					}
					checks++
				}
				// One step of the timeline.
				now += rng.Int64N(20 * us)
				end := uint8(rng.IntN(2))
				if busy[end] {
					l.Release(now, end, pdts[rng.IntN(len(pdts))])
					busy[end] = false
				} else {
					ready, _ := l.Need(p, now, end)
					busy[end] = true
					now = ready
				}
			}
		}
	}
	if checks < 10000 {
		t.Fatalf("only %d checks", checks)
	}
}
