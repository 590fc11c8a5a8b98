package configs

import (
	"strings"
	"testing"
)

type inner struct {
	Rate  float64           `yaml:"rate"`
	Names []string          `yaml:"names"`
	Hops  map[int]float64   `yaml:"hops"`
	Deep  map[string]*inner `yaml:"deep"`
}

type outer struct {
	Name  string  `yaml:"name"`
	Inner inner   `yaml:"inner"`
	List  []inner `yaml:"list"`
}

func TestDecode(t *testing.T) {
	var o outer
	err := Decode([]byte("name: a\ninner:\n  rate: 2\n  hops: {4: 0.7}\n"), "f.yaml", &o,
		[]string{"inner.rate=3.5", "inner.names=[x, y]", "name=b", "inner.deep.k.rate=1"})
	if err != nil {
		t.Fatal(err)
	}
	if o.Name != "b" || o.Inner.Rate != 3.5 || len(o.Inner.Names) != 2 || o.Inner.Hops[4] != 0.7 || o.Inner.Deep["k"].Rate != 1 {
		t.Errorf("decoded %+v", o)
	}
	var empty outer
	if err := Decode(nil, "empty.yaml", &empty, []string{"name=x"}); err != nil || empty.Name != "x" {
		t.Errorf("empty file with --set: %v %+v", err, empty)
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		in   string
		sets []string
		want string
	}{
		{"name: a\ninner:\n  rat: 2\n", nil, `f.yaml: line 3: unknown key "inner.rat"`},
		{"list:\n  - rate: 1\n  - speed: 2\n", nil, `f.yaml: line 3: unknown key "list[1].speed"`},
		{"inner:\n  deep:\n    a:\n      bogus: 1\n", nil, `line 4: unknown key "inner.deep.a.bogus"`},
		{"name: a\n", []string{"inner.nope=1"}, `f.yaml: --set inner.nope: unknown key "inner.nope"`},
		{"name: a\n", []string{"inner.rate=fast"}, "f.yaml: --set inner.rate: cannot unmarshal !!str `fast` into float64"},
		{"name: a\n", []string{"inner\n.rate=1"}, `f.yaml: --set inner\n: unknown key "inner\n"`},
		{"inner:\n  rate: fast\n", nil, "f.yaml: line 2: cannot unmarshal !!str `fast` into float64"},
		{"name: a\n", []string{"noequals"}, `--set noequals: want key=value`},
		{"name: a\n", []string{"name.x=1"}, "--set name.x: name is not a mapping"},
		{"- a\n- b\n", nil, "f.yaml: want a mapping of keys at the top level"},
		{"name: [\n", nil, "f.yaml: line 1: did not find expected node content"},
	}
	for _, tc := range tests {
		var o outer
		err := Decode([]byte(tc.in), "f.yaml", &o, tc.sets)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Decode(%q, %v) = %v, want one line containing %q", tc.in, tc.sets, err, tc.want)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add("name: a\ninner:\n  rate: 2\n", "inner.rate=1")
	f.Add("list:\n  - rate: 1\n", "x=")
	f.Add("&a name: *a\n", "inner.deep.a.rate=2")
	f.Add("", "=")
	f.Fuzz(func(t *testing.T, in, set string) {
		var o outer
		err := Decode([]byte(in), "fuzz.yaml", &o, []string{set})
		if err != nil && (!strings.HasPrefix(err.Error(), "fuzz.yaml: ") || strings.Contains(err.Error(), "\n")) {
			t.Fatalf("error %q does not name the file on one line", err)
		}
	})
}

// TestIntegerKeyRejectsFraction: yaml.v3 truncates 1.5 into an integer
// field; a configuration must refuse it, in a file and from --set, and
// still take a whole number written as a float.
func TestIntegerKeyRejectsFraction(t *testing.T) {
	type cfg struct {
		Seed  uint64 `yaml:"seed"`
		Ranks int    `yaml:"ranks"`
	}
	for _, c := range []struct {
		doc  string
		sets []string
		want string
	}{
		{"seed: 1.5\n", nil, "f.yaml: line 1: seed: want an integer, got 1.5"},
		{"", []string{"seed=1.5"}, "f.yaml: --set seed: want an integer, got 1.5"},
		{"ranks: 1e-3\n", nil, "f.yaml: line 1: ranks: want an integer, got 1e-3"},
		{"ranks: .inf\n", nil, "f.yaml: line 1: ranks: want an integer, got .inf"},
	} {
		var v cfg
		if err := Decode([]byte(c.doc), "f.yaml", &v, c.sets); err == nil || err.Error() != c.want {
			t.Errorf("%q %v: error %v, want %q", c.doc, c.sets, err, c.want)
		}
	}
	var v cfg
	if err := Decode([]byte("seed: 2.0\nranks: 1e3\n"), "f.yaml", &v, nil); err != nil || v.Seed != 2 || v.Ranks != 1000 {
		t.Errorf("whole numbers as floats: %v %+v", err, v)
	}
}

type kinded struct {
	Kind     string  `yaml:"kind"`
	Duration string  `yaml:"duration"`
	File     string  `yaml:"file"`
	Load     float64 `yaml:"load"`
}

func (kinded) KindSection() {}

type plain struct {
	Kind  string  `yaml:"kind"`
	Bound float64 `yaml:"bound"`
}

type withKinds struct {
	Workload  kinded `yaml:"workload"`
	Predictor plain  `yaml:"predictor"`
}

// TestDecodeKindChange: --set workload.kind=goal over a file's synthetic
// workload kept its duration, which a GOAL trace refuses; only
// --set 'workload={kind: goal, file: X}' worked (issue 24 item 20). A
// kind change of a KindSection drops the file's other keys of the
// section; --set keys stay, before or after; other sections keep theirs.
func TestDecodeKindChange(t *testing.T) {
	file := []byte("workload:\n  kind: synthetic\n  duration: 2ms\n  load: 0.5\npredictor:\n  kind: perfbound\n  bound: 0.05\n")
	for _, sets := range [][]string{
		{"workload.kind=goal", "workload.file=x.goal"},
		{"workload.file=x.goal", "workload.kind=goal"},
		{"workload.kind=goal", "workload.file=x.goal", "predictor.kind=perfboundcorrect"},
	} {
		var w withKinds
		if err := Decode(file, "f.yaml", &w, sets); err != nil {
			t.Fatal(err)
		}
		want := kinded{Kind: "goal", File: "x.goal"}
		if w.Workload != want || w.Predictor.Bound != 0.05 {
			t.Errorf("%v: %+v; want workload %+v and the predictor's bound kept", sets, w, want)
		}
	}
	var same withKinds
	if err := Decode(file, "f.yaml", &same, []string{"workload.kind=synthetic", "workload.load=0.2"}); err != nil ||
		same.Workload != (kinded{Kind: "synthetic", Duration: "2ms", Load: 0.2}) {
		t.Errorf("same kind: %v %+v; want the file's keys kept", err, same)
	}
}
