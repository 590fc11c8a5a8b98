package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/eeectl"
	"github.com/lpictl/lpictl/hwlink/emulate"
	"github.com/lpictl/lpictl/hwlink/hwlinktest"
)

// TestAgentCheckWhatStartNeeds (issue 24 item 7): --check refuses what the
// start would fail on or silently degrade with (a port out of range, a
// bpffs that is not one), and a start that fails after taking the state
// directory's lock removes the lock file.
func TestAgentCheckWhatStartNeeds(t *testing.T) {
	notBPF := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"agent", "--check", "--set", "metrics.listen=localhost:99999"}, "metrics.listen: port \"99999\""},
		{[]string{"agent", "--check", "--listen", "127.0.0.1:http-alt"}, "metrics.listen"},
		{[]string{"agent", "--check", "--set", "hw.eee_backend=emulated", "--set", "hw.bpffs=" + notBPF}, "hw.bpffs: " + notBPF + " is not a bpffs mount"},
		{[]string{"agent", "--check", "--set", "hw.observe=emulated", "--set", "hw.bpffs=" + notBPF}, "hw.bpffs"},
	} {
		code, _, stderr := lpictl(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, %q; want exit 2 and %q on one line", tc.args, code, stderr, tc.want)
		}
	}

	config, _, stateDir := modelSetup(t, modelPort("lpim0", "mvneta", "02:00:00:00:00:01", 250*time.Microsecond))
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	code, _, stderr := lpictl(t, "agent", "-c", config, "--listen", busy.Addr().String())
	t.Logf("start on a busy port: exit %d: %s", code, strings.TrimSpace(stderr))
	if code != 1 || !strings.Contains(stderr, "metrics.listen") {
		t.Errorf("start on a busy port: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(stateDir, "lock")); !os.IsNotExist(err) {
		t.Errorf("lock file left after the failed start: %v", err)
	}
}

// TestAgentInputEdges (issue 24 item 8): an interval beyond the maximum is
// refused; an error in a value from a flag is labelled with the flag, not
// the config file; enforce mode with no port selected warns naming the
// patterns.
func TestAgentInputEdges(t *testing.T) {
	file := writeFile(t, "agent.yaml", "mode: enforce\nports: {names: [eth0]}\n")
	for _, tc := range []struct {
		args     []string
		want     string
		wantNone string
	}{
		{[]string{"agent", "--check", "-c", file, "--interval", "100000h"}, "flag --interval: interval: must be ≤ 1m0s", "agent.yaml"},
		{[]string{"agent", "--check", "-c", file, "--set", "interval=2m"}, "--set: interval: must be ≤ 1m0s", "agent.yaml"},
		{[]string{"agent", "--check", "-c", file, "--mode", "bogus"}, "flag --mode: mode: unknown mode", "agent.yaml"},
		{[]string{"agent", "--check", "-c", file, "--listen", "nowhere"}, "flag --listen: metrics.listen: want host:port", "agent.yaml"},
		{[]string{"agent", "--check", "-c", file, "--interval", "soon"}, "flag --interval: invalid duration", "--set"},
		{[]string{"agent", "--check", "-c", writeFile(t, "big.yaml", "interval: 100000h\n")}, "big.yaml: interval: must be ≤ 1m0s", "flag"},
	} {
		code, _, stderr := lpictl(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, tc.wantNone) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, %q; want exit 2 and %q (without %q) on one line", tc.args, code, stderr, tc.want, tc.wantNone)
		}
	}

	config, _, _ := modelSetup(t, modelPort("lpim0", "mvneta", "02:00:00:00:00:01", 250*time.Microsecond))
	p := startAgent(t, config, "--ports", "eth9*")
	m := p.waitLog(`level=WARN msg="no ports selected: ([^"]*)"`)
	t.Logf("warning: %s", m[1])
	if !strings.Contains(m[1], "ports.names [eth9*]") || !strings.Contains(m[1], "none of the 1 ports") {
		t.Errorf("no-ports warning does not name the pattern: %q", m[1])
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	<-p.done
}

// TestAgentOnePortOneOwner (issue 24 item 6): two agents with different
// state directories on one emulated port: the second cannot claim it and
// writes nothing, so the first's original is restored when both stop; a
// timer the agent did not write stops it enforcing the port and is left
// in force at exit.
func TestAgentOnePortOneOwner(t *testing.T) {
	hwlinktest.RequireBPF(t)
	pair := hwlinktest.NewPair(t)
	bpffs := testBPFFS(t)
	orig := time.Millisecond
	ep, err := emulate.Attach(context.Background(), emulate.Config{Interface: pair.NameA, NetNS: hwlink.NetNS(pair.PathA),
		Preset: emulate.Preset{Name: "test", RateBps: 1e9, WakePowerW: 0.5,
			DeepSleep: &emulate.LowPower{PowerW: 0.05, Wake: 16 * time.Microsecond, Sleep: 180 * time.Microsecond}},
		Mode: emulate.ModeDeepSleep, PDT: &orig, Delay: emulate.DelayNone, BPFFS: bpffs})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ep.Detach(); ep.Close() }()
	timer := func() time.Duration {
		st, err := ep.GetEEE()
		if err != nil {
			t.Fatal(err)
		}
		return st.TxLPITimer
	}
	config := func(pdt string) string {
		dir := t.TempDir()
		path := filepath.Join(dir, "agent.yaml")
		writeAgentConfig(t, path, fmt.Sprintf(`mode: enforce
interval: 20ms
state_dir: %s
metrics: {listen: "127.0.0.1:0"}
ports: {names: [%s]}
predictor: {kind: fixed, pdt: %s}
limits: {min_change_interval: 0s, hysteresis: 0}
safety: {warmup: 0s, eee_refresh: 100ms}
hw: {netns: %s, observe: none, eee_backend: emulated, bpffs: %s}
`, filepath.Join(dir, "state"), pair.NameA, pdt, pair.PathA, bpffs))
		return path
	}
	a1 := startAgent(t, config("20us"))
	eventually(t, "the first agent's timer", func() bool { return timer() == 20*time.Microsecond })
	a2 := startAgent(t, config("40us"))
	m := a2.waitLog(`level=WARN msg="enforce: the port is owned by another process; not enforcing it".*error="([^"]*)"`)
	t.Logf("second agent: %s", m[1])
	time.Sleep(300 * time.Millisecond)
	if got := timer(); got != 20*time.Microsecond {
		t.Errorf("timer with two agents: %v, want the first's 20µs", got)
	}
	a1.stop(syscall.SIGTERM)
	a2.stop(syscall.SIGTERM)
	if got := timer(); got != orig {
		t.Errorf("timer after both stopped: %v, want the original %v", got, orig)
	}

	// A foreign write: noticed, not fought, left in force.
	a1 = startAgent(t, config("20us"))
	eventually(t, "the agent's timer", func() bool { return timer() == 20*time.Microsecond })
	foreign := 300 * time.Microsecond
	if err := ep.SetEEE(eeectl.EEESet{TxLPITimer: &foreign}); err != nil {
		t.Fatal(err)
	}
	a1.waitLog(`msg="enforce: tx LPI timer changed by someone else`)
	a1.stop(syscall.SIGTERM)
	if got := timer(); got != foreign {
		t.Errorf("timer after a foreign change and stop: %v, want the foreign %v left alone", got, foreign)
	}
}
