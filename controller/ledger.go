package controller

import (
	"math"
	"time"

	"github.com/lpictl/lpictl/predictor"
)

// Never is a t_PDT that never expires: Decide answers it when the ledger
// holds a port awake for a whole recompute interval (OnInterval), where
// the caller cannot hold it per idle period. A caller that drives a real
// NIC disables low-power idle for it.
const Never = time.Duration(math.MaxInt64)

// ledger holds a port to its degradation bound (docs/predictors.md "The delay
// ledger"). It charges every ended idle period what its next packet
// actually waited, S(t), against the budget B(t) = l × (t − start), with
// l the predictor's BudgetRate (bound × hop factor, as PerfBound's budget
// takes it: the hop factor of the moment, over the whole span) and start
// when the port started. The port may start going down only at a time t
// with S + c ≤ B(t), c the reserve (Config.MissCost): until then it stays
// awake.
//
// Guarantee. S grows only when an idle period ends, by at most c when the
// miss cost is c, and only after a power-down that began at some t_d with
// S + c ≤ B(t_d). So after every charge S ≤ B(t_d) ≤ B(T): the delay
// spent never exceeds the budget at the end of an idle period, and while
// a wake-up is under way it exceeds it by less than that one wake-up:
// S(T) ≤ l·T + c for every T (l constant; with a hop factor that moves,
// for the l of the moment).
//
// The time from which the port may go down (readyAt) is worked out when
// an idle period is charged or the rate moved, so a decision is a
// comparison; a peer asking (SleepAllowedAt) reads it as the port last
// worked it out. With Decide called per idle period
// (OnQueueEmpty) this holds whatever the predictor answers. With
// OnInterval the hold can only be applied to a whole interval (Never), so
// up to k misses of the interval are committed at once: S(T) ≤ l·T + k·c.
type ledger struct {
	rated   predictor.Bounded // nil: no ledger
	reserve time.Duration     // c
	start   time.Duration     // when the budget began
	rate    float64           // l, read at the last charge
	spent   time.Duration     // S, ns (charges are rounded up)
	readyAt time.Duration     // the first t with S + c ≤ l·(t − start)

	held, overruns, unmeasured uint64
}

// LedgerStats are a port's ledger figures (Stats.Ledger).
type LedgerStats struct {
	// Rate is l, the delay the port may add per unit of time.
	Rate float64 `json:"rate"`
	// Budget is B = ∫ l dt since the port started; Spent the delay its
	// packets waited for wake-ups, S; Reserve c.
	Budget  time.Duration `json:"budget_ns"`
	Spent   time.Duration `json:"spent_ns"`
	Reserve time.Duration `json:"reserve_ns"`
	// Held counts idle periods in which the ledger kept the port awake
	// longer than the predictor asked (or a whole interval, OnInterval).
	Held uint64 `json:"held"`
	// Overruns counts charges after which S exceeded B (possible only
	// when a miss cost more than the reserve, or OnInterval).
	Overruns uint64 `json:"overruns"`
	// Unmeasured counts misses whose delay the caller did not measure,
	// charged at the reserve.
	Unmeasured uint64 `json:"unmeasured"`
}

// Ratio is S/B (0 while B is 0).
func (s LedgerStats) Ratio() float64 {
	if s.Budget <= 0 {
		return 0
	}
	return float64(s.Spent) / float64(s.Budget)
}

// init arms the ledger the configuration asks for (none: rated stays nil).
func (l *ledger) init(cfg Config, pred predictor.Predictor, now time.Duration) {
	*l = ledger{start: now}
	b, ok := pred.(predictor.Bounded)
	if !ok || cfg.Ledger == LedgerOff || (cfg.Ledger == LedgerAuto && pred.Kind() == predictor.KindFixed) {
		return
	}
	l.rated = b
	l.reserve = cfg.MissCost.D()
	if l.reserve == 0 {
		l.reserve = b.WakeCost()
	}
	l.settle()
}

// budget is B(now), ns.
func (l *ledger) budget(now time.Duration) float64 {
	return l.rate * float64(max(now-l.start, 0))
}

// settle reads the predictor's rate and works out readyAt, the earliest
// time at which S + c ≤ B(t): Never when the rate is 0.
func (l *ledger) settle() { l.settleAt(l.rated.BudgetRate()) }

// settleAt works out readyAt for rate l.
func (l *ledger) settleAt(rate float64) {
	l.rate = rate
	need := float64(l.spent + l.reserve)
	if !(l.rate > 0) {
		l.readyAt = Never
		return
	}
	// One nanosecond of slack covers the float's rounding.
	at := math.Ceil(need/l.rate) + 1 + float64(l.start)
	if at >= float64(Never) {
		l.readyAt = Never
		return
	}
	l.readyAt = time.Duration(at)
}

// allowedAt is the earliest time ≥ now at which the port may start going
// down, with the predictor's rate of now (the port's own decision: the
// predictor has just formed its hop factor, so reading it is cheap).
func (l *ledger) allowedAt(now time.Duration) time.Duration {
	if r := l.rated.BudgetRate(); r != l.rate {
		l.settleAt(r)
	}
	return max(l.readyAt, now)
}

// charge records an ended idle period's delay. fixedRate: l is read only
// when settle is called (once per round of an agent, Config.Rounds), not
// at every charge and decision.
func (l *ledger) charge(ip predictor.IdlePeriod, fixedRate bool) {
	d := ip.Delay
	if ip.Missed && d <= 0 {
		d = l.reserve
		l.unmeasured++
	}
	if d > 0 {
		l.spent = satAddDur(l.spent, d)
	}
	if fixedRate {
		l.settleAt(l.rate)
	} else {
		l.settle()
	}
	if d > 0 && float64(l.spent) > l.budget(ip.End) {
		l.overruns++
	}
}

func (l *ledger) stats(now time.Duration) (LedgerStats, bool) {
	if l.rated == nil {
		return LedgerStats{}, false
	}
	return LedgerStats{
		Rate: l.rate, Budget: time.Duration(math.Min(l.budget(now), float64(Never))), Spent: l.spent, Reserve: l.reserve,
		Held: l.held, Overruns: l.overruns, Unmeasured: l.unmeasured,
	}, true
}

// ChargePS is a delay measured in picoseconds as a ledger charges it:
// rounded up to whole nanoseconds, never less than it was (0 for ps ≤ 0).
func ChargePS(ps int64) time.Duration {
	if ps <= 0 {
		return 0
	}
	return time.Duration((ps-1)/1000 + 1)
}

func satAddDur(a, b time.Duration) time.Duration {
	if a > Never-b {
		return Never
	}
	return a + b
}
