package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/lpictl/lpictl/hwlink/hwlinktest"
)

// testBPFFS mounts a bpffs of the test's own in a temporary folder.
func testBPFFS(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := unix.Mount("bpf", dir, "bpf", 0, "mode=0700"); err != nil {
		t.Skipf("needs BPF: cannot mount a bpffs: %v", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
	return dir
}

// namedVeth creates a named network namespace (as `ip netns add`, for
// `ip netns exec`) holding a veth pair, both ends up. Cleanup removes it.
func namedVeth(t *testing.T) (ns, dev string) {
	t.Helper()
	hwlinktest.RequireRoot(t)
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs iproute2's ip (ip netns exec)")
	}
	ns = fmt.Sprintf("lpiedge%d", os.Getpid())
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	run("netns", "add", ns)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	run("-n", ns, "link", "add", "lpiv0", "type", "veth", "peer", "name", "lpiv1")
	run("-n", ns, "link", "set", "lpiv0", "up")
	run("-n", ns, "link", "set", "lpiv1", "up")
	return ns, "lpiv0"
}

// egressFilters lists the clsact egress filters of dev in the named
// namespace ns.
func egressFilters(t *testing.T, ns, dev string) string {
	t.Helper()
	out, _ := exec.Command("ip", "netns", "exec", ns, "tc", "filter", "show", "dev", dev, "egress").CombinedOutput()
	return strings.TrimSpace(string(out))
}

var emuArgs = []string{"--preset", "eee-1000base-t", "--mode", "deep-sleep", "--pdt", "0", "--scale", "10", "--delay", "spin"}

// TestEmulateUnderIPNetnsExec (issue 24 item 1): `ip netns exec NS lpictl
// emulate attach` runs in a mount namespace of its own, where a bpffs
// mounted for the pins vanishes with the command. The test mounts such a
// private bpffs over its own (as ip netns exec's fresh /sys hides the
// host's /sys/fs/bpf): the pins must land in the bpffs outside, so that
// status and detach — from the host with --netns, or under ip netns exec —
// find the port, and detach leaves no filter behind. A bpffs that exists
// only inside is refused with one line.
func TestEmulateUnderIPNetnsExec(t *testing.T) {
	hwlinktest.RequireBPF(t)
	ns, dev := namedVeth(t)
	bpffs := testBPFFS(t)
	bin := agentBinary(t)
	// The command's own mount namespace with a bpffs of its own at path,
	// then lpictl exec'd in it (so its parent is the test, outside).
	inNS := func(mountAt string, args ...string) (int, string) {
		script := `mount -t bpf bpf "$1" && shift && exec "$@"`
		if mountAt == "" {
			script = `shift; exec "$@"`
		}
		cmd := exec.Command("ip", append([]string{"netns", "exec", ns, "sh", "-c", script, "sh", mountAt, bin}, args...)...)
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, string(out)
	}

	attach := append([]string{"emulate", "attach", dev, "--attach", "tc", "--bpffs", bpffs}, emuArgs...)
	code, out := inNS(bpffs, attach...)
	t.Logf("$ ip netns exec %s lpictl %s   (private bpffs at %s)\n%s", ns, strings.Join(attach, " "), bpffs, out)
	if code != 0 {
		t.Fatalf("attach: exit %d", code)
	}
	// From the host: --netns selects the namespace.
	code, st, stderr := lpictl(t, "emulate", "status", "--netns", ns, "--bpffs", bpffs)
	t.Logf("$ lpictl emulate status --netns %s\n%s%s", ns, st, stderr)
	if code != 0 || !strings.Contains(st, dev) || strings.Contains(st, "(gone)") {
		t.Errorf("status --netns from the host: exit %d, %q %q", code, st, stderr)
	}
	if code, st, _ := lpictl(t, "emulate", "status", "--netns", "/proc/self/ns/net", "--bpffs", bpffs); code != 0 || strings.Contains(st, dev+" ") {
		t.Errorf("status --netns of another namespace lists the port: exit %d, %q", code, st)
	}
	// Under ip netns exec (no private mount): status and detach.
	code, out = inNS("", "emulate", "status", dev, "--bpffs", bpffs)
	if code != 0 || !strings.Contains(out, dev) {
		t.Errorf("status under ip netns exec: exit %d, %q", code, out)
	}
	code, out = inNS("", "emulate", "detach", dev, "--bpffs", bpffs)
	t.Logf("$ ip netns exec %s lpictl emulate detach %s\n%s", ns, dev, out)
	if code != 0 || !strings.Contains(out, "detached") {
		t.Errorf("detach under ip netns exec: exit %d, %q", code, out)
	}
	if f := egressFilters(t, ns, dev); f != "" {
		t.Errorf("filter left after detach:\n%s", f)
	}

	// A bpffs that only this command's namespace has: refused, nothing
	// attached.
	private := t.TempDir()
	attach = append([]string{"emulate", "attach", dev, "--attach", "tc", "--bpffs", private}, emuArgs...)
	code, out = inNS(private, attach...)
	t.Logf("$ ip netns exec %s lpictl %s   (bpffs only inside)\n%s", ns, strings.Join(attach, " "), out)
	if code != 2 || !strings.Contains(out, "private to this command's mount namespace") || strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Errorf("attach on a private bpffs: exit %d, %q; want exit 2 and one line", code, out)
	}
	if f := egressFilters(t, ns, dev); f != "" {
		t.Errorf("refused attach left a filter:\n%s", f)
	}
}

// TestEmulateOnePerDevice (issue 24 items 2 and 3): a second attach on a
// device fails whatever bpffs it names, and leaves the first emulator as
// it was (its clsact filter or TCX program, its status).
func TestEmulateOnePerDevice(t *testing.T) {
	hwlinktest.RequireBPF(t)
	pair := hwlinktest.NewPair(t)
	b1, b2 := testBPFFS(t), testBPFFS(t)
	for _, via := range []string{"tc", "tcx"} {
		t.Run(via, func(t *testing.T) {
			base := append([]string{"emulate", "attach", pair.NameA, "--netns", pair.PathA, "--attach", via}, emuArgs...)
			if code, _, stderr := lpictl(t, append(base, "--bpffs", b1)...); code != 0 {
				t.Fatalf("first attach: exit %d: %s", code, stderr)
			}
			defer lpictl(t, "emulate", "detach", pair.NameA, "--netns", pair.PathA, "--bpffs", b1)
			code, _, stderr := lpictl(t, append(base, "--bpffs", b2)...)
			t.Logf("second attach (other bpffs): exit %d: %s", code, strings.TrimSpace(stderr))
			if code != 1 || !strings.Contains(stderr, "already emulated") {
				t.Errorf("second attach: exit %d, %q; want exit 1, already emulated", code, stderr)
			}
			if code, out, _ := lpictl(t, "emulate", "status", "--json", "--bpffs", b2); code != 0 || strings.TrimSpace(out) != "[]" {
				t.Errorf("second bpffs holds pins: %q", out)
			}
			code, out, _ := lpictl(t, "emulate", "status", "--bpffs", b1)
			if code != 0 || !strings.Contains(out, pair.NameA) || strings.Contains(out, "(gone)") {
				t.Errorf("first emulator after the failed attach: %q", out)
			}
			h, err := netlink.NewHandleAt(pair.NSA)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			filters, err := h.FilterList(&netlink.Device{LinkAttrs: netlink.LinkAttrs{Index: pair.IndexA}}, netlink.HANDLE_MIN_EGRESS)
			if via == "tc" && (err != nil || len(filters) != 1) {
				t.Errorf("egress filters after the failed attach: %d (%v), want the first's", len(filters), err)
			}
			if code, out, stderr := lpictl(t, "emulate", "detach", pair.NameA, "--netns", pair.PathA, "--bpffs", b1); code != 0 {
				t.Errorf("detach the first: exit %d, %q %q", code, out, stderr)
			}
		})
	}
}

// TestEmulateDefaultDelay (issue 24 item 4): without --delay, attach works
// on any kernel: edt where fq exists, else spin.
func TestEmulateDefaultDelay(t *testing.T) {
	hwlinktest.RequireBPF(t)
	pair := hwlinktest.NewPair(t)
	bpffs := testBPFFS(t)
	code, out, stderr := lpictl(t, "emulate", "attach", pair.NameA, "--netns", pair.PathA, "--preset", "eee-1000base-t",
		"--mode", "deep-sleep", "--bpffs", bpffs)
	t.Logf("attach without --delay: exit %d\n%s%s", code, out, stderr)
	if code != 0 || !(strings.Contains(out, "(delay edt") || strings.Contains(out, "(delay spin")) {
		t.Fatalf("attach without --delay: exit %d, %q %q", code, out, stderr)
	}
	if code, _, stderr := lpictl(t, "emulate", "detach", pair.NameA, "--netns", pair.PathA, "--bpffs", bpffs); code != 0 {
		t.Errorf("detach: %s", stderr)
	}
}

// TestEmulatePhysicalDevice (issue 24 item 5): a device that is not
// virtual (the test namespace's lo: no rtnetlink kind, like a NIC) is
// refused with one line naming --allow-physical; --check prints what attach
// would replace and changes nothing.
func TestEmulatePhysicalDevice(t *testing.T) {
	hwlinktest.RequireBPF(t)
	pair := hwlinktest.NewPair(t)
	bpffs := testBPFFS(t)
	base := []string{"emulate", "attach", "--netns", pair.PathA, "--preset", "eee-1000base-t", "--mode", "deep-sleep", "--bpffs", bpffs}
	code, _, stderr := lpictl(t, append(base, "lo")...)
	t.Logf("attach lo: exit %d: %s", code, strings.TrimSpace(stderr))
	if code != 2 || !strings.Contains(stderr, "--allow-physical") || !strings.Contains(stderr, "not a virtual device") ||
		strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("attach lo: exit %d, %q; want exit 2, one line naming --allow-physical", code, stderr)
	}
	if code, out, _ := lpictl(t, "emulate", "status", "--json", "--bpffs", bpffs); code != 0 || strings.TrimSpace(out) != "[]" {
		t.Errorf("refused attach left a port: %q", out)
	}
	code, out, stderr := lpictl(t, append(base, "lo", "--check")...)
	t.Logf("attach lo --check: exit %d\n%s%s", code, out, stderr)
	if code != 0 || !strings.Contains(out, "kind device (not virtual)") || !strings.Contains(out, "attach would refuse") {
		t.Errorf("--check on lo: exit %d, %q %q", code, out, stderr)
	}

	h, err := netlink.NewHandleAt(pair.NSA)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	qdiscs := func() string {
		qs, err := h.QdiscList(&netlink.Device{LinkAttrs: netlink.LinkAttrs{Index: pair.IndexA}})
		if err != nil {
			t.Fatal(err)
		}
		var s []string
		for _, q := range qs {
			s = append(s, q.Type())
		}
		return strings.Join(s, ",")
	}
	before := qdiscs()
	code, out, stderr = lpictl(t, append(base, pair.NameA, "--check", "--delay", "edt")...)
	t.Logf("attach %s --check --delay edt: exit %d\n%s%s", pair.NameA, code, out, stderr)
	if code != 0 || !strings.Contains(out, "kind veth (virtual)") || !strings.Contains(out, "replaced by one fq root qdisc") ||
		!strings.Contains(out, "attach would go ahead; nothing was changed") {
		t.Errorf("--check on veth: exit %d, %q %q", code, out, stderr)
	}
	if after := qdiscs(); after != before {
		t.Errorf("--check changed the qdiscs: %s → %s", before, after)
	}
	if _, err := os.Stat(filepath.Join(bpffs, "lpictl")); err == nil {
		t.Error("--check created pins")
	}

	// With the flag, attach goes ahead (accounting only).
	code, _, stderr = lpictl(t, append(base, "lo", "--allow-physical", "--delay", "none")...)
	if code != 0 {
		t.Fatalf("attach lo --allow-physical: exit %d, %s", code, stderr)
	}
	if code, _, stderr := lpictl(t, "emulate", "detach", "lo", "--netns", pair.PathA, "--bpffs", bpffs); code != 0 {
		t.Errorf("detach lo: %s", stderr)
	}
}
