package agent

import (
	"context"
	"time"
)

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
	// reason is why the port is quarantined (ReasonFlap, ReasonHarm).
	reason string
	harm   harmWatch
	harms  uint64 // changes found harmful
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
		g.quarantined, g.reason = true, ReasonFlap
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

// harmed quarantines the port after a harmful change.
func (g *guard) harmed() {
	g.harms++
	g.quarantined, g.reason = true, ReasonHarm
}

// backoffLeft is the remaining backoff at now.
func (g *guard) backoffLeft(now time.Duration) time.Duration {
	if g.quarantined || now >= g.backoffUntil {
		return 0
	}
	return g.backoffUntil - now
}

// ErrorCounters are a port's cumulative error and drop counters (the
// kernel's link statistics, rtnl_link_stats64: what `ip -s link` shows).
type ErrorCounters struct {
	RxErrors, TxErrors   uint64
	RxCRCErrors          uint64
	RxDropped, TxDropped uint64
}

// errors is the sum the harm check compares with safety.harm_errors
// (rx/tx errors and CRC errors; the kernel counts most CRC errors in
// rx_errors too, so a CRC error may count twice: the threshold is a
// threshold, not an exact count).
func (e ErrorCounters) errors() uint64 { return e.RxErrors + e.TxErrors + e.RxCRCErrors }

// drops is the sum the harm check compares with safety.harm_drops.
func (e ErrorCounters) drops() uint64 { return e.RxDropped + e.TxDropped }

// ErrorCounterPort is a Port that can read its error counters (optional:
// ports without it are never judged by safety.harm_*).
type ErrorCounterPort interface {
	ErrorCounters(ctx context.Context) (ErrorCounters, error)
}

// Quarantine reasons (lpictl_port_quarantined's reason label).
const (
	ReasonFlap = "flap" // safety.quarantine_after consecutive flaps
	ReasonHarm = "harm" // errors or drops rose after a change (safety.harm_*)
)

// harmWatch is the error check after a change: errors and drops at the
// change are the base; a rise above the thresholds within
// safety.harm_window is harm caused by the change.
type harmWatch struct {
	watching  bool
	changedAt time.Duration
	base      ErrorCounters
	last      ErrorCounters // as last read
}

// changed starts watching from a change at now with the counters base.
func (h *harmWatch) changed(now time.Duration, base ErrorCounters) {
	h.watching, h.changedAt, h.base, h.last = true, now, base, base
}

// active says whether the counters should be read every round.
func (h *harmWatch) active(now time.Duration, s SafetyConfig) bool {
	return h.watching && s.harmOn() && now-h.changedAt <= s.HarmWindow.D()
}

// check judges counters c read at now. It returns harm with the rises of
// errors and drops since the change when either exceeds its threshold
// within the window (then the watch ends).
func (h *harmWatch) check(now time.Duration, c ErrorCounters, s SafetyConfig) (harm bool, errs, drops uint64) {
	if !h.watching || !s.harmOn() {
		return false, 0, 0
	}
	if c.errors() < h.base.errors() || c.drops() < h.base.drops() {
		h.base = c // counters reset (a driver reload): count from here
	}
	h.last = c
	errs, drops = c.errors()-h.base.errors(), c.drops()-h.base.drops()
	if now-h.changedAt > s.HarmWindow.D() {
		h.watching = false
		return false, errs, drops
	}
	if (s.HarmErrors > 0 && errs > uint64(s.HarmErrors)) || (s.HarmDrops > 0 && drops > uint64(s.HarmDrops)) {
		h.watching = false
		return true, errs, drops
	}
	return false, errs, drops
}

// harmOn says whether the harm check is on (a threshold is set).
func (s SafetyConfig) harmOn() bool { return s.HarmErrors > 0 || s.HarmDrops > 0 }
