package power

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestShippedPresets(t *testing.T) {
	names := Names()
	if len(names) < 3 {
		t.Fatalf("shipped presets: %v", names)
	}
	for _, n := range names {
		p, err := Load(n)
		if err != nil {
			t.Errorf("%s: %v", n, err)
			continue
		}
		// Every shipped preset states its LPI symmetry and where it comes
		// from (model §1.2); the papers' keep per-link.
		if p.LPI == "" || p.LPISource == "" {
			t.Errorf("%s: lpi %q, lpi_source %q: both required of a shipped preset", n, p.LPI, p.LPISource)
		}
		want := PerLink
		if n == "eee-100base-tx" {
			want = PerDirection
		}
		if p.Symmetry() != want {
			t.Errorf("%s: lpi %s, want %s", n, p.Symmetry(), want)
		}
	}
	p, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	// Paper 000 Table 8 (400 Gb/s) and Table 7 system figures.
	if p.Name != "eee-400g" || p.RateBps != 400e9 || p.WakePowerW != 24 ||
		p.FastWake.Power(24) != 9.6 || p.FastWake.WakeTime.D() != 375*time.Nanosecond || p.FastWake.SleepTime.D() != 200*time.Nanosecond ||
		p.DeepSleep.Power(24) != 2.4 || p.DeepSleep.WakeTime.D() != 4480*time.Nanosecond || p.DeepSleep.SleepTime.D() != 2*time.Microsecond ||
		p.System != (SystemPower{SwitchW: 250, NodeMinW: 800, NodeMaxW: 1200}) {
		t.Errorf("eee-400g = %+v", p)
	}
	if got := p.WakeTime(Hybrid); got != 375*time.Nanosecond {
		t.Errorf("hybrid enters Fast Wake first: t_w %v", got)
	}
	tracer, _ := Load("eee-100g-tracer")
	if got := tracer.DeepSleep.Power(tracer.WakePowerW); got != 2.4000000000000004 && got != 2.4 {
		t.Errorf("fraction power %v", got)
	}
}

func TestPresetErrors(t *testing.T) {
	base := "name: x\nrate_bps: 1e9\nwake_power_w: 10\n"
	ds := "deep_sleep:\n  power_w: 1\n  wake_time: 1us\n  sleep_time: 1us\n"
	tests := map[string]string{
		base + ds + "color: red\n": `line 8: unknown key "color"`,
		base:                       "at least one low-power state",
		"name: x\nrate_bps: -1\n":  "rate_bps: must be > 0",
		base + "deep_sleep:\n  power_w: 11\n  wake_time: 1us\n  sleep_time: 1us\n":                       "exceeds wake_power_w",
		base + "deep_sleep:\n  power_w: 1\n  power_fraction: 0.1\n  wake_time: 1us\n  sleep_time: 1us\n": "exactly one of power_w and power_fraction",
		base + "deep_sleep:\n  power_w: 1\n  wake_time: -1us\n  sleep_time: 1us\n":                       "line 6: negative duration",
		base + ds + "system:\n  node_min_w: 5\n  node_max_w: 1\n":                                        "system.node_max_w",
		base + ds + "lpi: sometimes\n":                                                                   "lpi: unknown symmetry",
		base + ds + "off:\n  power_w: 11\n  wake_time: 1us\n  source: p\n":                               "off.power_w: must be in [0, wake_power_w 10]",
		base + ds + "off:\n  power_w: -1\n  wake_time: 1us\n  source: p\n":                               "off.power_w: must be in [0, wake_power_w 10]",
		base + ds + "off:\n  power_w: 0\n  source: p\n":                                                  "off.wake_time: must be > 0",
		base + ds + "off:\n  power_w: 0\n  wake_time: 1us\n":                                             "off.source: required",
		base + ds + "idle_power_fraction: 1.5\nidle_source: p\n":                                         "idle_power_fraction: must be in (0, 1]",
		base + ds + "idle_power_fraction: 0.75\n":                                                        "idle_source: required",
	}
	for in, want := range tests {
		_, err := Parse([]byte(in), "p.yaml")
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "p.yaml: ") {
			t.Errorf("Parse(%q) = %v, want %q", in, err, want)
		}
	}
	if _, err := Load("nope"); err == nil || !strings.Contains(err.Error(), "shipped: eee-") {
		t.Errorf("unknown preset: %v", err)
	}
	if _, err := ParseMode("turbo"); err == nil {
		t.Error("ParseMode(turbo) accepted")
	}
}

func FuzzParse(f *testing.F) {
	f.Add("name: x\nrate_bps: 1e9\nwake_power_w: 10\ndeep_sleep:\n  power_w: 1\n  wake_time: 1us\n  sleep_time: 1us\n")
	f.Add("name: x\nfast_wake: {power_fraction: 2}\n")
	f.Fuzz(func(t *testing.T, in string) {
		p, err := Parse([]byte(in), "fuzz.yaml")
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		if p.FastWake == nil && p.DeepSleep == nil {
			t.Fatal("accepted a preset without low-power state")
		}
	})
}

// TestPresetHybrid: eee-400g by hand: Deep Sleep t_w 4.48 µs, Fast Wake
// 9.6 W and Deep Sleep 2.4 W of 24 W awake: fractions 0.4 and 0.1; ×50
// scales t_w only.
func TestPresetHybrid(t *testing.T) {
	p, err := Load("eee-400g")
	if err != nil {
		t.Fatal(err)
	}
	h := p.Hybrid(1)
	if h.DeepWakeTime.D() != 4480*time.Nanosecond || math.Abs(h.FastWakePower-0.4) > 1e-12 || math.Abs(h.DeepSleepPower-0.1) > 1e-12 {
		t.Errorf("Hybrid(1) = %+v", h)
	}
	if h := p.Hybrid(50); h.DeepWakeTime.D() != 224*time.Microsecond || math.Abs(h.FastWakePower-0.4) > 1e-12 {
		t.Errorf("Hybrid(50) = %+v", h)
	}
}

// TestOffAndIdle: the shipped presets' off state and idle fraction: paper
// 004's (0 W, 1 µs; idle 23.44 / 31.25 pJ/bit = 0.75) in eee-400g (off
// only) and tcep-400g; paper 000's other presets have neither (idle 1).
func TestOffAndIdle(t *testing.T) {
	for _, tc := range []struct {
		name string
		off  bool
		idle float64
	}{{"eee-400g", true, 1}, {"tcep-400g", true, 0.75}, {"eee-100g", false, 1}} {
		p, err := Load(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		if (p.Off != nil) != tc.off || p.IdleFraction() != tc.idle {
			t.Errorf("%s: off %+v, idle fraction %v", tc.name, p.Off, p.IdleFraction())
		}
		if p.Off != nil && (p.Off.PowerW != 0 || p.Off.WakeTime.D() != time.Microsecond || p.Off.Source == "") {
			t.Errorf("%s: off %+v", tc.name, *p.Off)
		}
	}
}
