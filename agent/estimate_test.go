package agent_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/lpictl/lpictl/agent"
)

// TestEstimateMetrics: every selected port exports policies × modes of
// each estimate counter (fake ports: speed unknown → eee-1000base-t,
// deep-sleep only; no driver default → 4 policies), cumulative.
func TestEstimateMetrics(t *testing.T) {
	be := newFake("eth0", "eth1")
	cfg := testConfig(t, agent.Observe, "eth*")
	r := start(t, cfg, be, nil)
	reg := r.a.Registry()
	waitFor(t, "idle periods", func() bool { return metric(t, reg, "lpictl_idle_periods_total", dev("eth0")) > 20 })
	for _, name := range []string{"lpictl_estimate_energy_joules_total", "lpictl_estimate_added_delay_seconds_total", "lpictl_estimate_low_power_seconds_total"} {
		n, err := testutil.GatherAndCount(reg, name)
		if err != nil || n != 2*4 {
			t.Errorf("%s: %d series (%v), want 2 ports × 4 policies × 1 mode", name, n, err)
		}
	}
	lbl := func(policy string) map[string]string {
		return map[string]string{"device": "eth0", "policy": policy, "mode": "deep-sleep"}
	}
	// eee first: each gather accounts up to its own now.
	eee := metric(t, reg, "lpictl_estimate_energy_joules_total", lbl("eee"))
	on := metric(t, reg, "lpictl_estimate_energy_joules_total", lbl("always-on"))
	if !(on > 0) || !(eee <= on) {
		t.Errorf("energy: always-on %v J, eee %v J", on, eee)
	}
	if v := metric(t, reg, "lpictl_estimate_added_delay_seconds_total", lbl("always-on")); v != 0 {
		t.Errorf("always-on added delay %v", v)
	}
	// 50 µs gaps: plain EEE starts going down at once, so every packet
	// waits for the port (t_s remainder and t_w).
	if v := metric(t, reg, "lpictl_estimate_added_delay_seconds_total", lbl("eee")); !(v > 0) {
		t.Errorf("eee added delay %v, want > 0", v)
	}
	waitFor(t, "more idle periods", func() bool { return metric(t, reg, "lpictl_idle_periods_total", dev("eth0")) > 60 })
	if on2 := metric(t, reg, "lpictl_estimate_energy_joules_total", lbl("always-on")); on2 < on {
		t.Errorf("energy counter went down: %v → %v", on, on2)
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
}

func TestEstimateConfigValidation(t *testing.T) {
	for _, c := range []struct {
		set  func(*agent.Config)
		want string
	}{
		{func(c *agent.Config) { c.Estimate.Preset = "no-such" }, "estimate.preset"},
		{func(c *agent.Config) { c.Estimate.FallbackPreset = "no-such" }, "estimate.fallback_preset"},
		{func(c *agent.Config) { c.Estimate.Policies = []string{"eee", "magic"} }, "estimate.policies[1]"},
		{func(c *agent.Config) { c.Estimate.Policies = []string{"eee", "eee"} }, "listed twice"},
	} {
		cfg := agent.Default()
		c.set(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want an error naming %q, got %v", c.want, err)
		}
	}
	if err := agent.Default().Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
}
