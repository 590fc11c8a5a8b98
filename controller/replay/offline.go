package replay

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"
	"time"

	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/predictor"
)

// OptimalKind is the offline optimum's name where predictors are named
// (`lpictl predict --predictor optimal`, the rows of Compare). It is no
// predictor.Kind: it needs the whole input.
const OptimalKind = "optimal"

// OptimumInput is what Optimal and Compare read besides the idle periods
// (docs/predictors.md "The offline optimum"). sim/estimate.OptimumInput
// fills it from a power preset and a mode.
type OptimumInput struct {
	Timing Timing
	// LowPower and DeepPower are the states' powers as fractions of the
	// awake power (OptimalConfig).
	LowPower, DeepPower float64
	// Mode names the low-power mode in the reports.
	Mode string
	// Bound and StaticHop give the budget rate l = bound × hop factor
	// (a port trace's observed hop counts replace StaticHop): see
	// OptimumBudget.
	Bound, StaticHop float64
	// Predictor, Controller and Start configure Compare's replays: every
	// predictor kind with this configuration (fixed only with a t_PDT).
	Predictor  predictor.Config
	Controller controller.Config
	Start      time.Duration
}

// OptimumBudget reads the optimum's bound and static hop factor (Σ p_i/h_i
// of predictor.hops, normalised; 1 without) from a predictor
// configuration, with predictor.Config's checks.
func OptimumBudget(p predictor.Config) (bound, staticHop float64, err error) {
	bound, staticHop = p.WithDefaults().Bound, 1
	if !(bound > 0 && bound <= 1) {
		return bound, staticHop, fmt.Errorf("predictor.bound: must be in (0, 1], got %v", bound)
	}
	if h := p.Hops; len(h) > 0 {
		// predictor.Config's checks and PerfBound's static hop factor.
		hc := predictor.Config{Kind: predictor.KindPerfBound, WakeTime: 1, Hops: h}
		if err := hc.WithDefaults().Validate(); err != nil {
			return bound, staticHop, err
		}
		staticHop = predictor.StaticHopFactor(h)
	}
	return bound, staticHop, nil
}

// Rate is l = bound × the static hop factor.
func (in OptimumInput) Rate() float64 { return in.Bound * in.StaticHop }

func (in OptimumInput) hybrid() bool { return in.Timing.DeepWake > 0 }

func (in OptimumInput) config() OptimalConfig {
	return OptimalConfig{Timing: in.Timing, LowPower: in.LowPower, DeepPower: in.DeepPower}
}

// rate returns l = bound × hop factor: the port trace's observed hop
// counts, else predictor.hops, else 1 (as PerfBound takes it).
func (in OptimumInput) rate(o *Optimizer) (l, hop float64) {
	hop = in.StaticHop
	if f, ok := o.HopFactor(); ok {
		hop = f
	}
	return in.Bound * hop, hop
}

// saving is the energy-weighted saving (seconds at awake power) of a time
// asleep of which deep was in Deep Sleep (hybrid).
func (in OptimumInput) saving(asleep, deep PS) float64 {
	if !in.hybrid() {
		return (1 - in.LowPower) * asleep.Seconds()
	}
	return (1-in.LowPower)*(asleep-deep).Seconds() + (1-in.DeepPower)*deep.Seconds()
}

// collect reads the input into an optimizer; gap and row (either may be
// nil) are called for every idle period too (gap file: with its gap;
// trace: with its row), for Compare's replays.
func (in OptimumInput) collect(r io.Reader, name string,
	gap func(line int, g time.Duration) error, row func(TraceRow) error) (*Optimizer, Format, error) {
	o, err := NewOptimizer(in.config())
	if err != nil {
		return nil, 0, err
	}
	format, err := Read(r, name, func(line int, g time.Duration) error {
		if err := o.Gap(g); err != nil {
			return fmt.Errorf("%s:%d: %w", name, line, err)
		}
		if gap != nil {
			return gap(line, g)
		}
		return nil
	}, func(tr TraceRow) error {
		if err := o.Row(tr); err != nil {
			return fmt.Errorf("%s:%d: %w", name, tr.Line, err)
		}
		if row != nil {
			return row(tr)
		}
		return nil
	})
	if err != nil {
		return nil, format, err
	}
	if o.IdlePeriods() == 0 {
		return nil, format, fmt.Errorf("%s: no idle periods (the input has none of length > 0)", name)
	}
	return o, format, nil
}

// Optimal reads the input (a gap file or a port trace, as Read) and
// returns its offline optimum (`lpictl predict --predictor optimal`).
func Optimal(r io.Reader, name string, in OptimumInput) (OptimalSummary, error) {
	opt, _, err := in.collect(r, name, nil, nil)
	if err != nil {
		return OptimalSummary{}, err
	}
	l, hop := in.rate(opt)
	res, err := opt.Solve(l)
	if err != nil {
		return OptimalSummary{}, err
	}
	return newOptimalSummary(in, res, hop), nil
}

// OptimalSummary is `lpictl predict --predictor optimal`'s report
// (docs/predictors.md "The offline optimum"); times in seconds.
type OptimalSummary struct {
	Predictor       string  `json:"predictor"` // optimal
	Mode            string  `json:"mode"`
	WakeTimeS       float64 `json:"wake_time_s"`
	SleepTimeS      float64 `json:"sleep_time_s"`
	HandshakeS      float64 `json:"handshake_s"`
	DeepWakeTimeS   float64 `json:"deep_wake_time_s,omitempty"`
	IdlePeriods     uint64  `json:"idle_periods"`
	ZeroGapsSkipped uint64  `json:"zero_gaps_skipped"`
	UsefulPeriods   uint64  `json:"useful_idle_periods"` // longer than 2H + t_s
	Hits            uint64  `json:"hits"`
	Misses          uint64  `json:"misses"` // idle periods slept in at once
	HitRate         float64 `json:"hit_rate"`
	// DeepMisses: hybrid only, the slept idle periods that deepened to
	// Deep Sleep at once.
	DeepMisses         *uint64  `json:"deep_misses,omitempty"`
	IdleTimeS          float64  `json:"idle_time_s"`
	AsleepTimeS        float64  `json:"asleep_time_s"`
	AsleepShare        float64  `json:"asleep_share"`
	DeepSleepTimeS     *float64 `json:"deep_sleep_time_s,omitempty"`
	SavingS            float64  `json:"energy_saving_s"` // seconds of awake power
	AddedDelayS        float64  `json:"added_delay_s"`
	AddedDelayPerIdleS float64  `json:"added_delay_per_idle_period_s"`
	Bound              float64  `json:"bound"`
	HopFactor          float64  `json:"hop_factor"`
	Rate               float64  `json:"rate"`      // l = bound × hop factor
	ElapsedS           float64  `json:"elapsed_s"` // T
	BudgetS            float64  `json:"budget_s"`  // the delay the budget allows (-1: unbounded)
	OfBudget           float64  `json:"of_budget"` // added delay ÷ (l·T)
	Exact              bool     `json:"exact"`     // always true: see docs/predictors.md

	handshake, budget PS // exact, for the text summary
}

func newOptimalSummary(in OptimumInput, opt Optimum, hop float64) OptimalSummary {
	t := in.Timing
	sum := OptimalSummary{
		Predictor: OptimalKind, Mode: in.Mode, WakeTimeS: t.Wake.Seconds(), SleepTimeS: t.Sleep.Seconds(),
		HandshakeS: t.Handshake.Seconds(), DeepWakeTimeS: t.DeepWake.Seconds(),
		IdlePeriods: opt.IdlePeriods, ZeroGapsSkipped: opt.ZeroGaps, UsefulPeriods: opt.Useful,
		Hits: opt.IdlePeriods - opt.Slept, Misses: opt.Slept,
		IdleTimeS: opt.IdleTime.Seconds(), AsleepTimeS: opt.Asleep.Seconds(), SavingS: opt.Saving,
		AddedDelayS: opt.Delay.Seconds(), Bound: in.Bound, HopFactor: hop, Rate: opt.Rate,
		ElapsedS: opt.Elapsed.Seconds(), BudgetS: -1, Exact: true, handshake: t.Handshake,
	}
	if in.hybrid() {
		d, ds := opt.Deep, opt.DeepAsleep.Seconds()
		sum.DeepMisses, sum.DeepSleepTimeS = &d, &ds
	}
	if opt.Budget < MaxTime {
		sum.BudgetS, sum.budget = opt.Budget.Seconds(), opt.Budget
	}
	sum.HitRate = float64(sum.Hits) / float64(opt.IdlePeriods)
	sum.AddedDelayPerIdleS = sum.AddedDelayS / float64(opt.IdlePeriods)
	sum.AsleepShare = float64(opt.Asleep) / float64(opt.IdleTime)
	sum.OfBudget = ofBudget(opt.Delay, opt.Rate, opt.Elapsed)
	return sum
}

// ofBudget is delay ÷ (l·T).
func ofBudget(delay PS, l float64, t PS) float64 {
	if b := l * float64(t); b > 0 {
		return float64(delay) / b
	}
	return 0
}

// secs rounds seconds to the nanosecond, for the text reports.
func secs(sec float64) time.Duration { return time.Duration(math.Round(sec * 1e9)) }

// WriteText writes the summary as `lpictl predict --predictor optimal`
// prints it.
func (s OptimalSummary) WriteText(w io.Writer) error {
	d := secs
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	hs := ""
	if s.handshake > 0 {
		hs = fmt.Sprintf(", handshake %v", s.handshake)
	}
	if s.DeepMisses != nil {
		hs += fmt.Sprintf(", deep sleep t_w %v", d(s.DeepWakeTimeS))
	}
	fmt.Fprintf(tw, "predictor\toptimal\t(offline optimum, %s; t_w %v, t_s %v%s)\n", s.Mode, d(s.WakeTimeS), d(s.SleepTimeS), hs)
	fmt.Fprintf(tw, "idle periods\t%d\t(%d longer than 2 × handshake + t_s)\n", s.IdlePeriods, s.UsefulPeriods)
	if s.ZeroGapsSkipped > 0 {
		fmt.Fprintf(tw, "zero gaps skipped\t%d\t(back-to-back packets: no idle period)\n", s.ZeroGapsSkipped)
	}
	fmt.Fprintf(tw, "hits / misses\t%d / %d\t(misses: idle periods slept in at once; hit rate %.1f %%)\n", s.Hits, s.Misses, 100*s.HitRate)
	if s.DeepMisses != nil {
		fmt.Fprintf(tw, "misses from deep sleep\t%d\t(hybrid: deepened at once; the others stayed in fast wake)\n", *s.DeepMisses)
	}
	fmt.Fprintf(tw, "time asleep\t%v of %v idle\t(%.1f %%)\n", d(s.AsleepTimeS), d(s.IdleTimeS), 100*s.AsleepShare)
	if s.DeepSleepTimeS != nil {
		fmt.Fprintf(tw, "in deep sleep\t%v\n", d(*s.DeepSleepTimeS))
	}
	fmt.Fprintf(tw, "energy-weighted saving\t%v\t(time at awake power saved)\n", d(s.SavingS))
	fmt.Fprintf(tw, "added wake-up delay\t%v\t(%v per idle period)\n", d(s.AddedDelayS), d(s.AddedDelayPerIdleS))
	budget := "unbounded"
	if s.BudgetS >= 0 {
		budget = s.budget.String()
	}
	fmt.Fprintf(tw, "delay budget\t%s\t(l = bound %g × hop factor %.4g = %.4g over %v; %.1f %% of l·T used)\n",
		budget, s.Bound, s.HopFactor, s.Rate, d(s.ElapsedS), 100*s.OfBudget)
	return tw.Flush()
}
