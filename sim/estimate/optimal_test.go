package estimate

import (
	"strings"
	"testing"
	"time"

	"github.com/lpictl/lpictl/controller/replay"
	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/power"
)

func TestOptimumInput(t *testing.T) {
	in, err := OptimumInput(predictor.Config{Bound: 0.05}, "eee-10gbase-t", "fast-wake", replay.Timing{})
	if err != nil {
		t.Fatal(err)
	}
	if in.Mode != "fast-wake" || in.Rate() != 0.05 || !(in.LowPower > 0 && in.LowPower < 1) || in.DeepPower != 0 {
		t.Errorf("input %+v", in)
	}
	for _, c := range []struct {
		p            predictor.Config
		preset, mode string
		want         string
	}{
		{predictor.Config{Bound: 2}, "", "", "predictor.bound: must be in (0, 1], got 2"},
		{predictor.Config{}, "eee-nope", "", "preset: "},
		{predictor.Config{}, "", "turbo", "mode: "},
		{predictor.Config{}, "eee-1000base-t", "fast-wake", "mode: fast-wake has no low-power state in preset eee-1000base-t"},
	} {
		if _, err := OptimumInput(c.p, c.preset, c.mode, replay.Timing{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c, err, c.want)
		}
	}
}

// TestOptimalRows: one 1 ms idle period in 2 ms at a generous bound: the
// optimum sleeps in it, one wake-up, as much low power as the period
// leaves after t_s, and the energy adds up.
func TestOptimalRows(t *testing.T) {
	pr, err := power.Load("eee-10gbase-t")
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewOptimalRows(Config{Preset: pr, Modes: []power.Mode{power.DeepSleep}}, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Add(time.Millisecond, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	rows, err := b.Rows(2*time.Millisecond, 1)
	if err != nil || len(rows) != 1 {
		t.Fatalf("rows %+v, %v", rows, err)
	}
	r := rows[0]
	if r.Policy != replay.OptimalKind || r.Mode != "deep-sleep" || r.WakeUps != 1 || r.Misses != 1 || r.LowPowerS <= 0 || r.LowPowerS >= 1e-3 {
		t.Errorf("row %+v", r)
	}
	if d := r.AlwaysOnEnergyJ - r.EnergyJ - r.SavedJ; d > 1e-15 || d < -1e-15 {
		t.Errorf("saved %v ≠ always-on %v − energy %v", r.SavedJ, r.AlwaysOnEnergyJ, r.EnergyJ)
	}
}

func TestNewRow(t *testing.T) {
	r := NewRow(Result{Policy: "eee", Kind: PlainEEE, Mode: power.DeepSleep, Elapsed: 2 * time.Second,
		LowPower: time.Second, AddedDelay: 4 * time.Millisecond, MeanPDT: time.Microsecond}, 4)
	if r.LowPowerShare != 0.5 || r.AddedDelayPerIdleS != 1e-3 || r.PDTMeanS != 1e-6 || r.Mode != "deep-sleep" {
		t.Errorf("row %+v", r)
	}
}
