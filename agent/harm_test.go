package agent_test

import (
	"strings"
	"testing"
	"time"

	"github.com/lpictl/lpictl/agent"
)

func quarantined(t *testing.T, r *running, reason string) float64 {
	t.Helper()
	return metric(t, r.a.Registry(), "lpictl_port_quarantined", map[string]string{"device": "eth0", "reason": reason})
}

// Errors rising right after a change: the port is restored and
// quarantined (reason harm), and not changed again.
func TestHarmAfterChangeRestoresAndQuarantines(t *testing.T) {
	be := newFake("eth0")
	be.ports["eth0"].errOnSet = 50
	cfg := testConfig(t, agent.Enforce, "eth0")
	r := start(t, cfg, be, nil)
	waitFor(t, "harm quarantine", func() bool { return quarantined(t, r, agent.ReasonHarm) == 1 })
	p := be.port("eth0")
	if p.sets != 1 {
		t.Errorf("sets = %d, want 1", p.sets)
	}
	if p.eee.TxLPITimer != 250*time.Microsecond {
		t.Errorf("harmful change not restored: timer %v", p.eee.TxLPITimer)
	}
	if s := readState(t, cfg.StateDir); s != nil {
		t.Errorf("state file not cleared: %+v", s)
	}
	time.Sleep(100 * time.Millisecond)
	if p := be.port("eth0"); p.sets != 1 {
		t.Errorf("quarantined port changed again: %d sets", p.sets)
	}
	if v := metric(t, r.a.Registry(), "lpictl_link_flaps_total", dev("eth0")); v != 0 {
		t.Errorf("flaps = %v, want 0", v)
	}
}

// Errors at or below safety.harm_errors after a change: nothing.
func TestHarmBelowThresholdKeepsChange(t *testing.T) {
	be := newFake("eth0")
	be.ports["eth0"].errOnSet = 10 // harm_errors 10: more than 10 is harm
	cfg := testConfig(t, agent.Enforce, "eth0")
	cfg.Safety.HarmWindow = agentDur(200 * time.Millisecond)
	r := start(t, cfg, be, nil)
	waitFor(t, "change", func() bool { return be.port("eth0").sets == 1 })
	time.Sleep(300 * time.Millisecond) // past the window
	if q := quarantined(t, r, ""); q != 0 {
		t.Errorf("quarantined = %v, want 0", q)
	}
	if p := be.port("eth0"); p.eee.TxLPITimer != 20*time.Microsecond {
		t.Errorf("timer %v, want the change (20µs) kept", p.eee.TxLPITimer)
	}
	// Errors after the window are not blamed on the change.
	be.setErrors("eth0", agent.ErrorCounters{RxErrors: 1000, RxCRCErrors: 1000})
	time.Sleep(100 * time.Millisecond)
	if q := quarantined(t, r, ""); q != 0 {
		t.Errorf("quarantined after the window: %v", q)
	}
}

// Errors rising without a change: nothing (the agent never wrote).
func TestHarmWithoutChangeNothing(t *testing.T) {
	be := newFake("eth0")
	cfg := testConfig(t, agent.Enforce, "eth0")
	pdt := agentDur(250 * time.Microsecond) // the timer in force: no write
	cfg.Predictor.PDT = &pdt
	r := start(t, cfg, be, nil)
	be.setErrors("eth0", agent.ErrorCounters{RxErrors: 500, TxErrors: 500, RxDropped: 500})
	time.Sleep(150 * time.Millisecond)
	if q := quarantined(t, r, ""); q != 0 {
		t.Errorf("quarantined = %v, want 0", q)
	}
	if p := be.port("eth0"); p.sets != 0 {
		t.Errorf("sets = %d, want 0", p.sets)
	}
}

// Drops are only checked with safety.harm_drops; errors off (0) with drops on.
func TestHarmDrops(t *testing.T) {
	be := newFake("eth0")
	cfg := testConfig(t, agent.Enforce, "eth0")
	cfg.Safety.HarmErrors = 0
	cfg.Safety.HarmDrops = 5
	r := start(t, cfg, be, nil)
	waitFor(t, "change", func() bool { return be.port("eth0").sets == 1 })
	be.setErrors("eth0", agent.ErrorCounters{RxErrors: 100, TxDropped: 6})
	waitFor(t, "harm quarantine", func() bool { return quarantined(t, r, agent.ReasonHarm) == 1 })
	if p := be.port("eth0"); p.eee.TxLPITimer != 250*time.Microsecond {
		t.Errorf("not restored: %v", p.eee.TxLPITimer)
	}
}

func TestHarmConfigValidation(t *testing.T) {
	for _, tc := range []struct {
		set  func(*agent.SafetyConfig)
		want string
	}{
		{func(s *agent.SafetyConfig) { s.HarmWindow = agentDur(-time.Second) }, "safety.harm_window"},
		{func(s *agent.SafetyConfig) { s.HarmErrors = -1 }, "safety.harm_errors"},
		{func(s *agent.SafetyConfig) { s.HarmDrops = -1 }, "safety.harm_drops"},
	} {
		c := agent.Default()
		tc.set(&c.Safety)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate = %v, want an error naming %s", err, tc.want)
		}
	}
	c := agent.Default()
	if c.Safety.HarmWindow.D() != 30*time.Second || c.Safety.HarmErrors != 10 || c.Safety.HarmDrops != 0 {
		t.Errorf("defaults: %+v", c.Safety)
	}
}
