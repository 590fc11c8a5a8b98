package agent_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/lpictl/lpictl/agent"
	"github.com/lpictl/lpictl/sim/power"
)

// TestEstimateMetrics: every selected port exports policies × modes of
// each estimate counter (fake ports: speed unknown → estimate.fallback_preset
// eee-1000base-t, deep-sleep only; no driver default → 4 policies),
// cumulative.
func TestEstimateMetrics(t *testing.T) {
	be := newFake("eth0", "eth1")
	cfg := testConfig(t, agent.Observe, "eth*")
	cfg.Estimate.FallbackPreset = "eee-1000base-t"
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

// TestEstimatePresetUnknown: a virtual device (veth reports 10 Gb/s) and a
// port of unknown speed get no estimate and a "port selected" line saying
// why, rather than a guessed preset; a port with its own preset (an emulated
// port's) is estimated with it, whatever its speed.
func TestEstimatePresetUnknown(t *testing.T) {
	be := newFake("veth0", "eth0", "emu0")
	be.ports["veth0"].info.Speed, be.ports["veth0"].info.Virtual = 10_000_000_000, "veth"
	own, err := power.Load("eee-100base-tx")
	if err != nil {
		t.Fatal(err)
	}
	be.ports["emu0"].info.Speed, be.ports["emu0"].info.Virtual, be.ports["emu0"].info.Preset = 10_000_000_000, "veth", own
	cfg := testConfig(t, agent.Observe, "*")
	h := newCapture()
	a, err := agent.New(agent.Options{Config: cfg, Backend: be, Logger: slog.New(h)})
	if err != nil {
		t.Fatal(err)
	}
	if err := agent.ExportSync(a, context.Background()); err != nil {
		t.Fatal(err)
	}
	agent.ExportTick(a, context.Background())
	want := map[string]string{
		"veth0": "none (preset unknown: veth reports 10 Gb/s, which means nothing for a virtual device: set estimate.preset",
		"eth0":  "none (preset unknown: link speed unknown: set estimate.preset",
		"emu0":  "eee-100base-tx (emulator)",
	}
	for _, r := range h.records() {
		if r.msg != "port selected" {
			continue
		}
		dev := r.attrs["device"].String()
		if got := r.attrs["estimate_preset"].String(); !strings.HasPrefix(got, want[dev]) {
			t.Errorf("%s: estimate_preset %q, want %q…", dev, got, want[dev])
		}
		if r.level != slog.LevelInfo {
			t.Errorf("%s: port selected at %v", dev, r.level)
		}
		delete(want, dev)
	}
	if len(want) != 0 {
		t.Errorf("no port selected line for %v", want)
	}
	for dev, n := range map[string]int{"veth0": 0, "eth0": 0, "emu0": 4} { // 100BASE-TX: deep-sleep only, 4 policies
		got := 0
		mfs, _ := a.Registry().Gather()
		for _, mf := range mfs {
			if mf.GetName() != "lpictl_estimate_energy_joules_total" {
				continue
			}
			for _, m := range mf.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "device" && l.GetValue() == dev {
						got++
					}
				}
			}
		}
		if got != n {
			t.Errorf("%s: %d estimate series, want %d", dev, got, n)
		}
	}
	// The ledger's reserve c still has a preset behind it.
	for _, in := range []agent.PortInfo{{Name: "veth0", Speed: 10_000_000_000, Virtual: "veth"}, {Name: "eth0"}} {
		if mc := cfg.PortSpec(in).Controller.MissCost.D(); mc != (182+16.5)*1000*time.Nanosecond {
			t.Errorf("%s: miss cost %v, want 1000BASE-T's 198.5µs", in.Name, mc)
		}
	}
}

func TestEstimatePresetChoice(t *testing.T) {
	own := &power.Preset{Name: "mine"}
	for _, c := range []struct {
		preset, fallback string
		pp               agent.PortPreset
		name, from, why  string
	}{
		{"", "", agent.PortPreset{Speed: 1_000_000_000}, "eee-1000base-t", "speed", ""},
		{"", "", agent.PortPreset{Speed: 10_000_000_000, Virtual: "veth"}, "", "unknown", "veth reports 10 Gb/s, which means nothing for a virtual device"},
		{"", "", agent.PortPreset{}, "", "unknown", "link speed unknown"},
		{"", "", agent.PortPreset{Speed: 2_500_000_000}, "", "unknown", "no power preset for 2500 Mb/s"},
		{"", "eee-1000base-t", agent.PortPreset{Speed: 10_000_000_000, Virtual: "veth"}, "eee-1000base-t", "fallback", ""},
		{"", "eee-1000base-t", agent.PortPreset{Speed: 10_000_000_000, Virtual: "veth", Own: own}, "mine", "emulator", ""},
		{"eee-10gbase-t", "", agent.PortPreset{Own: own}, "eee-10gbase-t", "configured", ""},
	} {
		p, from, why, err := agent.EstimatePreset(c.preset, c.fallback, c.pp)
		name := ""
		if p != nil {
			name = p.Name
		}
		if err != nil || name != c.name || from != c.from || why != c.why {
			t.Errorf("%+v: %q %q %q %v", c, name, from, why, err)
		}
	}
}
