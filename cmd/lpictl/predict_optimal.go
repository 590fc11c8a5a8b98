package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/controller/replay"
	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/estimate"
	"github.com/lpictl/lpictl/sim/power"
)

// optimalKind is --predictor's name for the offline optimum
// (replay.Optimizer), which is no predictor.Kind: it needs the whole input.
const optimalKind = "optimal"

func (o predictOptions) optimal() bool {
	return strings.EqualFold(strings.TrimSpace(o.kind), optimalKind)
}

// checkOptimalFlags refuses what --compare and --predictor optimal do not
// use. --compare runs every kind, so each predictor flag applies to one of
// them; the optimum reads only the bound (and the timing).
func checkOptimalFlags(flags *pflag.FlagSet, o predictOptions) error {
	if !o.compare && !o.optimal() {
		return nil
	}
	what := "--predictor optimal"
	if o.compare {
		what = "--compare"
		if flags.Changed("predictor") {
			return errors.New("--predictor: not used by --compare, which replays every predictor and the optimum")
		}
	}
	if o.whatIf {
		return fmt.Errorf("--what-if: not used with %s (--what-if has an optimal row of its own)", what)
	}
	if flags.Changed("trace") {
		return fmt.Errorf("--trace: not used by %s (there is no single sequence of decisions to print)", what)
	}
	if o.optimal() {
		for _, fk := range predictFlagKinds {
			if fk.flag != "bound" && flags.Changed(fk.flag) {
				return fmt.Errorf("--%s: not used by the offline optimum (it reads only --bound and the timing)", fk.flag)
			}
		}
	}
	return nil
}

// optimalSetup is what the optimum needs from the configuration.
type optimalSetup struct {
	cfg       replay.OptimalConfig
	bound     float64
	staticHop float64 // Σ p_i/h_i of predictor.hops, normalised; 1 without
	hybrid    bool
	mode      power.Mode
}

func newOptimalSetup(pf predictFile, timing replay.Timing) (optimalSetup, error) {
	s := optimalSetup{bound: pf.Predictor.WithDefaults().Bound, staticHop: 1, hybrid: timing.DeepWake > 0, mode: power.DeepSleep}
	if !(s.bound > 0 && s.bound <= 1) {
		return s, fmt.Errorf("predictor.bound: must be in (0, 1], got %v", s.bound)
	}
	if h := pf.Predictor.Hops; len(h) > 0 {
		// predictor.Config's checks and PerfBound's static hop factor.
		hc := predictor.Config{Kind: predictor.KindPerfBound, WakeTime: 1, Hops: h}
		if err := hc.WithDefaults().Validate(); err != nil {
			return s, err
		}
		s.staticHop = predictor.StaticHopFactor(h)
	}
	preset, err := power.Load(pf.Preset)
	if err != nil {
		return s, fmt.Errorf("preset: %w", err)
	}
	if pf.Mode != "" {
		if s.mode, err = power.ParseMode(pf.Mode); err != nil {
			return s, fmt.Errorf("mode: %w", err)
		}
	}
	st, err := preset.State(s.mode)
	if err != nil || st == nil {
		return s, fmt.Errorf("mode: %s has no low-power state in preset %s", s.mode, preset.Name)
	}
	wakeW := preset.WakePowerW
	s.cfg = replay.OptimalConfig{Timing: timing, LowPower: st.Power(wakeW) / wakeW}
	if s.hybrid {
		s.cfg.DeepPower = preset.DeepSleep.Power(wakeW) / wakeW
	}
	return s, nil
}

// rate returns l = bound × hop factor: the port trace's observed hop
// counts, else predictor.hops, else 1 (as PerfBound takes it).
func (s optimalSetup) rate(o *replay.Optimizer) (l, hop float64) {
	hop = s.staticHop
	if f, ok := o.HopFactor(); ok {
		hop = f
	}
	return s.bound * hop, hop
}

// saving is the energy-weighted saving (seconds at awake power) of a time
// asleep of which deep was in Deep Sleep (hybrid).
func (s optimalSetup) saving(asleep, deep replay.PS) float64 {
	if !s.hybrid {
		return (1 - s.cfg.LowPower) * asleep.Seconds()
	}
	return (1-s.cfg.LowPower)*(asleep-deep).Seconds() + (1-s.cfg.DeepPower)*deep.Seconds()
}

// collectOptimal reads the input into an optimizer; each is called for
// every idle period (gap file: with its gap; trace: with its row), for
// --compare's replays.
func collectOptimal(in io.Reader, name string, s optimalSetup,
	gap func(line int, g time.Duration) error, row func(replay.TraceRow) error) (*replay.Optimizer, replay.Format, error) {
	o, err := replay.NewOptimizer(s.cfg)
	if err != nil {
		return nil, 0, err
	}
	format, err := replay.Read(in, name, func(line int, g time.Duration) error {
		if err := o.Gap(g); err != nil {
			return fmt.Errorf("%s:%d: %w", name, line, err)
		}
		if gap != nil {
			return gap(line, g)
		}
		return nil
	}, func(r replay.TraceRow) error {
		if err := o.Row(r); err != nil {
			return fmt.Errorf("%s:%d: %w", name, r.Line, err)
		}
		if row != nil {
			return row(r)
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

// optimalSummary is `lpictl predict --predictor optimal`'s report
// (docs/predictors.md "The offline optimum"); times in seconds.
type optimalSummary struct {
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

	handshake, budget replay.PS // exact, for the text summary
}

func newOptimalSummary(s optimalSetup, opt replay.Optimum, hop float64) optimalSummary {
	t := s.cfg.Timing
	sum := optimalSummary{
		Predictor: optimalKind, Mode: string(s.mode), WakeTimeS: t.Wake.Seconds(), SleepTimeS: t.Sleep.Seconds(),
		HandshakeS: t.Handshake.Seconds(), DeepWakeTimeS: t.DeepWake.Seconds(),
		IdlePeriods: opt.IdlePeriods, ZeroGapsSkipped: opt.ZeroGaps, UsefulPeriods: opt.Useful,
		Hits: opt.IdlePeriods - opt.Slept, Misses: opt.Slept,
		IdleTimeS: opt.IdleTime.Seconds(), AsleepTimeS: opt.Asleep.Seconds(), SavingS: opt.Saving,
		AddedDelayS: opt.Delay.Seconds(), Bound: s.bound, HopFactor: hop, Rate: opt.Rate,
		ElapsedS: opt.Elapsed.Seconds(), BudgetS: -1, Exact: true, handshake: t.Handshake,
	}
	if s.hybrid {
		d, ds := opt.Deep, opt.DeepAsleep.Seconds()
		sum.DeepMisses, sum.DeepSleepTimeS = &d, &ds
	}
	if opt.Budget < replay.MaxTime {
		sum.BudgetS, sum.budget = opt.Budget.Seconds(), opt.Budget
	}
	sum.HitRate = float64(sum.Hits) / float64(opt.IdlePeriods)
	sum.AddedDelayPerIdleS = sum.AddedDelayS / float64(opt.IdlePeriods)
	sum.AsleepShare = float64(opt.Asleep) / float64(opt.IdleTime)
	sum.OfBudget = ofBudget(opt.Delay, opt.Rate, opt.Elapsed)
	return sum
}

// ofBudget is delay ÷ (l·T).
func ofBudget(delay replay.PS, l float64, t replay.PS) float64 {
	if b := l * float64(t); b > 0 {
		return float64(delay) / b
	}
	return 0
}

func (s optimalSummary) print(w io.Writer) {
	d := func(sec float64) time.Duration { return time.Duration(math.Round(sec * 1e9)) }
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
	tw.Flush()
}

// optimalPredict prints the offline optimum of the input.
func optimalPredict(w io.Writer, in io.Reader, name string, o predictOptions, pf predictFile, timing replay.Timing) error {
	s, err := newOptimalSetup(pf, timing)
	if err != nil {
		return err
	}
	opt, _, err := collectOptimal(in, name, s, nil, nil)
	if err != nil {
		return err
	}
	l, hop := s.rate(opt)
	res, err := opt.Solve(l)
	if err != nil {
		return err
	}
	sum := newOptimalSummary(s, res, hop)
	if o.json {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(sum)
	}
	sum.print(w)
	return nil
}

// compareRow is one line of `lpictl predict --compare` (times in seconds).
type compareRow struct {
	Predictor   string  `json:"predictor"`
	IdlePeriods uint64  `json:"idle_periods"`
	AsleepS     float64 `json:"asleep_s"`
	AsleepShare float64 `json:"asleep_share"` // of the idle time
	// SavingS is the energy-weighted saving, seconds at awake power.
	SavingS     float64 `json:"energy_saving_s"`
	AddedDelayS float64 `json:"added_delay_s"`
	// ElapsedS is T: the replay's clock at the end (gap file) or the
	// trace's span; BudgetS = l·T and OfBudget = added delay ÷ l·T.
	ElapsedS float64 `json:"elapsed_s"`
	BudgetS  float64 `json:"budget_s"`
	OfBudget float64 `json:"of_budget"`
	Misses   uint64  `json:"misses"`
	// DeepMisses: hybrid only.
	DeepMisses *uint64 `json:"deep_misses,omitempty"`
	// OfOptimum is the time asleep ÷ the optimum's (hybrid: the
	// energy-weighted saving ÷ the optimum's); absent when the optimum
	// sleeps not at all.
	OfOptimum *float64 `json:"of_optimum,omitempty"`
	// Held counts the idle periods whose t_PDT the controller's ledger
	// raised; absent without a ledger.
	Held *uint64 `json:"held,omitempty"`
}

// heldOf is the ledger's count of held idle periods, when the controller
// has a ledger.
func heldOf(s controller.Stats) *uint64 {
	if s.Ledger == nil {
		return nil
	}
	return &s.Ledger.Held
}

// compareKinds are the predictors --compare replays: every kind, fixed
// only with a t_PDT.
func compareKinds(p predictor.Config) []predictor.Kind {
	var ks []predictor.Kind
	for _, k := range predictor.Kinds {
		if k != predictor.KindFixed || p.PDT != nil {
			ks = append(ks, k)
		}
	}
	return ks
}

// comparePredict replays the input through every predictor kind and the
// offline optimum, in one pass, and prints one table.
func comparePredict(w io.Writer, in io.Reader, name string, o predictOptions, pf predictFile, timing replay.Timing, start time.Duration) error {
	s, err := newOptimalSetup(pf, timing)
	if err != nil {
		return err
	}
	kinds := compareKinds(pf.Predictor)
	reps := make([]*replay.Replayer, len(kinds))
	for i, k := range kinds {
		pc := pf.Predictor
		pc.Kind = k
		pred, err := predictor.New(pc)
		if err != nil {
			return fmt.Errorf("predictor %s: %w", k, err)
		}
		port, err := controller.NewPort(pf.Controller, pred, start)
		if err != nil {
			return fmt.Errorf("predictor %s: %w", k, err)
		}
		reps[i] = replay.New(port, timing)
	}
	opt, format, err := collectOptimal(in, name, s, func(line int, g time.Duration) error {
		for _, r := range reps {
			if _, err := r.Gap(g); err != nil {
				return fmt.Errorf("%s:%d: %w", name, line, err)
			}
		}
		return nil
	}, func(row replay.TraceRow) error {
		for _, r := range reps {
			if _, err := r.Row(row); err != nil {
				return fmt.Errorf("%s:%d: %w", name, row.Line, err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	l, hop := s.rate(opt)
	best, err := opt.Solve(l)
	if err != nil {
		return err
	}
	rows := make([]compareRow, 0, len(kinds)+1)
	ofOpt := func(asleep replay.PS, saving float64) *float64 {
		var v float64
		switch {
		case s.hybrid && best.Saving > 0:
			v = saving / best.Saving
		case !s.hybrid && best.Asleep > 0:
			v = float64(asleep) / float64(best.Asleep)
		default:
			return nil
		}
		return &v
	}
	row := func(pred string, asleep, deep, delay, elapsed replay.PS, misses, deepMisses uint64) compareRow {
		r := compareRow{
			Predictor: pred, IdlePeriods: best.IdlePeriods, AsleepS: asleep.Seconds(),
			AsleepShare: float64(asleep) / float64(best.IdleTime), SavingS: s.saving(asleep, deep),
			AddedDelayS: delay.Seconds(), ElapsedS: elapsed.Seconds(), BudgetS: l * elapsed.Seconds(),
			OfBudget: ofBudget(delay, l, elapsed), Misses: misses,
		}
		if s.hybrid {
			r.DeepMisses = &deepMisses
		}
		r.OfOptimum = ofOpt(asleep, r.SavingS)
		return r
	}
	for i, k := range kinds {
		res := reps[i].Result()
		elapsed := reps[i].Now()
		if format == replay.FormatTrace {
			elapsed = best.Elapsed // the trace's span, as the optimum's
		}
		r := row(string(k), res.Asleep, res.DeepAsleep, res.Delay, elapsed, res.Misses, res.DeepMisses)
		r.Held = heldOf(res.Port)
		rows = append(rows, r)
	}
	rows = append(rows, row(optimalKind, best.Asleep, best.DeepAsleep, best.Delay, best.Elapsed, best.Slept, best.Deep))

	if o.json {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	d := func(sec float64) time.Duration { return time.Duration(math.Round(sec * 1e9)) }
	t := timing
	hs := ""
	if t.Handshake > 0 {
		hs = fmt.Sprintf(", handshake %v", t.Handshake)
	}
	if s.hybrid {
		hs += fmt.Sprintf(", deep sleep t_w %v", t.DeepWake)
	}
	fmt.Fprintf(w, "%s (%s): %d idle periods, idle %v; %s, t_w %v, t_s %v%s; l = bound %g × hop factor %.4g = %.4g\n",
		name, format, best.IdlePeriods, d(best.IdleTime.Seconds()), s.mode, t.Wake, t.Sleep, hs, s.bound, hop, l)
	held := false
	for _, r := range rows {
		held = held || r.Held != nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	of := "of optimum"
	if s.hybrid {
		of = "of optimum (energy)"
	}
	cols := "predictor\tasleep\tadded delay\tof budget\tmisses\t" + of + "\t"
	if held {
		cols += "held\t"
	}
	width := len("predictor")
	for _, r := range rows {
		width = max(width, len(r.Predictor))
	}
	pad := func(s string) string { return s + strings.Repeat(" ", width-len(s)) } // names left-aligned
	fmt.Fprintln(tw, pad("predictor")+cols[len("predictor"):])
	for _, r := range rows {
		oo := "–"
		if r.OfOptimum != nil {
			oo = fmt.Sprintf("%.1f %%", 100**r.OfOptimum)
		}
		misses := fmt.Sprint(r.Misses)
		if r.DeepMisses != nil {
			misses = fmt.Sprintf("%d (%d deep)", r.Misses, *r.DeepMisses)
		}
		fmt.Fprintf(tw, "%s\t%.1f %%\t%v\t%.1f %%\t%s\t%s\t", pad(r.Predictor), 100*r.AsleepShare, d(r.AddedDelayS), 100*r.OfBudget, misses, oo)
		if held {
			h := "–"
			if r.Held != nil {
				h = fmt.Sprint(*r.Held)
			}
			fmt.Fprintf(tw, "%s\t", h)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// whatIfOptimal is --what-if's optimal row per mode: the offline optimum
// of the input on the estimator's timeline (docs/predictors.md): each idle
// period as observed, the budget l·T over the estimator's elapsed time T
// (waits shift nothing), one port end with the estimator's handshake.
type whatIfOptimal struct {
	modes  []power.Mode
	opts   []*replay.Optimizer
	wakeW  float64
	lowW   []float64
	rate   float64
	policy string
}

func newWhatIfOptimal(cfg estimate.Config, pf predictFile) (*whatIfOptimal, error) {
	s, err := newOptimalSetup(pf, replay.Timing{})
	if err != nil {
		return nil, err
	}
	modes := cfg.Modes
	if len(modes) == 0 {
		modes = cfg.Preset.LowPowerModes()
	}
	b := &whatIfOptimal{modes: modes, wakeW: cfg.Preset.WakePowerW, rate: s.bound * s.staticHop, policy: optimalKind}
	for _, m := range modes {
		st, err := cfg.Preset.State(m)
		if err != nil || st == nil {
			return nil, fmt.Errorf("mode %s: no low-power state in preset %s", m, cfg.Preset.Name)
		}
		h, _ := replay.FromDuration(cfg.Handshake)
		o, err := replay.NewOptimizer(replay.OptimalConfig{
			Timing:   replay.Timing{Wake: st.WakeTime.D(), Sleep: st.SleepTime.D(), Handshake: h},
			LowPower: st.Power(b.wakeW) / b.wakeW,
		})
		if err != nil {
			return nil, err
		}
		b.opts = append(b.opts, o)
		b.lowW = append(b.lowW, st.Power(b.wakeW))
	}
	return b, nil
}

// add adds an idle period starting at start (as the estimator saw it).
func (b *whatIfOptimal) add(start, length time.Duration) error {
	row := replay.TraceRow{Start: replay.PS(start) * 1000, Gap: replay.PS(length) * 1000}
	for _, o := range b.opts {
		if err := o.Row(row); err != nil {
			return err
		}
	}
	return nil
}

// rows returns the optimal row of each mode at now (the estimator's
// elapsed time), after the policies' rows.
func (b *whatIfOptimal) rows(now time.Duration, periods uint64) ([]whatIfRow, error) {
	out := make([]whatIfRow, 0, len(b.opts))
	for i, o := range b.opts {
		// T is the last period's end, which is the estimator's now.
		opt, err := o.Solve(b.rate)
		if err != nil {
			return nil, err
		}
		sec := now.Seconds()
		low := opt.Asleep.Seconds()
		r := whatIfRow{Policy: b.policy, Kind: optimalKind, Mode: string(b.modes[i]),
			IdlePeriods: opt.IdlePeriods, Hits: opt.IdlePeriods - opt.Slept, Misses: opt.Slept, WakeUps: opt.Slept,
			LowPowerS: low, AlwaysOnEnergyJ: b.wakeW * sec, EnergyJ: b.wakeW*(sec-low) + b.lowW[i]*low,
			AddedDelayS: opt.Delay.Seconds(), AddedDelayPerIdleS: opt.Delay.Seconds() / float64(periods)}
		r.SavedJ = r.AlwaysOnEnergyJ - r.EnergyJ
		if sec > 0 {
			r.LowPowerShare, r.SavedPct, r.SavedW = low/sec, 100*r.SavedJ/r.AlwaysOnEnergyJ, r.SavedJ/sec
		}
		out = append(out, r)
	}
	return out, nil
}
