package sweep

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/lpictl/lpictl/configs"
	"github.com/lpictl/lpictl/sim/scenario"
)

// Roles of a run in a plan.
const (
	RolePoint    = "point"
	RoleBaseline = "baseline"
)

// hashVersion enters every run's id: a change of the canonical form (or of
// what a run writes) gets new ids instead of reusing old directories.
const hashVersion = "lpictl-sweep-id/1"

// Plan is DIR/plan.json: the runs of a sweep in index order.
type Plan struct {
	Name string `json:"name"`
	// AxisKeys are the sweep's axis keys in column order.
	AxisKeys []string `json:"axis_keys"`
	Points   []Point  `json:"points"`
}

// Point is one run of a plan.
type Point struct {
	Index int    `json:"index"`
	ID    string `json:"id"`
	Role  string `json:"role"`
	// Axes are the run's axis values as written in the sweep file (a
	// baseline's: the values it kept).
	Axes       AxisValues `json:"axes"`
	Seed       uint64     `json:"seed"`
	BaselineID string     `json:"baseline_id,omitempty"`
	// Dir is the run's directory relative to DIR: points/<id>.
	Dir string `json:"dir"`

	// Scenario is the resolved scenario (set by Plan, not by ReadPlan:
	// RunPoint reads DIR/<dir>/scenario.json).
	Scenario *scenario.Scenario `json:"-"`
}

// AxisValue is one axis key and its value as written.
type AxisValue struct{ Key, Value string }

// AxisValues keep the sweep's axis order; in JSON they are an object
// with the keys in that order.
type AxisValues []AxisValue

// Get returns the value of key and whether the run has it.
func (a AxisValues) Get(key string) (string, bool) {
	for _, kv := range a {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return "", false
}

// MarshalJSON writes the values as an object in axis order.
func (a AxisValues) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, kv := range a {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(kv.Key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(kv.Value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads an object of strings, keeping its key order.
func (a *AxisValues) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil { // null
		*a = nil
		return nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return errors.New("axes: want an object of key: value")
	}
	var out AxisValues
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return err
		}
		var v string
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("axes.%v: want a string: %w", kt, err)
		}
		out = append(out, AxisValue{Key: kt.(string), Value: v})
	}
	*a = out
	return nil
}

// baseFile is a scenario file read once per plan.
type baseFile struct {
	data []byte
	name string // the path errors give
	dir  string // absolute folder, for the workload's file paths
}

type planner struct {
	s     *Sweep
	bases map[string]*baseFile
}

// display is how errors name a base path as written.
func (p *planner) display(rel string) string {
	if p.s.fsys != nil {
		return p.s.fsPrefix + p.path(rel)
	}
	return p.path(rel)
}

// path is a base path as written, resolved against the sweep file's folder.
func (p *planner) path(rel string) string {
	if p.s.fsys != nil {
		return path.Join(path.Dir(p.s.fsName), rel)
	}
	if filepath.IsAbs(rel) {
		return filepath.Clean(rel)
	}
	return filepath.Clean(filepath.Join(p.s.Dir, rel))
}

func (p *planner) base(rel string) (*baseFile, error) {
	name := p.path(rel)
	if b, ok := p.bases[name]; ok {
		return b, nil
	}
	if p.s.fsys != nil {
		data, err := fs.ReadFile(p.s.fsys, name)
		if err != nil {
			return nil, err
		}
		b := &baseFile{data: data, name: p.s.fsPrefix + name}
		p.bases[name] = b
		return b, nil
	}
	data, err := configs.ReadFile(name)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(filepath.Dir(name))
	if err != nil {
		return nil, err
	}
	b := &baseFile{data: data, name: name, dir: abs}
	p.bases[name] = b
	return b, nil
}

// scenario parses a base file with overrides, as `lpictl sim run -c BASE
// --set …` would, with the workload's file paths made absolute.
func (p *planner) scenario(rel string, sets []string) (*scenario.Scenario, error) {
	b, err := p.base(rel)
	if err != nil {
		return nil, err
	}
	sc, err := scenario.Parse(b.data, b.name, sets)
	if err != nil {
		return nil, err
	}
	if b.dir != "" {
		sc.Workload.Resolve(b.dir)
	}
	return sc, nil
}

func setsOf(vals []Value) ([]string, error) {
	var sets []string
	for _, v := range vals {
		txt, err := yamlText(v.Node)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", v.Key, err)
		}
		sets = append(sets, v.Key+"="+txt)
	}
	return sets, nil
}

// detail strips what a scenario error says about where the override came
// from ("BASE: --set KEY: "), which the sweep file's error names instead.
func detail(err error, base string) string {
	msg := strings.TrimPrefix(err.Error(), base+": ")
	if strings.HasPrefix(msg, "--set ") {
		if _, rest, ok := strings.Cut(msg, ": "); ok {
			msg = rest
		}
	}
	return msg
}

// Plan expands the sweep into its runs and resolves every scenario. Every
// axis value is first checked on its own against the base scenario, so a
// bad key or value is reported as "SWEEP: line N: axes.KEY[I]: …".
func (s *Sweep) Plan() (*Plan, error) {
	p := &planner{s: s, bases: map[string]*baseFile{}}
	plan, err := p.plan()
	if err != nil {
		return nil, inputErr(fmt.Errorf("%s: %w", s.Path, err))
	}
	return plan, nil
}

func (p *planner) plan() (*Plan, error) {
	s := p.s
	if _, err := p.base(s.Base); err != nil {
		return nil, fmt.Errorf("base: %w", err)
	}
	baseName := p.display(s.Base)
	setSets, err := setsOf(s.Set)
	if err != nil {
		return nil, fmt.Errorf("set.%w", err)
	}
	// The shared overrides, one at a time, then together.
	for i, v := range s.Set {
		if _, err := p.scenario(s.Base, setSets[i:i+1]); err != nil {
			if v.Line == 0 { // from Override (the CLI's --set)
				return nil, fmt.Errorf("--set %s: %s", printable(v.Key), detail(err, baseName))
			}
			return nil, fmt.Errorf("line %d: set.%s: %s", v.Line, printable(v.Key), detail(err, baseName))
		}
	}
	if _, err := p.scenario(s.Base, setSets); err != nil {
		return nil, fmt.Errorf("set: %s", detail(err, baseName))
	}
	// Every axis value on its own.
	for _, a := range s.Axes {
		for j, v := range a.Values {
			key := fmt.Sprintf("%s[%d]", a.where, j)
			if a.Key == BaseKey {
				if _, err := p.base(v.Text); err != nil {
					return nil, fmt.Errorf("line %d: %s: %w", v.Line, key, err)
				}
				if _, err := p.scenario(v.Text, setSets); err != nil {
					return nil, fmt.Errorf("line %d: %s: %s", v.Line, key, detail(err, p.display(v.Text)))
				}
				continue
			}
			one, err := setsOf([]Value{v})
			if err != nil {
				return nil, fmt.Errorf("line %d: %s: %w", v.Line, key, err)
			}
			if _, err := p.scenario(s.Base, append(append([]string{}, setSets...), one...)); err != nil {
				return nil, fmt.Errorf("line %d: %s: %s", v.Line, key, detail(err, baseName))
			}
		}
	}
	if b := s.Baseline; b != nil {
		for _, v := range b.Set {
			one, err := setsOf([]Value{v})
			if err != nil {
				return nil, fmt.Errorf("line %d: baseline.set.%s: %w", v.Line, v.Key, err)
			}
			if _, err := p.scenario(s.Base, append(append([]string{}, setSets...), one...)); err != nil {
				return nil, fmt.Errorf("line %d: baseline.set.%s: %s", v.Line, printable(v.Key), detail(err, baseName))
			}
		}
	}

	plan := &Plan{Name: s.Name, AxisKeys: s.AxisKeys(), Points: []Point{}}
	var baselines []Point
	baseIDs := map[string]bool{}
	for _, combo := range s.combinations() {
		pts, err := p.points(combo, setSets)
		if err != nil {
			return nil, err
		}
		for _, pt := range pts {
			if s.Baseline != nil {
				bl, err := p.baseline(combo, pt.Seed, setSets)
				if err != nil {
					return nil, err
				}
				pt.BaselineID = bl.ID
				if !baseIDs[bl.ID] {
					baseIDs[bl.ID] = true
					baselines = append(baselines, bl)
				}
			}
			plan.Points = append(plan.Points, pt)
		}
	}
	isPoint := map[string]bool{}
	for _, pt := range plan.Points {
		isPoint[pt.ID] = true
	}
	for _, bl := range baselines {
		if !isPoint[bl.ID] {
			plan.Points = append(plan.Points, bl)
		}
	}
	for i := range plan.Points {
		plan.Points[i].Index = i
	}
	return plan, nil
}

// combinations is the cartesian product of the factors (each axis of its
// own, each zip group) in order, the last factor varying fastest: per
// combination, one value per axis (in s.Axes order).
func (s *Sweep) combinations() [][]Value {
	type factor struct {
		axes []int // indexes into s.Axes
		n    int
	}
	var factors []factor
	groups := map[int]int{} // zip group → factor
	for i, a := range s.Axes {
		if a.Group < 0 {
			factors = append(factors, factor{axes: []int{i}, n: len(a.Values)})
			continue
		}
		f, ok := groups[a.Group]
		if !ok {
			f = len(factors)
			groups[a.Group] = f
			factors = append(factors, factor{n: len(a.Values)})
		}
		factors[f].axes = append(factors[f].axes, i)
	}
	total := 1
	for _, f := range factors {
		total *= f.n
	}
	combos := make([][]Value, 0, total)
	pos := make([]int, len(factors))
	for range total {
		combo := make([]Value, len(s.Axes))
		for fi, f := range factors {
			for _, ai := range f.axes {
				combo[ai] = s.Axes[ai].Values[pos[fi]]
			}
		}
		combos = append(combos, combo)
		for fi := len(factors) - 1; fi >= 0; fi-- {
			pos[fi]++
			if pos[fi] < factors[fi].n {
				break
			}
			pos[fi] = 0
		}
	}
	return combos
}

func describeCombo(combo []Value) string {
	parts := make([]string, len(combo))
	for i, v := range combo {
		parts[i] = v.Key + "=" + v.Text
	}
	return strings.Join(parts, ", ")
}

// points resolves one combination for every seed.
func (p *planner) points(combo []Value, setSets []string) ([]Point, error) {
	s := p.s
	base := s.Base
	var axisVals []Value
	axes := make(AxisValues, len(combo))
	for i, v := range combo {
		axes[i] = AxisValue{Key: v.Key, Value: v.Text}
		if v.Key == BaseKey {
			base = v.Text
			continue
		}
		axisVals = append(axisVals, v)
	}
	axisSets, err := setsOf(axisVals)
	if err != nil {
		return nil, err
	}
	sets := append(append([]string{}, setSets...), axisSets...)
	fail := func(err error) error {
		return fmt.Errorf("point (%s): %s", describeCombo(combo), detail(err, p.display(base)))
	}
	sc, err := p.scenario(base, sets)
	if err != nil {
		return nil, fail(err)
	}
	seeds := s.Seeds
	switch {
	case seeds != nil:
	case s.Repetitions > 0:
		for k := range s.Repetitions {
			seeds = append(seeds, sc.Seed+uint64(k))
		}
	default:
		seeds = []uint64{sc.Seed}
	}
	var pts []Point
	for _, seed := range seeds {
		one, err := p.scenario(base, append(sets[:len(sets):len(sets)], "seed="+strconv.FormatUint(seed, 10)))
		if err != nil {
			return nil, fail(err)
		}
		id, err := ID(one)
		if err != nil {
			return nil, fail(err)
		}
		pts = append(pts, Point{ID: id, Role: RolePoint, Axes: axes, Seed: one.Seed, Dir: "points/" + id, Scenario: one})
	}
	return pts, nil
}

// baseline resolves a point's baseline: the base file (the point's when
// base is kept), the sweep's set, the kept axes, the seed, baseline.set.
func (p *planner) baseline(combo []Value, seed uint64, setSets []string) (Point, error) {
	s := p.s
	base := s.Base
	var kept []Value
	var axes AxisValues
	for _, v := range combo {
		keep := false
		for _, k := range s.Baseline.GroupBy {
			keep = keep || k == v.Key
		}
		if !keep {
			continue
		}
		axes = append(axes, AxisValue{Key: v.Key, Value: v.Text})
		if v.Key == BaseKey {
			base = v.Text
			continue
		}
		kept = append(kept, v)
	}
	keptSets, err := setsOf(kept)
	if err != nil {
		return Point{}, err
	}
	blSets, err := setsOf(s.Baseline.Set)
	if err != nil {
		return Point{}, err
	}
	sets := append(append([]string{}, setSets...), keptSets...)
	sets = append(sets, "seed="+strconv.FormatUint(seed, 10))
	sets = append(sets, blSets...)
	sc, err := p.scenario(base, sets)
	if err != nil {
		return Point{}, fmt.Errorf("baseline of (%s): %s", describeCombo(combo), detail(err, p.display(base)))
	}
	id, err := ID(sc)
	if err != nil {
		return Point{}, err
	}
	if axes == nil {
		axes = AxisValues{}
	}
	return Point{ID: id, Role: RoleBaseline, Axes: axes, Seed: sc.Seed, Dir: "points/" + id, Scenario: sc}, nil
}

// ID is a run's identity: 16 hex digits of the SHA-256 of the resolved
// scenario in canonical JSON (keys sorted, the workload's trace and mapping
// files by the SHA-256 of their contents, not their paths), after a format
// version. It does not depend on where the sweep or the scenario files are.
func ID(sc *scenario.Scenario) (string, error) {
	canon, err := canonical(sc)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write([]byte(hashVersion + "\n"))
	h.Write(canon)
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

func canonical(sc *scenario.Scenario) ([]byte, error) {
	raw, err := json.Marshal(sc)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	if w, ok := m["workload"].(map[string]any); ok {
		if err := hashFiles(w, "workload"); err != nil {
			return nil, err
		}
	}
	return json.Marshal(m)
}

// hashFiles replaces a workload section's file paths by their contents'
// hashes.
func hashFiles(w map[string]any, where string) error {
	for _, k := range []string{"file", "mapping_file"} {
		p, ok := w[k].(string)
		if !ok || p == "" {
			continue
		}
		sum, err := hashFile(p)
		if err != nil {
			return fmt.Errorf("%s.%s: %w", where, k, err)
		}
		w[k] = "sha256:" + sum
	}
	if jobs, ok := w["jobs"].([]any); ok {
		for i, j := range jobs {
			if jm, ok := j.(map[string]any); ok {
				if err := hashFiles(jm, fmt.Sprintf("%s.jobs[%d]", where, i)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// hashFile is the hex SHA-256 of a file's contents, streamed (a trace may
// be large).
func hashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// MaxPoints is the default limit on a sweep's points (Count) that
// `lpictl sweep plan`, `run` and `submit` accept without --max-points:
// each point is a directory and a simulation, and planning resolves every
// one of them up front.
const MaxPoints = 10_000

// Count is the number of points of the sweep, without expanding it: the
// product of its factors' value counts (an axis of its own, or a zip group
// once) times the seeds per point. The plan adds at most as many
// baselines. Factors describes the product ("3 × 2 values × 5 seeds").
// A product beyond math.MaxInt saturates there.
func (s *Sweep) Count() (points int, factors string) {
	var sizes []int
	groups := map[int]bool{}
	for _, a := range s.Axes {
		if a.Group >= 0 {
			if groups[a.Group] {
				continue
			}
			groups[a.Group] = true
		}
		sizes = append(sizes, len(a.Values))
	}
	seeds := 1
	switch {
	case s.Seeds != nil:
		seeds = len(s.Seeds)
	case s.Repetitions > 0:
		seeds = s.Repetitions
	}
	points = 1
	parts := make([]string, 0, len(sizes))
	for _, n := range append(sizes, seeds) {
		if n != 0 && points > math.MaxInt/n {
			points = math.MaxInt
		} else if points != math.MaxInt {
			points *= n
		}
	}
	for _, n := range sizes {
		parts = append(parts, strconv.Itoa(n))
	}
	desc := "1 combination"
	if len(parts) > 0 {
		desc = strings.Join(parts, " × ") + " values"
	}
	unit := "seeds"
	if seeds == 1 {
		unit = "seed"
	}
	return points, fmt.Sprintf("%s × %d %s", desc, seeds, unit)
}
