package scenario

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/google/renameio/v2"

	"github.com/lpictl/lpictl/configs"
	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/network"
	"github.com/lpictl/lpictl/sim/power"
	"github.com/lpictl/lpictl/sim/workload"
	"github.com/lpictl/lpictl/sim/workload/apps"
	"github.com/lpictl/lpictl/sim/workload/sched"
	"github.com/lpictl/lpictl/sim/workload/vef"
)

// Report is the deterministic summary of a run: the same scenario and seed
// give byte-identical JSON (summary.json).
type Report struct {
	Scenario  string `json:"scenario"`
	Topology  string `json:"topology"`
	Nodes     int    `json:"nodes"`
	Switches  int    `json:"switches"`
	Preset    string `json:"preset"`
	Mode      string `json:"mode"`
	Predictor string `json:"predictor"`
	Seed      uint64 `json:"seed"`
	// Workload is the workload's kind (multi for jobs) and Ranks its rank
	// count.
	Workload string `json:"workload"`
	Ranks    int    `json:"ranks"`
	// Incomplete marks a run interrupted before its workload ended (^C,
	// SIGTERM): the figures cover the simulated time up to then
	// (exec_time_s).
	Incomplete bool `json:"incomplete,omitempty"`
	// Deadlock, on a run that deadlocked (also Incomplete), says where:
	// the paused links (network.DeadlockError).
	Deadlock string `json:"deadlock,omitempty"`
	network.Result
}

// Full is a report with the run's wall-clock figures (perf.json, and the
// --json output unless --deterministic).
type Full struct {
	Report
	network.Perf
}

// Outcome is a finished run.
type Outcome struct {
	Scenario *Scenario
	Built    *Built
	Net      *network.Network
	Report   Report
	Perf     network.Perf
}

// RunError is a failure of a run itself (a network or replay deadlock, a
// cancelled context), as opposed to a scenario that cannot be built. A bad
// record found while streaming a trace (a *vef.Error or *sched.Error
// inside) makes it bad input too: it is then wrapped in a
// configs.InputError.
type RunError struct{ Err error }

func (e *RunError) Error() string { return e.Err.Error() }
func (e *RunError) Unwrap() error { return e.Err }

// Run builds and runs the scenario: the network replays the workload
// (sim/workload) as its workload.Host. progress, if not nil, is called
// every million events or so. When ctx is cancelled during the run, Run
// returns both its error (a *RunError wrapping ctx's) and the outcome so
// far, its Report marked Incomplete; on any other error the outcome is nil.
func Run(ctx context.Context, s *Scenario, progress func(network.Progress)) (*Outcome, error) {
	b, err := s.Build()
	if err != nil {
		return nil, err
	}
	n, release, err := b.NewNetwork()
	if err != nil {
		return nil, configs.BadInput(err)
	}
	defer release()
	if p := s.Output.IdleHistPort; p != nil {
		if err := n.TrackIdlePort(*p); err != nil {
			return nil, configs.BadInput(s.named(err))
		}
		if err := n.TracePort(network.PortID(*p)); err != nil {
			return nil, configs.BadInput(s.named(fmt.Errorf("output.idle_hist_port: %w", err)))
		}
	}
	runErr := n.Run(ctx, 1<<20, progress)
	if runErr != nil && !n.Interrupted() {
		return nil, runError(runErr)
	}
	kind := string(b.Params.Predictor.WithDefaults().Kind)
	if s.Power.Mode == string(power.AlwaysOn) {
		kind = "none"
	}
	o := &Outcome{Scenario: s, Built: b, Net: n, Perf: n.Perf()}
	o.Report = Report{
		Scenario: s.Name, Topology: b.Topology.Name(), Nodes: b.Topology.Nodes(), Switches: b.Topology.Switches(),
		Preset: b.Preset.Name, Mode: s.Power.Mode, Predictor: kind, Seed: s.Seed,
		Workload: workloadKind(&s.Workload), Ranks: b.Workload.Ranks,
		Result: n.Result(), Incomplete: n.Interrupted(),
	}
	if n.Deadlocked() && runErr != nil {
		o.Report.Deadlock = runErr.Error()
	}
	if runErr != nil {
		return o, runError(runErr)
	}
	return o, nil
}

// runError is a run's failure: bad input when a trace record read while
// streaming was bad.
func runError(err error) error {
	var ve *vef.Error
	var se *sched.Error
	if errors.As(err, &ve) || errors.As(err, &se) {
		return configs.BadInput(&RunError{Err: err})
	}
	return &RunError{Err: err}
}

func workloadKind(c *workload.Config) string {
	if len(c.Jobs) > 0 {
		return workload.KindMulti
	}
	return c.Kind
}

// ExpectedEnd is the workload's nominal duration (ps) for progress
// estimates: workload.duration, or steps × step_time; 0 when unknown.
func (s *Scenario) ExpectedEnd() int64 {
	w := s.Workload
	if w.Duration > 0 {
		return ps(w.Duration)
	}
	if w.Steps > 0 && w.StepTime > 0 {
		return int64(w.Steps) * ps(w.StepTime)
	}
	if w.Kind == apps.KindSynthetic {
		_, d := apps.Defaults(w.Kind)
		return ps(predictor.Duration(d))
	}
	return 0
}

// WriteDir writes summary.json, perf.json, ports.csv, idle_hist.csv,
// idle_log.csv and, with output.idle_hist_port, port_trace.csv to dir, each
// atomically (a temporary file renamed into place).
func (o *Outcome) WriteDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(dir, "summary.json"), func(w io.Writer) error {
		return writeJSON(w, o.Report)
	}); err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(dir, "perf.json"), func(w io.Writer) error {
		return writeJSON(w, o.Perf)
	}); err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(dir, "ports.csv"), func(w io.Writer) error {
		if _, err := fmt.Fprintln(w, network.PortCSVHeader); err != nil {
			return err
		}
		var werr error
		var line []byte
		o.Net.Ports(func(r *network.PortRow) {
			if werr == nil {
				line = append(r.AppendCSV(line[:0]), '\n')
				_, werr = w.Write(line)
			}
		})
		return werr
	}); err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(dir, "idle_log.csv"), func(w io.Writer) error {
		if _, err := fmt.Fprintln(w, network.IdleLogCSVHeader); err != nil {
			return err
		}
		var werr error
		o.Net.IdleLog(func(line string) {
			if werr == nil {
				_, werr = fmt.Fprintln(w, line)
			}
		})
		return werr
	}); err != nil {
		return err
	}
	if o.Scenario.Output.IdleHistPort != nil {
		if err := writeAtomic(filepath.Join(dir, "port_trace.csv"), func(w io.Writer) error {
			if _, err := fmt.Fprintln(w, network.PortTraceCSVHeader); err != nil {
				return err
			}
			var werr error
			o.Net.TraceRows(func(r *network.TraceRow) {
				if werr == nil {
					_, werr = fmt.Fprintln(w, r.CSV())
				}
			})
			return werr
		}); err != nil {
			return err
		}
	}
	return writeAtomic(filepath.Join(dir, "idle_hist.csv"), func(w io.Writer) error {
		if _, err := fmt.Fprintln(w, network.IdleCSVHeader); err != nil {
			return err
		}
		for _, r := range o.Net.IdleHistogram(o.Scenario.Output.IdleHistBins) {
			if _, err := fmt.Fprintln(w, r.CSV()); err != nil {
				return err
			}
		}
		return nil
	})
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// WriteJSON writes the report as one indented JSON object; with perf the
// wall-clock figures are included (they differ from run to run).
func (o *Outcome) WriteJSON(w io.Writer, perf bool) error {
	if perf {
		return writeJSON(w, Full{Report: o.Report, Perf: o.Perf})
	}
	return writeJSON(w, o.Report)
}

func writeAtomic(path string, fill func(io.Writer) error) error {
	pf, err := renameio.NewPendingFile(path, renameio.WithPermissions(0o644))
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer pf.Cleanup()
	bw := bufio.NewWriterSize(pf, 1<<16)
	if err := fill(bw); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := pf.CloseAtomicallyReplace(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// WriteTable prints the human summary.
func (o *Outcome) WriteTable(w io.Writer) error {
	r := o.Report
	bw := bufio.NewWriter(w)
	p := func(k, format string, a ...any) { fmt.Fprintf(bw, "%-22s "+format+"\n", append([]any{k}, a...)...) }
	switch {
	case r.Deadlock != "":
		p("INCOMPLETE", "deadlocked after %s simulated: every figure below covers the run up to there", fmtS(r.ExecTimeS))
		p("DEADLOCK", "%s", r.Deadlock)
	case r.Incomplete:
		p("INCOMPLETE", "interrupted after %s simulated: every figure below covers the run up to there", fmtS(r.ExecTimeS))
	}
	p("scenario", "%s (seed %d)", r.Scenario, r.Seed)
	p("workload", "%s, %d ranks, mean node utilisation %.2f%%", r.Workload, r.Ranks, 100*r.NodeUtilisation)
	p("topology", "%s: %d nodes, %d switches, %d links", r.Topology, r.Nodes, r.Switches, r.Links)
	p("power", "%s, mode %s, predictor %s", r.Preset, r.Mode, r.Predictor)
	p("execution time", "%s", fmtS(r.ExecTimeS))
	p("messages / packets", "%d / %d (dropped %d, PFC pauses %d)", r.Messages, r.Packets, r.Dropped, r.PFCPauses)
	if e := r.LatencyS.PctRelError; e > 0 {
		p("latency mean/p50/p99", "%s / %s / %s (max %s; p50, p99 bucketed, within %.1f %%)", fmtS(r.LatencyS.Mean), fmtS(r.LatencyS.P50), fmtS(r.LatencyS.P99), fmtS(r.LatencyS.Max), 100*e)
	} else {
		p("latency mean/p50/p99", "%s / %s / %s (max %s)", fmtS(r.LatencyS.Mean), fmtS(r.LatencyS.P50), fmtS(r.LatencyS.P99), fmtS(r.LatencyS.Max))
	}
	e := r.EnergyJ
	p("energy links", "%.6g J", e.Links)
	p("energy switches", "%.6g J", e.Switches)
	p("energy network", "%.6g J", e.Network)
	p("energy nodes", "%.6g J", e.Nodes)
	p("energy total", "%.6g J", e.Total)
	f := r.LinkStateFraction
	lt := fmt.Sprintf("wake %.2f%%, transition %.2f%%, fast wake %.2f%%, deep sleep %.2f%%", 100*f.Wake, 100*f.Transition, 100*f.FastWake, 100*f.DeepSleep)
	if f.Off > 0 {
		// Consolidation's links switched off (model §1.3): without it
		// the shares would not add up to 100 %.
		lt += fmt.Sprintf(", off %.2f%%", 100*f.Off)
	}
	p("link time", "%s", lt)
	p("transitions / wakeups", "%d / %d", r.Transitions, r.Wakeups)
	p("hits / misses", "%d / %d", r.Hits, r.Misses)
	if l := r.Ledger; l != nil {
		p("per-port ledger", "%d ports spent %s of %s budget (worst port %.3f of its budget, %d over budget + reserve), %d idle periods held", l.Ports, fmtS(l.SpentS), fmtS(l.BudgetS), l.WorstRatio, l.OverGuarantee, l.Held)
	}
	if g := r.EndToEnd; g != nil {
		p("end-to-end bound", "stalls %s of a budget of %s (+ %s headroom), %d closures", fmtS(g.StallS), fmtS(g.BudgetS), fmtS(g.HeadroomS), g.Closures)
	}
	if m := r.PowarModel; m != nil {
		p("powar model", "ports on %.2f%%, W_net %.4f (no floor %.4f), W_nodes %.4f, W_cluster %.4f", 100*m.PortOn, m.WNet, m.WNetNoFloor, m.WNodes, m.WCluster)
	}
	if d := r.PowarRouting; d != nil {
		p("powar decisions", "%d adaptive, %d to a sleeping port, %d with none free (%d queued, %d waited, %d retries), %.2f selectable on average", d.Adaptive, d.Sleeping, d.Fallback+d.Waited, d.Fallback, d.Waited, d.Retries, d.MeanSelectable)
	}
	if d := r.PowarNonMinimal; d != nil {
		p("powar non-minimal", "%d decisions, %d detours (%d from the leaf, %d with a transit, %d over an awake port), %d extra hops", d.Decisions, d.Detours, d.FromLeaf, d.Transits, d.AwakeDetours, d.ExtraHops)
	}
	if c := r.Consolidation; c != nil {
		p("consolidation", "active %.1f%% of %d links (physically on %.1f%%), %d deactivations, %d activations (%d indirect requests), %d shadow reactivations, %d control messages, %d non-minimal (%d by choice), %d violations", 100*c.ActiveRatio, c.Links, 100*c.PhysicalRatio, c.Deactivations, c.Activations, c.IndirectRequests, c.Reactivations, c.ControlMessages, c.NonMinimal, c.Adaptive, c.Violations)
		if c.LowerBound > 0 {
			p("lower bound", "%.1f%% of links at the carried load %.3f (paper 004 §VI-A, uniform traffic)", 100*c.LowerBound, c.CarriedLoad)
		}
	}
	if t := r.RankTraffic; t != nil {
		p("intra-node / network", "%d messages, %d B / %d messages, %d B", t.IntraMessages, t.IntraBytes, t.NetworkMessages, t.NetworkBytes)
	}
	threads := ""
	if o.Perf.Threads > 1 {
		threads = fmt.Sprintf(", %d threads", o.Perf.Threads)
	}
	p("events", "%d in %.3g s (%.3g events/s, peak RSS %d MiB%s)", r.Events, o.Perf.WallS, o.Perf.EventsPerS, o.Perf.PeakRSSBytes>>20, threads)
	m := &o.Perf.Memory
	mib := func(b int64) float64 { return float64(b) / (1 << 20) }
	p("memory", "%.1f MiB: ports %.1f, queues %.1f, controllers %.1f, links %.1f, routing %.1f, workload %.1f, engine %.1f, stats %.1f",
		mib(m.Total), mib(m.Ports), mib(m.Queues), mib(m.Controllers), mib(m.Links), mib(m.Routing), mib(m.Workload), mib(m.Engine), mib(m.Stats))
	return bw.Flush()
}

func fmtS(s float64) string {
	switch {
	case s == 0:
		return "0"
	case s < 1e-6:
		return fmt.Sprintf("%.4g ns", s*1e9)
	case s < 1e-3:
		return fmt.Sprintf("%.4g µs", s*1e6)
	case s < 1:
		return fmt.Sprintf("%.4g ms", s*1e3)
	}
	return fmt.Sprintf("%.4g s", s)
}

// Variant is one configuration of a comparison.
type Variant struct {
	Name      string
	Mode      string // power mode; "" keeps the scenario's
	Predictor predictor.Config
	// Ledger sets controller.ledger ("" keeps the scenario's); EndToEnd
	// turns power.end_to_end on.
	Ledger   controller.LedgerMode
	EndToEnd bool
}

// CompareRow is one line of a comparison against the always-on baseline.
type CompareRow struct {
	Name               string  `json:"name"`
	ExecTimeS          float64 `json:"exec_time_s"`
	ExecOverheadPct    float64 `json:"exec_overhead_pct"`
	LatencyMeanS       float64 `json:"latency_mean_s"`
	LatencyOverheadPct float64 `json:"latency_overhead_pct"`
	LinkEnergyJ        float64 `json:"link_energy_j"`
	LinkSavingPct      float64 `json:"link_saving_pct"`
	NetworkSavingPct   float64 `json:"network_saving_pct"`
	TotalSavingPct     float64 `json:"total_saving_pct"`
	Wakeups            uint64  `json:"wakeups"`
	Misses             uint64  `json:"misses"`
	// LedgerWorst is the largest spent / budget of a port under the
	// per-port ledger (absent without one); StallBudget the end-to-end
	// gate's stalls / budget (absent without it).
	LedgerWorst *float64 `json:"ledger_worst_ratio,omitempty"`
	StallBudget *float64 `json:"end_to_end_stall_ratio,omitempty"`
}

// DefaultVariants are always-on, a fixed t_PDT, PerfBound and
// PerfBoundCorrect as the papers run them (no ledger, their bin search),
// the same under the delay ledger, PerfBoundCorrect under the end-to-end
// gate, and nextgap under the ledger, with the scenario's predictor
// settings otherwise.
func DefaultVariants(s *Scenario, fixed predictor.Duration) []Variant {
	mode := s.Power.Mode
	if mode == string(power.AlwaysOn) {
		mode = string(DefaultMode)
	}
	base := s.Predictor
	fx := base
	fx.Kind, fx.PDT = predictor.KindFixed, &fixed
	pb, pbc := base, base
	pb.Kind, pbc.Kind = predictor.KindPerfBound, predictor.KindPerfBoundCorrect
	ng := base
	ng.Kind = predictor.KindNextGap
	off, auto := controller.LedgerOff, controller.LedgerAuto
	// The papers' rows: unguarded, with the papers' reading of the bin
	// search and their self-clearing histogram unless the scenario chose.
	ppb, ppbc := pb, pbc
	if base.Histogram.Search == "" {
		ppb.Histogram.Search, ppbc.Histogram.Search = predictor.SearchPopulated, predictor.SearchPopulated
	}
	if base.Histogram.Windows == 0 {
		ppb.Histogram.Windows, ppbc.Histogram.Windows = 1, 1
	}
	return []Variant{
		{Name: "always-on", Mode: string(power.AlwaysOn), Predictor: base},
		{Name: "fixed " + fixed.String(), Mode: mode, Predictor: fx},
		{Name: "perfbound (paper)", Mode: mode, Predictor: ppb, Ledger: off},
		{Name: "perfbound+ledger", Mode: mode, Predictor: pb, Ledger: auto},
		{Name: "perfboundcorrect (paper)", Mode: mode, Predictor: ppbc, Ledger: off},
		{Name: "perfboundcorrect+ledger", Mode: mode, Predictor: pbc, Ledger: auto},
		{Name: "perfboundcorrect e2e", Mode: mode, Predictor: ppbc, Ledger: off, EndToEnd: true},
		{Name: "nextgap+ledger", Mode: mode, Predictor: ng, Ledger: auto},
	}
}

// Compare runs the variants (the first is the baseline) on the same
// scenario and seed.
func Compare(ctx context.Context, s *Scenario, vs []Variant, each func(name string)) ([]CompareRow, error) {
	var rows []CompareRow
	var base Report
	for i, v := range vs {
		if each != nil {
			each(v.Name)
		}
		sc := *s
		if v.Mode != "" {
			sc.Power.Mode = v.Mode
		}
		sc.Predictor = v.Predictor
		if v.Ledger != "" {
			sc.Controller.Ledger = v.Ledger
		}
		if v.EndToEnd {
			sc.Power.EndToEnd.Enabled = true
		}
		o, err := Run(ctx, &sc, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", v.Name, err)
		}
		r := o.Report
		if i == 0 {
			base = r
		}
		pct := func(x, b float64) float64 {
			if b == 0 {
				return 0
			}
			return 100 * x / b
		}
		rows = append(rows, CompareRow{
			Name: v.Name, ExecTimeS: r.ExecTimeS, ExecOverheadPct: pct(r.ExecTimeS-base.ExecTimeS, base.ExecTimeS),
			LatencyMeanS: r.LatencyS.Mean, LatencyOverheadPct: pct(r.LatencyS.Mean-base.LatencyS.Mean, base.LatencyS.Mean),
			LinkEnergyJ: r.EnergyJ.Links, LinkSavingPct: pct(base.EnergyJ.Links-r.EnergyJ.Links, base.EnergyJ.Links),
			NetworkSavingPct: pct(base.EnergyJ.Network-r.EnergyJ.Network, base.EnergyJ.Network),
			TotalSavingPct:   pct(base.EnergyJ.Total-r.EnergyJ.Total, base.EnergyJ.Total),
			Wakeups:          r.Wakeups, Misses: r.Misses,
		})
		if l := r.Ledger; l != nil {
			w := l.WorstRatio
			rows[len(rows)-1].LedgerWorst = &w
		}
		if g := r.EndToEnd; g != nil && g.BudgetS > 0 {
			x := g.StallS / g.BudgetS
			rows[len(rows)-1].StallBudget = &x
		}
	}
	return rows, nil
}

// WriteCompareTable prints a comparison.
func WriteCompareTable(w io.Writer, rows []CompareRow) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%-24s %12s %9s %12s %9s %12s %9s %9s %9s %9s %12s\n",
		"variant", "exec time", "exec +%", "latency", "lat +%", "link J", "link -%", "net -%", "total -%", "wakeups", "spent/budget")
	for _, r := range rows {
		// spent/budget: the worst port's ledger, or the end-to-end gate's
		// stalls (marked e2e); "-" for neither.
		guard := "-"
		switch {
		case r.StallBudget != nil:
			guard = fmt.Sprintf("%.3f e2e", *r.StallBudget)
		case r.LedgerWorst != nil:
			guard = fmt.Sprintf("%.3f", *r.LedgerWorst)
		}
		fmt.Fprintf(bw, "%-24s %12s %9.2f %12s %9.2f %12.5g %9.2f %9.2f %9.2f %9d %12s\n",
			r.Name, fmtS(r.ExecTimeS), r.ExecOverheadPct, fmtS(r.LatencyMeanS), r.LatencyOverheadPct,
			r.LinkEnergyJ, r.LinkSavingPct, r.NetworkSavingPct, r.TotalSavingPct, r.Wakeups, guard)
	}
	return bw.Flush()
}
