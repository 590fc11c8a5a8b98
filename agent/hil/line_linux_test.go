package hil

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/features"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/lpictl/lpictl/hwlink/emulate"
)

func requireBPF(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates network namespaces, mounts a bpffs, loads eBPF (run `make test` as root)")
	}
	if err := features.HaveProgramType(ebpf.SchedCLS); err != nil {
		t.Skipf("needs BPF: cannot load sched_cls programs: %v", err)
	}
}

// assertGone checks that nothing of line is left.
func assertGone(t *testing.T, l *Line, names []string) {
	t.Helper()
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(netnsDir, n)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("namespace %s left (%v)", n, err)
		}
	}
	for _, m := range mountPoints() {
		if strings.HasPrefix(m, l.Work) {
			t.Errorf("mount %s left", m)
		}
	}
	if _, err := os.Stat(l.Work); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("work directory %s left (%v)", l.Work, err)
	}
}

// TestLineTrafficAlwaysOn builds the line, emulates its ports always-on,
// runs a little of every built-in flow kind and tears everything down.
func TestLineTrafficAlwaysOn(t *testing.T) {
	requireBPF(t)
	cfg, err := Parse([]byte(`
port: {rate: 1G}
traffic:
  duration: 600ms
  settle: 0s
  flows:
    - {kind: probe, interval: 2ms}
    - {kind: onoff, interval: 200us, on_time: 2ms, off_time: 10ms}
    - {kind: poisson, from: b, rate: 500}
    - {kind: tcp, start: 300ms, bytes: 1000000}
`), "test.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	l, err := BuildLine()
	if err != nil {
		t.Fatal(err)
	}
	names := l.NetNSNames()
	defer func() {
		if err := l.Close(); err != nil {
			t.Error(err)
		}
		assertGone(t, l, names)
	}()
	if len(names) != 3 {
		t.Fatalf("namespaces %v", names)
	}
	delay, _, err := resolveDelay("auto", l.FQ)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	emus, err := attachEmulators(ctx, cfg, l, emulate.ModeAlwaysOn, delay)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := RunTraffic(ctx, cfg, l, 1, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := emus.status()
	if err != nil {
		t.Fatal(err)
	}
	if err := emus.detach(); err != nil {
		t.Fatal(err)
	}
	for _, f := range tr.Flows {
		t.Logf("flow %d %s: sent %d received %d lost %d bytes %d/%d %.3g b/s lat %.1fµs rtt %.1fµs %s", f.Index, f.Kind,
			f.Sent, f.Received, f.Lost, f.BytesSent, f.BytesReceived, f.ThroughputBps, 1e6*f.Latency.Mean, 1e6*f.RTT.Mean, f.Skipped)
		if f.Sent == 0 || f.BytesReceived == 0 {
			t.Errorf("flow %d %s sent %d, received %d bytes", f.Index, f.Kind, f.Sent, f.BytesReceived)
		}
	}
	if tr.RTT.Count < 100 || tr.RTT.Mean <= 0 {
		t.Errorf("rtt %+v", tr.RTT)
	}
	for i, s := range st {
		t.Logf("%s: packets %d idle %d hits %d misses %d", LinePorts[i].Dev, s.Packets, s.IdlePeriods, s.Hits, s.Misses)
		if s.Packets == 0 || s.Misses != 0 || s.Saving != 0 {
			t.Errorf("%s: always-on port: %+v", LinePorts[i].Dev, s)
		}
	}
	var sb strings.Builder
	if _, err := WriteVEF(&sb, tr.Msgs); err != nil {
		t.Fatal(err)
	}
	t.Logf("VEF: %d messages, %d bytes", len(tr.Msgs), sb.Len())
}

// TestCleanupStale: what a killed run left (its namespaces, its work
// directory with a bpffs mounted in it) is removed; a live run's is not.
func TestCleanupStale(t *testing.T) {
	requireBPF(t)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	pid := dead.Process.Pid
	stale := fmt.Sprintf("%s%d-a", namePrefix, pid)
	live := fmt.Sprintf("%s%d-x", namePrefix, os.Getpid())
	for _, n := range []string{stale, live} {
		h, err := newNamedNS(n)
		if err != nil {
			t.Fatal(err)
		}
		h.Close()
	}
	t.Cleanup(func() { _ = netns.DeleteNamed(live); _ = netns.DeleteNamed(stale) })
	work, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", namePrefix, pid))
	if err != nil {
		t.Fatal(err)
	}
	fs := filepath.Join(work, "bpffs")
	if err := os.Mkdir(fs, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("bpf", fs, "bpf", 0, "mode=0700"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Unmount(fs, unix.MNT_DETACH); _ = os.RemoveAll(work) })
	removed, err := CleanupStale()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"namespace " + stale, "mount " + fs, "directory " + work}
	for _, w := range want {
		if !slicesContains(removed, w) {
			t.Errorf("removed %v, want %q among them", removed, w)
		}
	}
	if _, err := os.Stat(filepath.Join(netnsDir, stale)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale namespace left: %v", err)
	}
	if _, err := os.Stat(work); !errors.Is(err, os.ErrNotExist) || isMountedUnder(work) {
		t.Errorf("stale work directory left: %v", err)
	}
	if _, err := os.Stat(filepath.Join(netnsDir, live)); err != nil {
		t.Errorf("a live run's namespace was removed: %v", err)
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
