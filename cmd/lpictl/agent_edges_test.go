package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
