package sweep

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lpictl/lpictl/configs"
)

// smallScenario runs in milliseconds.
const smallScenario = `name: small
topology: {kind: megafly, groups: 5, leaves: 2, spines: 2, nodes_per_switch: 2, global_links: 2}
power: {mode: deep-sleep}
predictor: {kind: fixed, pdt: 1us}
workload: {kind: synthetic, duration: 20us, synthetic: {load: 0.2}}
`

// writeSweep writes small.yaml and the sweep file into a fresh directory
// and returns the sweep file's path.
func writeSweep(t *testing.T, sweep string) string {
	t.Helper()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "small.yaml"), smallScenario)
	path := filepath.Join(dir, "s.yaml")
	write(t, path, sweep)
	return path
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustPlan(t *testing.T, path string) (*Sweep, *Plan) {
	t.Helper()
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Plan()
	if err != nil {
		t.Fatal(err)
	}
	return s, p
}

func TestParseGood(t *testing.T) {
	path := writeSweep(t, `
name: study
base: small.yaml
set:
  workload.duration: 10us
axes:
  power.mode: [fast-wake, deep-sleep]
  predictor.pdt: [0, "10ns", 1us]
zip:
  - predictor.kind: [fixed, perfbound]
    predictor.histogram.strategy: [clearing, circular]
repetitions: 2
baseline:
  set: {power.mode: always-on}
  group_by: [predictor.pdt]
`)
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "study" || s.Base != "small.yaml" || s.Repetitions != 2 || len(s.Set) != 1 {
		t.Errorf("parsed %+v", s)
	}
	want := []string{"power.mode", "predictor.pdt", "predictor.kind", "predictor.histogram.strategy"}
	if got := s.AxisKeys(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("axis keys %v, want %v", got, want)
	}
	if s.Axes[1].Values[1].Text != "10ns" || s.Axes[1].Values[0].Text != "0" {
		t.Errorf("values as written: %+v", s.Axes[1].Values)
	}
	if s.Axes[2].Group != 0 || s.Axes[3].Group != 0 || s.Axes[0].Group != -1 {
		t.Errorf("groups: %d %d %d", s.Axes[0].Group, s.Axes[2].Group, s.Axes[3].Group)
	}
	// Name defaults to the file name.
	s2, err := Parse([]byte("base: small.yaml\n"), "dir/my-study.yaml")
	if err != nil || s2.Name != "my-study" {
		t.Errorf("default name: %v %v", s2, err)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, sweep string
		want        string // after "PATH: "
	}{
		{"unknown key", "base: small.yaml\naxis:\n  power.mode: [x]\n", `line 2: axis: unknown key`},
		{"no base", "axes: {power.mode: [fast-wake]}\n", "base: missing"},
		{"not a mapping", "- a\n", "want a mapping of keys at the top level"},
		{"bad yaml", "base: [\n", "line 1: did not find expected node content"},
		{"axis not a list", "base: small.yaml\naxes:\n  power.mode: fast-wake\n", "line 3: axes.power.mode: want a list of values"},
		{"empty axis", "base: small.yaml\naxes:\n  power.mode: []\n", "line 3: axes.power.mode: empty list of values"},
		{"zip lengths", "base: small.yaml\nzip:\n  - predictor.kind: [fixed, perfbound]\n    predictor.histogram.strategy: [clearing]\n",
			"line 4: zip[0].predictor.histogram.strategy: 1 values, but the group's first list has 2"},
		{"axes and zip", "base: small.yaml\naxes:\n  predictor.kind: [fixed]\nzip:\n  - predictor.kind: [perfbound]\n    predictor.bound: [0.1]\n",
			"line 5: zip[0].predictor.kind: duplicate axis key (also axes.predictor.kind, line 3)"},
		{"overlap", "base: small.yaml\naxes:\n  predictor: [{kind: fixed}]\n  predictor.pdt: [1us]\n",
			"line 4: axes.predictor.pdt: overlaps axes.predictor"},
		{"seed axis", "base: small.yaml\naxes:\n  seed: [1, 2]\n", "line 3: axes.seed: the seed is set by seeds or repetitions"},
		{"group_by non-axis", "base: small.yaml\naxes:\n  power.mode: [fast-wake]\nbaseline:\n  set: {power.mode: always-on}\n  group_by: [predictor.pdt]\n",
			`baseline.group_by: "predictor.pdt" is not an axis (axes: power.mode)`},
		{"baseline without set", "base: small.yaml\nbaseline:\n  group_by: []\n", "line 3: baseline.set: missing"},
		{"baseline unknown", "base: small.yaml\nbaseline:\n  set: {power.mode: always-on}\n  keep: [x]\n", "line 4: baseline.keep: unknown key"},
		{"seeds and reps", "base: small.yaml\nseeds: [1]\nrepetitions: 2\n", "repetitions: give seeds or repetitions, not both"},
		{"bad seed", "base: small.yaml\nseeds: [1, x]\n", `line 2: seeds[1]: want an integer ≥ 1, got "x"`},
		{"zero reps", "base: small.yaml\nrepetitions: 0\n", "line 2: repetitions: want a count ≥ 1"},
		{"duplicate top key", "base: small.yaml\nbase: x.yaml\n", "line 2: base: duplicate key"},
		{"zip not list", "base: small.yaml\nzip: {a: [1]}\n", "line 2: zip: want a list of groups"},
		{"set not map", "base: small.yaml\nset: [a]\n", "line 2: set: want a mapping"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeSweep(t, tc.sweep)
			_, err := Load(path)
			var se *configs.InputError
			if !errors.As(err, &se) {
				t.Fatalf("err %v, want *configs.InputError", err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, path+": ") || !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
				t.Errorf("error\n %s\nwant %s: …%s…", msg, path, tc.want)
			}
		})
	}
}

// Errors found against the scenario: a bad axis key or value names the
// sweep file, the line and axes.KEY[I].
func TestPlanErrors(t *testing.T) {
	for _, tc := range []struct {
		name, sweep, want string
	}{
		{"bad duration", "base: small.yaml\naxes:\n  predictor.pdt: [0, 10ns, 5 parsecs]\n", "line 3: axes.predictor.pdt[2]: "},
		{"unknown axis key", "base: small.yaml\naxes:\n  predictor.pdq: [1us]\n", `line 3: axes.predictor.pdq[0]: unknown key "predictor.pdq"`},
		{"bad mode", "base: small.yaml\naxes:\n  power.mode: [fast-wake, snooze]\n", "line 3: axes.power.mode[1]: power.mode: "},
		{"bad zip value", "base: small.yaml\nzip:\n  - predictor.kind: [fixed, perfbound]\n    predictor.bound: [0.1, lots]\n", "line 4: zip[0].predictor.bound[1]: "},
		{"missing base", "base: nope.yaml\n", "base: open "},
		{"missing base value", "base: small.yaml\naxes:\n  base: [small.yaml, other.yaml]\n", "line 3: axes.base[1]: open "},
		{"bad set", "base: small.yaml\nset:\n  workload.duration: forever\n", "line 3: set.workload.duration: "},
		{"bad baseline set", "base: small.yaml\nbaseline:\n  set:\n    power.mode: off-ish\n", "line 4: baseline.set.power.mode: "},
		{"type", "base: small.yaml\naxes:\n  workload.ranks: [4, 2.5]\n", "line 3: axes.workload.ranks[1]: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeSweep(t, tc.sweep)
			s, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.Plan()
			var se *configs.InputError
			if !errors.As(err, &se) {
				t.Fatalf("err %v, want *configs.InputError", err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, path+": "+tc.want) || strings.Contains(msg, "\n") {
				t.Errorf("error\n %s\nwant prefix %s: %s", msg, path, tc.want)
			}
		})
	}
}

// With base as an axis the top-level base may be left out: the first
// value stands for it (the baselines' file when they do not keep base).
func TestBaseAxisOnly(t *testing.T) {
	path := writeSweep(t, "axes:\n  base: [small.yaml]\n  predictor.pdt: [0, 1us]\nbaseline:\n  set: {power.mode: always-on}\n  group_by: []\n")
	s, plan := mustPlan(t, path)
	if s.Base != "small.yaml" || len(plan.Points) != 3 || plan.Points[2].Role != RoleBaseline || len(plan.Points[2].Axes) != 0 {
		t.Errorf("base %q, plan %+v", s.Base, plan.Points)
	}
}

// Aliases are expanded in values, within bounds: a recursive alias or an
// alias bomb is an error naming the key.
func TestAliases(t *testing.T) {
	path := writeSweep(t, "base: small.yaml\nx: &d 2us\naxes:\n  predictor.pdt: [0, *d]\n")
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "line 2: x: unknown key") {
		t.Errorf("anchor on an unknown key: %v", err)
	}
	path = writeSweep(t, "base: small.yaml\naxes:\n  predictor.pdt: [0, &d 2us]\n  workload.duration: [*d]\n")
	s, err := Load(path)
	if err != nil || s.Axes[1].Values[0].Text != "2us" {
		t.Fatalf("alias: %v %+v", err, s)
	}
	path = writeSweep(t, "base: small.yaml\naxes:\n  predictor: &a [1, {b: *a}]\n")
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "axes.predictor[1]: value too large or nested too deeply") {
		t.Errorf("recursive alias: %v", err)
	}
	var b strings.Builder
	b.WriteString("base: small.yaml\nset:\n  a: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 7; i++ {
		fmt.Fprintf(&b, "  b%d: &a%d [", i, i)
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*a%d", i-1)
		}
		b.WriteString("]\n")
	}
	if _, err := Load(writeSweep(t, b.String())); err == nil || !strings.Contains(err.Error(), "value too large") {
		t.Errorf("alias bomb: %v", err)
	}
}

// --set on the command line replaces a key of the sweep's set or adds one;
// the runs' scenarios carry it (so their ids change), an axis key and a
// bad value are refused with the key named.
func TestOverride(t *testing.T) {
	path := writeSweep(t, "base: small.yaml\nset: {workload.duration: 10us}\naxes:\n  power.mode: [fast-wake, deep-sleep]\n")
	_, before := mustPlan(t, path)
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Override([]string{"workload.duration=15us", "predictor.pdt=3us"}); err != nil {
		t.Fatal(err)
	}
	if len(s.Set) != 2 || s.Set[0].Text != "15us" || s.Set[1].Key != "predictor.pdt" || s.Set[1].Text != "3us" {
		t.Fatalf("set after override: %+v", s.Set)
	}
	after, err := s.Plan()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := Prepare(dir, s, after); err != nil {
		t.Fatal(err)
	}
	sc, err := LoadScenario(dir, after.Points[0])
	if err != nil {
		t.Fatal(err)
	}
	if time.Duration(sc.Workload.Duration) != 15*time.Microsecond || time.Duration(*sc.Predictor.PDT) != 3*time.Microsecond {
		t.Errorf("scenario: duration %v, pdt %v; want 15µs, 3µs", sc.Workload.Duration, *sc.Predictor.PDT)
	}
	if before.Points[0].ID == after.Points[0].ID {
		t.Error("the override did not change the run's id")
	}
	for _, c := range []struct{ set, want string }{
		{"power.mode=always-on", "--set power.mode: power.mode is an axis"},
		{"workload.duration=abc", "--set workload.duration: invalid duration"},
		{"nokey", "--set nokey: want key=value"},
	} {
		s, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		err = s.Override([]string{c.set})
		if err == nil {
			_, err = s.Plan()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--set %s: error %v, want %q", c.set, err, c.want)
		}
	}
}
