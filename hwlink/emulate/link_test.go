package emulate

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// TestLinkConfig checks the link mode's configuration: per-link needs a
// link name fit for a file name, per-direction takes none.
func TestLinkConfig(t *testing.T) {
	base := Config{Interface: "veth0", Preset: Preset{Name: "p", WakePowerW: 1,
		DeepSleep: &LowPower{PowerW: 0.1, Wake: time.Microsecond, Sleep: time.Microsecond}}, Mode: ModeDeepSleep}
	tests := []struct {
		name string
		lpi  LPI
		link string
		hs   time.Duration
		want string // "" = valid
	}{
		{"per direction", PerDirection, "", 0, ""},
		{"per link", PerLink, "cable-a_1.x", 522 * time.Nanosecond, ""},
		{"per link without a name", PerLink, "", 0, "needs the link's name"},
		{"a name per direction", PerDirection, "a", 0, "has no link"},
		{"a path", PerLink, "../x", 0, "link name"},
		{"a hidden name", PerLink, ".x", 0, "link name"},
		{"too long", PerLink, strings.Repeat("x", 32), 0, "link name"},
		{"negative handshake", PerLink, "a", -1, "handshake"},
		{"unknown lpi", LPI(7), "", 0, "unknown lpi"},
	}
	for _, tc := range tests {
		c := base
		c.LPI, c.Link, c.Handshake = tc.lpi, tc.link, tc.hs
		err := c.Validate()
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	for _, l := range []LPI{PerDirection, PerLink} {
		if got, err := ParseLPI(" " + strings.ToUpper(l.String())); err != nil || got != l {
			t.Errorf("lpi %v: %v, %v", l, got, err)
		}
	}
	if _, err := ParseLPI("both"); err == nil {
		t.Error("lpi both accepted")
	}
}

// TestLinkClaims checks the ends' claims of a link's directory: two ends,
// a third refused, and the last to leave removes the link's folders.
func TestLinkClaims(t *testing.T) {
	bpffs := t.TempDir()
	cfg := Config{Link: "l"}
	var pl emuPlan
	j0, err := joinLink(bpffs, cfg, &pl)
	if err != nil {
		t.Fatal(err)
	}
	j1, err := joinLink(bpffs, cfg, &pl)
	if err != nil {
		t.Fatal(err)
	}
	if j0.end != 0 || j1.end != 1 || j0.shared != nil || j1.shared != nil {
		t.Fatalf("ends %d and %d", j0.end, j1.end)
	}
	if _, err := joinLink(bpffs, cfg, &pl); !errors.Is(err, ErrLinkFull) {
		t.Errorf("a third end: %v", err)
	}
	if err := j0.leave(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(j1.dir); err != nil {
		t.Errorf("one end left: %v", err)
	}
	if j2, err := joinLink(bpffs, cfg, &pl); err != nil || j2.end != 0 {
		t.Errorf("rejoining the free end: %v", err)
	} else if err := j2.leave(); err != nil {
		t.Fatal(err)
	}
	if err := j1.leave(); err != nil {
		t.Fatal(err)
	}
	if entries, err := os.ReadDir(bpffs); err != nil || len(entries) != 0 {
		t.Errorf("after the last end: %v, %v", entries, err)
	}
}
