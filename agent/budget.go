package agent

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/power"
)

// The delay budget (controller/ledger.go; docs/agent.md "The delay
// budget"). Each port's packets may wait for wake-ups at most l × T in
// total (l = bound × hop factor, T the time since the port's controller
// started), plus one miss's worst cost c. Who holds the port to it:
//   - a port that applies the ledger itself, per idle period (LedgerPort:
//     an emulated EEE port's eBPF program), in enforce mode: the agent
//     programs its rate l, reserve c and start, and its controller runs
//     without a ledger (one ledger, not two): S ≤ l·T + c;
//   - every other port: the controller's ledger, decided per interval.
//     While it is in deficit the agent holds the port awake for the
//     interval (holdPDT): S ≤ l·T + k·c, k the misses one interval allows.

// LedgerPort is a Port that enforces the delay ledger itself, per idle
// period (an emulated EEE port).
type LedgerPort interface {
	// OwnLedger reports whether the port can apply the ledger itself.
	OwnLedger() bool
	// SetLedger programs the ledger; a new Start restarts its account.
	SetLedger(ctx context.Context, l PortLedger) error
	// Ledger reads its configuration and account.
	Ledger(ctx context.Context) (PortLedgerStatus, error)
}

// PortLedger is a LedgerPort's ledger configuration.
type PortLedger struct {
	// On: the port holds itself awake while S + Reserve > Rate × (t −
	// Start); off, it only accounts S.
	On      bool
	Rate    float64
	Reserve time.Duration
	// Start is on the backend's clock.
	Start time.Duration
}

// PortLedgerStatus is a LedgerPort's account.
type PortLedgerStatus struct {
	PortLedger
	Spent          time.Duration
	Held, Overruns uint64
}

// holdTimerMax is the largest tx LPI timer the kernel's ethtool interface
// carries (a u32 in µs, about 71.6 minutes): the hold of a port whose
// driver states no maximum.
const holdTimerMax = time.Duration(math.MaxUint32) * time.Microsecond

// missCost is the ledger's reserve c for a port whose configuration sets
// none: what the backend knows of the port (an emulated port's scaled
// t_s + deepest t_w, the simulator's power-down cycle), else the estimate
// preset of its link speed (estimate.preset, or by speed, or
// estimate.fallback_preset, else LedgerFallbackPreset): the deepest t_s +
// the largest t_w. Real NICs
// say nothing of their PHY's timing, so the preset stands for it; 0 when
// none loads (the controller then takes the predictor's t_w).
func (c Config) missCost(in PortInfo) (time.Duration, string) {
	if in.MissCost > 0 {
		return in.MissCost, "port"
	}
	pr, _, _, err := EstimatePreset(c.Estimate.Preset, c.Estimate.withDefaults().FallbackPreset, in.presetPort())
	from := "preset "
	if err == nil && pr == nil {
		// No preset known (a virtual device, an unknown speed): the
		// ledger still needs a reserve.
		pr, err = power.Load(LedgerFallbackPreset)
		from = "default preset "
	}
	if err != nil || pr == nil {
		return 0, "predictor"
	}
	return PresetMissCost(pr), from + pr.Name
}

// PresetMissCost is the largest delay one miss can add on a port of the
// preset, whatever its mode: the longest t_s and the longest t_w (a
// packet that comes just as the port starts going down waits for both).
func PresetMissCost(p *power.Preset) time.Duration {
	var s, w time.Duration
	for _, lp := range []*power.LowPower{p.FastWake, p.DeepSleep} {
		if lp != nil {
			s, w = max(s, lp.SleepTime.D()), max(w, lp.WakeTime.D())
		}
	}
	return s + w
}

// portSpec is the port's configuration with the ledger's reserve filled
// from the port when the configuration leaves it unset.
func (c Config) portSpec(in PortInfo) PortSpec {
	spec := c.Spec(in.Name, in.Register, in.WakeTime, in.Hops)
	if spec.Controller.MissCost == 0 {
		mc, _ := c.missCost(in)
		spec.Controller.MissCost = predictor.Duration(mc)
	}
	return spec
}

// wantsPortLedger says whether the port should apply the ledger itself:
// it can (LedgerPort), the agent enforces, the timer can be set, and the
// port's configuration runs a ledger at all.
func (a *Agent) wantsPortLedger(p *portState, guarded bool) bool {
	lp, ok := p.port.(LedgerPort)
	return ok && lp.OwnLedger() && guarded && a.cfg.Mode == Enforce && p.info.CanSet
}

// armLedger gives the port's ledger to the port itself where it can apply
// it (wantsPortLedger): the controller is rebuilt without one, and the
// port's ledger starts now. It returns the configuration the controller
// runs (what its trace records).
func (a *Agent) armLedger(p *portState, now time.Duration) (PortSpec, error) {
	spec := p.spec
	p.portLedger, p.bounded = false, nil
	if !a.wantsPortLedger(p, p.ctl.Guarded()) {
		return spec, nil
	}
	st := p.ctl.Stats(now).Ledger
	spec.Controller.Ledger = controller.LedgerOff
	ctl, pred, err := newController(spec, now)
	if err != nil {
		return p.spec, err
	}
	b, ok := pred.(predictor.Bounded)
	if !ok {
		return p.spec, nil
	}
	p.ctl, p.bounded, p.portLedger = ctl, b, true
	p.ledger = PortLedger{On: true, Rate: b.BudgetRate(), Reserve: st.Reserve, Start: now}
	p.ledgerSet, p.ledgerRead = false, nil
	return spec, nil
}

// programLedger keeps a port that applies the ledger itself at its
// controller's rate (the hop factor moves), once lpictl has changed the
// port (its original settings are recorded: Restore turns the ledger off
// again), and reads its account for the metrics.
func (a *Agent) programLedger(ctx context.Context, p *portState) {
	lp, ok := p.port.(LedgerPort)
	if !ok || !p.portLedger {
		return
	}
	if p.original != nil {
		l := p.ledger
		l.Rate = p.bounded.BudgetRate()
		if !p.ledgerSet || l != p.ledger {
			if err := lp.SetLedger(ctx, l); err != nil {
				if errors.Is(err, ErrNotSupported) {
					a.warnOnce(p, "ledger", "port cannot apply the delay ledger itself", "device", p.info.Name, "error", err)
				} else {
					a.portError(p, "apply", err)
				}
				return
			}
			p.ledger, p.ledgerSet = l, true
		}
	}
	if !p.ledgerSet {
		return
	}
	st, err := lp.Ledger(ctx)
	if err != nil {
		a.portError(p, "counters", err)
		return
	}
	p.ledgerRead = &st
}

// holdPDT is the tx LPI timer that holds a port awake for an interval: the
// largest the driver allows (its range, else the kernel's u32 µs), or no
// timer at all on a backend that has one (the simulator). A timer, not tx
// LPI off: it goes through the one write the agent makes anyway (the
// original settings recorded first, rate limits, the flap and harm checks,
// Restore), and lpictl never switches EEE or tx LPI.
func (p *portState) holdPDT(persistent bool) time.Duration {
	if hi := p.info.Register.Max; hi > 0 {
		return hi
	}
	if !persistent {
		return controller.Never
	}
	return holdTimerMax
}

// inDeficit says whether the controller's ledger keeps the port awake for
// the interval starting now: what its Decide answers with Never for the
// idle periods of that interval (the agent applies once per interval).
func (p *portState) inDeficit(now time.Duration) bool {
	return !p.portLedger && p.ctl.Guarded() && p.ctl.SleepAllowedAt(now) > now
}

// ledgerStats is the port's ledger as the metrics export it: the port's
// own where it applies it, else the controller's (nil: none).
func (p *portState) ledgerStats(now time.Duration, st controller.Stats) *controller.LedgerStats {
	if !p.portLedger {
		return st.Ledger
	}
	r := p.ledgerRead
	l := p.ledger
	out := &controller.LedgerStats{Rate: l.Rate, Reserve: l.Reserve}
	if r != nil {
		out.Rate, out.Reserve, out.Spent, out.Held, out.Overruns = r.Rate, r.Reserve, r.Spent, r.Held, r.Overruns
	}
	if now > l.Start {
		out.Budget = time.Duration(math.Min(out.Rate*float64(now-l.Start), float64(controller.Never)))
	}
	return out
}
