package hwbackend_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lpictl/lpictl/agent"
	"github.com/lpictl/lpictl/agent/hwbackend"
	"github.com/lpictl/lpictl/controller/replay"
	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/emulate"
	"github.com/lpictl/lpictl/hwlink/hwlinktest"
	"github.com/lpictl/lpictl/hwlink/observe"
	"github.com/lpictl/lpictl/predictor"
)

// emuPreset: 100BASE-TX Deep Sleep (t_w 30 µs, t_s 100 µs, configs/presets
// eee-100base-tx), scaled ×5 below so that a wake-up (150 µs) stands well
// above veth's own jitter.
var emuPreset = emulate.Preset{Name: "test-100", RateBps: 100e6, WakePowerW: 0.2,
	DeepSleep: &emulate.LowPower{PowerW: 0.02, Wake: 30 * time.Microsecond, Sleep: 100 * time.Microsecond}}

const (
	emuScale = 5
	emuWake  = 150 * time.Microsecond // scaled t_w
	emuSleep = 500 * time.Microsecond // scaled t_s
)

// tempBPFFS mounts a private bpffs for the test's pins.
func tempBPFFS(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := unix.Mount("bpf", dir, "bpf", 0, "mode=0700"); err != nil {
		t.Skipf("needs BPF: cannot mount a bpffs: %v", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(dir, 0) })
	return dir
}

type logWriter struct{ t *testing.T }

func (w logWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

// TestAgentDrivesEmulatedPort runs the real agent (hw backend, enforce
// mode, PerfBoundCorrect) on an emulated EEE port: a veth end in a test
// namespace whose egress runs the eeeemu program (Deep Sleep, t_w 150 µs,
// t_s 500 µs, delay spin, driver profile st_gmac), with hw.eee_backend and
// hw.observe emulated and a trace directory. 300 UDP datagrams go out in
// 30 bursts of 10, 300 µs apart, with ≥ 5 ms between bursts (≥ 20 ms after
// every third). It checks:
//   - the agent changed the emulator's tx LPI timer (read through
//     emulate.Backend.GetEEE while it runs) to its decision, and restored it
//     when it stopped; its LPI counters come from the emulator;
//   - the agent's idle periods are exactly the emulator's since the agent
//     opened the port, hit for hit and miss for miss (the trace's outcome
//     column against the emulator's counters), and the metrics say so;
//   - the trace parses (replay.ParseTrace), and ReplayTrace through the
//     controller of its header reproduces every row's t_PDT exactly
//     (Step.PDTPS() == TraceRow.PDT, to the ps); every row whose outcome the
//     replay computes differently lies in the application lag of a decision
//     change (from the row where the controller changed its t_PDT to
//     2 × interval after that row ended, by which time the agent has
//     written it into the emulator).
func TestAgentDrivesEmulatedPort(t *testing.T) {
	hwlinktest.RequireBPF(t)
	pair := hwlinktest.NewPair(t)
	bpffs := tempBPFFS(t)
	ctx := context.Background()
	initial := time.Millisecond
	emu, err := emulate.Attach(ctx, emulate.Config{Interface: pair.NameA, NetNS: hwlink.NetNS(pair.PathA),
		Preset: emuPreset, Mode: emulate.ModeDeepSleep, PDT: &initial, Scale: emuScale, Delay: emulate.DelaySpin, BPFFS: bpffs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := emu.Detach(); err != nil {
			t.Errorf("detach: %v", err)
		}
		emu.Close()
	})
	eee, err := emulate.NewBackend(emulate.BackendOptions{NetNS: hwlink.NetNS(pair.PathA), BPFFS: bpffs})
	if err != nil {
		t.Fatal(err)
	}
	defer eee.Close()
	st0, err := emu.Status(observe.MonotonicNow())
	if err != nil {
		t.Fatal(err)
	}

	traceDir := t.TempDir()
	interval := 20 * time.Millisecond
	cfg := agent.Config{Mode: agent.Enforce, Backend: agent.BackendHW, StateDir: t.TempDir(),
		Interval: predictor.Duration(interval), TraceDir: traceDir}
	cfg.Metrics.Listen = agent.MetricsOff
	cfg.Ports.Drivers = []string{hwbackend.EmulatedDriverPrefix + "*"}
	cfg.HW = agent.HWConfig{NetNS: pair.PathA, EEEBackend: "emulated", Observe: "emulated", BPFFS: bpffs}
	cfg.Predictor = predictor.Config{Kind: predictor.KindPerfBoundCorrect, WakeTime: predictor.Duration(emuWake)}
	zero := predictor.Duration(0)
	cfg.Safety.Warmup = &zero
	cfg.Limits.MinChangeInterval = &zero
	cfg = cfg.WithDefaults()
	a, stop := runAgent(t, cfg)
	if n := gauge(t, a, "lpictl_agent_ports", ""); n != 1 {
		t.Fatalf("%v ports selected, want the emulated %s only", n, pair.NameA)
	}
	if v := gauge(t, a, "lpictl_port_actuation_supported", pair.NameA); v != 1 {
		t.Fatalf("%s not actuated (%v)", pair.NameA, v)
	}

	// Bounded traffic, inside the test's namespaces only.
	changed := false
	for i := range 30 {
		hwlinktest.SendUDP(t, pair.NSA, pair.AddrA, pair.NSB, pair.AddrB,
			hwlinktest.Traffic{Count: 10, Interval: 300 * time.Microsecond, Payload: 64})
		if i%3 == 2 {
			time.Sleep(15 * time.Millisecond) // a longer pause: idle periods of ≈ 20 ms
		}
		if st, err := eee.GetEEE(ctx, pair.NameA); err == nil && st.TxLPITimer != initial {
			changed = true
		}
	}
	// The agent drains each round; wait until it has seen every period.
	want := func() float64 {
		s, err := emu.Status(observe.MonotonicNow())
		if err != nil {
			t.Fatal(err)
		}
		return float64(s.IdlePeriods - st0.IdlePeriods)
	}
	waitFor(t, "the agent to consume every idle period", func() bool {
		return gauge(t, a, "lpictl_idle_periods_total", pair.NameA) == want()
	})
	st, err := eee.GetEEE(ctx, pair.NameA)
	if err != nil {
		t.Fatal(err)
	}
	decided := time.Duration(gauge(t, a, "lpictl_pdt_seconds", pair.NameA)*1e9 + 0.5)
	if !changed || st.TxLPITimer != decided {
		t.Errorf("emulator's tx LPI timer %v (changed during traffic: %v), agent decided %v", st.TxLPITimer, changed, decided)
	}
	if e, lt := gauge(t, a, "lpictl_lpi_entries_total", pair.NameA), gauge(t, a, "lpictl_lpi_time_seconds_total", pair.NameA); e < 1 || lt <= 0 {
		t.Errorf("emulator's LPI counters through the agent: %v entries, %v s", e, lt)
	}
	if err := stop(); err != nil {
		t.Fatalf("agent: %v", err)
	}
	st1, err := emu.Status(observe.MonotonicNow())
	if err != nil {
		t.Fatal(err)
	}
	if st1.TxLPITimer != initial {
		t.Errorf("timer after the agent stopped: %v, want the original %v restored", st1.TxLPITimer, initial)
	}
	if st1.EventsLost != 0 {
		t.Errorf("%d idle periods lost in the events ring", st1.EventsLost)
	}

	// The trace: one row per idle period, the emulator's outcomes.
	path := agent.PortTraceFile(traceDir, pair.NameA)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	info, err := agent.ReadTraceInfo(f)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	rows, err := replay.ParseTrace(f, path)
	if err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(traceDir, ".*")); len(left) > 0 {
		t.Errorf("temporary files left in the trace directory: %v", left)
	}
	var hits, misses uint64
	for _, r := range rows {
		if r.Missed {
			misses++
		} else {
			hits++
		}
	}
	wantHits, wantMisses := st1.Hits-st0.Hits, st1.Misses-st0.Misses
	t.Logf("emulator: %d idle periods (%d hits, %d misses) while the agent watched; trace: %d rows (%d hits, %d misses)",
		st1.IdlePeriods-st0.IdlePeriods, wantHits, wantMisses, len(rows), hits, misses)
	if hits != wantHits || misses != wantMisses || len(rows) < 300 {
		t.Errorf("trace has %d hits, %d misses; the emulator %d, %d (≥ 300 periods expected)", hits, misses, wantHits, wantMisses)
	}

	// Replay: every t_PDT reproduced.
	ctl, err := info.NewController()
	if err != nil {
		t.Fatal(err)
	}
	steps, res, err := replay.ReplayTrace(ctl, replay.Timing{Wake: emuWake, Sleep: emuSleep}, rows)
	if err != nil {
		t.Fatal(err)
	}
	changes := []int{0} // rows where the decision differs from the port's timer before it
	prev := replay.PS(initial) * 1000
	for i, s := range steps {
		if s.PDTPS() != rows[i].PDT {
			t.Fatalf("row %d (line %d): replay decided %v, the agent %v", i+1, rows[i].Line, s.PDTPS(), rows[i].PDT)
		}
		if rows[i].PDT != prev {
			changes = append(changes, i)
			prev = rows[i].PDT
		}
	}
	// The emulated port enforces the delay ledger itself (docs/agent.md
	// "The delay budget"); the agent's controller, and so the replay, has
	// none. A period the emulator's ledger held awake past t_PDT is a hit
	// there and a miss in the replay: at most as many as it held.
	held := st1.Ledger.Held - st0.Ledger.Held
	lagged, heldRows := 0, uint64(0)
	for i, s := range steps {
		if s.Missed == rows[i].Missed {
			continue
		}
		if s.Missed && !rows[i].Missed && heldRows < held {
			heldRows++
			continue
		}
		lagged++
		explained := false
		for _, j := range changes {
			if j <= i && rows[i].Start <= rows[j].End()+replay.PS(2*interval)*1000 {
				explained = true
			}
		}
		if !explained {
			t.Errorf("row %d (line %d): replay outcome miss=%v, the emulator's %v, not within the lag of a change (changes at rows %v)",
				i+1, rows[i].Line, s.Missed, rows[i].Missed, changes)
		}
	}
	t.Logf("replay: %d rows, every t_PDT reproduced; %d decision changes; outcomes agree on %d rows (%d in the application lag, %d held by the emulator's ledger, which held %d)",
		len(steps), len(changes)-1, res.Agreement.Matching, lagged, heldRows, held)
	if len(changes) < 2 {
		t.Errorf("the decision never changed during the run: %v", rows[0].PDT)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// gauge reads a metric of the agent (a port's if device is set); -1 if absent.
func gauge(t *testing.T, a *agent.Agent, name, device string) float64 {
	t.Helper()
	mfs, err := a.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			ok := device == ""
			for _, l := range m.GetLabel() {
				if l.GetName() == "device" && l.GetValue() == device {
					ok = true
				}
			}
			if !ok {
				continue
			}
			switch {
			case m.Gauge != nil:
				return m.Gauge.GetValue()
			case m.Counter != nil:
				return m.Counter.GetValue()
			}
		}
	}
	return -1
}
