package configs

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

type loadCfg struct {
	Name  string   `yaml:"name"`
	Rate  float64  `yaml:"rate"`
	Count int      `yaml:"count"`
	Names []string `yaml:"names"`
	Inner struct {
		Level string  `yaml:"level"`
		Bound float64 `yaml:"bound"`
	} `yaml:"inner"`
}

func loadFlags(t *testing.T, args ...string) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fs.String("level", "", "")
	fs.Float64("bound", 0, "")
	fs.StringSlice("names", nil, "")
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return fs
}

var loadFlagKeys = map[string]string{"level": "inner.level", "bound": "inner.bound", "names": "names"}

// TestLoadPrecedence: file < environment < flags < --set, key by key; the
// layers say where each value came from.
func TestLoadPrecedence(t *testing.T) {
	file := []byte("name: file\nrate: 1\ncount: 1\ninner:\n  level: file\n  bound: 0.1\n")
	t.Setenv("LPICTL_PREDICT_RATE", "2")
	t.Setenv("LPICTL_PREDICT_INNER_LEVEL", "env")
	t.Setenv("LPICTL_PREDICT_INNER_BOUND", "0.2")
	t.Setenv("LPICTL_PREDICT_NAMES", "a, b")
	var c loadCfg
	l, err := Load(LoadOptions{Data: file, Name: "f.yaml", EnvPrefix: EnvPredict, Flags: loadFlags(t, "--level", "flag", "--bound", "0.3"),
		FlagKeys: loadFlagKeys, Sets: []string{"inner.bound=0.4"}}, &c)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "file" || c.Count != 1 || c.Rate != 2 || c.Inner.Level != "flag" || c.Inner.Bound != 0.4 || strings.Join(c.Names, "|") != "a|b" {
		t.Errorf("merged %+v; want name, count from the file, rate and names from the environment, level from the flag, bound from --set", c)
	}
	for key, want := range map[string]string{"name": "f.yaml", "rate": "environment LPICTL_PREDICT_RATE",
		"inner.level": "flag --level", "inner.bound": "--set"} {
		if got := l.Source(key); got != want {
			t.Errorf("Source(%s) = %q, want %q", key, got, want)
		}
	}
	if !l.Given("count") || l.Given("inner.missing") || l.Overridden("count") || !l.Overridden("rate") {
		t.Errorf("Given/Overridden wrong")
	}
}

// TestLoadEnvironment: the project's own variables (scripts/slurm-local.sh's
// LPICTL_SLURM_DIR, LPICTL_CONFIG) and other configurations' prefixes are
// not keys; a typo under the prefix is refused.
func TestLoadEnvironment(t *testing.T) {
	t.Setenv("LPICTL_SLURM_DIR", "x")
	t.Setenv("LPICTL_SLURM_PORT", "6817")
	t.Setenv("LPICTL_CONFIG", "")
	t.Setenv("LPICTL_PREDICT_ANYTHING", "1")
	t.Setenv("LPICTL_SCENARIO_SEED", "2")
	var c loadCfg
	if _, err := Load(LoadOptions{Name: "defaults", EnvPrefix: EnvAgent}, &c); err != nil {
		t.Fatalf("project and other configurations' variables refused: %v", err)
	}
	t.Setenv("LPICTL_RAT", "2")
	_, err := Load(LoadOptions{Name: "defaults", EnvPrefix: EnvAgent, EnvExample: "rate"}, &c)
	if err == nil || err.Error() != "environment LPICTL_RAT: unknown key (variables are LPICTL_ and a config key in upper case with _ for ., e.g. LPICTL_RATE)" {
		t.Errorf("typo: %v", err)
	}
}

// TestLoadErrors: errors name the file and line, the variable, the flag
// or the --set, on one line.
func TestLoadErrors(t *testing.T) {
	for _, tc := range []struct {
		file string
		env  []string
		args []string
		sets []string
		want string
	}{
		{file: "rate: 1\nnaem: x\n", want: `f.yaml: line 2: unknown key "naem"`},
		{file: "count: lots\n", want: "f.yaml: line 1: cannot unmarshal !!str `lots` into int"},
		{env: []string{"LPICTL_SCENARIO_COUNT=1.5"}, want: "environment LPICTL_SCENARIO_COUNT: want an integer, got 1.5"},
		{env: []string{"LPICTL_SCENARIO_RATE=fast"}, want: "environment LPICTL_SCENARIO_RATE: cannot unmarshal !!str `fast` into float64"},
		{args: []string{"--bound", "x"}, want: "flag --bound: cannot unmarshal !!str `x` into float64"},
		{sets: []string{"inner.nope=1"}, want: `f.yaml: --set inner.nope: unknown key "inner.nope"`},
		{sets: []string{"count=x"}, want: "f.yaml: --set count: cannot unmarshal !!str `x` into int"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			for _, kv := range tc.env {
				k, v, _ := strings.Cut(kv, "=")
				t.Setenv(k, v)
			}
			fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
			fs.String("bound", "", "")
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			var c loadCfg
			_, err := Load(LoadOptions{Data: []byte(tc.file), Name: "f.yaml", EnvPrefix: EnvScenario, Flags: fs,
				FlagKeys: map[string]string{"bound": "inner.bound"}, Sets: tc.sets}, &c)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%v, want one line containing %q", err, tc.want)
			}
		})
	}
}
