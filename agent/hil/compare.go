package hil

import (
	"bufio"
	"fmt"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/lpictl/lpictl/agent/hwbackend"
	"github.com/lpictl/lpictl/sim/power"
)

// The per-port comparison (docs/hil.md "What is compared"): for every
// emulated port, the figures measured on it against lpictl predict's
// replay of its agent's trace and the simulator's port that stands for
// it, each with its relative difference and a verdict against the
// tolerance.

// Tolerance of a verdict: a prediction agrees when it is within
// RelTolerance of the measured value, or — where the measured value is
// small, so that a relative difference means little — within an absolute
// margin: AbsCount for counts below SmallCount, AbsPoints percentage
// points for shares below SmallShare %, AbsDelayMs for delays below
// SmallDelayMs.
const (
	RelTolerance = 0.10
	SmallCount   = 200
	AbsCount     = 20
	SmallShare   = 10.0
	AbsPoints    = 1.0
	SmallDelayMs = 10.0
	AbsDelayMs   = 1.0
)

// Verdicts.
const (
	VerdictAgrees  = "agrees"
	VerdictDiffers = "DIFFERS"
	VerdictNone    = "—"
)

// PortCompare is one row: one metric of one port.
type PortCompare struct {
	Port     string   `json:"port"`
	Metric   string   `json:"metric"`
	Unit     string   `json:"unit"`
	Measured *float64 `json:"measured"`
	Predict  *float64 `json:"predict"`
	Sim      *float64 `json:"sim"`
	// SimMin and SimMax are the range of the simulator's figure over its
	// ensemble (SimResult.Phases runs; misses and sleep share), nil
	// elsewhere.
	SimMin *float64 `json:"sim_min"`
	SimMax *float64 `json:"sim_max"`
	// PredictRel and SimRel are (predicted − measured) / measured (nil
	// when measured is 0 or a side is missing).
	PredictRel     *float64 `json:"predict_rel"`
	SimRel         *float64 `json:"sim_rel"`
	PredictVerdict string   `json:"predict_verdict"`
	SimVerdict     string   `json:"sim_verdict"`
}

// verdict says whether got agrees with measured under the tolerance for
// unit ("" counts, "%" shares, "ms" delays).
func verdict(measured, got *float64, unit string) string {
	if measured == nil || got == nil {
		return VerdictNone
	}
	m, g := *measured, *got
	d := math.Abs(g - m)
	if d <= RelTolerance*math.Abs(m)+1e-9 {
		return VerdictAgrees
	}
	switch unit {
	case "":
		if math.Abs(m) < SmallCount && d <= AbsCount {
			return VerdictAgrees
		}
	case "%":
		if math.Abs(m) < SmallShare && d <= AbsPoints {
			return VerdictAgrees
		}
	case "ms":
		if math.Abs(m) < SmallDelayMs && d <= AbsDelayMs {
			return VerdictAgrees
		}
	}
	return VerdictDiffers
}

func rel(measured, got *float64) *float64 {
	if measured == nil || got == nil || *measured == 0 {
		return nil
	}
	return fp((*got - *measured) / math.Abs(*measured))
}

func newCompare(port, metric, unit string, measured, predict, sim *float64) PortCompare {
	return PortCompare{Port: port, Metric: metric, Unit: unit, Measured: measured, Predict: predict, Sim: sim,
		PredictRel: rel(measured, predict), SimRel: rel(measured, sim),
		PredictVerdict: verdict(measured, predict, unit), SimVerdict: verdict(measured, sim, unit)}
}

// comparePorts builds the per-port rows of a run against its always-on
// baseline, the replay and the simulator's run. The wake-up delay is, on
// every side, the waits of the packets that ended idle periods
// (measuredDelay).
func comparePorts(run, base *RunReport, rep []PortReplay, sim *SimResult) []PortCompare {
	var out []PortCompare
	for i, p := range run.Ports {
		st := p.Status
		var baseDelay float64
		for _, bp := range base.Ports {
			if bp.Port == p.Port {
				baseDelay = bp.Status.DelayTotal.Seconds()
			}
		}
		_ = i
		var pr *PortReplay
		for k := range rep {
			if rep[k].Port == p.Port {
				pr = &rep[k]
			}
		}
		var sp *SimPort
		if sim != nil {
			for k := range sim.Ports {
				if sim.Ports[k].Port == p.Port {
					sp = &sim.Ports[k]
				}
			}
		}
		pv := func(f func(*PortReplay) float64) *float64 {
			if pr == nil || pr.Rows == 0 {
				return nil
			}
			return fp(f(pr))
		}
		sv := func(f func(*SimPort) float64) *float64 {
			if sp == nil {
				return nil
			}
			return fp(f(sp))
		}
		misses := newCompare(p.Port, "misses", "", fp(float64(st.Misses)),
			pv(func(r *PortReplay) float64 { return float64(r.Misses) }),
			sv(func(s *SimPort) float64 { return float64(s.Misses) }))
		sleep := newCompare(p.Port, "sleep share", "%", fp(100*(st.Fractions.FastWake+st.Fractions.DeepSleep)),
			pv(func(r *PortReplay) float64 {
				if r.SpanS <= 0 {
					return math.NaN()
				}
				return 100 * r.AsleepS / r.SpanS
			}),
			sv(func(s *SimPort) float64 { return 100 * s.SleepShare }))
		if sp != nil {
			misses.SimMin, misses.SimMax = fp(float64(sp.MissesMin)), fp(float64(sp.MissesMax))
			sleep.SimMin, sleep.SimMax = fp(100*sp.SleepShareMin), fp(100*sp.SleepShareMax)
		}
		out = append(out,
			newCompare(p.Port, "idle periods", "", fp(float64(st.IdlePeriods)),
				pv(func(r *PortReplay) float64 { return float64(r.IdlePeriods) }),
				sv(func(s *SimPort) float64 { return float64(s.IdlePeriods) })),
			misses, sleep,
			newCompare(p.Port, "wake-up delay", "ms", measuredDelay(pr, st.DelayTotal.Seconds()-baseDelay),
				pv(func(r *PortReplay) float64 { return 1e3 * r.DelayS }),
				sv(func(s *SimPort) float64 { return 1e3 * s.DelayS })),
			newCompare(p.Port, "energy saving", "%", fp(100*st.Saving), nil,
				sv(func(s *SimPort) float64 { return s.Saving })),
		)
	}
	return out
}

// measuredDelay is the measured side of the "wake-up delay" row: what
// predict and the simulator give, the waits of the packets that ended the
// port's idle periods within the traffic phase — the port's own account of
// them, its agent's trace (the delay its ledger charges). Without such a trace
// it falls back on the port's wait total beyond the always-on run's, which
// also counts packets queued behind a waking one.
func measuredDelay(pr *PortReplay, beyondBase float64) *float64 {
	if pr != nil && pr.PortOutcomes && pr.IdlePeriods > 0 {
		return fp(1e3 * pr.TraceDelayS)
	}
	return fp(1e3 * max(beyondBase, 0))
}

// predictNote says how the predict column was obtained where it is not
// each port's trace replayed alone ("" per direction): per link the two
// egress ports of a cable share one link state (it goes down only when
// both are idle, after the handshake, and either end's packet wakes it),
// so each cable's two traces are replayed jointly on one timeline
// (replay.ReplayAgentLink).
func (c *Config) predictNote() string {
	if c.PortLPI() != power.PerLink {
		return ""
	}
	var pairs []string
	for _, e := range linkEnds() {
		pairs = append(pairs, e[0]+"+"+e[1])
	}
	return fmt.Sprintf("predict: per link, each cable's two ends replayed jointly (%s), the link's state shared, handshake H = %v",
		strings.Join(pairs, ", "), hwbackend.LinkHandshake(c.SimRateBps()))
}

// unexplained lists the rows whose simulator or predict verdict differs.
func unexplained(rows []PortCompare) []string {
	var out []string
	for _, r := range rows {
		for _, side := range []struct {
			name, v string
			got     *float64
		}{{"predict", r.PredictVerdict, r.Predict}, {"sim", r.SimVerdict, r.Sim}} {
			if side.v == VerdictDiffers {
				out = append(out, fmt.Sprintf("%s %s: %s %s against %s measured", r.Port, r.Metric, side.name,
					fmtOpt(side.got, r.Unit), fmtOpt(r.Measured, r.Unit)))
			}
		}
	}
	return out
}

func fmtRel(v *float64) string {
	if v == nil {
		return "—"
	}
	return fmt.Sprintf("%+.1f%%", 100**v)
}

// writePortCompare writes a run's per-port table and its unexplained rows.
func writePortCompare(bw *bufio.Writer, c *SimToReal) error {
	if len(c.Ports) == 0 {
		return nil
	}
	fmt.Fprintf(bw, "\nper port, %s (wake-up delay: the waits of the packets that ended idle periods; sim: %s, %s; tolerance ±%.0f %%, or ±%d where a count is below %d, ±%.0f point below %.0f %%, ±%.0f ms below %.0f ms):\n",
		c.Run, c.SimLPI, simRuns(c.Sim), 100*RelTolerance, AbsCount, SmallCount, AbsPoints, SmallShare, AbsDelayMs, SmallDelayMs)
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "port\tmetric\tunit\tmeasured\tpredict\tΔ\tverdict\tsim\tsim range\tΔ\tverdict\t")
	for _, r := range c.Ports {
		rng := "—"
		if r.SimMin != nil && r.SimMax != nil {
			rng = fmtOpt(r.SimMin, r.Unit) + "–" + fmtOpt(r.SimMax, r.Unit)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Port, r.Metric, r.Unit,
			fmtOpt(r.Measured, r.Unit), fmtOpt(r.Predict, r.Unit), fmtRel(r.PredictRel), r.PredictVerdict,
			fmtOpt(r.Sim, r.Unit), rng, fmtRel(r.SimRel), r.SimVerdict)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if c.PredictNote != "" {
		fmt.Fprintln(bw, c.PredictNote)
	}
	if len(c.Unexplained) == 0 {
		fmt.Fprintln(bw, "every row within the tolerance")
		return nil
	}
	fmt.Fprintf(bw, "outside the tolerance (%d):\n", len(c.Unexplained))
	for _, u := range c.Unexplained {
		fmt.Fprintf(bw, "  - %s\n", u)
	}
	return nil
}

// simRuns says what the sim column is: one run, or the mean of an
// ensemble over the agents' round phase.
func simRuns(s *SimResult) string {
	if s == nil || s.Phases <= 1 {
		return "one run"
	}
	return fmt.Sprintf("the mean of %d runs over the agents' round phase, its range beside it", s.Phases)
}
