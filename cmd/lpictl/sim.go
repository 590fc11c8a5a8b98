package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/network"
	"github.com/lpictl/lpictl/sim/scenario"
	"github.com/lpictl/lpictl/sim/workload/vef"
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
}

func loadScenario(o *simOptions) (*scenario.Scenario, error) {
	s, err := scenario.Load(o.config, o.sets)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, badInput(fmt.Errorf("scenario: %w", err))
		}
		return nil, badInput(err)
	}
	return s, nil
}

// runError tells bad input (a scenario that cannot be built, a bad trace
// record found while streaming: FILE:LINE, exit 2) from a failure of the
// run itself (a network or replay deadlock, an interrupt: exit 1).
func runError(err error) error {
	var ve *vef.Error
	if errors.As(err, &ve) {
		return badInput(err)
	}
	var re *scenario.RunError
	if errors.As(err, &re) || errors.Is(err, network.ErrDeadlock) || errors.Is(err, context.Canceled) {
		return err
	}
	return badInput(err)
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
(wall time, events/s, peak RSS), ports.csv, idle_hist.csv and idle_log.csv. A progress line
goes to stderr when it is a terminal. A bad trace record exits 2 naming FILE:LINE.

Interrupted (Ctrl-C, SIGTERM), it stops, writes and prints what it simulated so far, marked
incomplete (summary.json "incomplete": true, an INCOMPLETE line in the table), says so on
stderr and exits 130.`,
		Example: `  lpictl sim run -c configs/sim/quick.yaml
  lpictl sim run -c configs/sim/quick.yaml --set power.mode=fast-wake --set seed=2 --json
  lpictl sim run --set workload.synthetic.load=0.5 -o out/megafly
  lpictl sim run -c configs/sim/apps/mlwf.yaml --set predictor.kind=fixed --set predictor.pdt=0`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := loadScenario(&o)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			prog := newProgress(cmd.ErrOrStderr(), s)
			out, err := scenario.Run(ctx, s, prog.update)
			prog.done()
			if err != nil && (out == nil || !out.Report.Incomplete) {
				return runError(err)
			}
			// An interrupted run (^C, SIGTERM) still writes what it
			// simulated, marked incomplete, and exits 130.
			if o.out != "" {
				if err := out.WriteDir(o.out); err != nil {
					return err
				}
			}
			if o.json {
				err = out.WriteJSON(cmd.OutOrStdout(), !o.deterministic)
			} else {
				err = out.WriteTable(cmd.OutOrStdout())
			}
			if err != nil || !out.Report.Incomplete {
				return err
			}
			where := ""
			if o.out != "" {
				where = "; " + o.out + " holds it"
			}
			return &exitError{code: exitInterrupted, err: fmt.Errorf("interrupted after %v simulated: the output covers the run up to there (incomplete%s)",
				time.Duration(out.Report.ExecTimeS*1e9).Round(time.Microsecond), where)}
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.config, "config", "c", "", "scenario file (default: the built-in configs/sim/megafly-4160.yaml)")
	f.StringArrayVar(&o.sets, "set", nil, "override a scenario key, e.g. workload.synthetic.load=0.5 (repeatable)")
	f.BoolVar(&o.json, "json", false, "print one JSON object instead of the table")
	f.BoolVar(&o.deterministic, "deterministic", false, "with --json, leave out wall_s, events_per_s and peak_rss_bytes")
	f.StringVarP(&o.out, "output", "o", "", "write summary.json, perf.json, ports.csv, idle_hist.csv and idle_log.csv to this directory")
	return cmd
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
			s, err := loadScenario(&o)
			if err != nil {
				return err
			}
			fixed, err := predictor.ParseDuration(o.fixed)
			if err != nil {
				return badInput(fmt.Errorf("--fixed-pdt: %w", err))
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			tty := isTerminal(cmd.ErrOrStderr())
			rows, err := scenario.Compare(ctx, s, scenario.DefaultVariants(s, predictor.Duration(fixed)), func(name string) {
				if tty {
					fmt.Fprintf(cmd.ErrOrStderr(), "running %s…\n", name)
				}
			})
			if err != nil {
				return runError(err)
			}
			if o.json {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(rows)
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

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progress prints "simulated time, events/s, ETA" on one line of stderr
// when it is a terminal.
type progress struct {
	w      io.Writer
	on     bool
	start  time.Time
	last   time.Time
	target int64 // simulated ps generation lasts (0: unknown)
	shown  bool
}

func newProgress(w io.Writer, s *scenario.Scenario) *progress {
	return &progress{w: w, on: isTerminal(w), start: time.Now(), target: s.ExpectedEnd()}
}

func (p *progress) update(pr network.Progress) {
	if !p.on {
		return
	}
	now := time.Now()
	if now.Sub(p.last) < 500*time.Millisecond {
		return
	}
	p.last = now
	el := now.Sub(p.start)
	left := "?"
	if d, ok := eta(el, pr.Now, p.target); ok {
		left = d.String()
	}
	fmt.Fprintf(p.w, "\rsimulated %-12v %6.2f M events/s  ETA %-8s", time.Duration(pr.Now/1000), float64(pr.Events)/el.Seconds()/1e6, left)
	p.shown = true
}

// eta is the wall time a run has left, to the second, if it keeps the pace
// it had: elapsed wall time for simulated time now of target (both ps);
// ok is false when the target is unknown or passed.
func eta(elapsed time.Duration, now, target int64) (left time.Duration, ok bool) {
	if target <= 0 || now <= 0 || now >= target {
		return 0, false
	}
	return time.Duration(float64(elapsed) * float64(target-now) / float64(now)).Round(time.Second), true
}

func (p *progress) done() {
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
