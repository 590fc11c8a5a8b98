package main

import (
	"strings"
	"testing"
	"time"

	"github.com/lpictl/lpictl/hwlink/eeectl"
)

// TestRecommendWording: the advice fits what the driver can do.
func TestRecommendWording(t *testing.T) {
	ests := []portsWhatIfEstimate{
		{Policy: "always-on", Kind: "always-on", Mode: "deep-sleep", WithinMaxDelay: true},
		{Policy: "eee", Kind: "eee", Mode: "deep-sleep", SavedW: 0.30, SavedPct: 60, AddedDelayPerPacketS: 30e-6},
		{Policy: "driver-default", Kind: "driver-default", Mode: "deep-sleep", PDTS: 1e-3, SavedW: 0.10, SavedPct: 20, AddedDelayPerPacketS: 2e-6, WithinMaxDelay: true},
		{Policy: "fixed", Kind: "fixed", Mode: "deep-sleep", PDTS: 10e-6, SavedW: 0.25, SavedPct: 50, AddedDelayPerPacketS: 15e-6, WithinMaxDelay: true},
	}
	caps := func(d string) eeectl.DriverCaps { c, _ := eeectl.LookupDriver(d); return c }
	for _, c := range []struct {
		name          string
		port          portsWhatIfPort
		hasEEE, eeeOn bool
		driver        string
		action        string
		words         []string
	}{
		{"settable timer", portsWhatIfPort{TimerSettable: true, Estimates: ests}, true, true, "stmmac", recSetTimer,
			[]string{"set the tx LPI timer to 10 µs", "250 mW", "fixed", "link down"}},
		{"on/off only, on", portsWhatIfPort{Estimates: ests}, true, true, "igc", recLeaveOn, []string{"leave EEE on", "driver-default"}},
		{"on/off only, off", portsWhatIfPort{Estimates: ests[:2]}, true, false, "igc", recLeaveOff, []string{"leave EEE off"}},
		{"on/off only, worth turning on", portsWhatIfPort{Estimates: []portsWhatIfEstimate{ests[0], {Policy: "eee", Kind: "eee", Mode: "deep-sleep", SavedW: 0.3, WithinMaxDelay: true}}},
			true, false, "igc", recTurnOn, []string{"turn EEE on", "warning: toggling EEE on igc takes the link down and up"}},
		{"on/off only, too costly", portsWhatIfPort{Estimates: ests[:2]}, true, true, "ixgbe", recTurnOff, []string{"turn EEE off", "toggling EEE on ixgbe"}},
		{"no EEE", portsWhatIfPort{Estimates: ests}, false, false, "veth", recNoEEE, []string{"no EEE on this NIC: it would save about 250 mW", "if it had it"}},
	} {
		r := recommendPort(c.port, c.hasEEE, c.eeeOn, caps(c.driver), 20*time.Microsecond)
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
