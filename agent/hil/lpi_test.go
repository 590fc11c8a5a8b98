package hil

import (
	"strings"
	"testing"
	"time"

	"github.com/lpictl/lpictl/sim/power"
)

// TestPortLPI: port.lpi takes preset (the default: the preset's PHY's,
// eee-1000base-t per link, eee-100base-tx per direction), per-direction
// and per-link, sim.lpi follows it unless set, and the cables name the
// links.
func TestPortLPI(t *testing.T) {
	for _, c := range []struct {
		sets     []string
		port     power.LPI
		sim      power.LPI
		wantErr  string
		linkNote bool
	}{
		{nil, power.PerLink, power.PerLink, "", true},
		{[]string{"port.lpi=preset"}, power.PerLink, power.PerLink, "", true},
		{[]string{"port.preset=eee-100base-tx", "port.rate=100M"}, power.PerDirection, power.PerDirection, "", false},
		{[]string{"port.lpi=per-direction"}, power.PerDirection, power.PerDirection, "", false},
		{[]string{"port.lpi=per-link"}, power.PerLink, power.PerLink, "", true},
		{[]string{"port.lpi=per-link", "sim.lpi=per-direction"}, power.PerLink, power.PerDirection, "", true},
		{[]string{"port.lpi=sideways"}, "", "", "port.lpi: unknown lpi", false},
	} {
		cfg, err := Parse([]byte("traffic: {flows: [{kind: probe}]}\n"), "t.yaml", c.sets)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%v: %v, want %q", c.sets, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", c.sets, err)
		}
		if cfg.PortLPI() != c.port || cfg.SimLPI() != c.sim {
			t.Errorf("%v: port %s, sim %s", c.sets, cfg.PortLPI(), cfg.SimLPI())
		}
		if got := strings.Contains(portLPINote(cfg), "one emulated link"); got != c.linkNote {
			t.Errorf("%v: note %q", c.sets, portLPINote(cfg))
		}
	}
	for _, p := range LinePorts {
		want := map[string]string{"a0": "a-s", "s0": "a-s", "s1": "b-s", "b0": "b-s"}[p.Dev]
		if got := cableName(p); got != want {
			t.Errorf("%s: cable %q, want %q", p.Dev, got, want)
		}
	}
}

// TestMissCostPerLink: the ledger's reserve c is the scaled t_s + t_w
// (eee-1000base-t Deep Sleep ×10: 1.82 ms + 165 µs), plus per link the
// handshake's round trip 2H, H = 64 B at 1 Gb/s + 10 ns = 522 ns.
func TestMissCostPerLink(t *testing.T) {
	for _, c := range []struct {
		sets []string
		want time.Duration
	}{
		{[]string{"port.rate=1G", "port.lpi=per-direction"}, 1985 * time.Microsecond},
		{[]string{"port.rate=1G", "port.lpi=per-link"}, 1985*time.Microsecond + 1044*time.Nanosecond},
	} {
		cfg, err := Parse([]byte("port: {preset: eee-1000base-t, mode: deep-sleep, scale: 10}\ntraffic: {flows: [{kind: probe}]}\n"), "t.yaml", c.sets)
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.MissCost(); got != c.want {
			t.Errorf("%v: MissCost %v, want %v", c.sets, got, c.want)
		}
	}
}
