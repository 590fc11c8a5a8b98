package scenario

import (
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/lpictl/lpictl/configs"
)

// numericKeys lists every numeric key of the scenario (durations and byte
// sizes included, lists and maps left out), dotted, in ZeroKeys' form.
func numericKeys(t reflect.Type, prefix string, out *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Struct && !reflect.PointerTo(t).Implements(unmarshaler) {
		for name, ft := range configs.YAMLFields(t) {
			numericKeys(ft, join(prefix, name), out)
		}
		return
	}
	if numeric(t) {
		*out = append(*out, prefix)
	}
}

// TestZeroRule walks every numeric scenario key (issue 25, defect 7: a 0
// used to take the default for some keys, workload.synthetic.load=0
// running at 10 %, and to be an error for others): set to 0 with --set, a
// key of ZeroKeys is accepted as zero, any other is refused with one line
// naming it; the same inside workload.jobs[i]; and a key left out takes
// its default.
func TestZeroRule(t *testing.T) {
	var keys []string
	numericKeys(reflect.TypeOf(Scenario{}), "", &keys)
	sort.Strings(keys)
	if len(keys) < 100 {
		t.Fatalf("only %d numeric keys found", len(keys))
	}
	seen := map[string]bool{}
	for _, k := range keys {
		seen[k] = true
		t.Run(k, func(t *testing.T) {
			_, err := Parse([]byte(small), "small.yaml", []string{k + "=0"})
			want := "small.yaml: " + k + ": 0 is not a value of this key (leave the key out for its default)"
			if _, ok := ZeroKeys[k]; ok {
				if err != nil && strings.Contains(err.Error(), "0 is not a value") {
					t.Fatalf("zero refused: %v", err)
				}
				return
			}
			if err == nil || err.Error() != want {
				t.Fatalf("%v\nwant %s", err, want)
			}
		})
	}
	for k := range ZeroKeys {
		if !seen[k] {
			t.Errorf("ZeroKeys lists %s, not a numeric scenario key", k)
		}
	}
	// Zero with units, in a file, and in a job.
	for _, tc := range []struct{ doc, want string }{
		{small + "network: {propagation: 0ns}\n", ""},
		{strings.Replace(small, "load: 0.3", "load: 0.0", 1), "f.yaml: workload.synthetic.load: 0 is not a value of this key (leave the key out for its default)"},
		{"power: {consolidation: {kind: tcep, activation_epoch: 0us}}\n", "f.yaml: power.consolidation.activation_epoch: 0 is not a value of this key (leave the key out for its default)"},
		{"workload: {jobs: [{kind: synthetic, ranks: 4, duration: 10us}, {kind: synthetic, ranks: 4, duration: 0s}]}\n", "f.yaml: workload.jobs[1].duration: 0 is not a value of this key (leave the key out for its default)"},
		{"workload: {jobs: [{kind: stencil, ranks: 4, stencil: {allreduce_every: 0}}]}\n", ""},
	} {
		_, err := Parse([]byte(tc.doc), "f.yaml", nil)
		if tc.want == "" {
			if err != nil && strings.Contains(err.Error(), "0 is not a value") {
				t.Errorf("%q: %v", tc.doc, err)
			}
			continue
		}
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q: %v\nwant %s", tc.doc, err, tc.want)
		}
	}
	// Left out: the default.
	s, err := Parse([]byte(small), "small.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Network.MTU != DefaultMTU || s.Seed != 3 || s.Output.IdleHistBins != DefaultIdleBins {
		t.Errorf("defaults: mtu %d seed %d bins %d", s.Network.MTU, s.Seed, s.Output.IdleHistBins)
	}
}

// TestZeroKeysDocumented: docs/scenario.md "Unset keys and zeros" lists
// every key of ZeroKeys.
func TestZeroKeysDocumented(t *testing.T) {
	data, err := os.ReadFile("../../docs/scenario.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i := strings.Index(doc, "## Unset keys and zeros")
	if i < 0 {
		t.Fatal(`no section "Unset keys and zeros"`)
	}
	sec := doc[i:]
	if j := strings.Index(sec[3:], "\n## "); j >= 0 {
		sec = sec[:j+3]
	}
	for k := range ZeroKeys {
		if !strings.Contains(sec, "`"+k+"`") {
			t.Errorf("%s is not in the section", k)
		}
	}
}

// TestZeroRuleNamesItsSource: a 0 from the environment is named by its
// variable.
func TestZeroRuleNamesItsSource(t *testing.T) {
	t.Setenv("LPICTL_SCENARIO_SEED", "0")
	_, err := Load("", nil)
	if want := "environment LPICTL_SCENARIO_SEED: seed: 0 is not a value of this key (leave the key out for its default)"; err == nil || err.Error() != want {
		t.Fatalf("%v\nwant %s", err, want)
	}
}
