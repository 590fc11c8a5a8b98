package estimate

import (
	"strings"
	"testing"
	"time"
)

// TestWhatIf: a gap file is one timeline of idle periods (zero gaps
// skipped); every policy × mode gets a row; each sees every period.
func TestWhatIf(t *testing.T) {
	cfg := Config{Preset: load(t, "eee-10gbase-t")}
	var seen []time.Duration
	rep, err := WhatIf(strings.NewReader("10us\n0\n1ms\n"), "g.txt", cfg, func(start, length time.Duration) error {
		seen = append(seen, start, length)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.IdlePeriods != 2 || rep.ZeroGaps != 1 || rep.Input != "gaps" || rep.Elapsed() != 1010*time.Microsecond ||
		len(rep.Results) != len(DefaultPolicies())*len(cfg.Preset.LowPowerModes()) {
		t.Errorf("report %+v", rep)
	}
	if want := []time.Duration{0, 10 * time.Microsecond, 10 * time.Microsecond, time.Millisecond}; len(seen) != 4 || seen[2] != want[2] || seen[3] != want[3] {
		t.Errorf("each saw %v, want %v", seen, want)
	}
	var out strings.Builder
	if err := rep.Print(&out); err != nil || !strings.Contains(out.String(), "preset eee-10gbase-t, 2 idle periods (gaps)") {
		t.Errorf("table: %v\n%s", err, out.String())
	}
	if _, err := WhatIf(strings.NewReader("0\n"), "z.txt", cfg, nil); err == nil || !strings.Contains(err.Error(), "z.txt: no idle periods to estimate") {
		t.Errorf("no idle periods: %v", err)
	}
}
