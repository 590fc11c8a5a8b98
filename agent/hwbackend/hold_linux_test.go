package hwbackend_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/lpictl/lpictl/agent"
	"github.com/lpictl/lpictl/agent/hwbackend"
	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/emulate"
	"github.com/lpictl/lpictl/hwlink/hwlinktest"
	"github.com/lpictl/lpictl/predictor"
)

// TestAgentSetsEmulatedHold: in hybrid mode the agent gives an emulated
// port the hold its predictor chose with t_PDT (predictor.HoldChooser):
// PerfBoundCorrect with the hybrid costs of the emulated states (Fast
// Wake t_w 20 µs, Deep Sleep 150 µs, scaled), after bursts with pauses of
// ≥ 5 ms. The emulator's hold register ends equal to the agent's
// lpictl_hybrid_hold_seconds, which is not the 10 µs the port started with.
func TestAgentSetsEmulatedHold(t *testing.T) {
	hwlinktest.RequireBPF(t)
	pair := hwlinktest.NewPair(t)
	bpffs := tempBPFFS(t)
	ctx := context.Background()
	preset := emuPreset
	preset.FastWake = &emulate.LowPower{PowerW: 0.1, Wake: 4 * time.Microsecond, Sleep: 20 * time.Microsecond}
	initial, initialHold := time.Millisecond, 10*time.Microsecond
	emu, err := emulate.Attach(ctx, emulate.Config{Interface: pair.NameA, NetNS: hwlink.NetNS(pair.PathA),
		Preset: preset, Mode: emulate.ModeHybrid, PDT: &initial, HybridHold: initialHold, Scale: emuScale,
		Delay: emulate.DelaySpin, BPFFS: bpffs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := emu.Detach(); err != nil {
			t.Errorf("detach: %v", err)
		}
		emu.Close()
	})

	cfg := agent.Config{Mode: agent.Enforce, Backend: agent.BackendHW, StateDir: t.TempDir(),
		Interval: predictor.Duration(20 * time.Millisecond)}
	cfg.Metrics.Listen = agent.MetricsOff
	cfg.Ports.Drivers = []string{hwbackend.EmulatedDriverPrefix + "*"}
	cfg.HW = agent.HWConfig{NetNS: pair.PathA, EEEBackend: "emulated", Observe: "emulated", BPFFS: bpffs}
	cfg.Predictor = predictor.Config{Kind: predictor.KindPerfBoundCorrect, WakeTime: predictor.Duration(20 * time.Microsecond),
		Hybrid: predictor.HybridConfig{DeepWakeTime: predictor.Duration(emuWake), FastWakePower: 0.5, DeepSleepPower: 0.1}}
	zero := predictor.Duration(0)
	cfg.Safety.Warmup = &zero
	cfg.Limits.MinChangeInterval = &zero
	cfg = cfg.WithDefaults()
	a, stop := runAgent(t, cfg)

	// Bounded traffic, inside the test's namespaces only.
	for range 12 {
		hwlinktest.SendUDP(t, pair.NSA, pair.AddrA, pair.NSB, pair.AddrB,
			hwlinktest.Traffic{Count: 10, Interval: 300 * time.Microsecond, Payload: 64})
		time.Sleep(5 * time.Millisecond)
	}
	waitFor(t, "the agent to set a hold", func() bool {
		return gauge(t, a, "lpictl_hybrid_hold_seconds", pair.NameA) >= 0
	})
	// Let the agent settle: the register follows its last decision.
	waitFor(t, "the emulator's hold to match the agent's", func() bool {
		h := gauge(t, a, "lpictl_hybrid_hold_seconds", pair.NameA)
		got := emu.Hold()
		if math.IsInf(h, 1) {
			return got == predictor.NeverHold
		}
		return got == time.Duration(math.Round(h*1e9))
	})
	if got := emu.Hold(); got == initialHold {
		t.Errorf("the emulator's hold is still the initial %v", got)
	}
	t.Logf("hold set by the agent: %v", emu.Hold())
	if err := stop(); err != nil {
		t.Fatalf("agent: %v", err)
	}
}
