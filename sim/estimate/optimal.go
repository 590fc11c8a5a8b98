package estimate

import (
	"fmt"
	"time"

	"github.com/lpictl/lpictl/controller/replay"
	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/power"
)

// OptimumInput is what replay.Optimal and replay.Compare need from a
// predictor configuration, a power preset (a name or a file, "" for the
// default) and a mode ("" for deep-sleep): the bound, the static hop
// factor and the powers of the mode's states relative to the awake power
// (docs/model.md §3.3). timing is the replay's; its DeepWake > 0 means
// hybrid. The caller sets Predictor, Controller and Start for Compare.
func OptimumInput(p predictor.Config, preset, mode string, timing replay.Timing) (replay.OptimumInput, error) {
	in := replay.OptimumInput{Timing: timing, Mode: string(power.DeepSleep), Predictor: p}
	var err error
	if in.Bound, in.StaticHop, err = replay.OptimumBudget(p); err != nil {
		return in, err
	}
	pr, err := power.Load(preset)
	if err != nil {
		return in, fmt.Errorf("preset: %w", err)
	}
	m := power.DeepSleep
	if mode != "" {
		if m, err = power.ParseMode(mode); err != nil {
			return in, fmt.Errorf("mode: %w", err)
		}
	}
	in.Mode = string(m)
	st, err := pr.State(m)
	if err != nil || st == nil {
		return in, fmt.Errorf("mode: %s has no low-power state in preset %s", m, pr.Name)
	}
	wakeW := pr.WakePowerW
	in.LowPower = st.Power(wakeW) / wakeW
	if timing.DeepWake > 0 {
		in.DeepPower = pr.DeepSleep.Power(wakeW) / wakeW
	}
	return in, nil
}

// OptimalRows is `lpictl predict --what-if`'s optimal row per mode: the
// offline optimum (replay.Optimizer) of the input on the estimator's
// timeline (docs/predictors.md): each idle period as observed, the budget
// l·T over the estimator's elapsed time T (waits shift nothing), one port
// end with the estimator's handshake.
type OptimalRows struct {
	modes []power.Mode
	opts  []*replay.Optimizer
	wakeW float64
	lowW  []float64
	rate  float64
}

// NewOptimalRows returns the optimal rows of cfg's modes (every low-power
// mode of the preset without Modes) at budget rate l = bound × hop
// factor (replay.OptimumInput.Rate).
func NewOptimalRows(cfg Config, rate float64) (*OptimalRows, error) {
	modes := cfg.Modes
	if len(modes) == 0 {
		modes = cfg.Preset.LowPowerModes()
	}
	b := &OptimalRows{modes: modes, wakeW: cfg.Preset.WakePowerW, rate: rate}
	h, _ := replay.FromDuration(cfg.Handshake)
	for _, m := range modes {
		st, err := cfg.Preset.State(m)
		if err != nil || st == nil {
			return nil, fmt.Errorf("mode %s: no low-power state in preset %s", m, cfg.Preset.Name)
		}
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

// Add adds an idle period starting at start (as the estimator saw it).
func (b *OptimalRows) Add(start, length time.Duration) error {
	row := replay.TraceRow{Start: replay.PS(start) * 1000, Gap: replay.PS(length) * 1000}
	for _, o := range b.opts {
		if err := o.Row(row); err != nil {
			return err
		}
	}
	return nil
}

// Rows returns the optimal row of each mode at now (the estimator's
// elapsed time: the last period's end); periods is the input's count of
// idle periods.
func (b *OptimalRows) Rows(now time.Duration, periods uint64) ([]Row, error) {
	out := make([]Row, 0, len(b.opts))
	for i, o := range b.opts {
		opt, err := o.Solve(b.rate)
		if err != nil {
			return nil, err
		}
		sec := now.Seconds()
		low := opt.Asleep.Seconds()
		r := Row{Policy: replay.OptimalKind, Kind: replay.OptimalKind, Mode: string(b.modes[i]),
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
