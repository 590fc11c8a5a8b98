package agent_test

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
	"golang.org/x/sys/unix"

	"github.com/lpictl/lpictl/agent"
)

// notes records the sd_notify messages a fake service manager received on
// its NOTIFY_SOCKET.
type notes struct {
	mu sync.Mutex
	s  []string
}

func (n *notes) add(s string) { n.mu.Lock(); n.s = append(n.s, s); n.mu.Unlock() }

func (n *notes) all() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.s)
}

func (n *notes) count(prefix string) (c int, last string) {
	for _, s := range n.all() {
		if strings.HasPrefix(s, prefix) {
			c++
			last = s
		}
	}
	return c, last
}

// fakeNotifySocket is a service manager's notification socket: a unixgram
// socket in a temporary directory, set as $NOTIFY_SOCKET for the test.
func fakeNotifySocket(t *testing.T) *notes {
	t.Helper()
	dir, err := os.MkdirTemp("", "sdnotify") // short: a socket path has at most 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		os.RemoveAll(dir)
		t.Fatal(err)
	}
	t.Setenv("NOTIFY_SOCKET", path)
	n := &notes{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			k, err := conn.Read(buf)
			if err != nil {
				return
			}
			n.add(string(buf[:k]))
		}
	}()
	// Registered before startWith's stop: runs after the agent stopped.
	t.Cleanup(func() {
		conn.Close()
		<-done
		os.RemoveAll(dir)
	})
	return n
}

// startNotify starts an agent that notifies the fake service manager with
// go-systemd's SdNotify, as lpictl agent does.
func startNotify(t *testing.T, cfg agent.Config, be agent.Backend, reload func() (agent.Config, error)) (*notes, *running) {
	t.Helper()
	n := fakeNotifySocket(t)
	r := startWith(t, agent.Options{Config: cfg, Backend: be, Reload: reload,
		Notify: func(s string) {
			if _, err := daemon.SdNotify(false, s); err != nil {
				t.Errorf("sd_notify %q: %v", s, err)
			}
		}})
	return n, r
}

func monotonicUsec(t *testing.T) int64 {
	t.Helper()
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		t.Fatal(err)
	}
	return ts.Nano() / 1000
}

// TestNotifySequence: READY=1 once running; RELOADING=1 with the
// MONOTONIC_USEC= of its sending, then READY=1 around a reload; STOPPING=1
// before the restore; WATCHDOG=1 pings in between ($WATCHDOG_USEC).
func TestNotifySequence(t *testing.T) {
	t.Setenv("WATCHDOG_USEC", "40000") // 40ms: a ping every 20ms
	t.Setenv("WATCHDOG_PID", "")
	cfg := testConfig(t, agent.Observe, "eth0")
	n, r := startNotify(t, cfg, newFake("eth0"), func() (agent.Config, error) { return cfg, nil })
	waitFor(t, "READY=1", func() bool { c, _ := n.count(daemon.SdNotifyReady); return c == 1 })

	before := monotonicUsec(t)
	r.hup <- struct{}{}
	waitFor(t, "READY=1 after the reload", func() bool { c, _ := n.count(daemon.SdNotifyReady); return c == 2 })
	after := monotonicUsec(t)
	waitFor(t, "watchdog pings", func() bool { c, _ := n.count(daemon.SdNotifyWatchdog); return c >= 3 })
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "STOPPING=1", func() bool { c, _ := n.count(daemon.SdNotifyStopping); return c == 1 })

	var seq []string
	for _, s := range n.all() {
		if s != daemon.SdNotifyWatchdog && !strings.HasPrefix(s, "STATUS=") {
			seq = append(seq, s)
		}
	}
	if len(seq) != 4 || seq[0] != "READY=1" || seq[2] != "READY=1" || seq[3] != "STOPPING=1" {
		t.Fatalf("notifications %q, want READY=1, RELOADING=1 + MONOTONIC_USEC=, READY=1, STOPPING=1", seq)
	}
	var usec int64
	if _, err := fmt.Sscanf(seq[1], "RELOADING=1\nMONOTONIC_USEC=%d", &usec); err != nil ||
		seq[1] != "RELOADING=1\nMONOTONIC_USEC="+strconv.FormatInt(usec, 10) {
		t.Fatalf("reload notification %q, want RELOADING=1\\nMONOTONIC_USEC=<µs> (%v)", seq[1], err)
	}
	if usec < before || usec > after {
		t.Errorf("MONOTONIC_USEC=%d, want the CLOCK_MONOTONIC µs of the reload, within [%d, %d]", usec, before, after)
	}
	// The watchdog pings came while the agent ran: the first at READY=1.
	all := n.all()
	if first := slices.Index(all, daemon.SdNotifyWatchdog); first < slices.Index(all, daemon.SdNotifyReady) ||
		slices.Index(all[first:], daemon.SdNotifyStopping) < 0 {
		t.Errorf("WATCHDOG=1 outside READY=1 … STOPPING=1: %q", all)
	}
}

func TestNoWatchdogWithoutEnv(t *testing.T) {
	t.Setenv("WATCHDOG_USEC", "")
	n, _ := startNotify(t, testConfig(t, agent.Observe, "eth0"), newFake("eth0"), nil)
	time.Sleep(100 * time.Millisecond)
	if c, _ := n.count(daemon.SdNotifyWatchdog); c != 0 {
		t.Errorf("%d watchdog pings without $WATCHDOG_USEC", c)
	}
	if c, _ := n.count(daemon.SdNotifyReady); c != 1 {
		t.Errorf("READY=1 sent %d times", c)
	}
}

func TestStatusAfterRounds(t *testing.T) {
	t.Setenv("WATCHDOG_USEC", "")
	be := newFake("eth0", "eth1")
	be.ports["eth1"].errOnSet = 100 // quarantined for harm after its change
	n, _ := startNotify(t, testConfig(t, agent.Enforce, "eth0", "eth1"), be, nil)
	want := "STATUS=enforce mode: 2 ports, 1 enforcing, 1 quarantined"
	waitFor(t, want, func() bool { _, last := n.count("STATUS="); return last == want })
	// Sent when it changes, not every round.
	c1, _ := n.count("STATUS=")
	time.Sleep(100 * time.Millisecond)
	if c2, _ := n.count("STATUS="); c2 != c1 {
		t.Errorf("STATUS= sent again without a change (%d → %d)", c1, c2)
	}
}

// stderrToPipe points the process's stderr (fd 2) at a pipe until the
// test ends and returns its read end and the $JOURNAL_STREAM value
// (device:inode) that names it.
func stderrToPipe(t *testing.T) (*os.File, string) {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved, err := unix.Dup(2)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Dup3(int(pw.Fd()), 2, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = unix.Dup3(saved, 2, 0)
		unix.Close(saved)
		pw.Close()
		pr.Close()
	})
	var st unix.Stat_t
	if err := unix.Fstat(2, &st); err != nil {
		t.Fatal(err)
	}
	return pr, fmt.Sprintf("%d:%d", st.Dev, st.Ino)
}

// TestLoggerJournal: text logs leave out time= when stderr is the journal
// stream $JOURNAL_STREAM names (go-systemd's journal.StderrIsJournalStream).
func TestLoggerJournal(t *testing.T) {
	pipe, stream := stderrToPipe(t)
	for _, tc := range []struct {
		journal, format string
		stderr          bool
		wantTime        bool
	}{
		{"", "text", true, true},
		{stream, "text", true, false},
		{stream, "json", true, true},
		{"8:42", "text", true, true},    // another stream
		{stream, "text", false, true},   // not stderr
		{"garbage", "text", true, true}, // unparsable: not the journal
	} {
		t.Setenv("JOURNAL_STREAM", tc.journal)
		var buf bytes.Buffer
		var w io.Writer = &buf
		if tc.stderr {
			w = os.Stderr
		}
		log, _ := agent.NewLogger(agent.LogConfig{Level: "info", Format: tc.format}, w)
		log.Info("hello", "k", "v")
		out := buf.String()
		if tc.stderr {
			line := make([]byte, 4096)
			k, err := pipe.Read(line)
			if err != nil {
				t.Fatal(err)
			}
			out = string(line[:k])
		}
		if got := strings.Contains(out, `time`); got != tc.wantTime {
			t.Errorf("JOURNAL_STREAM=%q format %s stderr %v: %q, want time %v", tc.journal, tc.format, tc.stderr, out, tc.wantTime)
		}
		if !strings.Contains(out, "hello") {
			t.Errorf("no message: %q", out)
		}
	}
}
