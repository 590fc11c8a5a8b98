package replay

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/predictor"
)

// CompareRow is one line of `lpictl predict --compare` (times in seconds).
type CompareRow struct {
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

// Comparison is Compare's result: one row per predictor, the optimum last.
type Comparison struct {
	Rows []CompareRow

	name   string
	format Format
	in     OptimumInput
	best   Optimum
	l, hop float64
}

// CompareKinds are the predictors Compare replays: every kind, fixed only
// with a t_PDT.
func CompareKinds(p predictor.Config) []predictor.Kind {
	var ks []predictor.Kind
	for _, k := range predictor.Kinds {
		if k != predictor.KindFixed || p.PDT != nil {
			ks = append(ks, k)
		}
	}
	return ks
}

// Compare replays the input through every predictor kind (CompareKinds)
// and the offline optimum, in one pass (`lpictl predict --compare`).
func Compare(r io.Reader, name string, in OptimumInput) (*Comparison, error) {
	kinds := CompareKinds(in.Predictor)
	reps := make([]*Replayer, len(kinds))
	for i, k := range kinds {
		pc := in.Predictor
		pc.Kind = k
		pred, err := predictor.New(pc)
		if err != nil {
			return nil, fmt.Errorf("predictor %s: %w", k, err)
		}
		port, err := controller.NewPort(in.Controller, pred, in.Start)
		if err != nil {
			return nil, fmt.Errorf("predictor %s: %w", k, err)
		}
		reps[i] = New(port, in.Timing)
	}
	opt, format, err := in.collect(r, name, func(line int, g time.Duration) error {
		for _, rp := range reps {
			if _, err := rp.Gap(g); err != nil {
				return fmt.Errorf("%s:%d: %w", name, line, err)
			}
		}
		return nil
	}, func(row TraceRow) error {
		for _, rp := range reps {
			if _, err := rp.Row(row); err != nil {
				return fmt.Errorf("%s:%d: %w", name, row.Line, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	c := &Comparison{name: name, format: format, in: in}
	c.l, c.hop = in.rate(opt)
	if c.best, err = opt.Solve(c.l); err != nil {
		return nil, err
	}
	c.Rows = make([]CompareRow, 0, len(kinds)+1)
	for i, k := range kinds {
		res := reps[i].Result()
		elapsed := reps[i].Now()
		if format == FormatTrace {
			elapsed = c.best.Elapsed // the trace's span, as the optimum's
		}
		row := c.row(string(k), res.Asleep, res.DeepAsleep, res.Delay, elapsed, res.Misses, res.DeepMisses)
		if res.Port.Ledger != nil {
			row.Held = &res.Port.Ledger.Held
		}
		c.Rows = append(c.Rows, row)
	}
	b := c.best
	c.Rows = append(c.Rows, c.row(OptimalKind, b.Asleep, b.DeepAsleep, b.Delay, b.Elapsed, b.Slept, b.Deep))
	return c, nil
}

func (c *Comparison) row(pred string, asleep, deep, delay, elapsed PS, misses, deepMisses uint64) CompareRow {
	l, best := c.l, c.best
	r := CompareRow{
		Predictor: pred, IdlePeriods: best.IdlePeriods, AsleepS: asleep.Seconds(),
		AsleepShare: float64(asleep) / float64(best.IdleTime), SavingS: c.in.saving(asleep, deep),
		AddedDelayS: delay.Seconds(), ElapsedS: elapsed.Seconds(), BudgetS: l * elapsed.Seconds(),
		OfBudget: ofBudget(delay, l, elapsed), Misses: misses,
	}
	if c.in.hybrid() {
		r.DeepMisses = &deepMisses
	}
	var v float64
	switch {
	case c.in.hybrid() && best.Saving > 0:
		v = r.SavingS / best.Saving
	case !c.in.hybrid() && best.Asleep > 0:
		v = float64(asleep) / float64(best.Asleep)
	default:
		return r
	}
	r.OfOptimum = &v
	return r
}

// WriteText writes the comparison as `lpictl predict --compare` prints
// it: a header line and one table.
func (c *Comparison) WriteText(w io.Writer) error {
	t, in, hs := c.in.Timing, c.in, ""
	if t.Handshake > 0 {
		hs = fmt.Sprintf(", handshake %v", t.Handshake)
	}
	if in.hybrid() {
		hs += fmt.Sprintf(", deep sleep t_w %v", t.DeepWake)
	}
	fmt.Fprintf(w, "%s (%s): %d idle periods, idle %v; %s, t_w %v, t_s %v%s; l = bound %g × hop factor %.4g = %.4g\n",
		c.name, c.format, c.best.IdlePeriods, secs(c.best.IdleTime.Seconds()), in.Mode, t.Wake, t.Sleep, hs, in.Bound, c.hop, c.l)
	held := false
	width := len("predictor")
	for _, r := range c.Rows {
		held = held || r.Held != nil
		width = max(width, len(r.Predictor))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	of := "of optimum"
	if in.hybrid() {
		of = "of optimum (energy)"
	}
	cols := "\tasleep\tadded delay\tof budget\tmisses\t" + of + "\t"
	if held {
		cols += "held\t"
	}
	pad := func(s string) string { return s + strings.Repeat(" ", width-len(s)) } // names left-aligned
	fmt.Fprintln(tw, pad("predictor")+cols)
	for _, r := range c.Rows {
		fmt.Fprintf(tw, "%s\t%.1f %%\t%v\t%.1f %%\t%s\t%s\t", pad(r.Predictor), 100*r.AsleepShare, secs(r.AddedDelayS),
			100*r.OfBudget, r.misses(), orDash(r.OfOptimum, func(v float64) string { return fmt.Sprintf("%.1f %%", 100*v) }))
		if held {
			fmt.Fprintf(tw, "%s\t", orDash(r.Held, func(v uint64) string { return fmt.Sprint(v) }))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

func (r CompareRow) misses() string {
	if r.DeepMisses != nil {
		return fmt.Sprintf("%d (%d deep)", r.Misses, *r.DeepMisses)
	}
	return fmt.Sprint(r.Misses)
}

// orDash formats *p, or "–" for nil.
func orDash[T any](p *T, f func(T) string) string {
	if p == nil {
		return "–"
	}
	return f(*p)
}
