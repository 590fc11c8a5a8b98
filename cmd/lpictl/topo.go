package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/lpictl/lpictl/configs"
	"github.com/lpictl/lpictl/sim/power"
	"github.com/lpictl/lpictl/sim/scenario"
	"github.com/lpictl/lpictl/sim/topo"
)

func newTopoCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "topo",
		Short: "Inspect the simulator's topologies",
	}
	cmd.AddCommand(newTopoDescribeCommand())
	return cmd
}

func newTopoDescribeCommand() *cobra.Command {
	var o simOptions
	cmd := &cobra.Command{
		Use:   "describe [-c SCENARIO] [--set key=value …]",
		Short: "Describe a scenario's topology and its idle/full-load power (paper 000 Table 7)",
		Long: `Prints the topology of a scenario (default: the built-in Megafly-4160): nodes, switches,
links (cables, and the Table 7 convention links = switches × radix + nodes), diameter, mean hop
count, and the power breakdown idle and at full load in the layout of paper 000 Table 7.`,
		Example: `  lpictl topo describe
  lpictl topo describe --set topology.kind=rlft --set topology.radix=26 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := scenario.Load(o.config, o.sets)
			if err != nil {
				return err
			}
			t, err := topo.Build(s.Topology)
			if err != nil {
				return configs.BadInput(err)
			}
			pre, err := power.Load(s.Power.Preset)
			if err != nil {
				return configs.BadInput(fmt.Errorf("power.preset: %w", err))
			}
			d := topo.Describe(t)
			b := power.Breakdown(t, pre)
			if o.json {
				return writeJSON(cmd.OutOrStdout(), struct {
					Topology topo.Description      `json:"topology"`
					Power    power.SystemBreakdown `json:"power"`
				}{d, b})
			}
			fmt.Fprintln(cmd.OutOrStdout(), d.String())
			fmt.Fprintln(cmd.OutOrStdout())
			fmt.Fprintln(cmd.OutOrStdout(), b.String())
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.config, "config", "c", "", "scenario file (default: the built-in configs/sim/megafly-4160.yaml)")
	f.StringArrayVar(&o.sets, "set", nil, "override a scenario key, e.g. topology.kind=torus3d (repeatable)")
	f.BoolVar(&o.json, "json", false, "print JSON")
	return cmd
}
