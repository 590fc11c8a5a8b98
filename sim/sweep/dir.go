package sweep

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/google/renameio/v2"

	"github.com/lpictl/lpictl/configs"
	"github.com/lpictl/lpictl/sim/scenario"
)

// Files of a sweep directory.
const (
	PlanFile     = "plan.json"
	SweepCopy    = "sweep.yaml"
	ScenarioFile = "scenario.json"
	StatusFile   = "status.json"
	PointsDir    = "points"
)

// MaxPlanSize bounds DIR/plan.json (a few hundred bytes a run: room for
// far more runs than MaxPoints).
const MaxPlanSize = 256 << 20

// Run states.
const (
	StatusOK      = "ok"
	StatusFailed  = "failed"
	StatusPending = "pending" // no status.json yet (results and status only)
)

// Status is a run's status.json, written last: a run is done iff its
// status is ok and its id is the run's.
type Status struct {
	Status string  `json:"status"`
	Error  string  `json:"error"`
	WallS  float64 `json:"wall_s"`
	Host   string  `json:"host"`
	ID     string  `json:"id"`
}

func writeJSONFile(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return renameio.WriteFile(path, append(data, '\n'), 0o644)
}

// Prepare writes DIR/sweep.yaml, DIR/plan.json and every run's
// points/<id>/scenario.json (unless there already). Runs that finished in
// an earlier plan keep their directories.
func Prepare(dir string, s *Sweep, plan *Plan) error {
	if err := os.MkdirAll(filepath.Join(dir, PointsDir), 0o755); err != nil {
		return err
	}
	if err := renameio.WriteFile(filepath.Join(dir, SweepCopy), s.data, 0o644); err != nil {
		return err
	}
	for _, pt := range plan.Points {
		if pt.Scenario == nil {
			return fmt.Errorf("run %d (%s): no scenario (a plan read from a directory cannot be prepared)", pt.Index, pt.ID)
		}
		pdir := filepath.Join(dir, filepath.FromSlash(pt.Dir))
		path := filepath.Join(pdir, ScenarioFile)
		data, err := scenarioJSON(pt.Scenario)
		if err != nil {
			return err
		}
		if old, err := configs.ReadFile(path); err == nil && bytes.Equal(old, data) {
			continue
		}
		if err := os.MkdirAll(pdir, 0o755); err != nil {
			return err
		}
		if err := renameio.WriteFile(path, data, 0o644); err != nil {
			return err
		}
	}
	return writeJSONFile(filepath.Join(dir, PlanFile), plan)
}

func scenarioJSON(sc *scenario.Scenario) ([]byte, error) {
	data, err := json.MarshalIndent(sc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

var idPattern = regexp.MustCompile(`^[0-9a-f]{16}$`)

// ReadPlan reads DIR/plan.json and checks it (a malformed plan is
// bad input, configs.InputError, naming the file).
func ReadPlan(dir string) (*Plan, error) {
	path := filepath.Join(dir, PlanFile)
	data, err := configs.ReadFileLimit(path, MaxPlanSize, "a sweep plan")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, inputErr(fmt.Errorf("%s: missing: not a sweep directory (lpictl sweep run or submit writes it): %w", path, fs.ErrNotExist))
		}
		return nil, inputErr(err)
	}
	var plan Plan
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&plan); err != nil {
		return nil, inputErr(fmt.Errorf("%s: %w", path, err))
	}
	if err := plan.check(); err != nil {
		return nil, inputErr(fmt.Errorf("%s: %w", path, err))
	}
	return &plan, nil
}

func (p *Plan) check() error {
	if p.AxisKeys == nil { // older or hand-written plans: the keys as they come
		for _, pt := range p.Points {
			for _, kv := range pt.Axes {
				if !contains(p.AxisKeys, kv.Key) {
					p.AxisKeys = append(p.AxisKeys, kv.Key)
				}
			}
		}
	}
	ids := map[string]bool{}
	for i, pt := range p.Points {
		where := fmt.Sprintf("points[%d]", i)
		switch {
		case pt.Index != i:
			return fmt.Errorf("%s.index: %d, want %d (runs in index order)", where, pt.Index, i)
		case !idPattern.MatchString(pt.ID):
			return fmt.Errorf("%s.id: %q is not 16 hex digits", where, printable(pt.ID))
		case pt.Role != RolePoint && pt.Role != RoleBaseline:
			return fmt.Errorf("%s.role: %q, want point or baseline", where, printable(pt.Role))
		case pt.Dir != PointsDir+"/"+pt.ID:
			return fmt.Errorf("%s.dir: %q, want %s/%s", where, printable(pt.Dir), PointsDir, pt.ID)
		case pt.BaselineID != "" && !idPattern.MatchString(pt.BaselineID):
			return fmt.Errorf("%s.baseline_id: %q is not 16 hex digits", where, printable(pt.BaselineID))
		}
		for _, kv := range pt.Axes {
			if !contains(p.AxisKeys, kv.Key) {
				return fmt.Errorf("%s.axes: %q is not in axis_keys", where, printable(kv.Key))
			}
		}
		ids[pt.ID] = true
	}
	for i, pt := range p.Points {
		if pt.BaselineID != "" && !ids[pt.BaselineID] {
			return fmt.Errorf("points[%d].baseline_id: %s is not a run of the plan", i, pt.BaselineID)
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ReadStatus reads a run's status.json; ok is false when it has none (or
// an unreadable one: the run is pending).
func ReadStatus(dir string, pt Point) (st Status, ok bool) {
	data, err := configs.ReadFileLimit(filepath.Join(dir, filepath.FromSlash(pt.Dir), StatusFile), configs.MaxFileSize, "a run's status")
	if err != nil {
		return Status{}, false
	}
	if err := json.Unmarshal(data, &st); err != nil || st.ID != pt.ID || (st.Status != StatusOK && st.Status != StatusFailed) {
		return Status{}, false
	}
	return st, true
}

// Done reports whether a run finished successfully.
func Done(dir string, pt Point) bool {
	st, ok := ReadStatus(dir, pt)
	return ok && st.Status == StatusOK
}

// tmpPrefix names the temporary directories of a run with this id.
func tmpPrefix(id string) string { return ".tmp-" + id + "-" }

// LoadScenario reads a run's scenario.json (written at plan time) and
// checks that it still resolves to the run's id (a changed trace file
// does not).
func LoadScenario(dir string, pt Point) (*scenario.Scenario, error) {
	path := filepath.Join(dir, filepath.FromSlash(pt.Dir), ScenarioFile)
	data, err := configs.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		// A run killed between its two renames left its scenario in a
		// temporary directory.
		tmps, _ := filepath.Glob(filepath.Join(dir, PointsDir, tmpPrefix(pt.ID)+"*", ScenarioFile))
		for _, t := range tmps {
			if d, e := configs.ReadFile(t); e == nil {
				data, err = d, nil
				break
			}
		}
	}
	if err != nil {
		return nil, inputErr(fmt.Errorf("run %d: %w", pt.Index, err))
	}
	sc, err := scenario.ParseResolved(data, path)
	if err != nil {
		return nil, inputErr(err)
	}
	id, err := ID(sc)
	if err != nil {
		return nil, inputErr(fmt.Errorf("%s: %w", path, err))
	}
	if id != pt.ID {
		return nil, inputErr(fmt.Errorf("%s: resolves to id %s, not %s (a workload file changed since the plan? plan the sweep again)", path, id, pt.ID))
	}
	return sc, nil
}

// removeTemps removes the temporary directories a killed run of this id
// left.
func removeTemps(dir, id string) error {
	tmps, err := filepath.Glob(filepath.Join(dir, PointsDir, tmpPrefix(id)+"*"))
	if err != nil {
		return err
	}
	for _, t := range tmps {
		if err := os.RemoveAll(t); err != nil {
			return err
		}
	}
	return nil
}

// firstLine keeps a run's error on one line.
func firstLine(s string) string {
	return strings.TrimSpace(oneLine(s))
}
