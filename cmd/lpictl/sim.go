package main

import (
	"errors"
	"fmt"
	"io/fs"
	"runtime/pprof"

	"github.com/google/renameio/v2"
	"github.com/spf13/cobra"

	"github.com/lpictl/lpictl/configs"
	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/scenario"
)

func newSimCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Run the packet-level network simulator with EEE ports",
		Long: `Simulates an HPC network (Megafly, fat tree, torus, dragonfly, flattened butterfly) at packet
level with CIOQ switches and PFC; every port runs the EEE state machine with a t_PDT chosen by
the same controller and predictor as real ports. Scenario files are documented in
docs/scenario.md; shipped ones are in configs/sim/.`,
	}
	cmd.AddCommand(newSimRunCommand(), newSimCompareCommand())
	return cmd
}

type simOptions struct {
	config        string
	sets          []string
	json          bool
	deterministic bool
	out           string
	fixed         string
	threads       int
	cpuProfile    string
}

// allSets is --set with --threads as a scenario override (engine.threads),
// after the --set ones.
func (o *simOptions) allSets() []string {
	if o.threads == 0 {
		return o.sets
	}
	return append(o.sets[:len(o.sets):len(o.sets)], fmt.Sprintf("engine.threads=%d", o.threads))
}

func newSimRunCommand() *cobra.Command {
	var o simOptions
	cmd := &cobra.Command{
		Use:   "run [-c SCENARIO] [--set key=value …]",
		Short: "Run one scenario and print its summary",
		Long: `Runs a scenario (default: configs/sim/megafly-4160.yaml, built in) and prints a summary
table, or with --json one JSON object. The network replays the scenario's workload (synthetic
traffic, an application model, a VEF trace or several jobs: docs/workloads.md). -o DIR also
writes summary.json (deterministic: the same scenario and seed give the same bytes), perf.json
(wall time, events/s, peak RSS, threads), ports.csv, idle_hist.csv and idle_log.csv; --cpuprofile
FILE writes the run's CPU profile (pprof; make pgo builds lpictl's from such runs). A progress
line goes to stderr when it is a terminal. A bad trace record exits 2 naming FILE:LINE.
--threads N runs the network on N goroutines with the same results (docs/simulator.md
"Parallel runs"); a scenario that cannot says why on stderr and runs on one.

Interrupted (Ctrl-C, SIGTERM), it stops, writes and prints what it simulated so far, marked
incomplete (summary.json "incomplete": true, an INCOMPLETE line in the table), says so on
stderr and exits 130. A run that deadlocks (packets left, every port that could move them
paused) writes and prints the same way, with "deadlock" naming the paused links, and exits 1.`,
		Example: `  lpictl sim run -c configs/sim/quick.yaml
  lpictl sim run -c configs/sim/quick.yaml --set power.mode=fast-wake --set seed=2 --json
  lpictl sim run --set workload.synthetic.load=0.5 -o out/megafly
  lpictl sim run -c configs/sim/apps/mlwf.yaml --set predictor.kind=fixed --set predictor.pdt=0
  lpictl sim run -c configs/sim/apps/lammps.yaml --threads 2`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := scenario.Load(o.config, o.allSets())
			if err != nil {
				return err
			}
			stopProfile, err := startCPUProfile(o.cpuProfile)
			if err != nil {
				return err
			}
			prog := scenario.NewProgress(cmd.ErrOrStderr(), scenario.IsTerminal(cmd.ErrOrStderr()), s)
			out, err := scenario.Run(cmd.Context(), s, prog.Update)
			prog.Done()
			if perr := stopProfile(); perr != nil && err == nil {
				return perr
			}
			if err != nil && (out == nil || !out.Report.Incomplete) {
				return err
			}
			if why := out.Perf.Sequential; why != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "lpictl: engine.threads: ran on one thread: %s\n", why)
			}
			// An interrupted run (^C, SIGTERM) still writes what it
			// simulated, marked incomplete, and exits 130.
			if err := out.Emit(cmd.OutOrStdout(), o.out, o.json, !o.deterministic); err != nil {
				return err
			}
			if out.Report.Deadlock != "" {
				// A deadlock is a runtime failure (exit 1), its output
				// written and marked incomplete as an interrupted run's.
				return err
			}
			if err := out.Interrupted(o.out); err != nil {
				return &exitError{code: exitInterrupted, err: err}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.config, "config", "c", "", "scenario file (default: the built-in configs/sim/megafly-4160.yaml)")
	f.StringArrayVar(&o.sets, "set", nil, "override a scenario key, e.g. workload.synthetic.load=0.5 (repeatable)")
	f.BoolVar(&o.json, "json", false, "print one JSON object instead of the table")
	f.BoolVar(&o.deterministic, "deterministic", false, "with --json, leave out wall_s, events_per_s and peak_rss_bytes")
	f.StringVarP(&o.out, "output", "o", "", "write summary.json, perf.json, ports.csv, idle_hist.csv and idle_log.csv to this directory")
	f.IntVar(&o.threads, "threads", 0, "run the network on N goroutines (engine.threads): the same results, faster on N cores")
	f.StringVar(&o.cpuProfile, "cpuprofile", "", "write the run's CPU profile (pprof format) to this file")
	return cmd
}

// startCPUProfile starts writing the process's CPU profile to path (none
// if empty) and returns the function that stops it and puts the file in
// place: the profile is written beside it and renamed at the end, so an
// existing file is never left half-written.
func startCPUProfile(path string) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := renameio.NewPendingFile(path, renameio.WithPermissions(0o644))
	if err != nil {
		// Name the user's file, not the temporary one beside it.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, configs.BadInput(fmt.Errorf("--cpuprofile %s: %w", path, err))
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Cleanup()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.CloseAtomicallyReplace(); err != nil {
			f.Cleanup()
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		return nil
	}, nil
}

func newSimCompareCommand() *cobra.Command {
	var o simOptions
	cmd := &cobra.Command{
		Use:   "compare [-c SCENARIO] [--set key=value …]",
		Short: "Compare always-on, a fixed t_PDT, PerfBound and PerfBoundCorrect on one scenario",
		Long: `Runs the scenario four times with the same seed: always-on (the baseline), a fixed t_PDT,
PerfBound and PerfBoundCorrect (in the scenario's low-power mode, deep-sleep if it is
always-on), and prints execution-time and latency overheads and link, network and total
energy savings against the baseline.`,
		Example: `  lpictl sim compare -c configs/sim/quick.yaml
  lpictl sim compare -c configs/sim/quick.yaml --fixed-pdt 1us --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := scenario.Load(o.config, o.sets)
			if err != nil {
				return err
			}
			fixed, err := predictor.ParseDuration(o.fixed)
			if err != nil {
				return configs.BadInput(fmt.Errorf("--fixed-pdt: %w", err))
			}
			tty := scenario.IsTerminal(cmd.ErrOrStderr())
			rows, err := scenario.Compare(cmd.Context(), s, scenario.DefaultVariants(s, predictor.Duration(fixed)), func(name string) {
				if tty {
					fmt.Fprintf(cmd.ErrOrStderr(), "running %s…\n", name)
				}
			})
			if err != nil {
				return err
			}
			if o.json {
				return writeJSON(cmd.OutOrStdout(), rows)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "scenario %s, seed %d, mode %s; overheads and savings against always-on\n", s.Name, s.Seed, s.Power.Mode)
			return scenario.WriteCompareTable(cmd.OutOrStdout(), rows)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.config, "config", "c", "", "scenario file (default: the built-in configs/sim/megafly-4160.yaml)")
	f.StringArrayVar(&o.sets, "set", nil, "override a scenario key (repeatable)")
	f.BoolVar(&o.json, "json", false, "print the rows as JSON")
	f.StringVar(&o.fixed, "fixed-pdt", "1us", "t_PDT of the fixed-PDT variant")
	return cmd
}
