package main

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/lpictl/lpictl/hwlink/emulate"
	"github.com/lpictl/lpictl/hwlink/hwlinktest"
)

// TestEmulateBadInput: every bad argument is refused with exit status 2
// and one line, before anything is changed (the device named does not
// exist, so nothing could be).
func TestEmulateBadInput(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"emulate", "attach", "lpictl-none0", "--bpffs", dir, "--mode", "deep-sleep"}, "--preset and --mode are required"},
		{[]string{"emulate", "attach", "lpictl-none0", "--bpffs", dir, "--preset", "eee-nope", "--mode", "deep-sleep"}, "unknown power preset"},
		{[]string{"emulate", "attach", "lpictl-none0", "--bpffs", dir, "--preset", "eee-1000base-t", "--mode", "turbo"}, "unknown mode"},
		{[]string{"emulate", "attach", "lpictl-none0", "--bpffs", dir, "--preset", "eee-1000base-t", "--mode", "fast-wake"},
			"preset eee-1000base-t has no fast_wake state, so mode fast-wake is not available"},
		{[]string{"emulate", "attach", "lpictl-none0", "--bpffs", dir, "--preset", "eee-100base-tx", "--mode", "hybrid"}, "has no fast_wake state"},
		{[]string{"emulate", "attach", "lpictl-none0", "--bpffs", dir, "--preset", "eee-1000base-t", "--mode", "deep-sleep", "--pdt", "soon"}, "--pdt: invalid duration"},
		{[]string{"emulate", "attach", "lpictl-none0", "--bpffs", dir, "--preset", "eee-1000base-t", "--mode", "deep-sleep", "--pdt", "-1us"}, "--pdt: negative duration"},
		{[]string{"emulate", "attach", "lpictl-none0", "--bpffs", dir, "--preset", "eee-1000base-t", "--mode", "deep-sleep", "--rate", "fast"}, "--rate: invalid rate"},
		{[]string{"emulate", "attach", "lpictl-none0", "--bpffs", dir, "--preset", "eee-1000base-t", "--mode", "deep-sleep", "--scale", "0"}, "scale"},
		{[]string{"emulate", "attach", "lpictl-none0", "--bpffs", dir, "--preset", "eee-1000base-t", "--mode", "deep-sleep", "--driver", "nic9000"}, "driver table"},
		{[]string{"emulate", "attach", "lpictl-none0", "--bpffs", dir, "--preset", "eee-1000base-t", "--mode", "deep-sleep", "--delay", "later"}, "--delay: unknown delay method"},
		{[]string{"emulate", "attach", "lpictl-none0", "--bpffs", dir, "--preset", "eee-1000base-t", "--mode", "deep-sleep", "--attach", "xdp"}, "--attach"},
		{[]string{"emulate", "attach", "lpictl-none0", "--bpffs", dir, "--preset", "eee-1000base-t", "--mode", "deep-sleep", "--netns", "no-such-ns-lpictl"}, "no such named network namespace"},
		{[]string{"emulate", "attach", "lpictl-none0", "--preset", "eee-1000base-t", "--mode", "deep-sleep", "--bpffs", dir}, "no such device"},
		{[]string{"emulate", "attach", "--preset", "eee-1000base-t", "--mode", "deep-sleep"}, "accepts 1 arg"},
		{[]string{"emulate", "detach", "lpictl-none0", "--bpffs", dir}, "no such device"},
		{[]string{"emulate", "status", "lpictl-none0", "--bpffs", dir}, "not emulated"},
		{[]string{"emulate", "status", "--frobnicate"}, "unknown flag"},
		{[]string{"emulate", "attach", "lpictl-none0", "--bpffs", dir, "--preset", "eee-1000base-t", "--mode", "deep-sleep", "--lpi", "per-link"}, "--lpi per-link needs --link NAME"},
		{[]string{"emulate", "attach", "lpictl-none0", "--bpffs", dir, "--preset", "eee-1000base-t", "--mode", "deep-sleep", "--lpi", "sideways"}, "--lpi: unknown lpi"},
		{[]string{"emulate", "attach", "lpictl-none0", "--bpffs", dir, "--preset", "eee-1000base-t", "--mode", "deep-sleep", "--lpi", "per-direction", "--link", "c0"}, "has no link"},
		{[]string{"emulate", "attach", "lpictl-none0", "--bpffs", dir, "--preset", "eee-100base-tx", "--mode", "deep-sleep", "--link", "c0"}, "preset eee-100base-tx is per direction"},
		{[]string{"emulate", "attach", "lpictl-none0", "--bpffs", dir, "--preset", "eee-1000base-t", "--mode", "deep-sleep", "--link", "../c0"}, "link name"},
		{[]string{"emulate", "attach", "lpictl-none0", "--bpffs", dir, "--preset", "eee-1000base-t", "--mode", "deep-sleep", "--link", "c0", "--handshake", "soon"}, "--handshake"},
	}
	for _, tc := range tests {
		code, _, stderr := lpictl(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q on one line", tc.args, code, stderr, tc.want)
		}
	}
}

func TestParseRate(t *testing.T) {
	for in, want := range map[string]uint64{
		"": 0, "none": 0, "0": 0, "1G": 1e9, "100M": 1e8, "2.5Gbit/s": 2.5e9, "10e9": 1e10, "64k": 64e3,
		"1gbps": 1e9, "preset": 4e11, "400G": 4e11,
	} {
		got, err := emulate.ParseRate(in, 400e9)
		if err != nil || got != want {
			t.Errorf("emulate.ParseRate(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"fast", "-1G", "1X", "G", "1e20"} {
		if _, err := emulate.ParseRate(in, 0); err == nil {
			t.Errorf("emulate.ParseRate(%q) accepted", in)
		}
	}
}

// TestEmulateStatusEmpty: no emulated port is an empty list, not an error.
func TestEmulateStatusEmpty(t *testing.T) {
	dir := t.TempDir()
	code, out, stderr := lpictl(t, "emulate", "status", "--json", "--bpffs", dir)
	if code != 0 || strings.TrimSpace(out) != "[]" {
		t.Errorf("status --json: exit %d, %q, %q", code, out, stderr)
	}
	code, out, _ = lpictl(t, "emulate", "status", "--bpffs", dir)
	if code != 0 || !strings.Contains(out, "no emulated EEE ports") {
		t.Errorf("status: exit %d, %q", code, out)
	}
}

// jsonKeys lists the keys a value marshals to, nested objects as a.b.
func jsonKeys(prefix string, v any, out *[]string) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	for k, sub := range m {
		*out = append(*out, prefix+k)
		jsonKeys(prefix+k+".", sub, out)
	}
}

// TestEmulateCommandVeth runs attach, status (text and JSON) and detach on
// one end of a veth pair in test namespaces, with probes crossing the
// emulated port in between, and checks that detach leaves nothing.
func TestEmulateCommandVeth(t *testing.T) {
	hwlinktest.RequireBPF(t)
	pair := hwlinktest.NewPair(t)
	bpffs := t.TempDir()
	if err := unix.Mount("bpf", bpffs, "bpf", 0, "mode=0700"); err != nil {
		t.Skipf("needs BPF: cannot mount a bpffs: %v", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(bpffs, 0) })

	attach := []string{"emulate", "attach", pair.NameA, "--netns", pair.PathA, "--preset", "eee-1000base-t",
		"--mode", "deep-sleep", "--pdt", "0", "--scale", "10", "--bpffs", bpffs}
	code, out, stderr := lpictl(t, attach...)
	if code == 1 && strings.Contains(stderr, "CONFIG_NET_SCH_FQ") {
		t.Logf("no fq on this kernel, attaching with --delay spin: %s", strings.TrimSpace(stderr))
		attach = append(attach, "--delay", "spin")
		code, out, stderr = lpictl(t, attach...)
	}
	if code != 0 {
		t.Fatalf("attach: exit %d: %s", code, stderr)
	}
	t.Logf("$ lpictl %s\n%s", strings.Join(attach, " "), out)
	for _, want := range []string{pair.NameA + ": emulated EEE port attached via tcx", "preset eee-1000base-t, deep-sleep: Deep Sleep t_w 165µs t_s 1.82ms (scale 10)",
		"tx LPI timer 0s, driver profile st_gmac, rate none", "pins " + bpffs} {
		if !strings.Contains(out, want) {
			t.Errorf("attach output lacks %q", want)
		}
	}
	if code, _, stderr := lpictl(t, attach...); code != 1 || !strings.Contains(stderr, "already emulated") {
		t.Errorf("second attach: exit %d, %q", code, stderr)
	}

	const probes = 50
	hwlinktest.SendUDP(t, pair.NSA, pair.AddrA, pair.NSB, pair.AddrB, hwlinktest.Traffic{Count: probes, Interval: 2 * time.Millisecond, Payload: 64})

	code, out, stderr = lpictl(t, "emulate", "status", "--bpffs", bpffs)
	if code != 0 {
		t.Fatalf("status: exit %d: %s", code, stderr)
	}
	t.Logf("$ lpictl emulate status\n%s", out)
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[1], pair.NameA) ||
		!strings.Contains(lines[1], "eee-1000base-t") || !strings.Contains(lines[1], "deep-sleep") {
		t.Errorf("status table:\n%s", out)
	}

	code, out, stderr = lpictl(t, "emulate", "status", "--json", "--bpffs", bpffs)
	if code != 0 {
		t.Fatalf("status --json: exit %d: %s", code, stderr)
	}
	var got []map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got) != 1 {
		t.Fatalf("status --json: %v, %d ports\n%s", err, len(got), out)
	}
	// Every key of emulate.Status is there, even for zero values.
	var zero map[string]any
	b, _ := json.Marshal(emulate.Status{})
	_ = json.Unmarshal(b, &zero)
	var wantKeys, gotKeys []string
	jsonKeys("", zero, &wantKeys)
	jsonKeys("", got[0], &gotKeys)
	slices.Sort(wantKeys)
	slices.Sort(gotKeys)
	if !reflect.DeepEqual(gotKeys, wantKeys) {
		t.Errorf("JSON keys\n%v\nwant\n%v", gotKeys, wantKeys)
	}
	var s emulate.Status
	var arr []emulate.Status
	if err := json.Unmarshal([]byte(out), &arr); err != nil {
		t.Fatal(err)
	}
	s = arr[0]
	sum := s.Times.Wake + s.Times.GoingDown + s.Times.FastWake + s.Times.DeepSleep + s.Times.GoingUp
	if s.Device != pair.NameA || s.Packets < probes || s.Wakeups < probes || s.Hits != 0 || sum != s.Elapsed ||
		s.EnergyJ <= 0 || s.EnergyJ >= s.AlwaysOnJ || s.Preset != "eee-1000base-t" || s.WakePowerW != 0.5 || s.DeepSleep.PowerW != 0.05 {
		t.Errorf("status %+v", s)
	}

	code, out, stderr = lpictl(t, "emulate", "detach", pair.NameA, "--netns", pair.PathA, "--bpffs", bpffs)
	if code != 0 || !strings.Contains(out, pair.NameA+": emulated EEE port detached") {
		t.Fatalf("detach: exit %d, %q, %q", code, out, stderr)
	}
	t.Logf("$ lpictl emulate detach %s\n%s", pair.NameA, out)
	if code, out, _ := lpictl(t, "emulate", "status", "--json", "--bpffs", bpffs); code != 0 || strings.TrimSpace(out) != "[]" {
		t.Errorf("status after detach: exit %d, %q", code, out)
	}
	if code, _, stderr := lpictl(t, "emulate", "detach", pair.NameA, "--netns", pair.PathA, "--bpffs", bpffs); code != 2 || !strings.Contains(stderr, "not emulated") {
		t.Errorf("second detach: exit %d, %q", code, stderr)
	}
	// Nothing left on the interface.
	if err := hwlinktest.Do(pair.NSA, func() error {
		res, err := link.QueryPrograms(link.QueryOptions{Target: pair.IndexA, Attach: ebpf.AttachTCXEgress})
		if err == nil && len(res.Programs) != 0 {
			t.Errorf("%d TCX programs left", len(res.Programs))
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	h, err := netlink.NewHandleAt(pair.NSA)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	qs, err := h.QdiscList(&netlink.Device{LinkAttrs: netlink.LinkAttrs{Index: pair.IndexA}})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range qs {
		if q.Type() == "fq" || q.Type() == "clsact" {
			t.Errorf("qdisc %s left behind", q.Type())
		}
	}
}
