package sweep

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/lpictl/lpictl/sim/scenario"
)

// RunPoint runs one run of a prepared directory unless it is done: the
// outputs of `lpictl sim run -o` go to a temporary directory in DIR/points
// that is renamed into place as a whole, then status.json is written. A
// run that fails is recorded (status failed, its error on one line) and
// returned as its Status, not as an error; the error is for a directory
// that cannot be written or read, or ctx's when cancelled (the run leaves
// nothing behind then). ran is false when the run was already done.
func RunPoint(ctx context.Context, dir string, pt Point) (st Status, ran bool, err error) {
	return runPoint(ctx, dir, pt, 0)
}

// runPoint is RunPoint with the run's engine.threads at most maxThreads
// (0: as its scenario says). The outputs do not depend on it; the
// scenario file written with them keeps what the scenario says.
func runPoint(ctx context.Context, dir string, pt Point, maxThreads int) (st Status, ran bool, err error) {
	if st, ok := ReadStatus(dir, pt); ok && st.Status == StatusOK {
		return st, false, nil
	}
	start := time.Now()
	sc, err := LoadScenario(dir, pt)
	if err != nil {
		return Status{}, false, err
	}
	if err := removeTemps(dir, pt.ID); err != nil {
		return Status{}, false, err
	}
	points := filepath.Join(dir, PointsDir)
	tmp, err := os.MkdirTemp(points, tmpPrefix(pt.ID))
	if err != nil {
		return Status{}, false, err
	}
	defer os.RemoveAll(tmp) // a no-op once renamed into place
	data, err := scenarioJSON(sc)
	if err != nil {
		return Status{}, false, err
	}
	if err := os.WriteFile(filepath.Join(tmp, ScenarioFile), data, 0o644); err != nil {
		return Status{}, false, err
	}
	if maxThreads > 0 && sc.Engine.Threads > maxThreads {
		sc.Engine.Threads = maxThreads
	}
	out, runErr := scenario.Run(ctx, sc, nil)
	if ctx.Err() != nil {
		return Status{}, false, ctx.Err()
	}
	if runErr == nil {
		runErr = out.WriteDir(tmp)
	}
	final := filepath.Join(dir, filepath.FromSlash(pt.Dir))
	old := filepath.Join(points, tmpPrefix(pt.ID)+"old")
	if err := os.Rename(final, old); err != nil && !errors.Is(err, os.ErrNotExist) {
		return Status{}, false, err
	}
	if err := os.Rename(tmp, final); err != nil {
		return Status{}, false, err
	}
	if err := os.RemoveAll(old); err != nil {
		return Status{}, false, err
	}
	host, _ := os.Hostname()
	st = Status{Status: StatusOK, WallS: time.Since(start).Seconds(), Host: host, ID: pt.ID}
	if runErr != nil {
		st.Status, st.Error = StatusFailed, firstLine(runErr.Error())
	}
	if err := writeJSONFile(filepath.Join(final, StatusFile), st); err != nil {
		return Status{}, false, err
	}
	return st, true, nil
}

// Event reports a finished (or skipped) run to RunAll's caller.
type Event struct {
	Point   Point
	Status  Status
	Skipped bool // done before this RunAll
	// Finished and Total count the distinct runs (equal ids run once).
	Finished, Total int
}

// Options tune RunAll.
type Options struct {
	// Jobs is how many runs go at once (≤ 0: runtime.NumCPU()). Each run
	// gets at most NumCPU/Jobs threads (engine.threads; at least one).
	Jobs int
	// Progress, if not nil, is called once per distinct run, from one
	// goroutine at a time.
	Progress func(Event)
	// Started, if not nil, is called once with the number of distinct
	// runs and how many are done already.
	Started func(total, done int)
}

// RunAll runs every run of a prepared directory that is not done, Jobs at
// a time, the baselines first, then writes results.csv and results.json in plan order. Runs
// that fail are recorded and the others go on. On cancellation the runs
// under way are abandoned (they leave nothing), the results of the
// finished ones are written and ctx's error is returned.
func RunAll(ctx context.Context, dir string, plan *Plan, o Options) (*Report, error) {
	jobs := o.Jobs
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	// A run on several threads spins while its goroutines wait for one
	// another (docs/simulator.md "Parallel runs"): jobs × threads beyond
	// the cores would leave every run waiting for a descheduled one.
	maxThreads := max(1, runtime.NumCPU()/jobs)
	var todo []Point
	var skipped []Point
	seen := map[string]bool{}
	for _, pt := range plan.Points {
		if seen[pt.ID] {
			continue
		}
		seen[pt.ID] = true
		if Done(dir, pt) {
			skipped = append(skipped, pt)
		} else {
			todo = append(todo, pt)
		}
	}
	// Baselines first: an interrupted sweep's finished points then have
	// their overheads and savings (a point's row needs its baseline).
	sort.SliceStable(todo, func(i, j int) bool {
		return todo[i].Role == RoleBaseline && todo[j].Role != RoleBaseline
	})
	total := len(skipped) + len(todo)
	if o.Started != nil {
		o.Started(total, len(skipped))
	}
	var mu sync.Mutex
	finished := 0
	report := func(ev Event) {
		mu.Lock()
		defer mu.Unlock()
		finished++
		ev.Finished, ev.Total = finished, total
		if o.Progress != nil {
			o.Progress(ev)
		}
	}
	for _, pt := range skipped {
		st, _ := ReadStatus(dir, pt)
		report(Event{Point: pt, Status: st, Skipped: true})
	}
	work := make(chan Point)
	var wg sync.WaitGroup
	var errOnce sync.Once
	var firstErr error
	for range min(jobs, max(len(todo), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for pt := range work {
				st, _, err := runPoint(ctx, dir, pt, maxThreads)
				if err != nil {
					if ctx.Err() == nil {
						errOnce.Do(func() { firstErr = fmt.Errorf("run %d (%s): %w", pt.Index, pt.ID, err) })
					}
					continue
				}
				report(Event{Point: pt, Status: st})
			}
		}()
	}
feed:
	for _, pt := range todo {
		select {
		case work <- pt:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	if _, err := Collect(dir); err != nil {
		return nil, err
	}
	sum, err := StatusOf(dir)
	if err != nil {
		return sum, err
	}
	if ctx.Err() != nil {
		return sum, ctx.Err()
	}
	return sum, firstErr
}
