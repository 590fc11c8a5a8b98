package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/lpictl/lpictl/agent/hil"
	"github.com/lpictl/lpictl/sim/scenario"
)

func newHILCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hil",
		Short: "Hardware in the loop: the agent on emulated EEE ports, against predict and the simulator",
		Long: "hil runs closed-loop experiments on emulated EEE ports (docs/hil.md): namespaces, veth pairs,\n" +
			"the eBPF-emulated port on every egress, the real agent in enforce mode and traffic between two hosts.",
	}
	cmd.AddCommand(newHILRunCommand())
	return cmd
}

type hilOptions struct {
	config string
	sets   []string
	json   bool
	out    string
}

func newHILRunCommand() *cobra.Command {
	var o hilOptions
	cmd := &cobra.Command{
		Use:   "run [-c FILE] [--set key=value …] [--json] [-o DIR]",
		Short: "Run the closed-loop experiment: always-on, then each predictor, with a sim-to-real check",
		Long: `Builds host a – switch s – host b in fresh network namespaces (veth pairs, forwarding in s),
makes every egress port an emulated EEE port (lpictl emulate), starts one agent per namespace
(lpictl agent --backend hw --mode enforce, this binary) with each predictor in turn, and drives the
same seeded traffic (request/response probe, on/off and Poisson UDP, bulk TCP, optionally iperf3)
once always-on and once per predictor. It reports RTT and one-way latency with their overhead
against always-on and the predictor's bound, throughput, the emulated ports' energy saving, hits,
misses, wake-ups and the timers the agents set; then the sim-to-real check: the agents' port traces
replayed through lpictl predict's replay, and the traffic (as a VEF trace) through the simulator on
a host–switch–host line, next to the measured figures. Root only. Everything it creates is removed
on exit, on error and on SIGINT/SIGTERM. Default experiment: configs/hil/quick.yaml (built in, about
4 minutes: 60 s of traffic per run). -o DIR writes report.json, report.txt, the agents' traces, logs and predict configs, and
the VEF traces. Bad input exits 2, a failed run 1.`,
		Example: `  sudo lpictl hil run
  sudo lpictl hil run -c configs/hil/quick.yaml --set traffic.duration=6s --json
  sudo lpictl hil run --set 'predictors=[perfbound, perfboundcorrect]' --set predictor.bound=0.05 -o out/hil`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := hil.Load(o.config, o.sets)
			if err != nil {
				return err
			}
			bin, err := os.Executable()
			if err != nil {
				return fmt.Errorf("the agents run this binary: %w", err)
			}
			var progress io.Writer
			if scenario.IsTerminal(cmd.ErrOrStderr()) {
				progress = cmd.ErrOrStderr()
			}
			rep, err := hil.Run(cmd.Context(), cfg, hil.Options{Binary: bin, Progress: progress})
			if err != nil {
				return err
			}
			if o.out != "" {
				if err := rep.WriteDir(o.out); err != nil {
					return err
				}
			}
			if o.json {
				return rep.WriteJSON(cmd.OutOrStdout())
			}
			return rep.WriteText(cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.config, "config", "c", "", "experiment file (default: the built-in configs/hil/quick.yaml)")
	f.StringArrayVar(&o.sets, "set", nil, "override a key, e.g. traffic.duration=3s (repeatable)")
	f.BoolVar(&o.json, "json", false, "print one JSON object (every key always present) instead of the text report")
	f.StringVarP(&o.out, "output", "o", "", "write report.json, report.txt, the agents' traces and logs and the VEF traces to this directory")
	return cmd
}
