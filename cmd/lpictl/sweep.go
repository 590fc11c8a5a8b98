package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/lpictl/lpictl/configs"
	"github.com/lpictl/lpictl/sim/sweep"
)

func newSweepCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sweep",
		Short: "Run studies: sweeps of simulator scenarios, locally or as Slurm job arrays",
		Long: `A sweep file (docs/sweeps.md) names a base scenario, overrides and axes of values; every
combination (times the seeds) is one run of lpictl sim run, and an optional baseline gives
each point its overheads and energy savings. Runs go into one directory DIR (points/<id>/,
plan.json, results.csv, results.json), are identified by a hash of their resolved scenario
and are never run twice: rerunning resumes. Shipped sweeps are in configs/sweeps/.`,
	}
	cmd.AddCommand(newSweepRunCmd(), newSweepPlanCmd(), newSweepRunPointCmd(), newSweepStatusCmd(),
		newSweepCollectCmd(), newSweepSubmitCmd())
	cmd.AddCommand(newSweepPlotCmd())
	return cmd
}

// sweepError maps the sweep package's bad-input errors to exit status 2.
func sweepError(err error) error {
	var se *sweep.Error
	if errors.As(err, &se) {
		return badInput(err)
	}
	return err
}

// loadSweep reads a sweep file; a missing configs/sweeps/NAME.yaml is
// read from the built-in copy of the shipped configs.
func loadSweep(path string) (*sweep.Sweep, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		if name, ok := strings.CutPrefix(filepath.ToSlash(filepath.Clean(path)), "configs/"); ok {
			if _, err := fs.Stat(configs.FS, name); err == nil {
				return sweep.LoadFS(configs.FS, name, "configs/")
			}
		}
	}
	return sweep.Load(path)
}

// loadPlan reads a sweep file, counts its points (more than maxPoints is
// bad input), expands it, with check builds its scenarios and reads its
// workload files through once (sweep.CheckInputs), writes the count to
// errw if not nil and, with dir, prepares DIR.
func loadPlan(path, dir string, sets []string, maxPoints int, errw io.Writer, check bool) (*sweep.Sweep, *sweep.Plan, error) {
	s, err := loadSweep(path)
	if err != nil {
		return nil, nil, sweepError(err)
	}
	if err := s.Override(sets); err != nil {
		return nil, nil, sweepError(err)
	}
	n, factors := s.Count()
	if n > maxPoints {
		return nil, nil, badInput(fmt.Errorf("%s: %d points (%s) is more than --max-points %d: each is a simulation and a directory; shrink the axes or raise --max-points",
			s.Path, n, factors, maxPoints))
	}
	plan, err := s.Plan()
	if err != nil {
		return nil, nil, sweepError(err)
	}
	if check {
		if err := sweep.CheckInputs(plan); err != nil {
			return nil, nil, sweepError(fmt.Errorf("%s: %w", s.Path, err))
		}
	}
	if errw != nil {
		fmt.Fprintf(errw, "%s: %d points (%s), %d runs with the baselines\n", s.Name, n, factors, len(plan.Points))
	}
	if dir != "" {
		if err := sweep.Prepare(dir, s, plan); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", dir, err)
		}
	}
	return s, plan, nil
}

func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error { return badInput(cobra.ExactArgs(n)(cmd, args)) }
}

func interruptible(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}

// describeAxes is " key=value …" (empty without axes).
func describeAxes(a sweep.AxisValues) string {
	var b strings.Builder
	for _, kv := range a {
		b.WriteString(" " + kv.Key + "=" + kv.Value)
	}
	return b.String()
}

func newSweepRunCmd() *cobra.Command {
	var (
		out       string
		jobs      int
		sets      []string
		maxPoints int
	)
	cmd := &cobra.Command{
		Use:   "run SWEEP.yaml -o DIR [-j N]",
		Short: "Run a sweep's pending runs here, N at a time, and write DIR/results.csv",
		Long: `Expands the sweep, checks its scenarios and reads its workload files through once (a bad
trace exits 2 before anything runs), writes DIR/plan.json and runs every run that is not done yet
(status.json ok), N at a time, the baselines first. It holds a lock on DIR/.lock: a second sweep
run on DIR exits 1 at once. A run that fails is recorded (status failed with its error) and the others go
on; results.csv and results.json are written in plan order at the end, and the exit status is 1
if any run failed. Ctrl-C stops the runs under way (they leave nothing) and writes the results
of the finished ones; run again to resume.`,
		Example: `  lpictl sweep run configs/sweeps/smoke.yaml -o out/smoke
  lpictl sweep run my-study.yaml -o /scratch/study -j 8`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return badInput(errors.New("-o DIR is required"))
			}
			if jobs < 1 {
				return badInput(fmt.Errorf("-j %d: want at least 1", jobs))
			}
			unlock, err := sweep.Lock(out)
			if err != nil {
				return err
			}
			defer unlock()
			_, plan, err := loadPlan(args[0], out, sets, maxPoints, cmd.ErrOrStderr(), true)
			if err != nil {
				return err
			}
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			errw := cmd.ErrOrStderr()
			var bar *progressbar.ProgressBar
			opts := sweep.Options{Jobs: jobs}
			if isTerminal(errw) {
				opts.Started = func(total, done int) {
					bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(errw),
						progressbar.OptionSetDescription(plan.Name), progressbar.OptionShowCount(),
						progressbar.OptionSetPredictTime(true), progressbar.OptionClearOnFinish(),
						progressbar.OptionThrottle(200*time.Millisecond))
					_ = bar.Set(done)
				}
				opts.Progress = func(ev sweep.Event) {
					if !ev.Skipped {
						_ = bar.Add(1)
					}
				}
			} else {
				opts.Started = func(total, done int) {
					fmt.Fprintf(errw, "%s: %d runs, %d done before, %d to run, %d at a time\n", plan.Name, total, done, total-done, jobs)
				}
				opts.Progress = func(ev sweep.Event) {
					if ev.Skipped {
						return
					}
					line := fmt.Sprintf("[%d/%d] run %d %s %s%s seed=%d: %s in %.3gs", ev.Finished, ev.Total, ev.Point.Index,
						ev.Point.ID, ev.Point.Role, describeAxes(ev.Point.Axes), ev.Point.Seed, ev.Status.Status, ev.Status.WallS)
					if ev.Status.Error != "" {
						line += ": " + ev.Status.Error
					}
					fmt.Fprintln(errw, line)
				}
			}
			rep, err := sweep.RunAll(ctx, out, plan, opts)
			if bar != nil {
				_ = bar.Finish()
			}
			if err != nil {
				if errors.Is(err, context.Canceled) && rep != nil {
					return fmt.Errorf("interrupted: %d of %d runs done; run again to resume", rep.Done, rep.Total)
				}
				return sweepError(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %d runs: %d done, %d failed, %d pending; results in %s\n",
				rep.Name, rep.Total, rep.Done, rep.Failed, rep.Pending, filepath.Join(out, sweep.ResultsCSV))
			if rep.Failed > 0 {
				return fmt.Errorf("%d of %d runs failed (lpictl sweep status %s lists them)", rep.Failed, rep.Total, out)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "sweep directory (created; resumed if it holds finished runs)")
	cmd.Flags().StringArrayVar(&sets, "set", nil, "override a scenario key of every run, on top of the sweep's set (key=value, repeatable; e.g. workload.steps=486)")
	cmd.Flags().IntVarP(&jobs, "jobs", "j", runtime.NumCPU(), "runs at once")
	cmd.Flags().IntVar(&maxPoints, "max-points", sweep.MaxPoints, "refuse a sweep of more points (axis values × seeds) than this")
	return cmd
}

func newSweepPlanCmd() *cobra.Command {
	var (
		out       string
		sets      []string
		maxPoints int
	)
	cmd := &cobra.Command{
		Use:   "plan SWEEP.yaml [-o DIR]",
		Short: "Print a sweep's runs without running them",
		Long: `Expands the sweep and checks every point's scenario, then prints the runs in index order:
index, id, role, seed, baseline id and axis values. With -o it also writes DIR/plan.json,
DIR/sweep.yaml and every run's scenario.json, as sweep run and sweep submit do.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, plan, err := loadPlan(args[0], out, sets, maxPoints, cmd.ErrOrStderr(), false)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "INDEX\tID\tROLE\tSEED\tBASELINE\tAXES")
			for _, pt := range plan.Points {
				bl := pt.BaselineID
				if bl == "" {
					bl = "-"
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%s\n", pt.Index, pt.ID, pt.Role, pt.Seed, bl, strings.TrimSpace(describeAxes(pt.Axes)))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "also write the plan into this sweep directory")
	cmd.Flags().IntVar(&maxPoints, "max-points", sweep.MaxPoints, "refuse a sweep of more points (axis values × seeds) than this")
	cmd.Flags().StringArrayVar(&sets, "set", nil, "override a scenario key of every run, on top of the sweep's set (key=value, repeatable; e.g. workload.steps=486)")
	return cmd
}

// taskIndex is run-point's index: the argument, or $SLURM_ARRAY_TASK_ID.
func taskIndex(args []string, n int) (int, error) {
	text, from := "", "I"
	if len(args) > 1 {
		text = args[1]
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

func newSweepRunPointCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run-point DIR [I]",
		Short: "Run one run of DIR/plan.json (a Slurm array task)",
		Long: `Runs run I of DIR/plan.json (I defaults to $SLURM_ARRAY_TASK_ID) from its scenario.json, unless
it is done. It never reads the sweep file, so it works on any machine that shares DIR. It
exits 1 if the run fails (the failure is recorded in its status.json).`,
		Args: func(cmd *cobra.Command, args []string) error { return badInput(cobra.RangeArgs(1, 2)(cmd, args)) },
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			plan, err := sweep.ReadPlan(dir)
			if err != nil {
				return sweepError(err)
			}
			i, err := taskIndex(args, len(plan.Points))
			if err != nil {
				return badInput(fmt.Errorf("%s: %w", filepath.Join(dir, sweep.PlanFile), err))
			}
			pt := plan.Points[i]
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			st, ran, err := sweep.RunPoint(ctx, dir, pt)
			if err != nil {
				return sweepError(fmt.Errorf("run %d (%s): %w", i, pt.ID, err))
			}
			w := cmd.OutOrStdout()
			switch {
			case !ran:
				fmt.Fprintf(w, "run %d (%s): done before\n", i, pt.ID)
			case st.Status == sweep.StatusOK:
				fmt.Fprintf(w, "run %d (%s) %s%s seed=%d: ok in %.3gs\n", i, pt.ID, pt.Role, describeAxes(pt.Axes), pt.Seed, st.WallS)
			default:
				return fmt.Errorf("run %d (%s): failed: %s", i, pt.ID, st.Error)
			}
			return nil
		},
	}
	return cmd
}

func newSweepStatusCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status DIR [--json]",
		Short: "Count a sweep directory's done, failed and pending runs",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rep, err := sweep.StatusOf(args[0])
			if err != nil {
				return sweepError(err)
			}
			w := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			fmt.Fprintf(w, "%s: %d runs: %d done, %d failed, %d pending\n", rep.Name, rep.Total, rep.Done, rep.Failed, rep.Pending)
			for _, f := range rep.Failures {
				fmt.Fprintf(w, "failed: run %d (%s): %s\n", f.Index, f.ID, f.Error)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the counts and failures as JSON")
	return cmd
}

func newSweepCollectCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "collect DIR",
		Short: "(Re)write DIR/results.csv and results.json from the finished runs",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := sweep.Collect(args[0])
			if err != nil {
				return sweepError(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %d rows\n", filepath.Join(args[0], sweep.ResultsCSV), t.Rows())
			return nil
		},
	}
}

func newSweepSubmitCmd() *cobra.Command {
	var (
		out       string
		sets      []string
		slurm     bool
		dryRun    bool
		maxPoints int
		o         sweep.Slurm
	)
	cmd := &cobra.Command{
		Use:   "submit SWEEP.yaml -o DIR --slurm [options] [--dry-run]",
		Short: "Submit a sweep's pending runs as a Slurm job array",
		Long: `Expands the sweep into DIR (plan.json, scenario.json per run), writes DIR/sweep.sbatch, a job
array over the runs that are not done yet (one task each: lpictl sweep run-point DIR), and
submits it with sbatch --parsable, printing the job id. Task output goes to DIR/slurm/. DIR must
be on a filesystem the compute nodes share, at the same path. With nothing pending nothing is
submitted. --dry-run prints the script instead of submitting it. Collect the results with
lpictl sweep collect DIR when the array has finished.`,
		Example: `  lpictl sweep submit configs/sweeps/smoke.yaml -o /scratch/smoke --slurm --partition debug --time 10 --dry-run
  lpictl sweep submit study.yaml -o /scratch/study --slurm --time 1:00:00 --max-parallel 64 --sbatch-arg=--qos=long`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slurm {
				return badInput(errors.New("--slurm is required (Slurm is the only scheduler lpictl submits to)"))
			}
			if out == "" {
				return badInput(errors.New("-o DIR is required"))
			}
			if o.MaxParallel < 0 || o.CPUsPerTask < 0 {
				return badInput(errors.New("--max-parallel and --cpus-per-task: want ≥ 1"))
			}
			_, plan, err := loadPlan(args[0], out, sets, maxPoints, nil, true)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			pending := sweep.Pending(out, plan)
			if len(pending) == 0 {
				fmt.Fprintf(w, "%s: nothing pending: all %d runs are done; nothing submitted\n", out, len(plan.Points))
				return nil
			}
			if o.Dir, err = filepath.Abs(out); err != nil {
				return err
			}
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("the path of lpictl: %w", err)
			}
			if o.Exe, err = filepath.EvalSymlinks(exe); err != nil {
				return fmt.Errorf("the path of lpictl: %w", err)
			}
			script, err := sweep.Sbatch(plan, pending, o)
			if err != nil {
				return badInput(err)
			}
			path := filepath.Join(o.Dir, sweep.SbatchFile)
			if err := os.WriteFile(path, script, 0o644); err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Join(o.Dir, sweep.SlurmDir), 0o755); err != nil {
				return err
			}
			if dryRun {
				_, err := w.Write(script)
				fmt.Fprintf(cmd.ErrOrStderr(), "dry run: %s written, nothing submitted (%d pending runs)\n", path, len(pending))
				return err
			}
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			job, err := sweep.Submit(ctx, path)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "submitted %d pending runs of %d (script %s) as Slurm job %s\n", len(pending), len(plan.Points), path, job)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&out, "output", "o", "", "sweep directory on a filesystem the compute nodes share")
	f.StringArrayVar(&sets, "set", nil, "override a scenario key of every run, on top of the sweep's set (key=value, repeatable; e.g. workload.steps=486)")
	f.BoolVar(&slurm, "slurm", false, "submit to Slurm (required)")
	f.BoolVar(&dryRun, "dry-run", false, "print the job script, submit nothing")
	f.IntVar(&maxPoints, "max-points", sweep.MaxPoints, "refuse a sweep of more points (axis values × seeds) than this")
	f.StringVar(&o.Partition, "partition", "", "sbatch --partition")
	f.StringVar(&o.Time, "time", "", "sbatch --time per task (e.g. 10, 1:00:00)")
	f.StringVar(&o.Account, "account", "", "sbatch --account")
	f.IntVar(&o.MaxParallel, "max-parallel", 0, "tasks running at once (--array=…%K; 0: no limit)")
	f.IntVar(&o.CPUsPerTask, "cpus-per-task", 0, "sbatch --cpus-per-task (0: Slurm's default)")
	f.StringVar(&o.Mem, "mem", "", "sbatch --mem per task (e.g. 4G)")
	f.StringVar(&o.JobName, "job-name", "", "sbatch --job-name (default: the sweep's name)")
	f.StringArrayVar(&o.Extra, "sbatch-arg", nil, "a further #SBATCH option, e.g. --sbatch-arg=--qos=long (repeatable)")
	return cmd
}
