package agent_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lpictl/lpictl/agent"
)

// load loads file (a YAML text, "" = none) with the environment env,
// flags args (see flags) and --set sets.
func load(t *testing.T, file string, env, args, sets []string) (agent.Config, error) {
	t.Helper()
	setenv(t, env)
	path := filepath.Join(t.TempDir(), "agent.yaml")
	if file != "" {
		path = writeFile(t, file)
	} else if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ld, err := agent.Load(agent.LoadOptions{File: path, Flags: flags(t, args...), FlagKeys: flagKeys, Sets: sets})
	return ld.Config, err
}

// TestQuarantineAfterZeroMeansNever (issue 11.1): an explicit
// safety.quarantine_after: 0 ("never") is kept from every source; absent
// is the default 3.
func TestQuarantineAfterZeroMeansNever(t *testing.T) {
	cases := []struct {
		name, file string
		env, sets  []string
		want       int
	}{
		{name: "absent", want: agent.DefaultQuarantineAfter},
		{name: "file", file: "safety: {quarantine_after: 0}\n", want: 0},
		{name: "env", env: []string{"LPICTL_SAFETY_QUARANTINE_AFTER=0"}, want: 0},
		{name: "set", sets: []string{"safety.quarantine_after=0"}, want: 0},
		{name: "set over file", file: "safety: {quarantine_after: 5}\n", sets: []string{"safety.quarantine_after=0"}, want: 0},
		{name: "file 5", file: "safety: {quarantine_after: 5}\n", want: 5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := load(t, c.file, c.env, nil, c.sets)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Safety.QuarantineAfter != c.want {
				t.Errorf("quarantine_after = %d, want %d", cfg.Safety.QuarantineAfter, c.want)
			}
			// And it survives --print-config.
			out, err := cfg.YAML()
			if err != nil {
				t.Fatal(err)
			}
			again, err := agent.Load(agent.LoadOptions{File: writeFile(t, string(out))})
			if err != nil || again.Config.Safety.QuarantineAfter != c.want {
				t.Errorf("printed and loaded again: %v, quarantine_after %d", err, again.Config.Safety.QuarantineAfter)
			}
		})
	}
}

// TestPrintConfigLoadsBackFromAnotherFolder (issue 11.2): relative paths
// are printed absolute, so the printed file loads back to the same
// configuration wherever it is written and whatever the working directory.
func TestPrintConfigLoadsBackFromAnotherFolder(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"conf/sim/quick.yaml", "conf/hops.yaml", "conf/model.json", "work/s.yaml"} {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "conf/traces"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "conf/agent.yaml")
	if err := os.WriteFile(file, []byte("backend: sim\nsim: {scenario: sim/quick.yaml}\ntrace_dir: traces\nhw: {hops_file: hops.yaml, model_file: ./model.json}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	cases := []struct {
		name string
		file string // as named on the command line (relative to root)
		sets []string
		want map[string]string
	}{
		{name: "relative to the file", file: "conf/agent.yaml", want: map[string]string{
			"scenario": "conf/sim/quick.yaml", "trace_dir": "conf/traces", "hops": "conf/hops.yaml", "model": "conf/model.json"}},
		{name: "from --set: the working directory", file: "conf/agent.yaml", sets: []string{"sim.scenario=work/s.yaml"}, want: map[string]string{
			"scenario": "work/s.yaml", "trace_dir": "conf/traces", "hops": "conf/hops.yaml", "model": "conf/model.json"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ld, err := agent.Load(agent.LoadOptions{File: c.file, Sets: c.sets})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{"scenario": ld.Config.Sim.Scenario, "trace_dir": ld.Config.TraceDir,
				"hops": ld.Config.HW.HopsFile, "model": ld.Config.HW.ModelFile}
			for k, rel := range c.want {
				if want := filepath.Join(root, rel); got[k] != want {
					t.Errorf("%s = %q, want %q", k, got[k], want)
				}
			}
			out, err := ld.Config.YAML()
			if err != nil {
				t.Fatal(err)
			}
			// Written elsewhere (another folder than the original's).
			printed := filepath.Join(t.TempDir(), "pc.yaml")
			if err := os.WriteFile(printed, out, 0o600); err != nil {
				t.Fatal(err)
			}
			again, err := agent.Load(agent.LoadOptions{File: printed})
			if err != nil {
				t.Fatalf("printed config does not load: %v\n%s", err, out)
			}
			if !reflect.DeepEqual(again.Config, ld.Config) {
				t.Errorf("round trip differs:\n%s", out)
			}
		})
	}
}

// TestIPv6ListenAddress (issue 11.3): a bracketed IPv6 host:port is a
// string, not a YAML list, from flags, the environment, --set and the file.
func TestIPv6ListenAddress(t *testing.T) {
	cases := []struct {
		name, file      string
		env, args, sets []string
		want            string
	}{
		{name: "flag", args: []string{"--listen", "[::1]:9720"}, want: "[::1]:9720"},
		{name: "env", env: []string{"LPICTL_METRICS_LISTEN=[::1]:9720"}, want: "[::1]:9720"},
		{name: "set", sets: []string{"metrics.listen=[::1]:9720"}, want: "[::1]:9720"},
		{name: "set quoted", sets: []string{`metrics.listen="[::]:9720"`}, want: "[::]:9720"},
		{name: "file", file: "metrics: {listen: '[fe80::1%eth0]:9720'}\n", want: "[fe80::1%eth0]:9720"},
		{name: "env ipv4", env: []string{"LPICTL_METRICS_LISTEN=127.0.0.1:1"}, want: "127.0.0.1:1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := load(t, c.file, c.env, c.args, c.sets)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Metrics.Listen != c.want {
				t.Errorf("metrics.listen = %q, want %q", cfg.Metrics.Listen, c.want)
			}
		})
	}
	// Still a host:port.
	if _, err := load(t, "", nil, []string{"--listen", "[::1]"}, nil); err == nil || !strings.Contains(err.Error(), "metrics.listen") {
		t.Errorf("--listen [::1]: %v, want a metrics.listen error", err)
	}
}

// TestListenWarningWhenNotLoopback (issue 11.4).
func TestListenWarningWhenNotLoopback(t *testing.T) {
	for _, c := range []struct {
		listen string
		warn   string // "" = no warning
	}{
		{"127.0.0.1:9720", ""}, {"127.1.2.3:9720", ""}, {"[::1]:9720", ""}, {"localhost:9720", ""}, {"off", ""},
		{"0.0.0.0:9720", "every address"}, {"[::]:9720", "every address"}, {":9720", "every address"},
		{"192.0.2.1:9720", "not loopback"}, {"[2001:db8::1]:9720", "not loopback"}, {"metrics.example:9720", "not loopback"},
	} {
		cfg := agent.Default()
		cfg.Metrics.Listen = c.listen
		w := cfg.ListenWarning()
		if (w == "") != (c.warn == "") || !strings.Contains(w, c.warn) || strings.Contains(w, "\n") {
			t.Errorf("%s: warning %q, want one line with %q", c.listen, w, c.warn)
		}
	}
}

// TestZeroAndRangeRules (issue 11.10): an absent key takes its default; an
// explicit 0 is honoured where documented and an error naming the key
// elsewhere; ranges are checked.
func TestZeroAndRangeRules(t *testing.T) {
	cases := []struct {
		name string
		file string
		args []string
		sets []string
		// check the loaded config; nil when an error is wanted
		check func(agent.Config) bool
		err   string
	}{
		{name: "interval absent", check: func(c agent.Config) bool { return c.Interval.D() == agent.DefaultInterval }},
		{name: "interval 0 flag", args: []string{"--mode", "observe"}, sets: []string{"interval=0s"}, err: "interval: must be ≥ 1ms"},
		{name: "interval 0 file", file: "interval: 0s\n", err: "interval: must be ≥ 1ms"},
		{name: "interval 1ns", sets: []string{"interval=1ns"}, err: "interval: must be ≥ 1ms"},
		{name: "flap_window 0", file: "safety: {flap_window: 0s}\n", err: "safety.flap_window: must be > 0"},
		{name: "flap_reset 0", sets: []string{"safety.flap_reset=0"}, err: "safety.flap_reset: must be > 0"},
		{name: "eee_refresh 0", sets: []string{"safety.eee_refresh=0s"}, err: "safety.eee_refresh"},
		{name: "poll_interval 0", sets: []string{"hw.poll_interval=0s"}, err: "hw.poll_interval"},
		{name: "speed 0", sets: []string{"sim.speed=0"}, err: "sim.speed: must be > 0"},
		{name: "backoff 0 = none", file: "safety: {backoff_initial: 0s, backoff_max: 0s}\n",
			check: func(c agent.Config) bool { return c.Safety.BackoffInitial == 0 && c.Safety.BackoffMax == 0 }},
		{name: "backoff_max 0 below initial", sets: []string{"safety.backoff_max=0s"}, err: "safety.backoff_max"},
		{name: "rescan 0 = start and SIGHUP only", sets: []string{"ports.rescan_interval=0s"},
			check: func(c agent.Config) bool { return c.Ports.RescanInterval == 0 }},
		{name: "rescan negative", sets: []string{"ports.rescan_interval=-1s"}, err: "ports.rescan_interval"},
		{name: "hysteresis 0", sets: []string{"limits.hysteresis=0"}, check: func(c agent.Config) bool { return *c.Limits.Hysteresis == 0 }},
		{name: "hysteresis 0.99", sets: []string{"limits.hysteresis=0.99"}, check: func(c agent.Config) bool { return *c.Limits.Hysteresis == 0.99 }},
		{name: "hysteresis 1", sets: []string{"limits.hysteresis=1"}, err: "limits.hysteresis: must be a fraction in [0, 1)"},
		{name: "hysteresis 5", file: "limits: {hysteresis: 5}\n", err: "limits.hysteresis"},
		{name: "hysteresis negative", sets: []string{"limits.hysteresis=-0.1"}, err: "limits.hysteresis"},
		{name: "override hysteresis 5", file: "ports: {overrides: [{match: [eth0], limits: {hysteresis: 5}}]}\n", err: "ports.overrides[0].limits.hysteresis"},
		{name: "min_change_interval 0", sets: []string{"limits.min_change_interval=0s"},
			check: func(c agent.Config) bool { return *c.Limits.MinChangeInterval == 0 }},
		{name: "min_change_interval negative", sets: []string{"limits.min_change_interval=-1m"}, err: "limits.min_change_interval"},
		{name: "limits.min negative", sets: []string{"limits.min=-1us"}, err: "limits.min"},
		{name: "warmup negative", sets: []string{"safety.warmup=-1s"}, err: "safety.warmup"},
		{name: "sample_floor negative", sets: []string{"hw.sample_floor=-1us"}, err: "hw.sample_floor"},
		{name: "predictor 0", sets: []string{"predictor.histogram.ttl=0s"}, err: "predictor.histogram.ttl: must not be 0"},
		{name: "wake_time 0", file: "predictor: {wake_time: 0s}\n", err: "predictor.wake_time: must not be 0"},
		{name: "override predictor 0", file: "ports: {overrides: [{match: [eth0], predictor: {bound: 0}}]}\n", err: "ports.overrides[0].predictor.bound: must not be 0"},
		{name: "durations given", file: "interval: 50ms\nsafety: {flap_window: 1s}\n",
			check: func(c agent.Config) bool {
				return c.Interval.D() == 50*time.Millisecond && c.Safety.FlapWindow.D() == time.Second
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := load(t, c.file, nil, c.args, c.sets)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one with %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !c.check(cfg) {
				out, _ := cfg.YAML()
				t.Errorf("unexpected config:\n%s", out)
			}
		})
	}
}
