package sweep

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/lpictl/lpictl/sim/workload"
)

// workloadFiles lists the files a workload configuration reads (its trace
// and mapping files, and its jobs'), sorted.
func workloadFiles(c *workload.Config) []string {
	var files []string
	var walk func(c *workload.Config)
	walk = func(c *workload.Config) {
		for _, f := range []string{c.File, c.MappingFile} {
			if f != "" {
				files = append(files, f)
			}
		}
		for i := range c.Jobs {
			walk(&c.Jobs[i])
		}
	}
	walk(c)
	sort.Strings(files)
	return files
}

// CheckInputs builds, once before anything runs, the scenario of the first
// point of the plan and of the first point naming each distinct set of
// workload files, and reads those files through (the whole trace, as the
// run would stream it): a bad trace record, a missing file or a scenario
// that cannot be built is bad input (configs.InputError) naming the file
// and line, instead of a failure of every run that uses it. Points without a scenario (a plan
// read back from DIR) are skipped.
func CheckInputs(plan *Plan) error {
	seen := map[string]bool{}
	for _, pt := range plan.Points {
		sc := pt.Scenario
		if sc == nil {
			continue
		}
		files := workloadFiles(&sc.Workload)
		key := strings.Join(files, "\x00")
		if seen[key] {
			continue
		}
		seen[key] = true
		b, err := sc.Build()
		if err != nil {
			return inputErr(fmt.Errorf("run %d (%s): %w", pt.Index, pt.ID, err))
		}
		if len(files) == 0 {
			continue
		}
		if _, err := b.Workload.Summarize(); err != nil {
			return inputErr(fmt.Errorf("run %d (%s): workload: %w", pt.Index, pt.ID, err))
		}
	}
	return nil
}

// LockFile is the file of a sweep directory that `sweep run` holds an
// exclusive lock on (flock) while it runs.
const LockFile = ".lock"

// ErrLocked is returned by Lock when another process holds the lock.
var ErrLocked = errors.New("another lpictl sweep run is running in this directory")

// Lock takes DIR/.lock (flock, exclusive, not waiting): two `sweep run`s on
// one directory would run every point twice. The lock goes with the
// process (unlock also releases it); the file stays.
func Lock(dir string) (unlock func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s: %w (wait for it, or stop it; its lock is %s)", dir, ErrLocked, path)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return func() { f.Close() }, nil
}
