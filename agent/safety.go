package agent

import "time"

// guard is one port's safety state: flap detection after changes,
// exponential backoff and quarantine (docs/agent.md "Safety").
type guard struct {
	// watching: a change was applied at changedAt with the carrier change
	// count at carrierAtChange; a carrier change within the flap window
	// is a flap caused by it.
	watching        bool
	changedAt       time.Duration
	carrierAtChange uint64

	flaps        int // consecutive flaps (cleared after FlapReset without one)
	totalFlaps   uint64
	lastFlapAt   time.Duration
	backoffUntil time.Duration
	quarantined  bool
}

// changed records a change applied at now.
func (g *guard) changed(now time.Duration, carrier uint64) {
	g.watching, g.changedAt, g.carrierAtChange = true, now, carrier
}

// inFlapWindow says whether carrier changes should be read every round.
func (g *guard) inFlapWindow(now time.Duration, s SafetyConfig) bool {
	return g.watching && now-g.changedAt <= s.FlapWindow.D()
}

// carrier checks the carrier change count at now. It returns flap when a
// change caused one and quarantine when the port has flapped
// QuarantineAfter times in a row.
func (g *guard) carrier(now time.Duration, count uint64, s SafetyConfig) (flap, quarantine bool) {
	if !g.watching {
		return false, false
	}
	if count <= g.carrierAtChange {
		if now-g.changedAt > s.FlapWindow.D() {
			g.watching = false
		}
		return false, false
	}
	g.watching = false
	if now-g.changedAt > s.FlapWindow.D() {
		return false, false // too late to blame the change
	}
	if g.flaps > 0 && now-g.lastFlapAt > s.FlapReset.D() {
		g.flaps = 0
	}
	g.flaps++
	g.totalFlaps++
	g.lastFlapAt = now
	g.backoffUntil = now + backoff(g.flaps, s)
	if s.QuarantineAfter > 0 && g.flaps >= s.QuarantineAfter {
		g.quarantined = true
		return true, true
	}
	return true, false
}

// backoff is BackoffInitial × 2^(flaps−1), at most BackoffMax.
func backoff(flaps int, s SafetyConfig) time.Duration {
	b := s.BackoffInitial.D()
	for i := 1; i < flaps && b < s.BackoffMax.D(); i++ {
		b *= 2
	}
	return min(b, s.BackoffMax.D())
}

// mayChange says whether a change may be applied at now.
func (g *guard) mayChange(now time.Duration) bool {
	return !g.quarantined && now >= g.backoffUntil
}

// backoffLeft is the remaining backoff at now.
func (g *guard) backoffLeft(now time.Duration) time.Duration {
	if g.quarantined || now >= g.backoffUntil {
		return 0
	}
	return g.backoffUntil - now
}
