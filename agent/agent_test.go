package agent_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/lpictl/lpictl/agent"
	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/predictor"
)

func agentDur(d time.Duration) predictor.Duration { return predictor.Duration(d) }

type tWriter struct {
	mu sync.Mutex
	t  *testing.T
	on bool
}

func (w *tWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.on {
		w.t.Log(strings.TrimSpace(string(b)))
	}
	return len(b), nil
}

func testLogger(t *testing.T) *slog.Logger {
	w := &tWriter{t: t, on: true}
	t.Cleanup(func() { w.mu.Lock(); w.on = false; w.mu.Unlock() })
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// metric returns the value of a metric with the given labels (device
// first), or -1 if absent.
func metric(t *testing.T, reg prometheus.Gatherer, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			for k, v := range labels {
				found := false
				for _, lp := range m.GetLabel() {
					if lp.GetName() == k && lp.GetValue() == v {
						found = true
					}
				}
				if !found {
					continue next
				}
			}
			return value(m)
		}
	}
	return -1
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	}
	return -1
}

func dev(name string) map[string]string { return map[string]string{"device": name} }

// metricNames are the names of the metrics reg gathers.
func metricNames(t *testing.T, reg prometheus.Gatherer) map[string]bool {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, mf := range mfs {
		have[mf.GetName()] = true
	}
	return have
}

// TestBuildInfo: client_golang's go_build_info (the binary's module path,
// version and checksum) beside lpictl_agent_info, which keeps the labels
// the dashboard uses.
func TestBuildInfo(t *testing.T) {
	r := start(t, testConfig(t, agent.Observe, "eth0"), newFake("eth0"), nil)
	reg := r.a.Registry()
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		t.Skip("no build information in the test binary")
	}
	want := map[string]string{"path": bi.Main.Path, "version": bi.Main.Version, "checksum": bi.Main.Sum}
	if v := metric(t, reg, "go_build_info", want); v != 1 {
		t.Errorf("go_build_info%v = %v, want 1", want, v)
	}
	if n, err := testutil.GatherAndCount(reg, "go_build_info"); err != nil || n != 1 {
		t.Errorf("go_build_info: %d series (%v), want 1", n, err)
	}
	info := map[string]string{"version": "test", "mode": "observe", "backend": "fake"}
	if v := metric(t, reg, "lpictl_agent_info", info); v != 1 {
		t.Errorf("lpictl_agent_info%v = %v, want 1", info, v)
	}
}

func TestObserveChangesNothing(t *testing.T) {
	be := newFake("eth0", "eth1", "lo9")
	cfg := testConfig(t, agent.Observe, "eth*")
	r := start(t, cfg, be, nil)
	reg := r.a.Registry()
	waitFor(t, "idle periods", func() bool { return metric(t, reg, "lpictl_idle_periods_total", dev("eth0")) > 20 })
	if v := metric(t, reg, "lpictl_pdt_seconds", dev("eth0")); v != 20e-6 {
		t.Errorf("decided pdt %v, want 20µs", v)
	}
	if v := metric(t, reg, "lpictl_idle_gap_seconds", dev("eth1")); v <= 0 {
		t.Errorf("gap histogram count %v", v)
	}
	if v := metric(t, reg, "lpictl_agent_ports", nil); v != 2 {
		t.Errorf("ports %v, want 2 (lo9 not selected)", v)
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"eth0", "eth1", "lo9"} {
		if p := be.port(n); p.sets != 0 || p.eee.TxLPITimer != 250*time.Microsecond {
			t.Errorf("%s changed in observe mode: %+v", n, p)
		}
	}
	if len(be.restored) != 0 {
		t.Errorf("restored %v in observe mode", be.restored)
	}
}

func TestEnforceAppliesAndRestores(t *testing.T) {
	be := newFake("eth0", "eth1")
	be.add("igc0", false)
	cfg := testConfig(t, agent.Enforce, "eth0", "igc0")
	r := start(t, cfg, be, nil)
	reg := r.a.Registry()
	waitFor(t, "timer applied", func() bool { return be.port("eth0").eee.TxLPITimer == 20*time.Microsecond })
	if p := be.port("eth1"); p.sets != 0 {
		t.Errorf("unselected port changed: %+v", p)
	}
	waitFor(t, "not-supported metric", func() bool {
		return metric(t, reg, "lpictl_errors_total", map[string]string{"device": "igc0", "kind": "not_supported"}) == 1
	})
	if v := metric(t, reg, "lpictl_port_actuation_supported", dev("igc0")); v != 0 {
		t.Errorf("igc0 actuation %v", v)
	}
	if v := metric(t, reg, "lpictl_eee_changes_total", dev("eth0")); v != 1 {
		t.Errorf("changes %v, want 1", v)
	}
	state := readState(t, cfg.StateDir)
	if rec, ok := state["eth0"]; !ok || rec.Original.TxLPITimer != 250*time.Microsecond {
		t.Errorf("state file %+v", state)
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	if p := be.port("eth0"); p.eee.TxLPITimer != 250*time.Microsecond {
		t.Errorf("not restored: %v", p.eee.TxLPITimer)
	}
	if s := readState(t, cfg.StateDir); len(s) != 0 {
		t.Errorf("state file not cleared: %+v", s)
	}
}

func TestFlapBackoffQuarantine(t *testing.T) {
	be := newFake("eth0")
	be.ports["eth0"].flapOnSet = true
	cfg := testConfig(t, agent.Enforce, "eth0")
	// A predictor whose answer changes every round (initial 20µs, then the
	// gap-driven PerfBound answer), a tiny backoff and quarantine after 2.
	cfg.Predictor = predictor.Config{Kind: "perfbound", WakeTime: agentDur(time.Microsecond)}.WithDefaults()
	cfg.Safety.BackoffInitial = agentDur(20 * time.Millisecond)
	cfg.Safety.BackoffMax = agentDur(40 * time.Millisecond)
	cfg.Safety.QuarantineAfter = 2
	zero := 0.0
	cfg.Limits.Hysteresis = &zero
	be.gapLen = 50 * time.Microsecond
	r := start(t, cfg, be, nil)
	reg := r.a.Registry()
	waitFor(t, "first change and flap", func() bool { return metric(t, reg, "lpictl_link_flaps_total", dev("eth0")) >= 1 })
	// Make the predictor's answer move so that a second change follows.
	be.mu.Lock()
	be.gapLen = 2 * time.Millisecond
	be.mu.Unlock()
	waitFor(t, "quarantine", func() bool { return metric(t, reg, "lpictl_port_quarantined", dev("eth0")) == 1 })
	if p := be.port("eth0"); p.eee.TxLPITimer != 250*time.Microsecond {
		t.Errorf("quarantined port not restored: %v", p.eee.TxLPITimer)
	}
	sets := be.port("eth0").sets
	time.Sleep(100 * time.Millisecond)
	if p := be.port("eth0"); p.sets != sets {
		t.Errorf("quarantined port changed again (%d → %d sets)", sets, p.sets)
	}
}

func TestCrashRecoveryAtStart(t *testing.T) {
	dir := t.TempDir()
	st, err := agent.OpenState(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []agent.PortRecord{
		{Name: "eth0", MAC: "02:00:00:00:00:00", Original: agent.Settings{TxLPITimer: 100 * time.Microsecond, TxLPIEnabled: true}},
		{Name: "old1", MAC: "02:00:00:00:00:01", Original: agent.Settings{TxLPITimer: 300 * time.Microsecond, TxLPIEnabled: true}},
		{Name: "gone", MAC: "02:00:00:00:00:99", Original: agent.Settings{TxLPITimer: time.Millisecond}},
	} {
		if err := st.Record(r); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	be := newFake("eth0", "new1") // new1 has old1's MAC: renamed
	cfg := testConfig(t, agent.Observe)
	cfg.StateDir = dir
	r := start(t, cfg, be, nil)
	r.stop(t)
	if s := be.restored["eth0"]; s.TxLPITimer != 100*time.Microsecond {
		t.Errorf("eth0 restore %+v", s)
	}
	if s := be.restored["new1"]; s.TxLPITimer != 300*time.Microsecond {
		t.Errorf("renamed port restore %+v", be.restored)
	}
	if s := readState(t, dir); len(s) != 0 {
		t.Errorf("state left: %+v", s)
	}
}

func TestReloadAddsAndRemovesPorts(t *testing.T) {
	be := newFake("eth0", "eth1", "eth2")
	cfg := testConfig(t, agent.Enforce, "eth0", "eth1")
	var mu sync.Mutex
	next := cfg
	r := start(t, cfg, be, func() (agent.Config, error) { mu.Lock(); defer mu.Unlock(); return next, nil })
	reg := r.a.Registry()
	waitFor(t, "eth1 applied", func() bool { return be.port("eth1").eee.TxLPITimer == 20*time.Microsecond })
	waitFor(t, "observations", func() bool { return metric(t, reg, "lpictl_idle_periods_total", dev("eth0")) > 10 })
	before := metric(t, reg, "lpictl_idle_periods_total", dev("eth0"))

	mu.Lock()
	next = testConfig(t, agent.Enforce, "eth0", "eth2")
	next.StateDir = cfg.StateDir
	mu.Unlock()
	r.hup <- struct{}{}
	waitFor(t, "eth2 added", func() bool { return metric(t, reg, "lpictl_idle_periods_total", dev("eth2")) > 0 })
	waitFor(t, "eth1 removed", func() bool { return metric(t, reg, "lpictl_idle_periods_total", dev("eth1")) == -1 })
	if p := be.port("eth1"); p.eee.TxLPITimer != 250*time.Microsecond || p.open {
		t.Errorf("eth1 not restored and closed: %+v", p)
	}
	if after := metric(t, reg, "lpictl_idle_periods_total", dev("eth0")); after < before {
		t.Errorf("eth0 lost its state on reload: %v → %v", before, after)
	}
	if v := metric(t, reg, "lpictl_agent_reloads_total", map[string]string{"result": "success"}); v != 1 {
		t.Errorf("reloads %v", v)
	}
	// A predictor change restarts only the predictor of the matching port.
	mu.Lock()
	pdt := agentDur(40 * time.Microsecond)
	next.Ports.Overrides = []agent.PortOverride{{Match: []string{"eth2"}, Predictor: predictor.Config{PDT: &pdt}}}
	mu.Unlock()
	r.hup <- struct{}{}
	waitFor(t, "eth2 new pdt", func() bool { return be.port("eth2").eee.TxLPITimer == 40*time.Microsecond })
	if after := metric(t, reg, "lpictl_idle_periods_total", dev("eth0")); after < before {
		t.Errorf("eth0 lost its state on the second reload")
	}
}

func TestRemovedPortIsDropped(t *testing.T) {
	be := newFake("eth0", "eth1")
	cfg := testConfig(t, agent.Observe, "eth*")
	cfg.Ports.RescanInterval = agentDur(20 * time.Millisecond)
	r := start(t, cfg, be, nil)
	be.remove("eth1")
	waitFor(t, "eth1 gone", func() bool { return metric(t, r.a.Registry(), "lpictl_port_info", dev("eth1")) == -1 })
}

func TestMetricsLintAndHTTP(t *testing.T) {
	be := newFake("eth0")
	cfg := testConfig(t, agent.Enforce, "eth0")
	cfg.Metrics.Listen = "127.0.0.1:0"
	r := start(t, cfg, be, nil)
	reg := r.a.Registry()
	waitFor(t, "observations", func() bool { return metric(t, reg, "lpictl_idle_periods_total", dev("eth0")) > 5 })
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
	base := "http://" + r.a.Addr()
	if !strings.HasPrefix(r.a.Addr(), "127.0.0.1:") {
		t.Fatalf("listening on %q", r.a.Addr())
	}
	for path, want := range map[string]string{
		"/metrics": `lpictl_idle_gap_seconds_bucket{backend="fake",device="eth0",le="0.0001024"}`,
		"/healthz": "ok", "/readyz": "ready",
	} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Errorf("%s: %d, body lacks %q", path, resp.StatusCode, want)
		}
	}
}

// TestDashboardMetricsExist: every lpictl_ metric the shipped Grafana
// dashboard queries is one the agent exports.
func TestDashboardMetricsExist(t *testing.T) {
	data, err := os.ReadFile("../configs/grafana/lpictl.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash map[string]any
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("dashboard is not JSON: %v", err)
	}
	be := newFake("eth0")
	be.ports["eth0"].info.Speed = 1_000_000_000 // a 1G port: estimates under eee-1000base-t
	cfg := testConfig(t, agent.Enforce, "eth0")
	on := controller.LedgerOn // a fixed t_PDT has a delay ledger only when asked
	cfg.Limits.Ledger = &on
	r := start(t, cfg, be, nil)
	waitFor(t, "observations", func() bool { return metric(t, r.a.Registry(), "lpictl_idle_periods_total", dev("eth0")) > 0 })
	have := metricNames(t, r.a.Registry())
	for _, name := range regexp.MustCompile(`lpictl_[a-z_]+`).FindAllString(string(data), -1) {
		base := strings.TrimSuffix(name, "_bucket")
		if !have[base] && !strings.Contains(name, "_info") {
			t.Errorf("dashboard queries %s, which the agent does not export", name)
		}
	}
}

// TestFirstWriteHysteresisAgainstTimerInForce (issue 11, defect 5): a
// first decision within the hysteresis of the timer already in force
// (250 → 245 µs) is not written, and so nothing is restored either.
func TestFirstWriteHysteresisAgainstTimerInForce(t *testing.T) {
	be := newFake("eth0")
	cfg := testConfig(t, agent.Enforce, "eth0")
	pdt := agentDur(245 * time.Microsecond)
	cfg.Predictor.PDT = &pdt
	r := start(t, cfg, be, nil)
	reg := r.a.Registry()
	waitFor(t, "decisions", func() bool { return metric(t, reg, "lpictl_idle_periods_total", dev("eth0")) > 30 })
	waitFor(t, "held by hysteresis", func() bool {
		return metric(t, reg, "lpictl_pdt_held_total", map[string]string{"device": "eth0", "reason": "hysteresis"}) >= 1
	})
	if p := be.port("eth0"); p.sets != 0 || p.eee.TxLPITimer != 250*time.Microsecond {
		t.Errorf("245 µs written over 250 µs within hysteresis: %d sets, timer %v", p.sets, p.eee.TxLPITimer)
	}
	if s := readState(t, cfg.StateDir); len(s) != 0 {
		t.Errorf("original recorded without a change: %+v", s)
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	if len(be.restored) != 0 {
		t.Errorf("restored an unchanged port: %+v", be.restored)
	}
}

// TestRestoreOnExitFalseNoRestoreAtNextStart (issue 11, defect 7): with
// safety.restore_on_exit false, neither a clean nor an unclean stop leads
// to a restore at the next start; the state file keeps the originals.
func TestRestoreOnExitFalseNoRestoreAtNextStart(t *testing.T) {
	be := newFake("eth0", "eth1")
	cfg := testConfig(t, agent.Enforce, "eth0")
	no := false
	cfg.Safety.RestoreOnExit = &no
	// An unclean stop of an earlier run left eth1 changed.
	st, err := agent.OpenState(cfg.StateDir)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Record(agent.PortRecord{Name: "eth1", MAC: "02:00:00:00:00:01",
		Original: agent.Settings{TxLPITimer: 100 * time.Microsecond, TxLPIEnabled: true}}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	r := start(t, cfg, be, nil)
	waitFor(t, "timer applied", func() bool { return be.port("eth0").eee.TxLPITimer == 20*time.Microsecond })
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	r = start(t, cfg, be, nil) // the next start
	waitFor(t, "a round", func() bool { return metric(t, r.a.Registry(), "lpictl_idle_periods_total", dev("eth0")) > 5 })
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	if len(be.restored) != 0 {
		t.Errorf("restored with restore_on_exit false: %+v", be.restored)
	}
	if p := be.port("eth0"); p.eee.TxLPITimer != 20*time.Microsecond || p.sets != 1 {
		t.Errorf("eth0 %v after %d sets, want left at 20µs after 1", p.eee.TxLPITimer, p.sets)
	}
	s := readState(t, cfg.StateDir)
	if s["eth0"].Original.TxLPITimer != 250*time.Microsecond || s["eth1"].Original.TxLPITimer != 100*time.Microsecond {
		t.Errorf("state file lost the originals: %+v", s)
	}
}

// TestCarrierChangesSinceOpened (issue 11, defect 9): the counter starts at
// 0 when the port is opened, whatever the kernel's lifetime count.
func TestCarrierChangesSinceOpened(t *testing.T) {
	be := newFake("eth0")
	be.setCarrier("eth0", 7)
	r := start(t, testConfig(t, agent.Observe, "eth0"), be, nil)
	reg := r.a.Registry()
	waitFor(t, "counters", func() bool { return metric(t, reg, "lpictl_carrier_changes_total", dev("eth0")) >= 0 })
	if v := metric(t, reg, "lpictl_carrier_changes_total", dev("eth0")); v != 0 {
		t.Errorf("carrier changes %v right after open, want 0 (the kernel's lifetime count is 7)", v)
	}
	be.setCarrier("eth0", 9)
	waitFor(t, "a flap counted", func() bool { return metric(t, reg, "lpictl_carrier_changes_total", dev("eth0")) == 2 })
}

// waitShort is waitFor with a deadline well below the 30 s rescan.
func waitShort(t *testing.T, what string, cond func() bool) {
	t.Helper()
	waitWithin(t, 2*time.Second, what+" (the port rescan is 30 s)", cond)
}

// TestDeletedPortClosedAtOnce (issue 11, defect 11): a deleted port is
// closed at once, not kept (and erring) until the rescan.
func TestDeletedPortClosedAtOnce(t *testing.T) {
	be := newFake("eth0", "eth1")
	cfg := testConfig(t, agent.Observe, "eth*")
	cfg.Ports.RescanInterval = agentDur(30 * time.Second)
	r := start(t, cfg, be, nil)
	reg := r.a.Registry()
	be.remove("eth1")
	waitShort(t, "eth1 closed", func() bool { return metric(t, reg, "lpictl_port_info", dev("eth1")) == -1 })
	if v := metric(t, reg, "lpictl_agent_ports", nil); v != 1 {
		t.Errorf("ports %v, want 1", v)
	}
}

// TestRenamedPortFollowed (issue 11, defect 11): a renamed port is followed
// under its new name at once, with its state, its record and its restore.
func TestRenamedPortFollowed(t *testing.T) {
	be := newFake("eth0", "eth1")
	cfg := testConfig(t, agent.Enforce, "eth*", "lan*")
	cfg.Ports.RescanInterval = agentDur(30 * time.Second)
	r := start(t, cfg, be, nil)
	reg := r.a.Registry()
	waitFor(t, "eth1 applied", func() bool { return be.port("eth1").eee.TxLPITimer == 20*time.Microsecond })
	waitFor(t, "eth1 counted", func() bool { return metric(t, reg, "lpictl_eee_changes_total", dev("eth1")) == 1 })
	be.rename("eth1", "lan1")
	waitShort(t, "lan1 followed", func() bool { return metric(t, reg, "lpictl_port_info", dev("lan1")) == 1 })
	if v := metric(t, reg, "lpictl_port_info", dev("eth1")); v != -1 {
		t.Errorf("eth1 still exported")
	}
	if v := metric(t, reg, "lpictl_eee_changes_total", dev("lan1")); v != 1 {
		t.Errorf("lan1 changes %v, want 1 (eth1's, followed)", v)
	}
	s := readState(t, cfg.StateDir)
	if _, ok := s["eth1"]; ok || s["lan1"].Original.TxLPITimer != 250*time.Microsecond {
		t.Errorf("record did not follow the rename: %+v", s)
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	if got := be.restored["lan1"]; got.TxLPITimer != 250*time.Microsecond {
		t.Errorf("lan1 not restored at stop: %+v", be.restored)
	}
}

// TestObserveNeedsNoStateDir (issue 11, defect 12): observe mode starts with
// a state_dir it cannot create or write (as a non-root user would), and
// does not create one.
func TestObserveNeedsNoStateDir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "missing")
	for _, dir := range []string{filepath.Join(file, "state"), missing} {
		be := newFake("eth0")
		cfg := testConfig(t, agent.Observe, "eth0")
		cfg.StateDir = dir
		r := start(t, cfg, be, nil)
		waitFor(t, "observations", func() bool { return metric(t, r.a.Registry(), "lpictl_idle_periods_total", dev("eth0")) > 0 })
		if err := r.stop(t); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("observe mode created the state directory: %v", err)
	}
}
