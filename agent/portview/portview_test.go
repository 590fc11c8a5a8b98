package portview

import (
	"strings"
	"testing"

	"github.com/lpictl/lpictl/hwlink/emulate"
)

func TestSpeed(t *testing.T) {
	for bps, want := range map[uint64]string{0: "unknown", 1e9: "1G", 25e9: "25G", 100e6: "100M", 2500e6: "2500M"} {
		if got := Speed(bps); got != want {
			t.Errorf("Speed(%d) = %q, want %q", bps, got, want)
		}
	}
}

func TestEmulatorViews(t *testing.T) {
	if got := Removed(emulate.Status{FQAdded: true}); got != "program, pins and fq root qdisc removed" {
		t.Errorf("removed %q", got)
	}
	var b strings.Builder
	if err := WriteEmulators(&b, nil); err != nil || !strings.HasPrefix(b.String(), "no emulated EEE ports") {
		t.Errorf("empty table %q, %v", b.String(), err)
	}
	b.Reset()
	WriteAttached(&b, emulate.Status{Device: "veth0", Mode: "always-on", ClsactAdded: true})
	if s := b.String(); !strings.Contains(s, "added clsact qdisc)") || !strings.Contains(s, "always-on: never sleeps") || !strings.Contains(s, "rate none") {
		t.Errorf("attached:\n%s", s)
	}
	b.Reset()
	WriteCheck(&b, emulate.CheckResult{Device: "eth0", Kind: "device", Refused: "not virtual"})
	if s := b.String(); !strings.Contains(s, "eth0: kind device (not virtual)") || !strings.Contains(s, "egress filters: none") ||
		!strings.HasSuffix(s, "attach would refuse: not virtual\n") {
		t.Errorf("check:\n%s", s)
	}
}
