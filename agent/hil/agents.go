package hil

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/lpictl/lpictl/controller/replay"
	"github.com/lpictl/lpictl/predictor"
)

// Agent lifetimes: bounded.
const (
	agentStartTimeout = 20 * time.Second
	agentStopTimeout  = 15 * time.Second
)

// agentReady is the agent's log line once its loop runs.
const agentReady = `msg="agent running"`

// agentProc is one `lpictl agent` subprocess, controlling one namespace's
// egress ports.
type agentProc struct {
	host   *Host
	dir    string // its folder: agent.yaml, state/, trace/, agent.log
	cmd    *exec.Cmd
	done   chan struct{}
	err    error
	mu     sync.Mutex
	log    strings.Builder
	ready  chan struct{}
	readyO sync.Once
}

// agentYAML is the agent's configuration for host h: enforce mode, the
// emulated EEE backend and observation on the line's bpffs, h's egress
// ports, the run's predictor, its trace written to dir/trace at exit.
func agentYAML(cfg *Config, kind predictor.Kind, h *Host, bpffs, dir string) ([]byte, error) {
	a := cfg.Agent
	doc := map[string]any{
		"mode":      "enforce",
		"backend":   "hw",
		"interval":  a.Interval.String(),
		"state_dir": filepath.Join(dir, "state"),
		"trace_dir": filepath.Join(dir, "trace"),
		"log":       map[string]any{"level": a.LogLevel, "format": "text"},
		"metrics":   map[string]any{"listen": "off"},
		"ports":     map[string]any{"names": h.Ports},
		"predictor": cfg.PredictorAt(kind, h.Role),
		"limits": map[string]any{
			"hysteresis":          *a.Hysteresis,
			"min_change_interval": a.MinChangeInterval.String(),
		},
		"safety": map[string]any{"warmup": a.Warmup.String()},
		"hw": map[string]any{
			"netns": h.Name, "eee_backend": "emulated", "observe": "emulated", "bpffs": bpffs,
		},
	}
	return yaml.Marshal(doc)
}

// startAgent writes the agent's configuration and starts `bin agent -c
// FILE` in the root namespaces (it enters h's network namespace itself
// through hw.netns). It returns once the agent's loop runs.
func startAgent(ctx context.Context, bin string, cfg *Config, kind predictor.Kind, h *Host, bpffs, dir string) (*agentProc, error) {
	if err := os.MkdirAll(filepath.Join(dir, "trace"), 0o755); err != nil {
		return nil, err
	}
	data, err := agentYAML(cfg, kind, h, bpffs, dir)
	if err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "agent.yaml")
	if err := os.WriteFile(conf, data, 0o644); err != nil {
		return nil, err
	}
	a := &agentProc{host: h, dir: dir, done: make(chan struct{}), ready: make(chan struct{})}
	a.cmd = exec.Command(bin, "agent", "-c", conf)
	a.cmd.Env = append(os.Environ(), "LPICTL_CONFIG=")
	// The agent dies with this process, whatever kills it (the forking
	// thread below stays alive as long as the agent); in a process group
	// of its own, a terminal's ^C reaches only this process, which stops
	// the agents in order.
	a.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}
	stderr, err := a.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	started := make(chan error, 1)
	go func() {
		// Pdeathsig is sent when the thread that forked the child exits:
		// keep that thread for the agent's lifetime.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := a.cmd.Start(); err != nil {
			started <- err
			close(a.done)
			return
		}
		started <- nil
		a.scan(stderr)
		a.err = a.cmd.Wait()
		close(a.done)
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("start agent for %s: %w", h.Name, err)
	}
	t := time.NewTimer(agentStartTimeout)
	defer t.Stop()
	select {
	case <-a.ready:
		return a, nil
	case <-a.done:
		return nil, fmt.Errorf("agent for %s exited before running (%v): %s", h.Name, a.err, a.lastLines(5))
	case <-ctx.Done():
		_ = a.stop()
		return nil, ctx.Err()
	case <-t.C:
		_ = a.stop()
		return nil, fmt.Errorf("agent for %s not running after %v: %s", h.Name, agentStartTimeout, a.lastLines(5))
	}
}

// scan keeps the agent's log and notices when its loop runs.
func (a *agentProc) scan(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		a.mu.Lock()
		if a.log.Len() < 4<<20 {
			a.log.WriteString(line)
			a.log.WriteByte('\n')
		}
		a.mu.Unlock()
		if strings.Contains(line, agentReady) {
			a.readyO.Do(func() { close(a.ready) })
		}
	}
}

// Log is what the agent logged.
func (a *agentProc) Log() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.log.String()
}

func (a *agentProc) lastLines(n int) string {
	lines := strings.Split(strings.TrimSpace(a.Log()), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// Pid is the agent's process id (0 if it never started).
func (a *agentProc) Pid() int {
	if a.cmd.Process == nil {
		return 0
	}
	return a.cmd.Process.Pid
}

// signal asks the agent to stop (SIGTERM) without waiting.
func (a *agentProc) signal() {
	select {
	case <-a.done:
	default:
		if a.cmd.Process != nil {
			_ = a.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
}

// stop sends SIGTERM (the agent restores the ports and writes its trace)
// and waits, at most agentStopTimeout, then kills it.
func (a *agentProc) stop() error {
	select {
	case <-a.done:
		return a.exitErr()
	default:
	}
	a.signal()
	t := time.NewTimer(agentStopTimeout)
	defer t.Stop()
	select {
	case <-a.done:
		return a.exitErr()
	case <-t.C:
		_ = a.cmd.Process.Kill()
		<-a.done
		return fmt.Errorf("agent for %s did not stop within %v after SIGTERM: killed", a.host.Name, agentStopTimeout)
	}
}

func (a *agentProc) exitErr() error {
	if a.err != nil {
		return fmt.Errorf("agent for %s: %w: %s", a.host.Name, a.err, a.lastLines(3))
	}
	return nil
}

// traces reads the port traces the agent wrote at exit
// (<trace_dir>/<port>.port_trace.csv), by port; the raw files too.
func (a *agentProc) traces() (map[string][]replay.TraceRow, map[string][]byte, error) {
	rows := map[string][]replay.TraceRow{}
	raw := map[string][]byte{}
	var errs []error
	for _, p := range a.host.Ports {
		path := filepath.Join(a.dir, "trace", p+".port_trace.csv")
		data, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("agent for %s wrote no trace for %s (%s)", a.host.Name, p, path))
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		raw[p] = data
		r, err := replay.ParseTrace(strings.NewReader(string(data)), path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		rows[p] = r
	}
	return rows, raw, errors.Join(errs...)
}
