package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lpictl/lpictl/hwlink/hwlinktest"
)

func TestHILRunBadInput(t *testing.T) {
	good := "traffic: {duration: 1s, flows: [{kind: probe}]}\n"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-c", writeFile(t, "a.yaml", "bogus: 1\n"+good)}, `a.yaml: line 1: unknown key "bogus"`},
		{[]string{"-c", writeFile(t, "b.yaml", good), "--set", "traffic.duration=2m"}, "b.yaml: traffic.duration: must be ≤ 1m0s"},
		{[]string{"-c", writeFile(t, "c.yaml", "predictors: [nope]\n"+good)}, "c.yaml: predictors[0] nope: predictor.kind: unknown predictor"},
		{[]string{"-c", filepath.Join(t.TempDir(), "missing.yaml")}, "config: open"},
		{[]string{"--set", "port.scale=0.0001", "--set", "port.rate=fast"}, `configs/hil/quick.yaml: port.rate: invalid rate "fast"`},
		{[]string{"extra"}, "unknown command"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"hil", "run"}, tc.args...), &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), tc.want) || stdout.Len() != 0 || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want exit 2 and one line with %q", tc.args, code, stderr.String(), stdout.String(), tc.want)
		}
	}
}

// hilLeftovers lists what of a run is still there: its namespaces, the
// bpffs mounted in its work directory, the directory, agent processes.
func hilLeftovers(t *testing.T, pid int, workDir string, agents []int) []string {
	t.Helper()
	var left []string
	matches, _ := filepath.Glob(fmt.Sprintf("/run/netns/lpihil-%d-*", pid))
	left = append(left, matches...)
	if workDir == "" {
		dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), fmt.Sprintf("lpihil-%d-*", pid)))
		left = append(left, dirs...)
	} else if _, err := os.Stat(workDir); !errors.Is(err, os.ErrNotExist) {
		left = append(left, workDir)
	}
	if f, err := os.Open("/proc/self/mountinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if fs := strings.Fields(sc.Text()); len(fs) > 4 && strings.Contains(fs[4], fmt.Sprintf("lpihil-%d-", pid)) {
				left = append(left, "mount "+fs[4])
			}
		}
		f.Close()
	}
	for _, a := range agents {
		if cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", a)); err == nil && bytes.Contains(cmd, []byte("agent")) {
			left = append(left, fmt.Sprintf("agent %d", a))
		}
	}
	return left
}

// TestHILRunInterrupted sends SIGINT while the always-on run's traffic
// flows: the run stops with exit 1 and leaves nothing behind.
func TestHILRunInterrupted(t *testing.T) {
	hwlinktest.RequireBPF(t)
	bin := agentBinary(t)
	cfg := writeFile(t, "hil.yaml", "traffic: {duration: 20s, settle: 0s, flows: [{kind: probe, interval: 1ms}]}\nsim: {enabled: false}\n")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "hil", "run", "-c", cfg)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	deadline := time.Now().Add(20 * time.Second)
	for {
		if m, _ := filepath.Glob(fmt.Sprintf("/run/netns/lpihil-%d-b", pid)); len(m) == 1 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("no namespaces after 20 s: %s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(time.Second) // the traffic runs
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "context canceled") {
		t.Errorf("exit %v, stderr %q; want exit 1 after the interrupt", err, stderr.String())
	}
	if left := hilLeftovers(t, pid, "", nil); len(left) > 0 {
		t.Errorf("left behind after SIGINT: %v", left)
	}
}

// hilReport is what the end-to-end test reads of the JSON report.
type hilReport struct {
	Setup struct {
		Namespaces []string `json:"namespaces"`
		WorkDir    string   `json:"work_dir"`
		AgentPids  []int    `json:"agent_pids"`
		TornDown   bool     `json:"torn_down"`
	} `json:"setup"`
	Runs []struct {
		Name               string   `json:"name"`
		Predictor          string   `json:"predictor"`
		RTTOverheadMeanPct *float64 `json:"rtt_overhead_mean_pct"`
		BudgetWithin       *bool    `json:"budget_within"`
		SavingPct          *float64 `json:"saving_pct"`
		TimersChanged      int      `json:"timers_changed"`
		RTT                struct {
			Count int     `json:"count"`
			Mean  float64 `json:"mean_s"`
		} `json:"rtt"`
		Ports []struct {
			Port    string `json:"port"`
			Initial int64  `json:"initial_timer_ns"`
			Final   int64  `json:"final_timer_ns"`
		} `json:"ports"`
		TraceRows map[string]int `json:"trace_rows"`
	} `json:"runs"`
	SimToReal []struct {
		Run      string `json:"run"`
		SimError string `json:"sim_error"`
		Rows     []struct {
			Metric   string   `json:"metric"`
			Measured *float64 `json:"measured"`
			Predict  *float64 `json:"predict"`
			Sim      *float64 `json:"sim"`
		} `json:"rows"`
	} `json:"sim_to_real"`
}

const hilQuickTest = `# TestHILRunQuick: the smallest closed loop (about 10 s)
predictors: [perfboundcorrect]
predictor: {bound: 0.01, initial_pdt: 1ms}
traffic:
  duration: 3s
  settle: 300ms
  flows:
    - {kind: probe, interval: 3ms}
    - {kind: onoff, interval: 100us, on_time: 2ms, off_time: 30ms, size: 1000}
    - {kind: poisson, from: b, rate: 100, size: 200}
`

// TestHILRunQuick is issue 13's done-when: lpictl hil run on a small
// config, the agents in enforce mode change the emulated ports' timers,
// the report has always-on and perfboundcorrect with measured overhead and
// saving and the sim-to-real rows, and nothing is left afterwards.
func TestHILRunQuick(t *testing.T) {
	hwlinktest.RequireBPF(t)
	bin := agentBinary(t)
	if reason := hilAgentUnsupported(t, bin); reason != "" {
		t.Skip(reason)
	}
	cfg := writeFile(t, "hil.yaml", hilQuickTest)
	out := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "hil", "run", "-c", cfg, "--json", "-o", out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	t.Logf("hil run: %v in %v", err, time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("hil run: %v\nstderr: %s", err, stderr.String())
	}
	var rep hilReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("JSON: %v\n%s", err, stdout.String())
	}
	if txt, err := os.ReadFile(filepath.Join(out, "report.txt")); err == nil {
		t.Logf("report.txt:\n%s", txt)
	} else {
		t.Error(err)
	}
	if len(rep.Runs) != 2 || rep.Runs[0].Name != "always-on" || rep.Runs[1].Name != "perfboundcorrect" {
		t.Fatalf("runs %+v", rep.Runs)
	}
	base, pbc := rep.Runs[0], rep.Runs[1]
	if base.RTT.Count < 100 || pbc.RTT.Count < 100 {
		t.Errorf("probes: %d, %d", base.RTT.Count, pbc.RTT.Count)
	}
	if pbc.RTTOverheadMeanPct == nil || pbc.SavingPct == nil || pbc.BudgetWithin == nil || base.SavingPct == nil || *base.SavingPct != 0 {
		t.Errorf("measured overhead and saving: %+v", pbc)
	}
	if pbc.SavingPct != nil && !(*pbc.SavingPct > 0) {
		t.Errorf("perfboundcorrect saved nothing: %v%%", *pbc.SavingPct)
	}
	changed := 0
	for _, p := range pbc.Ports {
		if p.Final != p.Initial {
			changed++
		}
	}
	if changed == 0 || pbc.TimersChanged != changed {
		t.Errorf("the agents changed no timer: %+v (timers_changed %d)", pbc.Ports, pbc.TimersChanged)
	}
	if base.TimersChanged != 0 {
		t.Errorf("always-on timers changed: %+v", base.Ports)
	}
	// The always-on run first (its traffic simulated always on), then the
	// predictor's.
	if len(rep.SimToReal) != 2 || rep.SimToReal[0].Run != "always-on" || rep.SimToReal[1].Run != "perfboundcorrect" ||
		rep.SimToReal[0].SimError != "" || rep.SimToReal[1].SimError != "" {
		t.Fatalf("sim-to-real: %+v", rep.SimToReal)
	}
	for _, r := range rep.SimToReal[0].Rows {
		if r.Metric == "misses" && (r.Measured == nil || *r.Measured != 0 || r.Sim == nil || *r.Sim != 0) {
			t.Errorf("always-on misses: %+v", r)
		}
		if r.Metric == "idle periods" && (r.Measured == nil || r.Sim == nil || *r.Sim < 0.9**r.Measured || *r.Sim > 1.1**r.Measured) {
			t.Errorf("always-on idle periods: %+v", r)
		}
	}
	rows := map[string]bool{}
	for _, r := range rep.SimToReal[1].Rows {
		rows[r.Metric] = true
		switch r.Metric {
		case "misses", "idle periods":
			if r.Measured == nil || r.Predict == nil || r.Sim == nil {
				t.Errorf("row %s: %+v", r.Metric, r)
			}
		case "link energy saving", "latency added, mean":
			if r.Measured == nil || r.Sim == nil {
				t.Errorf("row %s: %+v", r.Metric, r)
			}
		}
	}
	for _, m := range []string{"idle periods", "misses", "link energy saving", "latency added, mean", "decisions agreeing with the agent's"} {
		if !rows[m] {
			t.Errorf("no sim-to-real row %q", m)
		}
	}
	// Teardown: nothing left, as the report says.
	if !rep.Setup.TornDown {
		t.Error("report: torn_down false")
	}
	if left := hilLeftovers(t, cmd.Process.Pid, rep.Setup.WorkDir, rep.Setup.AgentPids); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	// -o DIR: the report, the agents' traces (which lpictl predict replays
	// with the written configuration) and the traffic.
	for _, f := range []string{"report.json", "report.txt", "traffic/always-on.vef", "traffic/perfboundcorrect.vef",
		"agents/perfboundcorrect/a/agent.log", "agents/perfboundcorrect/s/s1.port_trace.csv"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	dir := filepath.Join(out, "agents", "perfboundcorrect", "a")
	code, pout, perr := lpictl(t, "predict", "-c", filepath.Join(dir, "a0.predict.yaml"), "--json", filepath.Join(dir, "a0.port_trace.csv"))
	if code != 0 {
		t.Errorf("lpictl predict on the written trace: exit %d: %s", code, perr)
	} else {
		var sum struct {
			IdlePeriods uint64 `json:"idle_periods"`
		}
		if err := json.Unmarshal([]byte(pout), &sum); err != nil || sum.IdlePeriods != uint64(pbc.TraceRows["a0"]) {
			t.Errorf("predict: %v, %d idle periods, trace rows %d", err, sum.IdlePeriods, pbc.TraceRows["a0"])
		}
	}
}

// hilAgentUnsupported says why the agent binary cannot drive emulated
// ports ("" if it can): it checks the agent configuration hil run writes.
func hilAgentUnsupported(t *testing.T, bin string) string {
	t.Helper()
	conf := writeFile(t, "agent.yaml", fmt.Sprintf(`mode: enforce
state_dir: %s
trace_dir: %s
metrics: {listen: "off"}
ports: {names: [a0]}
hw: {netns: lpihil-probe, eee_backend: emulated, observe: emulated, bpffs: /sys/fs/bpf}
`, t.TempDir(), t.TempDir()))
	out, err := exec.Command(bin, "agent", "-c", conf, "--check").CombinedOutput()
	if err != nil && (bytes.Contains(out, []byte("unknown key")) || bytes.Contains(out, []byte("unknown EEE backend")) ||
		bytes.Contains(out, []byte("unknown method"))) {
		return "the agent does not drive emulated ports yet (hw.eee_backend/observe: emulated, hw.bpffs, trace_dir): " + strings.TrimSpace(string(out))
	}
	return ""
}
