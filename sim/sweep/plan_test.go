package sweep

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/lpictl/lpictl/configs"
	"github.com/lpictl/lpictl/predictor"
)

// The product in file order, the last axis fastest, zip groups as one
// factor after the axes, seeds fastest of all; values keep their types.
func TestExpansionOrder(t *testing.T) {
	_, plan := mustPlan(t, writeSweep(t, `
base: small.yaml
axes:
  power.mode: [fast-wake, deep-sleep]
  predictor.pdt: [0, "10ns", 1us]
zip:
  - workload.synthetic.load: [0.1, 0.25]
    workload.duration: [10us, 15us]
seeds: [3, 4]
`))
	type want struct {
		mode, pdtText string
		pdt           time.Duration
		load          float64
		dur           time.Duration
		seed          uint64
	}
	var wants []want
	for _, mode := range []string{"fast-wake", "deep-sleep"} {
		for _, pdt := range []struct {
			text string
			d    time.Duration
		}{{"0", 0}, {"10ns", 10 * time.Nanosecond}, {"1us", time.Microsecond}} {
			for _, z := range []struct {
				load float64
				dur  time.Duration
			}{{0.1, 10 * time.Microsecond}, {0.25, 15 * time.Microsecond}} {
				for _, seed := range []uint64{3, 4} {
					wants = append(wants, want{mode, pdt.text, pdt.d, z.load, z.dur, seed})
				}
			}
		}
	}
	if len(plan.Points) != len(wants) || len(wants) != 24 {
		t.Fatalf("%d runs, want %d", len(plan.Points), len(wants))
	}
	ids := map[string]bool{}
	for i, pt := range plan.Points {
		w := wants[i]
		sc := pt.Scenario
		if pt.Index != i || pt.Role != RolePoint || pt.Seed != w.seed || sc.Seed != w.seed ||
			sc.Power.Mode != w.mode || sc.Predictor.PDT == nil || sc.Predictor.PDT.D() != w.pdt ||
			sc.Workload.Synthetic.Load != w.load || sc.Workload.Duration.D() != w.dur {
			t.Errorf("run %d: %+v mode %s pdt %v load %v dur %v seed %d, want %+v", i, pt, sc.Power.Mode,
				sc.Predictor.PDT, sc.Workload.Synthetic.Load, sc.Workload.Duration, sc.Seed, w)
		}
		if v, _ := pt.Axes.Get("predictor.pdt"); v != w.pdtText {
			t.Errorf("run %d: predictor.pdt as written %q, want %q", i, v, w.pdtText)
		}
		if got := fmt.Sprint(pt.Axes); got != fmt.Sprint(AxisValues{{"power.mode", w.mode}, {"predictor.pdt", w.pdtText},
			{"workload.synthetic.load", fmt.Sprint(w.load)}, {"workload.duration", fmt.Sprintf("%dus", w.dur/time.Microsecond)}}) {
			t.Errorf("run %d: axes %v", i, got)
		}
		if pt.Dir != "points/"+pt.ID || ids[pt.ID] {
			t.Errorf("run %d: dir %s, id %s seen before: %v", i, pt.Dir, pt.ID, ids[pt.ID])
		}
		ids[pt.ID] = true
	}
}

// repetitions count from the point's own seed; a mapping value keeps its
// structure and is shown in flow style.
func TestRepetitionsAndStructuredValues(t *testing.T) {
	_, plan := mustPlan(t, writeSweep(t, `
base: small.yaml
set: {seed: 7}
axes:
  predictor: [{kind: fixed, pdt: 2us}, {kind: perfbound, bound: 0.05}]
repetitions: 2
`))
	if len(plan.Points) != 4 {
		t.Fatalf("%d runs, want 4", len(plan.Points))
	}
	seeds := []uint64{7, 8, 7, 8}
	texts := []string{"{kind: fixed, pdt: 2us}", "{kind: fixed, pdt: 2us}", "{kind: perfbound, bound: 0.05}", "{kind: perfbound, bound: 0.05}"}
	for i, pt := range plan.Points {
		v, _ := pt.Axes.Get("predictor")
		if pt.Seed != seeds[i] || v != texts[i] {
			t.Errorf("run %d: seed %d axes %q, want %d %q", i, pt.Seed, v, seeds[i], texts[i])
		}
	}
	if p := plan.Points[0].Scenario.Predictor; p.Kind != predictor.KindFixed || p.PDT.D() != 2*time.Microsecond {
		t.Errorf("predictor of run 0: %+v", p)
	}
	if p := plan.Points[2].Scenario.Predictor; p.Kind != predictor.KindPerfBound || p.PDT != nil {
		t.Errorf("predictor of run 2 (the whole mapping replaces the base's): %+v", p)
	}
}

// Each point's baseline keeps the group_by axes and the seed, every other
// axis falls back to the base scenario; equal baselines run once, after
// the points, in order of first use.
func TestBaselineGrouping(t *testing.T) {
	_, plan := mustPlan(t, writeSweep(t, `
base: small.yaml
axes:
  power.mode: [fast-wake, deep-sleep]
  predictor.pdt: [0, 3us]
  workload.synthetic.load: [0.1, 0.2]
seeds: [1, 2]
baseline:
  set: {power.mode: always-on}
  group_by: [workload.synthetic.load]
`))
	if len(plan.Points) != 16+4 {
		t.Fatalf("%d runs, want 16 points + 4 baselines", len(plan.Points))
	}
	type key struct {
		load string
		seed uint64
	}
	baselines := map[key]Point{}
	var order []key
	for _, pt := range plan.Points[16:] {
		load, _ := pt.Axes.Get("workload.synthetic.load")
		if pt.Role != RoleBaseline || pt.BaselineID != "" || len(pt.Axes) != 1 {
			t.Errorf("baseline run %d: %+v", pt.Index, pt)
		}
		sc := pt.Scenario
		// Not kept: power.mode (baseline.set), predictor.pdt (the base's 1us).
		if sc.Power.Mode != "always-on" || sc.Predictor.PDT.D() != time.Microsecond || fmt.Sprint(sc.Workload.Synthetic.Load) != load || sc.Seed != pt.Seed {
			t.Errorf("baseline run %d scenario: mode %s pdt %v load %v seed %d", pt.Index, sc.Power.Mode, sc.Predictor.PDT, sc.Workload.Synthetic.Load, sc.Seed)
		}
		k := key{load, pt.Seed}
		baselines[k] = pt
		order = append(order, k)
	}
	if fmt.Sprint(order) != "[{0.1 1} {0.1 2} {0.2 1} {0.2 2}]" {
		t.Errorf("baseline order %v", order)
	}
	for _, pt := range plan.Points[:16] {
		load, _ := pt.Axes.Get("workload.synthetic.load")
		if b := baselines[key{load, pt.Seed}]; pt.BaselineID != b.ID {
			t.Errorf("run %d (%v seed %d): baseline %s, want %s", pt.Index, pt.Axes, pt.Seed, pt.BaselineID, b.ID)
		}
	}
}

// A point equal to its baseline is the baseline (run once); base is kept
// by default when it is an axis.
func TestBaselineDedupAndBaseAxis(t *testing.T) {
	path := writeSweep(t, `
base: small.yaml
axes:
  base: [small.yaml, other.yaml]
  power.mode: [always-on, deep-sleep]
baseline:
  set: {power.mode: always-on}
`)
	other := strings.Replace(smallScenario, "name: small", "name: other", 1)
	write(t, filepath.Join(filepath.Dir(path), "other.yaml"), other)
	_, plan := mustPlan(t, path)
	if len(plan.Points) != 4 {
		t.Fatalf("%d runs, want 4 (the always-on points are the baselines)", len(plan.Points))
	}
	for i, pt := range plan.Points {
		wantBase := plan.Points[i/2*2].ID
		if pt.Role != RolePoint || pt.BaselineID != wantBase {
			t.Errorf("run %d: role %s baseline %s, want point, %s", i, pt.Role, pt.BaselineID, wantBase)
		}
	}
	if plan.Points[0].Scenario.Name != "small" || plan.Points[2].Scenario.Name != "other" {
		t.Errorf("base axis: names %s, %s", plan.Points[0].Scenario.Name, plan.Points[2].Scenario.Name)
	}
}

// Without group_by, a baseline keeps base and the axes zipped with it:
// each application's baseline runs at that application's own scale.
func TestBaselineKeepsBaseZip(t *testing.T) {
	path := writeSweep(t, `
zip:
  - base: [small.yaml, other.yaml]
    workload.duration: [10us, 15us]
axes:
  power.mode: [fast-wake, deep-sleep]
baseline:
  set: {power.mode: always-on}
`)
	other := strings.Replace(smallScenario, "name: small", "name: other", 1)
	write(t, filepath.Join(filepath.Dir(path), "other.yaml"), other)
	_, plan := mustPlan(t, path)
	if len(plan.Points) != 6 {
		t.Fatalf("%d runs, want 4 points + 2 baselines", len(plan.Points))
	}
	for _, pt := range plan.Points[4:] {
		if pt.Role != RoleBaseline {
			t.Fatalf("run %d: role %s, want baseline", pt.Index, pt.Role)
		}
	}
	for _, pt := range plan.Points[:4] {
		b := plan.Points[4]
		if pt.BaselineID != b.ID {
			b = plan.Points[5]
		}
		if pt.BaselineID != b.ID || b.Scenario.Name != pt.Scenario.Name || b.Scenario.Workload.Duration != pt.Scenario.Workload.Duration {
			t.Errorf("run %d (%s, %v): baseline %s (%s, %v)", pt.Index, pt.Scenario.Name, pt.Scenario.Workload.Duration,
				b.ID, b.Scenario.Name, b.Scenario.Workload.Duration)
		}
	}
}

func planIDs(t *testing.T, path string) []string {
	t.Helper()
	_, plan := mustPlan(t, path)
	var ids []string
	for _, pt := range plan.Points {
		ids = append(ids, pt.ID)
	}
	return ids
}

// Ids depend on the resolved scenarios only: not on where the files are,
// on the order of set keys, or on a mapping file's path (its contents).
func TestIDStability(t *testing.T) {
	scen := smallScenario + "\n" // workload mapping from a file
	scen = strings.Replace(scen, "workload: {kind: synthetic,", "workload: {kind: synthetic, mapping: file, mapping_file: nodes.map,", 1)
	var nodes, reversed strings.Builder
	for i := range 20 {
		fmt.Fprintln(&nodes, i)
		fmt.Fprintln(&reversed, 19-i)
	}
	sweepA := "base: base/small.yaml\nset: {workload.duration: 10us, predictor.pdt: 2us}\naxes:\n  power.mode: [fast-wake, deep-sleep]\n"
	sweepB := "base: ../elsewhere/small.yaml\nset: {predictor.pdt: 2us, workload.duration: 10us}\naxes:\n  power.mode: [fast-wake, deep-sleep]\n"
	setup := func(sweep, sweepDir, baseDir, mapping string) string {
		root := t.TempDir()
		for _, d := range []string{sweepDir, baseDir} {
			if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		write(t, filepath.Join(root, baseDir, "small.yaml"), scen)
		write(t, filepath.Join(root, baseDir, "nodes.map"), mapping)
		p := filepath.Join(root, sweepDir, "s.yaml")
		write(t, p, sweep)
		return p
	}
	a := planIDs(t, setup(sweepA, ".", "base", nodes.String()))
	b := planIDs(t, setup(sweepB, "deep/er", "deep/elsewhere", nodes.String()))
	c := planIDs(t, setup(sweepA, ".", "base", reversed.String()))
	if len(a) != 2 || a[0] == a[1] {
		t.Fatalf("ids %v: want two distinct", a)
	}
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("ids differ with the files' location or set order: %v, %v", a, b)
	}
	if a[0] == c[0] || a[1] == c[1] {
		t.Errorf("ids do not change with the mapping file's contents: %v, %v", a, c)
	}
	// The same scenario planned twice: the same ids.
	if d := planIDs(t, setup(sweepA, ".", "base", nodes.String())); fmt.Sprint(a) != fmt.Sprint(d) {
		t.Errorf("ids not reproducible: %v, %v", a, d)
	}
}

// plan.json is written with the axes in sweep order and read back equal;
// malformed plans are bad input (configs.InputError) naming plan.json.
func TestPlanJSON(t *testing.T) {
	s, plan := mustPlan(t, writeSweep(t, "base: small.yaml\naxes:\n  predictor.pdt: [0, 1us]\n  power.mode: [fast-wake]\nbaseline: {set: {power.mode: always-on}}\n"))
	dir := t.TempDir()
	if err := Prepare(dir, s, plan); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, PlanFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"axes": {"predictor.pdt":"0","power.mode":"fast-wake"}`) &&
		!strings.Contains(string(data), "\"axes\": {\n        \"predictor.pdt\": \"0\",\n        \"power.mode\": \"fast-wake\"\n      }") {
		t.Errorf("axes not in sweep order:\n%s", data)
	}
	back, err := ReadPlan(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range plan.Points {
		plan.Points[i].Scenario = nil
	}
	if a, b := fmt.Sprint(back), fmt.Sprint(plan); a != b {
		t.Errorf("read back\n%s\nwant\n%s", a, b)
	}
	if copied, _ := os.ReadFile(filepath.Join(dir, SweepCopy)); !strings.Contains(string(copied), "predictor.pdt: [0, 1us]") {
		t.Errorf("sweep.yaml: %q", copied)
	}
	for _, tc := range []struct{ name, plan, want string }{
		{"missing", "", "plan.json: missing"},
		{"not json", "{", "plan.json: unexpected EOF"},
		{"unknown field", `{"name":"x","points":[],"extra":1}`, `plan.json: json: unknown field "extra"`},
		{"bad index", `{"name":"x","points":[{"index":1,"id":"0123456789abcdef","role":"point","axes":{},"seed":1,"dir":"points/0123456789abcdef"}]}`, "points[0].index: 1, want 0"},
		{"bad id", `{"name":"x","points":[{"index":0,"id":"../x","role":"point","axes":{},"seed":1,"dir":"points/../x"}]}`, `points[0].id: "../x" is not 16 hex digits`},
		{"bad dir", `{"name":"x","points":[{"index":0,"id":"0123456789abcdef","role":"point","axes":{},"seed":1,"dir":"/etc"}]}`, `points[0].dir: "/etc"`},
		{"bad role", `{"name":"x","points":[{"index":0,"id":"0123456789abcdef","role":"boss","axes":{},"seed":1,"dir":"points/0123456789abcdef"}]}`, `points[0].role: "boss"`},
		{"dangling baseline", `{"name":"x","points":[{"index":0,"id":"0123456789abcdef","role":"point","axes":{},"seed":1,"baseline_id":"fedcba9876543210","dir":"points/0123456789abcdef"}]}`, "points[0].baseline_id: fedcba9876543210 is not a run of the plan"},
		{"axes not strings", `{"name":"x","points":[{"index":0,"id":"0123456789abcdef","role":"point","axes":{"a":1},"seed":1,"dir":"points/0123456789abcdef"}]}`, "axes.a: want a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := t.TempDir()
			if tc.plan != "" {
				write(t, filepath.Join(d, PlanFile), tc.plan)
			}
			_, err := ReadPlan(d)
			var se *configs.InputError
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), filepath.Join(d, PlanFile)+": ") {
				t.Errorf("error %v, want %s: …%s…", err, filepath.Join(d, PlanFile), tc.want)
			} else if !errors.As(err, &se) {
				t.Errorf("error %v is not *configs.InputError", err)
			}
		})
	}
}

// namesFile reports whether a plan's scenarios read a workload file.
func namesFile(p *Plan) bool {
	for _, pt := range p.Points {
		if pt.Scenario != nil && pt.Scenario.Workload.File != "" {
			return true
		}
	}
	return false
}

// The shipped sweeps plan from the built-in copies (configs.FS) to the
// same runs as from the files.
func TestShippedSweeps(t *testing.T) {
	names, err := fs.Glob(configs.FS, "sweeps/*.yaml")
	if err != nil || len(names) == 0 {
		t.Fatalf("no shipped sweeps in configs.FS (%v)", err)
	}
	for _, name := range names {
		_, disk := mustPlan(t, filepath.Join("../../configs", name))
		if namesFile(disk) {
			continue // a built-in base cannot name a workload file (docs/sweeps.md); its file plans above
		}
		s, err := LoadFS(configs.FS, name, "configs/")
		if err != nil {
			t.Fatal(err)
		}
		if s.Path != "configs/"+name {
			t.Errorf("path %s", s.Path)
		}
		built, err := s.Plan()
		if err != nil {
			t.Fatal(err)
		}
		for i := range disk.Points {
			disk.Points[i].Scenario, built.Points[i].Scenario = nil, nil
		}
		if a, b := fmt.Sprint(disk), fmt.Sprint(built); a != b {
			t.Errorf("%s: built-in plan\n%s\nfrom the file\n%s", name, b, a)
		}
	}
	// Errors name the built-in file.
	bad := fstest.MapFS{"sweeps/x.yaml": {Data: []byte("base: ../sim/none.yaml\n")}}
	s, err := LoadFS(bad, "sweeps/x.yaml", "configs/")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Plan(); err == nil || !strings.HasPrefix(err.Error(), "configs/sweeps/x.yaml: base: open sim/none.yaml") {
		t.Errorf("error %v", err)
	}
	if _, err := LoadFS(bad, "sweeps/y.yaml", "configs/"); err == nil {
		t.Error("LoadFS of a missing file: no error")
	}
	if _, err := LoadFS(fstest.MapFS{"a.yaml": {Data: []byte("axes: {}\n")}}, "a.yaml", "configs/"); err == nil || !strings.HasPrefix(err.Error(), "configs/a.yaml: ") {
		t.Errorf("LoadFS parse error %v", err)
	}
}

// TestCount: the points of a sweep, counted without expanding it (issue 24
// item 17): axes multiply, a zip group counts once, seeds multiply.
func TestCount(t *testing.T) {
	for _, c := range []struct {
		doc     string
		n       int
		factors string
	}{
		{"base: b.yaml\n", 1, "1 combination × 1 seed"},
		{"base: b.yaml\naxes:\n  seed_x: [1, 2, 3]\n  y: [a, b]\nseeds: [1, 2, 3, 4]\n", 24, "3 × 2 values × 4 seeds"},
		{"base: b.yaml\nzip:\n  - {a: [1, 2, 3], b: [4, 5, 6]}\naxes:\n  c: [x, y]\nrepetitions: 5\n", 30, "2 × 3 values × 5 seeds"},
	} {
		s, err := Parse([]byte(c.doc), "s.yaml")
		if err != nil {
			t.Fatalf("%q: %v", c.doc, err)
		}
		if n, f := s.Count(); n != c.n || f != c.factors {
			t.Errorf("%q: %d points (%s), want %d (%s)", c.doc, n, f, c.n, c.factors)
		}
	}
}
