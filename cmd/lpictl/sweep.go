package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/lpictl/lpictl/configs"
	"github.com/lpictl/lpictl/sim/scenario"
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

// addPlanFlags adds --set and --max-points, the plan's options, to cmd.
func addPlanFlags(cmd *cobra.Command, o *sweep.PlanOptions) {
	cmd.Flags().StringArrayVar(&o.Sets, "set", nil, "override a scenario key of every run, on top of the sweep's set (key=value, repeatable; e.g. workload.steps=486)")
	cmd.Flags().IntVar(&o.MaxPoints, "max-points", sweep.MaxPoints, "refuse a sweep of more points (axis values × seeds) than this")
}

func newSweepRunCmd() *cobra.Command {
	var (
		out  string
		jobs int
		po   sweep.PlanOptions
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
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return configs.BadInput(errors.New("-o DIR is required"))
			}
			if jobs < 1 {
				return configs.BadInput(fmt.Errorf("-j %d: want at least 1", jobs))
			}
			unlock, err := sweep.Lock(out)
			if err != nil {
				return err
			}
			defer unlock()
			errw := cmd.ErrOrStderr()
			po.Check, po.Dir, po.Log = true, out, errw
			plan, err := sweep.OpenPlan(args[0], po)
			if err != nil {
				return err
			}
			var bar *progressbar.ProgressBar
			opts := sweep.Options{Jobs: jobs}
			if !scenario.IsTerminal(errw) {
				opts.Started, opts.Progress = sweep.LogProgress(errw, plan.Name, jobs)
			} else {
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
			}
			rep, err := sweep.RunAll(cmd.Context(), out, plan, opts)
			if bar != nil {
				_ = bar.Finish()
			}
			if err != nil {
				if errors.Is(err, context.Canceled) && rep != nil {
					return fmt.Errorf("interrupted: %d of %d runs done; run again to resume", rep.Done, rep.Total)
				}
				return err
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
	addPlanFlags(cmd, &po)
	cmd.Flags().IntVarP(&jobs, "jobs", "j", runtime.NumCPU(), "runs at once")
	return cmd
}

func newSweepPlanCmd() *cobra.Command {
	var (
		out string
		po  sweep.PlanOptions
	)
	cmd := &cobra.Command{
		Use:   "plan SWEEP.yaml [-o DIR]",
		Short: "Print a sweep's runs without running them",
		Long: `Expands the sweep and checks every point's scenario, then prints the runs in index order:
index, id, role, seed, baseline id and axis values. With -o it also writes DIR/plan.json,
DIR/sweep.yaml and every run's scenario.json, as sweep run and sweep submit do.`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			po.Dir, po.Log = out, cmd.ErrOrStderr()
			plan, err := sweep.OpenPlan(args[0], po)
			if err != nil {
				return err
			}
			return plan.WriteTable(cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "also write the plan into this sweep directory")
	addPlanFlags(cmd, &po)
	return cmd
}

func newSweepRunPointCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run-point DIR [I]",
		Short: "Run one run of DIR/plan.json (a Slurm array task)",
		Long: `Runs run I of DIR/plan.json (I defaults to $SLURM_ARRAY_TASK_ID) from its scenario.json, unless
it is done. It never reads the sweep file, so it works on any machine that shares DIR. It
exits 1 if the run fails (the failure is recorded in its status.json).`,
		Args: args(cobra.RangeArgs(1, 2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			plan, err := sweep.ReadPlan(dir)
			if err != nil {
				return err
			}
			i, err := sweep.TaskIndex(len(plan.Points), args[1:]...)
			if err != nil {
				return configs.BadInput(fmt.Errorf("%s: %w", filepath.Join(dir, sweep.PlanFile), err))
			}
			pt := plan.Points[i]
			st, ran, err := sweep.RunPoint(cmd.Context(), dir, pt)
			if err != nil {
				return fmt.Errorf("run %d (%s): %w", i, pt.ID, err)
			}
			w := cmd.OutOrStdout()
			switch {
			case !ran:
				fmt.Fprintf(w, "run %d (%s): done before\n", i, pt.ID)
			case st.Status == sweep.StatusOK:
				fmt.Fprintf(w, "run %d (%s) %s: ok in %.3gs\n", i, pt.ID, pt.Label(), st.WallS)
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
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			rep, err := sweep.StatusOf(args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), rep)
			}
			return rep.WriteText(cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the counts and failures as JSON")
	return cmd
}

func newSweepCollectCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "collect DIR",
		Short: "(Re)write DIR/results.csv and results.json from the finished runs",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := sweep.Collect(args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %d rows\n", filepath.Join(args[0], sweep.ResultsCSV), t.Rows())
			return nil
		},
	}
}

func newSweepSubmitCmd() *cobra.Command {
	var (
		out           string
		slurm, dryRun bool
		po            sweep.PlanOptions
		o             sweep.Slurm
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
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slurm {
				return configs.BadInput(errors.New("--slurm is required (Slurm is the only scheduler lpictl submits to)"))
			}
			if out == "" {
				return configs.BadInput(errors.New("-o DIR is required"))
			}
			if o.MaxParallel < 0 || o.CPUsPerTask < 0 {
				return configs.BadInput(errors.New("--max-parallel and --cpus-per-task: want ≥ 1"))
			}
			po.Check, po.Dir = true, out
			plan, err := sweep.OpenPlan(args[0], po)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			pending := sweep.Pending(out, plan)
			if len(pending) == 0 {
				fmt.Fprintf(w, "%s: nothing pending: all %d runs are done; nothing submitted\n", out, len(plan.Points))
				return nil
			}
			o.Dir = out
			path, script, err := sweep.WriteSbatch(plan, pending, o)
			if err != nil {
				return err
			}
			if dryRun {
				_, err := w.Write(script)
				fmt.Fprintf(cmd.ErrOrStderr(), "dry run: %s written, nothing submitted (%d pending runs)\n", path, len(pending))
				return err
			}
			job, err := sweep.Submit(cmd.Context(), path)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "submitted %d pending runs of %d (script %s) as Slurm job %s\n", len(pending), len(plan.Points), path, job)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&out, "output", "o", "", "sweep directory on a filesystem the compute nodes share")
	addPlanFlags(cmd, &po)
	f.BoolVar(&slurm, "slurm", false, "submit to Slurm (required)")
	f.BoolVar(&dryRun, "dry-run", false, "print the job script, submit nothing")
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
