package agent_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/lpictl/lpictl/agent"
	"github.com/lpictl/lpictl/predictor"
)

var flagKeys = map[string]string{"listen": "metrics.listen", "mode": "mode", "ports": "ports.names"}

func flags(t *testing.T, args ...string) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("agent", pflag.ContinueOnError)
	fs.String("listen", "", "")
	fs.String("mode", "", "")
	fs.StringSlice("ports", nil, "")
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return fs
}

func setenv(t *testing.T, env []string) {
	t.Helper()
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}

func writeFile(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "agent.yaml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadPrecedence(t *testing.T) {
	file := writeFile(t, "mode: enforce\nmetrics:\n  listen: 127.0.0.1:1111\nlimits:\n  hysteresis: 0.5\nports:\n  names: [eth0]\n")
	cases := []struct {
		name   string
		env    []string
		args   []string
		listen string
		mode   agent.Mode
		names  []string
	}{
		{name: "file", listen: "127.0.0.1:1111", mode: agent.Enforce, names: []string{"eth0"}},
		{name: "env over file", env: []string{"LPICTL_METRICS_LISTEN=127.0.0.1:2222", "LPICTL_PORTS_NAMES=eth1, swp*"},
			listen: "127.0.0.1:2222", mode: agent.Enforce, names: []string{"eth1", "swp*"}},
		{name: "flag over env", env: []string{"LPICTL_METRICS_LISTEN=127.0.0.1:2222", "LPICTL_MODE=observe"},
			args: []string{"--listen", "127.0.0.1:3333", "--ports", "a,b"}, listen: "127.0.0.1:3333", mode: agent.Observe, names: []string{"a", "b"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			setenv(t, c.env)
			ld, err := agent.Load(agent.LoadOptions{File: file, Flags: flags(t, c.args...), FlagKeys: flagKeys})
			if err != nil {
				t.Fatal(err)
			}
			cfg := ld.Config
			if cfg.Metrics.Listen != c.listen || cfg.Mode != c.mode || !reflect.DeepEqual(cfg.Ports.Names, c.names) {
				t.Errorf("got listen %q mode %q names %q", cfg.Metrics.Listen, cfg.Mode, cfg.Ports.Names)
			}
			if *cfg.Limits.Hysteresis != 0.5 {
				t.Errorf("file value lost: hysteresis %v", *cfg.Limits.Hysteresis)
			}
		})
	}
	// --set wins over everything.
	ld, err := agent.Load(agent.LoadOptions{File: file, Flags: flags(t, "--listen", "127.0.0.1:3333"), FlagKeys: flagKeys,
		Sets: []string{"metrics.listen=127.0.0.1:4444"}})
	if err != nil || ld.Config.Metrics.Listen != "127.0.0.1:4444" {
		t.Errorf("--set: %v %q", err, ld.Config.Metrics.Listen)
	}
}

func TestLoadErrors(t *testing.T) {
	cases := []struct {
		name, file string
		env, sets  []string
		want       []string
	}{
		{name: "unknown key", file: "mode: observe\nports:\n  nmaes: [eth0]\n", want: []string{"agent.yaml", "line 3", `unknown key "ports.nmaes"`}},
		{name: "bad value", file: "interval: fast\n", want: []string{"agent.yaml", "line 1", "invalid duration"}},
		{name: "bad mode", file: "mode: yolo\n", want: []string{"agent.yaml", "mode:", "observe or enforce"}},
		{name: "bad glob", file: "ports:\n  names: ['eth[']\n", want: []string{"ports.names", "bad glob"}},
		{name: "unknown env", env: []string{"LPICTL_MODEE=enforce"}, want: []string{"LPICTL_MODEE", "unknown key"}},
		{name: "bad env value", env: []string{"LPICTL_LIMITS_HYSTERESIS=lots"}, want: []string{"LPICTL_LIMITS_HYSTERESIS"}},
		{name: "bad set", sets: []string{"predictor.kind=psychic"}, want: []string{"predictor.kind", "psychic"}},
		{name: "sim without scenario", sets: []string{"backend=sim"}, want: []string{"sim.scenario"}},
		{name: "model without file", sets: []string{"hw.eee_backend=model"}, want: []string{"hw.model_file"}},
		{name: "unknown eee backend", sets: []string{"hw.eee_backend=emulator"}, want: []string{"hw.eee_backend", "ethtool, model or emulated"}},
		{name: "unknown observation", sets: []string{"hw.observe=bpf"}, want: []string{"hw.observe", "emulated"}},
		{name: "relative bpffs", file: "hw: {bpffs: sys/fs/bpf}\n", want: []string{"hw.bpffs", "absolute"}},
		{name: "missing trace dir", file: "trace_dir: /nonexistent/traces\n", want: []string{"agent.yaml", "trace_dir", "/nonexistent/traces"}},
		{name: "trace dir is a file", sets: []string{"trace_dir=/dev/null"}, want: []string{"trace_dir", "not a directory"}},
		{name: "override predictor", file: "ports:\n  overrides:\n    - match: [eth0]\n      predictor: {bound: 7}\n",
			want: []string{"ports.overrides[0].predictor.bound"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			setenv(t, c.env)
			file := filepath.Join(t.TempDir(), "agent.yaml")
			if c.file != "" {
				file = writeFile(t, c.file)
			}
			_, err := agent.Load(agent.LoadOptions{File: file, Sets: c.sets})
			if c.file == "" && err != nil && strings.Contains(err.Error(), "no such file") {
				_, err = agent.Load(agent.LoadOptions{File: writeFile(t, ""), Sets: c.sets})
			}
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
		})
	}
	if _, err := agent.Load(agent.LoadOptions{File: "/nonexistent/agent.yaml"}); err == nil ||
		!strings.Contains(err.Error(), "/nonexistent/agent.yaml") {
		t.Errorf("missing explicit file: %v", err)
	}
	// A file that never ends is refused after 4 MiB (issue 24 item 11).
	if _, err := agent.Load(agent.LoadOptions{File: "/dev/zero"}); err == nil ||
		!strings.Contains(err.Error(), "longer than 4 MiB") {
		t.Errorf("-c /dev/zero: %v", err)
	}
}

// TestShippedConfig: configs/agent.yaml documents exactly the defaults.
func TestShippedConfig(t *testing.T) {
	ld, err := agent.Load(agent.LoadOptions{File: "../configs/agent.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if want := agent.Default(); !reflect.DeepEqual(ld.Config, want) {
		got, _ := ld.Config.YAML()
		exp, _ := want.YAML()
		t.Errorf("configs/agent.yaml differs from the defaults:\n%s\nwant\n%s", got, exp)
	}
}

func TestPrintConfigRoundTrip(t *testing.T) {
	file := writeFile(t, `mode: enforce
ports:
  names: [eth0, "swp*"]
  exclude: [swp9]
  overrides:
    - match: ["swp*"]
      predictor: {kind: fixed, pdt: 50us}
      limits: {max: 255us}
limits: {min: 2us, hysteresis: 0}
safety: {restore_on_exit: false, warmup: 0s}
sim: {set: ["engine.seed=3"]}
`)
	t.Setenv("STATE_DIRECTORY", "/var/lib/lpictl-test")
	ld, err := agent.Load(agent.LoadOptions{File: file})
	if err != nil {
		t.Fatal(err)
	}
	if ld.Config.StateDir != "/var/lib/lpictl-test" {
		t.Errorf("STATE_DIRECTORY not used: %q", ld.Config.StateDir)
	}
	out, err := ld.Config.YAML()
	if err != nil {
		t.Fatal(err)
	}
	again, err := agent.Load(agent.LoadOptions{File: writeFile(t, string(out))})
	if err != nil {
		t.Fatalf("printed config does not load: %v\n%s", err, out)
	}
	if !reflect.DeepEqual(again.Config, ld.Config) {
		t.Errorf("round trip differs:\n%s", out)
	}
}

func TestPortSpec(t *testing.T) {
	file := writeFile(t, `predictor: {kind: perfbound, bound: 0.02}
limits: {max: 1ms, hysteresis: 0.1}
ports:
  overrides:
    - match: ["swp*"]
      predictor: {bound: 0.05}
      limits: {max: 100us, min_change_interval: 1m}
    - match: [swp2]
      predictor: {kind: fixed, pdt: 0s}
`)
	ld, err := agent.Load(agent.LoadOptions{File: file})
	if err != nil {
		t.Fatal(err)
	}
	cfg := ld.Config
	reg := agent.Register{Unit: time.Microsecond, Max: 255 * time.Microsecond}
	eth := cfg.Spec("eth0", reg, 0, nil)
	if eth.Predictor.Bound != 0.02 || eth.Controller.Register.Max.D() != 255*time.Microsecond || eth.Controller.Hysteresis != 0.1 {
		t.Errorf("eth0 spec %+v", eth)
	}
	swp1 := cfg.Spec("swp1", reg, 0, map[int]float64{4: 1})
	if swp1.Predictor.Bound != 0.05 || swp1.Controller.Register.Max.D() != 100*time.Microsecond ||
		swp1.Controller.MinChangeInterval.D() != time.Minute || swp1.Predictor.Hops[4] != 1 {
		t.Errorf("swp1 spec %+v", swp1)
	}
	swp2 := cfg.Spec("swp2", reg, 0, nil)
	if swp2.Predictor.Kind != predictor.KindFixed || swp2.Predictor.PDT == nil || *swp2.Predictor.PDT != 0 {
		t.Errorf("swp2 spec %+v", swp2.Predictor)
	}
}

func TestSelection(t *testing.T) {
	p := agent.PortsConfig{Names: []string{"eth*", "swp1"}, Drivers: []string{"mvneta"}, Exclude: []string{"eth9"}}
	for _, c := range []struct {
		name, driver string
		want         bool
	}{
		{"eth0", "igc", true}, {"eth9", "igc", false}, {"swp1", "", true}, {"swp2", "mt7530", false},
		{"lan0", "mvneta", true}, {"lo", "", false},
	} {
		if got := p.Selected(c.name, c.driver); got != c.want {
			t.Errorf("Selected(%s, %s) = %v", c.name, c.driver, got)
		}
	}
}

// FuzzLoad: any file content either loads to a configuration that prints
// and reloads to itself, or gives a one-line error; never a panic.
func FuzzLoad(f *testing.F) {
	for _, s := range []string{"", "mode: enforce\n", "ports: {names: [eth0], overrides: [{match: [x], predictor: {kind: fixed, pdt: 1us}}]}\n",
		"limits: {min: 1us, max: 2us}\n", "predictor: {hops: {4: 0.7, 6: 0.3}}\n", "sim: {speed: 1e300}\n", "interval: -1\n"} {
		f.Add([]byte(s), "")
	}
	f.Add([]byte("mode: observe\n"), "limits.hysteresis=0.3")
	f.Fuzz(func(t *testing.T, data []byte, set string) {
		dir := t.TempDir()
		file := filepath.Join(dir, "a.yaml")
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
		var sets []string
		if set != "" {
			sets = []string{set}
		}
		ld, err := agent.Load(agent.LoadOptions{File: file, Sets: sets})
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		out, err := ld.Config.YAML()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, out, 0o600); err != nil {
			t.Fatal(err)
		}
		again, err := agent.Load(agent.LoadOptions{File: file})
		if err != nil {
			t.Fatalf("printed config does not load: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(again.Config, ld.Config) {
			t.Fatalf("round trip differs:\n%s", out)
		}
	})
}

// TestRelativePathsFollowTheConfigFile: files named in the config file
// resolve against its folder; from flags or --set, against the working
// directory.
func TestRelativePathsFollowTheConfigFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "agent.yaml")
	if err := os.WriteFile(file, []byte("backend: sim\nsim: {scenario: sim/quick.yaml}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := agent.Load(agent.LoadOptions{File: file})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "sim/quick.yaml"); l.Config.Sim.Scenario != want {
		t.Errorf("from the file: %q, want %q", l.Config.Sim.Scenario, want)
	}
	l, err = agent.Load(agent.LoadOptions{File: file, Sets: []string{"sim.scenario=other.yaml"}})
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := filepath.Abs("other.yaml"); l.Config.Sim.Scenario != want {
		t.Errorf("from --set: %q, want %q (the working directory's)", l.Config.Sim.Scenario, want)
	}
}

// TestLoadProjectEnv: LPICTL_SLURM_DIR (scripts/slurm-local.sh) and the
// other LPICTL_* variables the project defines are no config keys: the
// strict environment check refused them.
func TestLoadProjectEnv(t *testing.T) {
	setenv(t, []string{"LPICTL_SLURM_DIR=x", "LPICTL_SLURM_PORT=6817", "LPICTL_SLURM_TIMEOUT=60", "LPICTL_PREDICT_PREDICTOR_BOUND=0.1", "LPICTL_SCENARIO_SEED=2"})
	if _, err := agent.Load(agent.LoadOptions{File: writeFile(t, "mode: observe\n")}); err != nil {
		t.Errorf("project variables refused: %v", err)
	}
}
