package sweep

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/lpictl/lpictl/configs"
)

// Open reads a sweep file; a missing configs/sweeps/NAME.yaml is read from
// the built-in copy of the shipped configs (configs.FS).
func Open(path string) (*Sweep, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		if name, ok := strings.CutPrefix(filepath.ToSlash(filepath.Clean(path)), "configs/"); ok {
			if _, err := fs.Stat(configs.FS, name); err == nil {
				return LoadFS(configs.FS, name, "configs/")
			}
		}
	}
	return Load(path)
}

// PlanOptions tune OpenPlan.
type PlanOptions struct {
	Sets      []string  // scenario overrides of every run, on top of the sweep's set
	MaxPoints int       // more points than this are bad input
	Check     bool      // check the scenarios and read the workload files through (CheckInputs)
	Dir       string    // if not "", prepare this sweep directory (Prepare)
	Log       io.Writer // if not nil, gets a line counting the points and runs
}

// OpenPlan reads a sweep file (Open), applies o.Sets, counts its points,
// expands it into a plan, and as o says checks its inputs, reports the
// count and prepares the sweep directory. Bad input is a
// configs.InputError.
func OpenPlan(path string, o PlanOptions) (*Plan, error) {
	s, err := Open(path)
	if err != nil {
		return nil, err
	}
	if err := s.Override(o.Sets); err != nil {
		return nil, err
	}
	n, factors := s.Count()
	if n > o.MaxPoints {
		return nil, configs.BadInput(fmt.Errorf("%s: %d points (%s) is more than --max-points %d: each is a simulation and a directory; shrink the axes or raise --max-points",
			s.Path, n, factors, o.MaxPoints))
	}
	plan, err := s.Plan()
	if err != nil {
		return nil, err
	}
	if o.Check {
		if err := CheckInputs(plan); err != nil {
			return nil, fmt.Errorf("%s: %w", s.Path, err)
		}
	}
	if o.Log != nil {
		fmt.Fprintf(o.Log, "%s: %d points (%s), %d runs with the baselines\n", s.Name, n, factors, len(plan.Points))
	}
	if o.Dir != "" {
		if err := Prepare(o.Dir, s, plan); err != nil {
			return nil, fmt.Errorf("%s: %w", o.Dir, err)
		}
	}
	return plan, nil
}

// TaskIndex is the index of the run `lpictl sweep run-point` runs in a
// plan of n runs: arg if given, else $SLURM_ARRAY_TASK_ID.
func TaskIndex(n int, arg ...string) (int, error) {
	text, from := "", "I"
	if len(arg) > 0 {
		text = arg[0]
	} else {
		text, from = os.Getenv("SLURM_ARRAY_TASK_ID"), "SLURM_ARRAY_TASK_ID"
		if text == "" {
			return 0, errors.New("no run index: give I or set SLURM_ARRAY_TASK_ID")
		}
	}
	i, err := strconv.Atoi(text)
	if err != nil {
		return 0, fmt.Errorf("%s %q: want a run index", from, text)
	}
	if i < 0 || i >= n {
		return 0, fmt.Errorf("%s %d: out of range (the plan has runs 0..%d)", from, i, n-1)
	}
	return i, nil
}

// WriteSbatch writes o.Dir/sweep.sbatch, the job array over the pending
// runs (Sbatch), and creates o.Dir/slurm for the tasks' output. It returns
// the script's path and text. o.Dir is made absolute; o.Exe "" is this
// executable.
func WriteSbatch(plan *Plan, pending []int, o Slurm) (path string, script []byte, err error) {
	if o.Dir, err = filepath.Abs(o.Dir); err != nil {
		return "", nil, err
	}
	if o.Exe == "" {
		exe, err := os.Executable()
		if err != nil {
			return "", nil, fmt.Errorf("the path of lpictl: %w", err)
		}
		if o.Exe, err = filepath.EvalSymlinks(exe); err != nil {
			return "", nil, fmt.Errorf("the path of lpictl: %w", err)
		}
	}
	if script, err = Sbatch(plan, pending, o); err != nil {
		return "", nil, configs.BadInput(err)
	}
	path = filepath.Join(o.Dir, SbatchFile)
	if err := os.WriteFile(path, script, 0o644); err != nil {
		return "", nil, err
	}
	if err := os.MkdirAll(filepath.Join(o.Dir, SlurmDir), 0o755); err != nil {
		return "", nil, err
	}
	return path, script, nil
}

// LogProgress returns RunAll's Started and Progress for a log (not a
// terminal): a line at the start counting the runs, and one per finished
// run (Event.String).
func LogProgress(w io.Writer, name string, jobs int) (started func(total, done int), progress func(Event)) {
	started = func(total, done int) {
		fmt.Fprintf(w, "%s: %d runs, %d done before, %d to run, %d at a time\n", name, total, done, total-done, jobs)
	}
	progress = func(ev Event) {
		if !ev.Skipped {
			fmt.Fprintln(w, ev)
		}
	}
	return started, progress
}
