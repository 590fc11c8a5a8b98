package hil

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lpictl/lpictl/hwlink/emulate"
)

func status(idle, hits, misses uint64, wake, ds time.Duration, energy, ao float64, timer time.Duration) emulate.Status {
	s := emulate.Status{Device: "x", IdlePeriods: idle, Hits: hits, Misses: misses, Wakeups: misses, Packets: idle,
		Elapsed: wake + ds, EnergyJ: energy, AlwaysOnJ: ao, TxLPITimer: timer}
	s.Times.Wake, s.Times.DeepSleep = wake, ds
	return s
}

func TestDiffStatus(t *testing.T) {
	a := status(10, 8, 2, time.Second, time.Second, 0.55, 1, time.Millisecond)
	a.Now = 5 * time.Second
	b := status(30, 20, 10, 2*time.Second, 3*time.Second, 0.5*2+0.05*3, 2.5, 200*time.Microsecond)
	d := diffStatus(a, b)
	if d.IdlePeriods != 20 || d.Hits != 12 || d.Misses != 8 || d.Wakeups != 8 || d.Elapsed != 3*time.Second ||
		d.Times.Wake != time.Second || d.Times.DeepSleep != 2*time.Second || d.AttachedAt != 5*time.Second || d.TxLPITimer != 200*time.Microsecond {
		t.Errorf("diff %+v", d)
	}
	if e := d.EnergyJ; e < 0.599 || e > 0.601 || d.AlwaysOnJ != 1.5 {
		t.Errorf("energy %v of %v", d.EnergyJ, d.AlwaysOnJ)
	}
	if s := d.Saving; s < 0.599 || s > 0.601 || d.Fractions.DeepSleep < 0.666 || d.Fractions.DeepSleep > 0.667 {
		t.Errorf("saving %v, fractions %+v", d.Saving, d.Fractions)
	}
}

func handReport() *Report {
	c, _ := Parse([]byte("traffic: {flows: [{kind: probe}]}\n"), "hand.yaml", nil)
	rep := newReport(c)
	rep.Setup.Namespaces = []string{"lpihil-1-a", "lpihil-1-s", "lpihil-1-b"}
	base := RunReport{Name: AlwaysOn, Mode: "always-on", Predictor: "none", RTT: Dist{Count: 100, Mean: 60e-6, P50: 55e-6, P99: 120e-6},
		Latency: Dist{Count: 300, Mean: 30e-6, P99: 80e-6}, TraceRows: map[string]int{}, AgentPids: []int{}, Traffic: &TrafficResult{Flows: []FlowResult{}}}
	run := base
	run.Name, run.Mode, run.Predictor, run.Bound = "perfboundcorrect", "deep-sleep", "perfboundcorrect", 0.05
	run.RTT = Dist{Count: 100, Mean: 90e-6, P50: 60e-6, P99: 500e-6}
	run.TraceRows = map[string]int{"a0": 50}
	for i, p := range LinePorts {
		// The ports' ledgers after 2 s at l = 5 %: a budget of 100 ms and a
		// reserve of 650 µs; port 1 spent into the reserve.
		end := status(100, 90, 10, time.Second, time.Second, 0.55, 1, 0)
		end.Now = 12 * time.Second
		end.Ledger = emulate.LedgerStatus{Ledger: emulate.Ledger{On: true, Rate: 0.05,
			Reserve: 650 * time.Microsecond, Start: 10 * time.Second}, Budget: 100 * time.Millisecond,
			Spent: time.Duration(90+i%2*10) * time.Millisecond, Held: 7}
		if i == 1 {
			end.Ledger.Spent += 300 * time.Microsecond
		}
		run.Ports = append(run.Ports, PortReport{Port: p.Dev, NetNS: "lpihil-1-" + p.Host, InitialTimerNs: 1e6, FinalTimerNs: int64(100+i) * 1000,
			Status: end, Budget: budgetCheck(end, 0, run.Bound)})
		base.Ports = append(base.Ports, PortReport{Port: p.Dev, InitialTimerNs: 1e6, FinalTimerNs: 1e6, Status: status(100, 100, 0, 2*time.Second, 0, 1, 1, 0)})
	}
	run.sumPorts()
	base.sumPorts()
	run.against(&base)
	rep.Runs = []RunReport{base, run}
	rep.SimToReal = []SimToReal{{Run: "perfboundcorrect", Replay: []PortReplay{}, Rows: compareRows(&run, &base, nil, nil, nil), SimError: "disabled"}}
	rep.addFile("traffic/perfboundcorrect.vef", []byte("VEF 2 0 1 0 0 TRUE\nC0 0 1\n"))
	return rep
}

func TestReportTotalsAndText(t *testing.T) {
	rep := handReport()
	run := rep.Runs[1]
	if run.TimersChanged != 4 || rep.Runs[0].TimersChanged != 0 || run.Hits != 360 || run.Misses != 40 {
		t.Errorf("totals %+v", run)
	}
	if run.SavingPct < 44.99 || run.SavingPct > 45.01 || run.LowPowerShare != 0.5 {
		t.Errorf("saving %v, low power %v", run.SavingPct, run.LowPowerShare)
	}
	// The RTT overhead (+50 %) is far above the 5 % bound: it is no
	// breach, the bound bounds each port's delay, and every port kept it.
	if run.RTTOverheadMeanPct < 49.99 || run.RTTOverheadMeanPct > 50.01 || run.BudgetWithin == nil || !*run.BudgetWithin {
		t.Errorf("overhead %v, ports within budget %v", run.RTTOverheadMeanPct, run.BudgetWithin)
	}
	verdicts := map[string]int{}
	for _, p := range run.Ports {
		verdicts[p.Budget.Verdict]++
	}
	if verdicts[VerdictWithinBudget] != 3 || verdicts[VerdictWithinGuarantee] != 1 {
		t.Errorf("verdicts %v", verdicts)
	}
	if rep.Runs[0].BudgetWithin != nil || rep.Runs[0].Ports[0].Budget != nil {
		t.Error("always-on run has a budget check")
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, s := range []string{"always-on", "perfboundcorrect", "RTT overhead mean", "+50.0%", "4/4 within", "1ms → 100µs",
		"ports' delay budget", "within guarantee", "100.300ms", "650µs", "sim-to-real, perfboundcorrect", "link energy saving", "45.0%"} {
		if !strings.Contains(out, s) {
			t.Errorf("text lacks %q:\n%s", s, out)
		}
	}
	if strings.Contains(out, "OVER") {
		t.Errorf("text flags an overrun:\n%s", out)
	}
	t.Logf("\n%s", out)
}

// every key of the JSON report is always present: the always-on run's
// budget_within and a missing simulator run are null, not left out.
func TestReportJSONKeys(t *testing.T) {
	var b strings.Builder
	if err := handReport().WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(b.String()), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"name", "source", "seed", "preset", "mode", "scale", "wake_time_ns", "sleep_time_ns", "delay", "rate_bps",
		"driver", "initial_pdt_ns", "agent_interval_ns", "traffic_s", "kernel", "fq", "setup", "runs", "sim_to_real", "notes", "started_at", "wall_s"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("no key %q", k)
		}
	}
	runs := doc["runs"].([]any)
	base, run := runs[0].(map[string]any), runs[1].(map[string]any)
	for _, k := range []string{"name", "rtt", "latency", "rtt_overhead_mean_pct", "rtt_overhead_p99_pct", "budget_within", "throughput_bps",
		"energy_j", "always_on_energy_j", "saving_pct", "hits", "misses", "wakeups", "timers_changed", "ports", "traffic", "agent_pids", "trace_rows"} {
		if _, ok := run[k]; !ok {
			t.Errorf("run: no key %q", k)
		}
		if _, ok := base[k]; !ok {
			t.Errorf("always-on run: no key %q", k)
		}
	}
	if base["budget_within"] != nil || run["budget_within"] != true {
		t.Errorf("budget_within %v %v", base["budget_within"], run["budget_within"])
	}
	c := doc["sim_to_real"].([]any)[0].(map[string]any)
	for _, k := range []string{"run", "replay", "sim_always_on", "sim", "sim_error", "rows"} {
		if _, ok := c[k]; !ok {
			t.Errorf("sim_to_real: no key %q", k)
		}
	}
	row := c["rows"].([]any)[0].(map[string]any)
	for _, k := range []string{"metric", "unit", "measured", "predict", "sim", "predict_diff", "sim_diff"} {
		if _, ok := row[k]; !ok {
			t.Errorf("row: no key %q", k)
		}
	}
	port := run["ports"].([]any)[0].(map[string]any)
	for _, k := range []string{"port", "netns", "initial_timer_ns", "final_timer_ns", "pdt_changes", "emulator", "budget"} {
		if _, ok := port[k]; !ok {
			t.Errorf("port: no key %q", k)
		}
	}
}

func TestReportWriteDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	rep := handReport()
	if err := rep.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	var names []string
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			names = append(names, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"report.json", "report.txt", "traffic/perfboundcorrect.vef"}
	if !slicesEqual(names, want) {
		t.Errorf("files %v, want %v (no temporary files)", names, want)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "report.json"))
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil || doc["name"] != "hand" {
		t.Errorf("report.json: %v %v", err, doc["name"])
	}
}
