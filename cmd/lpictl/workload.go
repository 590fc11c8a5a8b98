package main

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/spf13/cobra"

	"github.com/lpictl/lpictl/configs"
	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/workload"
	"github.com/lpictl/lpictl/sim/workload/traces"
	"github.com/lpictl/lpictl/sim/workload/vef"
)

type workloadOptions struct {
	config string
	sets   []string
	json   bool
	ideal  bool
	ranks  bool
	idealL string
	idealB float64
	vef    bool
	out    string
	to     string
}

func newWorkloadCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "workload",
		Short: "Describe or export a simulator workload (MPI models, VEF traces, synthetic traffic)",
		Long: `Reads the workload: (and topology:) sections of a scenario file, e.g.
configs/workloads/*.yaml, with --set overrides (workload.kind=lammps, workload.ranks=64 …).
See docs/workloads.md.`,
	}
	cmd.AddCommand(newWorkloadDescribeCommand(), newWorkloadExportCommand(), newWorkloadConvertCommand())
	return cmd
}

func addWorkloadFlags(cmd *cobra.Command, o *workloadOptions) {
	f := cmd.Flags()
	f.StringVarP(&o.config, "config", "c", "", "scenario or workload YAML file (see configs/workloads/)")
	f.StringArrayVar(&o.sets, "set", nil, "override a key, e.g. workload.ranks=64 (repeatable)")
}

func newWorkloadDescribeCommand() *cobra.Command {
	var o workloadOptions
	cmd := &cobra.Command{
		Use:   "describe [-c FILE] [--set k=v]… [--json]",
		Short: "Print a workload's ranks, messages, bytes, collectives, compute and ideal-network time",
		Example: `  lpictl workload describe -c configs/workloads/lammps.yaml
  lpictl workload describe --set workload.kind=stencil --set workload.ranks=64 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runWorkloadDescribe(cmd, o) },
	}
	addWorkloadFlags(cmd, &o)
	cmd.Flags().BoolVar(&o.json, "json", false, "print as JSON")
	cmd.Flags().BoolVar(&o.ideal, "ideal", true, "replay on a contention-free network for the expected execution time")
	cmd.Flags().BoolVar(&o.ranks, "ranks", false, "also print each rank's node, sends, receives, bytes and compute (from the ideal replay)")
	cmd.Flags().StringVar(&o.idealL, "ideal-latency", time.Duration(workload.DefaultIdealLatency/1000).String(), "the ideal network's latency per message (0: none)")
	cmd.Flags().Float64Var(&o.idealB, "ideal-bandwidth", workload.DefaultIdealBandwidth, "the ideal network's bandwidth in bit/s (0: infinite)")
	return cmd
}

func newWorkloadConvertCommand() *cobra.Command {
	var o workloadOptions
	cmd := &cobra.Command{
		Use:   "convert --to vef [-c FILE] [--set k=v]… [-o FILE]",
		Short: "Convert a SimGrid TI or GOAL trace to VEF, where VEF can express it",
		Long: `Reads a workload of kind ti (SimGrid time-independent trace) or goal (GOAL schedule) and
writes it as a VEF trace. VEF gives each message at most one dependency (none, the send or the
receipt of one message) and replays eagerly; a program that needs more — a wait for several
requests (waitall), a start dependency (irequires), a receive from any source — is refused with
one line naming the rank, the operation and its source line (exit 2). See docs/workloads.md.`,
		Example: `  lpictl workload convert --to vef --set workload.kind=ti --set workload.file=out/ring.ti -o ring.vef
  lpictl workload convert --to vef --set workload.kind=goal --set workload.file=pingpong.goal`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runWorkloadConvert(cmd, o) },
	}
	addWorkloadFlags(cmd, &o)
	cmd.Flags().StringVar(&o.to, "to", "", "output format: vef (required)")
	cmd.Flags().StringVarP(&o.out, "output", "o", "-", "output file (- for stdout); written atomically")
	return cmd
}

func newWorkloadExportCommand() *cobra.Command {
	var o workloadOptions
	cmd := &cobra.Command{
		Use:   "export --vef [-c FILE] [--set k=v]… [-o FILE]",
		Short: "Write a workload as a VEF trace",
		Example: `  lpictl workload export --vef -c configs/workloads/mlwf.yaml -o mlwf.vef
  lpictl workload export --vef --set workload.kind=alltoall --set workload.ranks=8 --set workload.steps=2`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runWorkloadExport(cmd, o) },
	}
	addWorkloadFlags(cmd, &o)
	cmd.Flags().BoolVar(&o.vef, "vef", false, "write VEF (the only format; required)")
	cmd.Flags().StringVarP(&o.out, "output", "o", "-", "output file (- for stdout); written atomically")
	return cmd
}

func runWorkloadDescribe(cmd *cobra.Command, o workloadOptions) error {
	if o.ranks && !o.ideal {
		return configs.BadInput(errors.New("workload describe: --ranks comes from the ideal replay; drop --ideal=false"))
	}
	w, nodes, err := workload.LoadFile(o.config, o.sets)
	if err != nil {
		return err
	}
	d, err := workload.Describe(w, nodes)
	if err != nil {
		return err
	}
	if o.ideal {
		host := workload.NewIdealHost()
		lat, err := predictor.ParseDuration(o.idealL)
		if err != nil || lat < 0 {
			return configs.BadInput(fmt.Errorf("--ideal-latency %q: want a duration ≥ 0, e.g. 550ns or 0", o.idealL))
		}
		if !(o.idealB >= 0) || math.IsInf(o.idealB, 0) {
			return configs.BadInput(fmt.Errorf("--ideal-bandwidth %v: want bit/s ≥ 0 (0: infinite)", o.idealB))
		}
		host.Latency, host.Bandwidth = int64(lat)*1000, o.idealB
		if err := d.Replay(w, host, o.ranks); err != nil {
			return err
		}
	}
	if o.json {
		return writeJSON(cmd.OutOrStdout(), d)
	}
	return d.WriteText(cmd.OutOrStdout())
}

func runWorkloadConvert(cmd *cobra.Command, o workloadOptions) error {
	if o.to != "vef" {
		return configs.BadInput(fmt.Errorf("workload convert: --to %q: the one target format is vef", o.to))
	}
	w, _, err := workload.LoadFile(o.config, o.sets)
	if err != nil {
		return err
	}
	if o.out == "-" {
		return traces.WriteVEF(cmd.OutOrStdout(), w)
	}
	return traces.WriteVEFFile(o.out, w)
}

func runWorkloadExport(cmd *cobra.Command, o workloadOptions) error {
	if !o.vef {
		return configs.BadInput(errors.New("workload export: say the format: --vef"))
	}
	w, _, err := workload.LoadFile(o.config, o.sets)
	if err != nil {
		return err
	}
	if o.out == "-" {
		_, err = vef.WriteAll(cmd.OutOrStdout(), w.Open)
	} else {
		_, err = vef.WriteFile(o.out, w.Open)
	}
	return workload.TraceError(err)
}
