package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lpictl/lpictl/configs"
)

// TestAgentProjectEnv: the strict environment check refused the project's
// own LPICTL_SLURM_DIR (scripts/slurm-local.sh); a typo is still refused.
func TestAgentProjectEnv(t *testing.T) {
	t.Setenv("LPICTL_CONFIG", "")
	t.Setenv("LPICTL_SLURM_DIR", "x")
	if code, _, errs := lpictl(t, "agent", "--check", "-c", "../../configs/agent-sim.yaml"); code != 0 {
		t.Errorf("LPICTL_SLURM_DIR=x: exit %d, %q; want 0", code, errs)
	}
	t.Setenv("LPICTL_METRICS_LISTN", "x")
	if code, _, errs := lpictl(t, "agent", "--check", "-c", "../../configs/agent-sim.yaml"); code != 2 || !strings.Contains(errs, "LPICTL_METRICS_LISTN: unknown key") {
		t.Errorf("typo: exit %d, %q; want 2 and unknown key", code, errs)
	}
}

// TestAgentPrecedence: file < environment < flags < --set on one key.
func TestAgentPrecedence(t *testing.T) {
	t.Setenv("LPICTL_CONFIG", "")
	file := writeFile(t, "agent.yaml", "metrics:\n  listen: 127.0.0.1:1111\n")
	for _, tc := range []struct {
		env  string
		args []string
		want string
	}{
		{"", nil, "127.0.0.1:1111"},
		{"127.0.0.1:2222", nil, "127.0.0.1:2222"},
		{"127.0.0.1:2222", []string{"--listen", "127.0.0.1:3333"}, "127.0.0.1:3333"},
		{"127.0.0.1:2222", []string{"--listen", "127.0.0.1:3333", "--set", "metrics.listen=127.0.0.1:4444"}, "127.0.0.1:4444"},
	} {
		if tc.env != "" {
			t.Setenv("LPICTL_METRICS_LISTEN", tc.env)
		}
		code, out, errs := lpictl(t, append([]string{"agent", "--print-config", "-c", file}, tc.args...)...)
		if code != 0 || !strings.Contains(out, "listen: "+tc.want) {
			t.Errorf("env %q %v: exit %d %s; want listen %s\n%s", tc.env, tc.args, code, errs, tc.want, out)
		}
	}
}

// TestPredictPrecedence: file < LPICTL_PREDICT_* < flags < --set, on
// predictor.wake_time (the summary's wake_time_s); flags used to override
// --set.
func TestPredictPrecedence(t *testing.T) {
	gaps := writeFile(t, "g.txt", "1us\n20us\n")
	cfg := writeFile(t, "p.yaml", "predictor:\n  wake_time: 1us\n")
	for _, tc := range []struct {
		env  string
		args []string
		want float64
	}{
		{"", nil, 1e-6},
		{"2us", nil, 2e-6},
		{"2us", []string{"--wake-time", "3us"}, 3e-6},
		{"2us", []string{"--wake-time", "3us", "--set", "predictor.wake_time=4us"}, 4e-6},
	} {
		if tc.env != "" {
			t.Setenv("LPICTL_PREDICT_PREDICTOR_WAKE_TIME", tc.env)
		}
		if s := predictJSON(t, append(append([]string{"-c", cfg}, tc.args...), gaps)...); s.WakeTimeS != tc.want {
			t.Errorf("env %q %v: wake_time_s %v, want %v", tc.env, tc.args, s.WakeTimeS, tc.want)
		}
	}
	t.Setenv("LPICTL_PREDICT_PREDICTOR_BOUNDS", "0.1")
	if code, _, errs := lpictl(t, "predict", gaps); code != 2 || !strings.Contains(errs, "environment LPICTL_PREDICT_PREDICTOR_BOUNDS: unknown key") {
		t.Errorf("unknown variable: exit %d, %q", code, errs)
	}
}

// TestBadInputOnly: main maps configs.InputError, and only it, to exit 2,
// wrapped or not; an exitError keeps its status.
func TestBadInputOnly(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{configs.BadInput(errors.New("x")), 2},
		{fmt.Errorf("sweep point 3: %w", configs.BadInput(errors.New("x"))), 2},
		{errors.New("runtime"), 1},
		{&exitError{code: exitInterrupted, err: errors.New("stopped")}, exitInterrupted},
	} {
		var errb bytes.Buffer
		if got := exitStatus(tc.err, &errb); got != tc.want {
			t.Errorf("%v: exit %d, want %d", tc.err, got, tc.want)
		}
	}
}

// TestSimRunSIGTERM: SIGTERM (timeout(1), systemd, Slurm) killed sim run
// outright, where ^C wrote the partial results; both now stop it alike:
// results written and marked incomplete, exit 130.
func TestSimRunSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs a simulation")
	}
	dir := filepath.Join(t.TempDir(), "out")
	cmd := exec.Command(agentBinary(t), "sim", "run", "-c", "../../configs/sim/demo.yaml", "-o", dir)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted || !strings.Contains(errb.String(), "interrupted after") {
		t.Fatalf("SIGTERM: %v, stderr %q; want exit %d, interrupted", err, errb.String(), exitInterrupted)
	}
	if !strings.HasPrefix(out.String(), "INCOMPLETE") {
		t.Errorf("table does not start with INCOMPLETE:\n%s", out.String())
	}
	data, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Incomplete bool `json:"incomplete"`
	}
	if err := json.Unmarshal(data, &sum); err != nil || !sum.Incomplete {
		t.Errorf("summary.json: %v %+v; want incomplete", err, sum)
	}
}
