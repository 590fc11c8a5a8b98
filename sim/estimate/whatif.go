package estimate

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"
	"time"

	"github.com/lpictl/lpictl/controller/replay"
)

// WhatIfReport is `lpictl predict --what-if`'s report of an estimate
// over a gap file or port trace (docs/predictors.md); times in seconds.
// Every key is always present.
type WhatIfReport struct {
	Preset      string  `json:"preset"`
	HandshakeS  float64 `json:"handshake_s"`
	Input       string  `json:"input"` // gaps or port-trace
	IdlePeriods uint64  `json:"idle_periods"`
	ZeroGaps    uint64  `json:"zero_gaps_skipped"`
	ElapsedS    float64 `json:"elapsed_s"`
	IdleTimeS   float64 `json:"idle_time_s"`
	IdleShare   float64 `json:"idle_share"`
	Results     []Row   `json:"results"` // one policy × mode each: Row, the one JSON shape of a what-if row

	elapsed time.Duration // exact, for Elapsed
}

// maxClock is the longest time the estimator's picosecond clock holds.
const maxClock = time.Duration(math.MaxInt64 / 1000)

// WhatIf runs the estimator over the input read from in (replay.Read: a
// gap file or a port trace) on one timeline: a gap file has no busy time,
// each gap starts where the previous one ended; a port trace gives each
// period's start. each, if not nil, sees every idle period too. The
// report's Preset and HandshakeS are cfg's.
func WhatIf(in io.Reader, name string, cfg Config, each func(start, length time.Duration) error) (WhatIfReport, error) {
	rep := WhatIfReport{Preset: cfg.Preset.Name, HandshakeS: cfg.Handshake.Seconds()}
	est, err := New(cfg)
	if err != nil {
		return rep, err
	}
	var now, idle, prev time.Duration
	period := func(start, length time.Duration) error {
		idle += length
		rep.IdlePeriods++
		est.Idle(start+length, length)
		if each != nil {
			return each(start, length)
		}
		return nil
	}
	format, err := replay.Read(in, name, func(line int, gap time.Duration) error {
		switch {
		case gap < 0:
			return fmt.Errorf("%s:%d: negative gap %v", name, line, gap)
		case gap == 0:
			rep.ZeroGaps++
			return nil
		case gap >= maxClock-now:
			return fmt.Errorf("%s:%d: time overflows: the gaps so far add up to more than the picosecond clock holds (about 106 days)", name, line)
		}
		now += gap
		if err := period(now-gap, gap); err != nil {
			return fmt.Errorf("%s:%d: %w", name, line, err)
		}
		return nil
	}, func(row replay.TraceRow) error {
		start, end := row.Start.D(), (row.Start + row.Gap).D()
		if start < prev {
			return fmt.Errorf("%s:%d: start_ps %d is before the end of the previous idle period", name, row.Line, row.Start)
		}
		if end >= maxClock {
			return fmt.Errorf("%s:%d: time overflows the picosecond clock", name, row.Line)
		}
		if end > start { // sub-ns gaps vanish at the estimator's ns resolution
			if err := period(start, end-start); err != nil {
				return fmt.Errorf("%s:%d: %w", name, row.Line, err)
			}
		}
		now, prev = end, end
		return nil
	})
	if err != nil {
		return rep, err
	}
	if rep.IdlePeriods == 0 {
		return rep, fmt.Errorf("%s: no idle periods to estimate (the input has none of length > 0)", name)
	}
	rep.Input = "gaps"
	if format == replay.FormatTrace {
		rep.Input = "port-trace"
	}
	rep.elapsed = now
	rep.ElapsedS, rep.IdleTimeS, rep.IdleShare = now.Seconds(), idle.Seconds(), float64(idle)/float64(now)
	for _, r := range est.Results(now) {
		rep.Results = append(rep.Results, Row{
			Policy: r.Policy, Kind: r.Kind, Mode: string(r.Mode), PDTMeanS: r.MeanPDT.Seconds(),
			IdlePeriods: r.IdlePeriods, Absorbed: r.Absorbed, Hits: r.Hits, Misses: r.Misses, WakeUps: r.WakeUps,
			LowPowerS: r.LowPower.Seconds(), LowPowerShare: float64(r.LowPower) / float64(now),
			EnergyJ: r.EnergyJ, AlwaysOnEnergyJ: r.AlwaysOnEnergyJ, SavedJ: r.SavedJ, SavedW: r.SavedW, SavedPct: r.SavedPct,
			AddedDelayS: r.AddedDelay.Seconds(), AddedDelayPerIdleS: r.AddedDelay.Seconds() / float64(rep.IdlePeriods),
		})
	}
	return rep, nil
}

// Elapsed is the report's elapsed time (the estimator's clock at its end).
func (s WhatIfReport) Elapsed() time.Duration { return s.elapsed }

// Print writes the report as a table.
func (s WhatIfReport) Print(w io.Writer) error {
	d := func(sec float64) time.Duration { return time.Duration(math.Round(sec * 1e9)) }
	fmt.Fprintf(w, "preset %s, %d idle periods (%s), idle %v of %v (%.1f %%)", s.Preset, s.IdlePeriods, s.Input,
		d(s.IdleTimeS), d(s.ElapsedS), 100*s.IdleShare)
	if s.ZeroGaps > 0 {
		fmt.Fprintf(w, ", %d zero gaps skipped", s.ZeroGaps)
	}
	if s.HandshakeS > 0 {
		fmt.Fprintf(w, ", handshake %v", d(s.HandshakeS))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\tmode\tmean t_PDT\tlow power\tsaved J\tsaved W\tsaved\tadded delay\tper idle period\twake-ups\thits\tmisses\tabsorbed\t")
	for _, r := range s.Results {
		fmt.Fprintf(tw, "%s\t%s\t%v\t%.1f %%\t%.4g\t%.4g\t%.1f %%\t%v\t%v\t%d\t%d\t%d\t%d\t\n",
			r.Policy, r.Mode, d(r.PDTMeanS), 100*r.LowPowerShare, r.SavedJ, r.SavedW, r.SavedPct,
			d(r.AddedDelayS), d(r.AddedDelayPerIdleS), r.WakeUps, r.Hits, r.Misses, r.Absorbed)
	}
	return tw.Flush()
}
