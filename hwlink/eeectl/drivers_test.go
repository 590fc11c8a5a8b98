package eeectl

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestDriverTableDocumented keeps docs/hwlink.md and the table in step.
func TestDriverTableDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/hwlink.md")
	if err != nil {
		t.Skipf("docs not found: %v", err)
	}
	for _, c := range DriverTable() {
		if !strings.Contains(string(doc), c.Driver) {
			t.Errorf("driver %s is in the table but not in docs/hwlink.md", c.Driver)
		}
	}
}

func TestFit(t *testing.T) {
	us := time.Microsecond
	for _, c := range []struct {
		driver           string
		in, want         time.Duration
		rounded, clamped bool
	}{
		{"mvneta", 300 * us, 255 * us, false, true},
		{"mvneta", 1500 * time.Nanosecond, 2 * us, true, false},
		{"an8855", 3 * us, 4 * us, true, false},
		{"bnx2x", 0, 0x100 * us, false, true},
		{"unknown", -us, 0, false, true},
		{"unknown", 10 * time.Hour, MaxTxLPITimer, false, true},
	} {
		caps, _ := LookupDriver(c.driver)
		got, r, cl := caps.Fit(c.in)
		if got != c.want || r != c.rounded || cl != c.clamped {
			t.Errorf("%s.Fit(%v) = %v %v %v, want %v %v %v", c.driver, c.in, got, r, cl, c.want, c.rounded, c.clamped)
		}
	}
}

// TestDriverDefaultTimers: the default tx LPI timers the estimates use as
// the driver-default policy, with their sources.
func TestDriverDefaultTimers(t *testing.T) {
	for drv, want := range map[string]time.Duration{
		"st_gmac": time.Millisecond, "stmmac": time.Millisecond, "mvneta": 250 * time.Microsecond,
		"igc": 0, "veth": 0, "no-such-driver": 0,
	} {
		c, _ := LookupDriver(drv)
		if c.DefaultTimer != want {
			t.Errorf("%s: default timer %v, want %v", drv, c.DefaultTimer, want)
		}
		if (c.DefaultTimer != 0) != (c.DefaultSource != "") {
			t.Errorf("%s: default timer %v without a source (or a source without a timer): %q", drv, c.DefaultTimer, c.DefaultSource)
		}
	}
}
