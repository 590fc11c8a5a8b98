package main

import (
	"encoding/json"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/lpictl/lpictl/hwlink/emulate"
	"github.com/lpictl/lpictl/hwlink/hwlinktest"
)

// TestEmulateLinkCommandVeth (privileged): the two ends of a veth pair
// attached with --link as one emulated link (the preset's per-link
// symmetry), shown by status as one link, and detached one after the
// other.
func TestEmulateLinkCommandVeth(t *testing.T) {
	hwlinktest.RequireBPF(t)
	pair := hwlinktest.NewPair(t)
	bpffs := t.TempDir()
	if err := unix.Mount("bpf", bpffs, "bpf", 0, "mode=0700"); err != nil {
		t.Skipf("needs BPF: cannot mount a bpffs: %v", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(bpffs, 0) })
	attach := func(dev, ns string) []string {
		return []string{"emulate", "attach", dev, "--netns", ns, "--preset", "eee-1000base-t", "--mode", "deep-sleep",
			"--scale", "10", "--delay", "none", "--link", "cable0", "--bpffs", bpffs}
	}
	for i, end := range [][2]string{{pair.NameA, pair.PathA}, {pair.NameB, pair.PathB}} {
		code, out, stderr := lpictl(t, attach(end[0], end[1])...)
		if code != 0 {
			t.Fatalf("attach %s: exit %d: %s", end[0], code, stderr)
		}
		want := "LPI per link: end " + string(rune('0'+i)) + " of link cable0 (handshake 522ns"
		if !strings.Contains(out, want) {
			t.Errorf("attach %s: output lacks %q:\n%s", end[0], want, out)
		}
	}
	code, out, stderr := lpictl(t, "emulate", "status", "--bpffs", bpffs)
	if code != 0 {
		t.Fatalf("status: exit %d: %s", code, stderr)
	}
	t.Logf("$ lpictl emulate status\n%s", out)
	for _, want := range []string{pair.NameA + ": LPI per link, end 0 of link cable0 (both ends attached",
		pair.NameB + ": LPI per link, end 1 of link cable0 (both ends attached"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q", want)
		}
	}
	code, out, _ = lpictl(t, "emulate", "status", "--json", "--bpffs", bpffs)
	var st []emulate.Status
	if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil || len(st) != 2 {
		t.Fatalf("status --json: exit %d, %v, %d ports", code, err, len(st))
	}
	if st[0].LPI != "per-link" || st[0].Link == nil || st[1].Link == nil || st[0].Times != st[1].Times && st[0].Now == st[1].Now {
		t.Errorf("status --json: %+v %+v", st[0].Link, st[1].Link)
	}
	for _, end := range [][2]string{{pair.NameA, pair.PathA}, {pair.NameB, pair.PathB}} {
		if code, _, stderr := lpictl(t, "emulate", "detach", end[0], "--netns", end[1], "--bpffs", bpffs); code != 0 {
			t.Fatalf("detach %s: exit %d: %s", end[0], code, stderr)
		}
	}
	if code, out, _ := lpictl(t, "emulate", "status", "--json", "--bpffs", bpffs); code != 0 || strings.TrimSpace(out) != "[]" {
		t.Errorf("status after detach: exit %d, %q", code, out)
	}
}
