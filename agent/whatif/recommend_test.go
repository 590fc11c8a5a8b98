package whatif

import (
	"strings"
	"testing"
	"time"

	"github.com/lpictl/lpictl/hwlink/eeectl"
	"github.com/lpictl/lpictl/sim/estimate"
)

// TestRecommendWording: the advice fits what the driver can do.
func TestRecommendWording(t *testing.T) {
	row := func(policy string, savedW, savedPct float64) estimate.Row {
		return estimate.Row{Policy: policy, Kind: policy, Mode: "deep-sleep", SavedW: savedW, SavedPct: savedPct}
	}
	ests := []Estimate{
		{Row: row("always-on", 0, 0), WithinMaxDelay: true},
		{Row: row("eee", 0.30, 60), AddedDelayPerPacketS: 30e-6},
		{Row: row("driver-default", 0.10, 20), PDTS: 1e-3, AddedDelayPerPacketS: 2e-6, WithinMaxDelay: true},
		{Row: row("fixed", 0.25, 50), PDTS: 10e-6, AddedDelayPerPacketS: 15e-6, WithinMaxDelay: true},
	}
	caps := func(d string) eeectl.DriverCaps { c, _ := eeectl.LookupDriver(d); return c }
	for _, c := range []struct {
		name          string
		port          Port
		hasEEE, eeeOn bool
		driver        string
		action        string
		words         []string
	}{
		{"settable timer", Port{TimerSettable: true, Estimates: ests}, true, true, "stmmac", ActionSetTimer,
			[]string{"set the tx LPI timer to 10 µs", "250 mW", "fixed", "link down"}},
		{"on/off only, on", Port{Estimates: ests}, true, true, "igc", ActionLeaveOn, []string{"leave EEE on", "driver-default"}},
		{"on/off only, off", Port{Estimates: ests[:2]}, true, false, "igc", ActionLeaveOff, []string{"leave EEE off"}},
		{"on/off only, worth turning on", Port{Estimates: []Estimate{ests[0], {Row: row("eee", 0.3, 0), WithinMaxDelay: true}}},
			true, false, "igc", ActionTurnOn, []string{"turn EEE on", "warning: toggling EEE on igc takes the link down and up"}},
		{"on/off only, too costly", Port{Estimates: ests[:2]}, true, true, "ixgbe", ActionTurnOff, []string{"turn EEE off", "toggling EEE on ixgbe"}},
		{"no EEE", Port{Estimates: ests}, false, false, "veth", ActionNoEEE, []string{"no EEE on this NIC: it would save about 250 mW", "if it had it"}},
	} {
		r := Recommend(c.port, c.hasEEE, c.eeeOn, caps(c.driver), 20*time.Microsecond)
		if r.Action != c.action {
			t.Errorf("%s: action %q, want %q (%s)", c.name, r.Action, c.action, r.Text)
		}
		for _, w := range c.words {
			if !strings.Contains(r.Text, w) {
				t.Errorf("%s: %q lacks %q", c.name, r.Text, w)
			}
		}
	}
}
