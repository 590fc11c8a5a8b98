package hil

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/google/renameio/v2"

	"github.com/lpictl/lpictl/hwlink/emulate"
)

// Report is what `lpictl hil run` prints (text or --json: every key always
// present) and writes with -o DIR.
type Report struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	Seed   uint64 `json:"seed"`
	// The emulated port.
	Preset       string  `json:"preset"`
	Mode         string  `json:"mode"`
	Scale        float64 `json:"scale"`
	WakeTimeNs   int64   `json:"wake_time_ns"`  // scaled t_w
	SleepTimeNs  int64   `json:"sleep_time_ns"` // scaled t_s
	Delay        string  `json:"delay"`
	RateBps      uint64  `json:"rate_bps"`
	Driver       string  `json:"driver"`
	InitialPDTNs int64   `json:"initial_pdt_ns"`
	// The agents and the traffic.
	AgentIntervalNs int64   `json:"agent_interval_ns"`
	TrafficS        float64 `json:"traffic_s"`
	Kernel          string  `json:"kernel"`
	FQ              bool    `json:"fq"`
	Setup           Setup   `json:"setup"`
	// Runs: always-on first, then one per predictor.
	Runs      []RunReport `json:"runs"`
	SimToReal []SimToReal `json:"sim_to_real"`
	Notes     []string    `json:"notes"`
	StartedAt time.Time   `json:"started_at"`
	WallS     float64     `json:"wall_s"`

	files map[string][]byte // -o DIR: name → content
}

// Setup is what a run created (and removed).
type Setup struct {
	Namespaces []string `json:"namespaces"`
	WorkDir    string   `json:"work_dir"`
	BPFFS      string   `json:"bpffs"`
	AgentPids  []int    `json:"agent_pids"`
	// StaleRemoved lists what earlier, killed runs had left and this run
	// removed.
	StaleRemoved []string `json:"stale_removed"`
	TornDown     bool     `json:"torn_down"`
}

// RunReport is one run of the traffic: always-on or under a predictor.
type RunReport struct {
	Name      string  `json:"name"`
	Mode      string  `json:"mode"`
	Predictor string  `json:"predictor"` // none for always-on
	Bound     float64 `json:"bound"`     // the predictor's (0: none)
	RTT       Dist    `json:"rtt"`       // probe round trips
	Latency   Dist    `json:"latency"`   // one way, every datagram
	// Overheads against the always-on run (0 for it): what the traffic
	// saw end to end. The bound is not a bound on them: it bounds each
	// port's delay (Ports[].Budget); a probe's round trip crosses four
	// ports, and its overhead is relative to the always-on RTT.
	RTTOverheadMeanPct     float64 `json:"rtt_overhead_mean_pct"`
	RTTOverheadP99Pct      float64 `json:"rtt_overhead_p99_pct"`
	LatencyOverheadMeanPct float64 `json:"latency_overhead_mean_pct"`
	// BudgetWithin: every port kept its budget check (Ports[].Budget:
	// the guarantee with a ledger, the bound without); null when no port
	// has a check (always-on).
	BudgetWithin  *bool   `json:"budget_within"`
	ThroughputBps float64 `json:"throughput_bps"` // every flow's bytes received over the traffic phase
	// The four emulated ports together.
	EnergyJ         float64 `json:"energy_j"`
	AlwaysOnEnergyJ float64 `json:"always_on_energy_j"` // the same ports over the same time, always on
	SavingPct       float64 `json:"saving_pct"`
	IdlePeriods     uint64  `json:"idle_periods"`
	Hits            uint64  `json:"hits"`
	Misses          uint64  `json:"misses"`
	Wakeups         uint64  `json:"wakeups"`
	DelayedPackets  uint64  `json:"delayed_packets"`
	DelayTotalS     float64 `json:"delay_total_s"`
	LowPowerShare   float64 `json:"low_power_share"` // time in Fast Wake or Deep Sleep
	// WakeShare is the time spent waking up (going up): what PerfBound's
	// bound budgets (wake-ups × t_w ≤ bound × time, hop factor 1).
	WakeShare float64 `json:"wake_share"`
	// TimersChanged counts the ports whose tx LPI timer at the end of the
	// traffic differs from the one they started with.
	TimersChanged int            `json:"timers_changed"`
	Ports         []PortReport   `json:"ports"`
	Traffic       *TrafficResult `json:"traffic"`
	AgentPids     []int          `json:"agent_pids"`
	TraceRows     map[string]int `json:"trace_rows"` // agent trace rows by port
}

// PortReport is one emulated port of a run.
type PortReport struct {
	Port           string `json:"port"`
	NetNS          string `json:"netns"`
	InitialTimerNs int64  `json:"initial_timer_ns"`
	FinalTimerNs   int64  `json:"final_timer_ns"`
	// PDTChanges counts the changes of t_PDT along the agent's trace (0
	// without agent).
	PDTChanges int            `json:"pdt_changes"`
	Status     emulate.Status `json:"emulator"`
	// Budget is the port's delay budget check (null for always-on).
	Budget *BudgetCheck `json:"budget"`
}

// sumPorts fills a run's totals from its ports' emulator status.
func (r *RunReport) sumPorts() {
	var elapsed, low, up time.Duration
	for _, p := range r.Ports {
		s := p.Status
		r.EnergyJ += s.EnergyJ
		r.AlwaysOnEnergyJ += s.AlwaysOnJ
		r.IdlePeriods += s.IdlePeriods
		r.Hits += s.Hits
		r.Misses += s.Misses
		r.Wakeups += s.Wakeups
		r.DelayedPackets += s.Delayed
		r.DelayTotalS += s.DelayTotal.Seconds()
		elapsed += s.Elapsed
		low += s.Times.FastWake + s.Times.DeepSleep
		up += s.Times.GoingUp
		if p.FinalTimerNs != p.InitialTimerNs {
			r.TimersChanged++
		}
	}
	if r.AlwaysOnEnergyJ > 0 {
		r.SavingPct = 100 * (1 - r.EnergyJ/r.AlwaysOnEnergyJ)
	}
	r.BudgetWithin = nil
	for _, p := range r.Ports {
		if p.Budget == nil {
			continue
		}
		ok := p.Budget.Within() && (r.BudgetWithin == nil || *r.BudgetWithin)
		r.BudgetWithin = &ok
	}
	if elapsed > 0 {
		r.LowPowerShare = float64(low) / float64(elapsed)
		r.WakeShare = float64(up) / float64(elapsed)
	}
}

// against fills the overheads against the always-on run.
func (r *RunReport) against(base *RunReport) {
	r.RTTOverheadMeanPct = overheadPct(r.RTT.Mean, base.RTT.Mean)
	r.RTTOverheadP99Pct = overheadPct(r.RTT.P99, base.RTT.P99)
	r.LatencyOverheadMeanPct = overheadPct(r.Latency.Mean, base.Latency.Mean)
}

// WriteJSON writes the report as one indented object.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func fmtDur(s float64) string {
	d := time.Duration(s * 1e9)
	switch {
	case d == 0:
		return "0"
	case d < time.Millisecond:
		return fmt.Sprintf("%.1fµs", s*1e6)
	case d < time.Second:
		return fmt.Sprintf("%.3gms", s*1e3)
	}
	return fmt.Sprintf("%.3gs", s)
}

// fmtDelay writes a delay in seconds to the µs, so that spent, budget and
// guarantee can be told apart.
func fmtDelay(s float64) string {
	if s < 1e-3 {
		return fmt.Sprintf("%.0fµs", s*1e6)
	}
	return fmt.Sprintf("%.3fms", s*1e3)
}

func fmtRate(bps float64) string {
	switch {
	case bps >= 1e9:
		return fmt.Sprintf("%.3g Gb/s", bps/1e9)
	case bps >= 1e6:
		return fmt.Sprintf("%.3g Mb/s", bps/1e6)
	case bps >= 1e3:
		return fmt.Sprintf("%.3g kb/s", bps/1e3)
	}
	return fmt.Sprintf("%.0f b/s", bps)
}

func fmtPct(p float64) string { return fmt.Sprintf("%+.1f%%", p) }

// fmtShare writes a fraction as a percentage, without a "-0.0".
func fmtShare(f float64) string {
	if math.Abs(f) < 0.0005 {
		f = 0
	}
	return fmt.Sprintf("%.1f%%", 100*f)
}

func fmtOpt(v *float64, unit string) string {
	if v == nil {
		return "—"
	}
	switch unit {
	case "":
		return fmt.Sprintf("%.0f", *v)
	case "%":
		return fmt.Sprintf("%.1f", *v)
	}
	return fmt.Sprintf("%.1f", *v)
}

func fmtDiff(v *float64, unit string) string {
	if v == nil {
		return "—"
	}
	if unit == "" {
		return fmt.Sprintf("%+.0f", *v)
	}
	return fmt.Sprintf("%+.1f", *v)
}

// padder left-aligns a column of a right-aligned table: every cell padded
// to the widest.
func padder(cells []string) func(string) string {
	n := 0
	for _, c := range cells {
		n = max(n, utf8.RuneCountInString(c))
	}
	return func(c string) string { return c + strings.Repeat(" ", n-utf8.RuneCountInString(c)) }
}

// WriteText writes the human report.
func (r *Report) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	names := []string{"run"}
	for _, run := range r.Runs {
		names = append(names, run.Name)
	}
	pr := padder(names)
	fmt.Fprintf(bw, "lpictl hil run: %s (%s, seed %d)\n", r.Name, r.Source, r.Seed)
	rate := "none"
	if r.RateBps > 0 {
		rate = fmtRate(float64(r.RateBps))
	}
	fmt.Fprintf(bw, "line: host a – switch s – host b (veth, namespaces %s); 4 emulated egress ports a0 s1 b0 s0\n",
		strings.Join(r.Setup.Namespaces, ", "))
	fmt.Fprintf(bw, "port: %s %s ×%g (t_w %v, t_s %v), delay %s, rate %s, driver %s, initial tx LPI timer %v\n",
		r.Preset, r.Mode, r.Scale, time.Duration(r.WakeTimeNs), time.Duration(r.SleepTimeNs), r.Delay, rate, r.Driver,
		time.Duration(r.InitialPDTNs))
	fmt.Fprintf(bw, "agents: lpictl agent --backend hw --mode enforce per namespace, interval %v; traffic %gs per run; kernel %s\n\n",
		time.Duration(r.AgentIntervalNs), r.TrafficS, r.Kernel)

	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, pr("run")+"\tRTT mean\tp50\tp99\tRTT overhead mean\tp99\tbound\tports' budget\t1-way mean\tthroughput\tsaving\thits\tmisses\twake-ups\twaking\tlow power\ttimers changed\t")
	for _, run := range r.Runs {
		bound, budget := "—", "—"
		if run.Bound > 0 {
			bound = fmt.Sprintf("%g%%", 100*run.Bound)
		}
		if run.BudgetWithin != nil {
			n, within := 0, 0
			for _, p := range run.Ports {
				if p.Budget != nil {
					n++
					if p.Budget.Within() {
						within++
					}
				}
			}
			budget = fmt.Sprintf("%d/%d within", within, n)
		}
		plus, plus99 := fmtPct(run.RTTOverheadMeanPct), fmtPct(run.RTTOverheadP99Pct)
		if run.Predictor == "none" {
			plus, plus99 = "base", "base"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%d/%d\t\n",
			pr(run.Name), fmtDur(run.RTT.Mean), fmtDur(run.RTT.P50), fmtDur(run.RTT.P99), plus, plus99, bound, budget,
			fmtDur(run.Latency.Mean), fmtRate(run.ThroughputBps), fmtShare(run.SavingPct/100), run.Hits, run.Misses, run.Wakeups,
			fmtShare(run.WakeShare), fmtShare(run.LowPowerShare), run.TimersChanged, len(run.Ports))
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintln(bw, "\nper port (tx LPI timer at start → at the end of the traffic, as the agents left it):")
	tw = tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, pr("run")+"\tport\ttimer\tpackets\tidle\thits\tmisses\twake-ups\tlow power\tsaving\ttrace rows\tt_PDT changes\t")
	for _, run := range r.Runs {
		for _, p := range run.Ports {
			s := p.Status
			rows, changes := "—", "—"
			if n, ok := run.TraceRows[p.Port]; ok {
				rows, changes = fmt.Sprint(n), fmt.Sprint(p.PDTChanges)
			}
			fmt.Fprintf(tw, "%s\t%s\t%v → %v\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t\n", pr(run.Name), p.Port,
				time.Duration(p.InitialTimerNs), time.Duration(p.FinalTimerNs), s.Packets, s.IdlePeriods, s.Hits, s.Misses,
				s.Wakeups, fmtShare(s.Fractions.FastWake+s.Fractions.DeepSleep), fmtShare(s.Saving), rows, changes)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	if err := r.writeBudget(bw, pr); err != nil {
		return err
	}

	fmt.Fprintln(bw, "\ntraffic (per run and flow; sent: datagrams, probe requests or TCP writes; latency: one way, the kernel's receipt − the send):")
	tw = tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, pr("run")+"\tflow\tsent\treceived\tlost\tbytes rx\tthroughput\tlatency mean\tp99\tnote\t")
	for _, run := range r.Runs {
		if run.Traffic == nil {
			continue
		}
		for _, f := range run.Traffic.Flows {
			recv, lost, lat, lat99 := fmt.Sprint(f.Received), fmt.Sprint(f.Lost), fmtDur(f.Latency.Mean), fmtDur(f.Latency.P99)
			if f.Kind == KindTCP || f.Kind == KindIperf3 {
				recv, lost, lat, lat99 = "—", "—", "—", "—"
			}
			fmt.Fprintf(tw, "%s\t%d %s %s→%s\t%d\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t\n", pr(run.Name), f.Index, f.Kind, f.From, f.To,
				f.Sent, recv, lost, f.BytesReceived, fmtRate(f.ThroughputBps), lat, lat99, f.Skipped)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	for _, c := range r.SimToReal {
		if c.Run == AlwaysOn {
			fmt.Fprintf(bw, "\nsim-to-real, %s: measured (emulated ports, never asleep) against sim (lpictl sim run on the same\n", c.Run)
			fmt.Fprintf(bw, "traffic, fbfly-2: host–switch–host, always on); no agents ran, so no predict; Δ = simulated − measured\n")
		} else {
			fmt.Fprintf(bw, "\nsim-to-real, %s: measured (emulated ports, probes and datagrams) against predict (the agents' port\n", c.Run)
			fmt.Fprintf(bw, "traces replayed through lpictl predict's replay) and sim (lpictl sim run on the same traffic, fbfly-2:\n")
			fmt.Fprintf(bw, "host–switch–host); Δ = predicted − measured\n")
		}
		if c.SimError != "" {
			fmt.Fprintf(bw, "sim: %s\n", c.SimError)
		}
		metrics := []string{"metric"}
		for _, row := range c.Rows {
			metrics = append(metrics, row.Metric)
		}
		pm := padder(metrics)
		tw = tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, pm("metric")+"\tunit\tmeasured\tpredict\tΔ predict\tsim\tΔ sim\t")
		for _, row := range c.Rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", pm(row.Metric), row.Unit, fmtOpt(row.Measured, row.Unit),
				fmtOpt(row.Predict, row.Unit), fmtDiff(row.PredictDif, row.Unit), fmtOpt(row.Sim, row.Unit), fmtDiff(row.SimDiff, row.Unit))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if err := writePortCompare(bw, &c); err != nil {
			return err
		}
	}
	if len(r.Notes) > 0 {
		fmt.Fprintln(bw, "\nnotes:")
		for _, n := range r.Notes {
			fmt.Fprintf(bw, "- %s\n", n)
		}
	}
	fmt.Fprintf(bw, "\nwall time %.1fs; everything created was removed: %v\n", r.WallS, r.Setup.TornDown)
	return bw.Flush()
}

// writeBudget writes each port's delay budget check.
func (r *Report) writeBudget(bw *bufio.Writer, pr func(string) string) error {
	has := false
	for _, run := range r.Runs {
		for _, p := range run.Ports {
			has = has || p.Budget != nil
		}
	}
	if !has {
		return nil
	}
	fmt.Fprintln(bw, "\nports' delay budget (what the bound bounds: each port's wake-up delay S, summed over the packets that ended")
	fmt.Fprintln(bw, "its idle periods, since its ledger started, against l·T and the guarantee l·T + c of a ledger applied per")
	fmt.Fprintln(bw, "idle period; l = bound × hop factor, c = t_s + t_w of the mode; without a ledger S is compared with bound × T):")
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, pr("run")+"\tport\tledger\tl\tT\tspent S\tbudget l·T\treserve c\tguarantee\tS/l·T\theld\tverdict\t")
	for _, run := range r.Runs {
		for _, p := range run.Ports {
			b := p.Budget
			if b == nil {
				continue
			}
			ratio, reserve := "—", "—"
			if b.BudgetS > 0 {
				ratio = fmt.Sprintf("%.2f", b.SpentS/b.BudgetS)
			}
			if b.Enforcement == "port" {
				reserve = fmtDelay(b.ReserveS)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%.4g\t%.3gs\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t\n", pr(run.Name), p.Port, b.Enforcement,
				b.Rate, b.SpanS, fmtDelay(b.SpentS), fmtDelay(b.BudgetS), reserve, fmtDelay(b.GuaranteeS), ratio, b.Held, b.Verdict)
		}
	}
	return tw.Flush()
}

// addFile keeps a file for WriteDir.
func (r *Report) addFile(name string, data []byte) {
	if r.files == nil {
		r.files = map[string][]byte{}
	}
	r.files[name] = data
}

// Files lists the names WriteDir writes besides report.json and
// report.txt.
func (r *Report) Files() []string {
	var out []string
	for n := range r.files {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// WriteDir writes report.json, report.txt, every agent's port traces and
// log, the predict configurations for the traces and the VEF trace of
// each run's traffic into dir, each file atomically (a temporary file
// renamed into place).
func (r *Report) WriteDir(dir string) error {
	var js, txt strings.Builder
	if err := r.WriteJSON(&js); err != nil {
		return err
	}
	if err := r.WriteText(&txt); err != nil {
		return err
	}
	files := map[string][]byte{"report.json": []byte(js.String()), "report.txt": []byte(txt.String())}
	for n, d := range r.files {
		files[n] = d
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		path := filepath.Join(dir, n)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := renameio.WriteFile(path, files[n], 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	return nil
}
