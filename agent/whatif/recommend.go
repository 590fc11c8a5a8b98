package whatif

import (
	"fmt"
	"time"

	"github.com/lpictl/lpictl/hwlink/eeectl"
	"github.com/lpictl/lpictl/sim/estimate"
)

// advisor turns one port's estimates into advice.
type advisor struct {
	p     Port
	caps  eeectl.DriverCaps
	eeeOn bool
	bound string // the delay bound, written out
}

// Recommend turns a port's estimates into advice that fits its driver: a
// timer where it can be set, EEE on or off where only that exists, the
// saving it would have where the NIC has no EEE. Only policies within
// maxDelay added per packet are recommended.
func Recommend(p Port, hasEEE, eeeOn bool, caps eeectl.DriverCaps, maxDelay time.Duration) Recommendation {
	a := advisor{p: p, caps: caps, eeeOn: eeeOn, bound: fmtDur(maxDelay)}
	switch {
	case len(p.Estimates) == 0:
		return Recommendation{Action: ActionNoEstimates, Text: "no estimate"}
	case !hasEEE:
		e, ok := a.best(func(Estimate) bool { return true })
		if !ok {
			return rec(ActionNoEEE, Estimate{}, fmt.Sprintf("no EEE on this NIC; it would save nothing worth having within %s added delay per packet even if it had it", a.bound))
		}
		return rec(ActionNoEEE, e, fmt.Sprintf("no EEE on this NIC: it would save %s, if it had it", saving(e)))
	case p.TimerSettable && caps.TimerSettable:
		return a.timer()
	default:
		return a.onOff()
	}
}

// best is the estimate that saves the most within the bound, among those ok
// takes; false when none saves anything.
func (a advisor) best(ok func(Estimate) bool) (Estimate, bool) {
	var b Estimate
	found := false
	for _, e := range a.p.Estimates {
		if e.Kind == estimate.AlwaysOn || !e.WithinMaxDelay || !ok(e) {
			continue
		}
		if !found || e.SavedW > b.SavedW {
			b, found = e, true
		}
	}
	return b, found && b.SavedW > 0
}

func rec(action string, e Estimate, text string) Recommendation {
	return Recommendation{Action: action, Policy: e.Policy, Mode: e.Mode, PDTS: e.PDTS, SavedW: e.SavedW, SavedPct: e.SavedPct, Text: text}
}

func saving(e Estimate) string {
	return fmt.Sprintf("about %s (%.0f %% of the PHY) with %s (%s), adding %s per packet on average",
		fmtWatts(e.SavedW), e.SavedPct, e.Policy, e.Mode, fmtSecs(e.AddedDelayPerPacketS))
}

// timer advises a port whose tx LPI timer can be set.
func (a advisor) timer() Recommendation {
	caps := a.caps
	e, ok := a.best(func(e Estimate) bool { return e.Kind != estimate.PlainEEE || caps.Min == 0 })
	if !ok {
		r := rec(ActionTurnOff, Estimate{}, fmt.Sprintf("no timer saves energy within %s added delay per packet here: leave the timer as it is or turn EEE off", a.bound))
		if !a.eeeOn {
			r.Action, r.Text = ActionLeaveOff, fmt.Sprintf("leave EEE off: no timer saves energy within %s added delay per packet", a.bound)
		}
		return r
	}
	t, _, _ := caps.Fit(secs(e.PDTS))
	r := rec(ActionSetTimer, e, fmt.Sprintf("set the tx LPI timer to %d µs: saves %s", t.Microseconds(), saving(e)))
	r.PDTS = t.Seconds()
	if caps.LinkFlap {
		r.LinkFlapWarning = true
		r.Text += fmt.Sprintf("; changing the timer on %s takes the link down briefly, do it once", caps.Driver)
	}
	if !a.eeeOn {
		r.Text += " (EEE is off on this port: turn it on too)"
	}
	return r
}

// onOff advises a port where only EEE on/off exists: the driver's own
// timer (driver-default) if known, else plain EEE (t_PDT 0) as the
// closest estimate.
func (a advisor) onOff() Recommendation {
	e, ok := a.best(func(e Estimate) bool { return e.Kind == estimate.DriverDefault })
	if !ok && a.caps.DefaultTimer == 0 {
		e, ok = a.best(func(e Estimate) bool { return e.Kind == estimate.PlainEEE })
	}
	var r Recommendation
	switch {
	case ok && a.eeeOn:
		r = rec(ActionLeaveOn, e, "leave EEE on: it saves "+saving(e))
	case ok:
		r = rec(ActionTurnOn, e, "turn EEE on: it would save "+saving(e))
	case a.eeeOn:
		r = rec(ActionTurnOff, Estimate{}, fmt.Sprintf("turn EEE off: with this traffic its wake-ups add more than %s per packet for little saving", a.bound))
	default:
		return rec(ActionLeaveOff, Estimate{}, fmt.Sprintf("leave EEE off: with this traffic its wake-ups would add more than %s per packet", a.bound))
	}
	if a.caps.LinkFlap && (r.Action == ActionTurnOn || r.Action == ActionTurnOff) {
		r.LinkFlapWarning = true
		r.Text += fmt.Sprintf("; warning: toggling EEE on %s takes the link down and up", a.caps.Driver)
	}
	return r
}
