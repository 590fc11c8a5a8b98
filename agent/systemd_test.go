package agent_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lpictl/lpictl/agent"
)

// notes records sd_notify states.
type notes struct {
	mu sync.Mutex
	s  []string
}

func (n *notes) add(s string) { n.mu.Lock(); n.s = append(n.s, s); n.mu.Unlock() }

func (n *notes) count(prefix string) (c int, last string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, s := range n.s {
		if strings.HasPrefix(s, prefix) {
			c++
			last = s
		}
	}
	return c, last
}

func startNotify(t *testing.T, cfg agent.Config, be agent.Backend) (*notes, *running) {
	t.Helper()
	n := &notes{}
	a, err := agent.New(agent.Options{Config: cfg, Backend: be, Notify: n.add, Version: "test", Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{a: a, cancel: cancel, done: make(chan error, 1), hup: make(chan struct{}, 1)}
	go func() { r.done <- a.Run(ctx, r.hup) }()
	t.Cleanup(func() { r.stop(t) })
	waitFor(t, "agent ready", a.Ready)
	return n, r
}

func TestWatchdogPingsWhenEnabled(t *testing.T) {
	t.Setenv("WATCHDOG_USEC", "40000") // 40ms: a ping every 20ms
	t.Setenv("WATCHDOG_PID", "")
	n, _ := startNotify(t, testConfig(t, agent.Observe, "eth0"), newFake("eth0"))
	waitFor(t, "watchdog pings", func() bool { c, _ := n.count(agent.NotifyWatchdog); return c >= 3 })
}

func TestNoWatchdogWithoutEnv(t *testing.T) {
	t.Setenv("WATCHDOG_USEC", "")
	n, _ := startNotify(t, testConfig(t, agent.Observe, "eth0"), newFake("eth0"))
	time.Sleep(100 * time.Millisecond)
	if c, _ := n.count(agent.NotifyWatchdog); c != 0 {
		t.Errorf("%d watchdog pings without $WATCHDOG_USEC", c)
	}
	if c, _ := n.count(agent.NotifyReady); c != 1 {
		t.Errorf("READY=1 sent %d times", c)
	}
}

func TestStatusAfterRounds(t *testing.T) {
	t.Setenv("WATCHDOG_USEC", "")
	be := newFake("eth0", "eth1")
	be.ports["eth1"].errOnSet = 100 // quarantined for harm after its change
	n, _ := startNotify(t, testConfig(t, agent.Enforce, "eth0", "eth1"), be)
	want := "STATUS=enforce mode: 2 ports, 1 enforcing, 1 quarantined"
	waitFor(t, want, func() bool { _, last := n.count("STATUS="); return last == want })
	// Sent when it changes, not every round.
	c1, _ := n.count("STATUS=")
	time.Sleep(100 * time.Millisecond)
	if c2, _ := n.count("STATUS="); c2 != c1 {
		t.Errorf("STATUS= sent again without a change (%d → %d)", c1, c2)
	}
}

func TestLoggerJournal(t *testing.T) {
	for _, tc := range []struct {
		journal, format string
		wantTime        bool
	}{
		{"", "text", true},
		{"8:42", "text", false},
		{"8:42", "json", true},
	} {
		t.Setenv("JOURNAL_STREAM", tc.journal)
		var buf bytes.Buffer
		log, _ := agent.NewLogger(agent.LogConfig{Level: "info", Format: tc.format}, &buf)
		log.Info("hello", "k", "v")
		out := buf.String()
		if got := strings.Contains(out, `time`); got != tc.wantTime {
			t.Errorf("JOURNAL_STREAM=%q format %s: %q, want time %v", tc.journal, tc.format, out, tc.wantTime)
		}
		if !strings.Contains(out, "hello") {
			t.Errorf("no message: %q", out)
		}
	}
}
