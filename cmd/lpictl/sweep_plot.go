package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lpictl/lpictl/configs"
	"github.com/lpictl/lpictl/sim/sweep/plot"
)

// newSweepPlotCmd is `lpictl sweep plot`: draws a figure from a sweep
// directory's results.csv (and its points' idle_hist.csv).
func newSweepPlotCmd() *cobra.Command {
	var (
		o     plot.Options
		out   string
		where []string
	)
	cmd := &cobra.Command{
		Use:   "plot DIR --figure NAME [-o FILE.png|.svg]",
		Short: "Draw a figure from a sweep's results",
		Long: `Draws a figure from DIR/results.csv (written by ` + "`lpictl sweep run` or `lpictl sweep collect`" + `),
as PNG or SVG by the extension of -o (default DIR/<figure>.png). Only rows with status ok are
used; several seeds of one point are drawn as their mean with min–max error bars.

Figures (paper 000):
  pdt-sweep   execution-time overhead, energy saving (total solid, network dashed) and mean
              packet-latency overhead against predictor.pdt (log axis, 0 one decade left of the
              smallest value), one series per power.mode (Figs. 7, 13, 16)
  predictors  the same three panels against predictor.bound (%), one series per predictor.kind
              × predictor.histogram.strategy × power.mode, as far as these columns exist
              (Figs. 8, 14, 17)
  idle-hist   per run (role point): idle-time share per idle-period length bin and its
              cumulative share, from DIR/points/<id>/idle_hist.csv, class --class (Fig. 1)
  powar       paper 002 Figs. 4, 5: run-time overhead, E_net and E_cluster over the reference
              (the powar_model columns; the ideal marker dashed) against predictor.pdt, one
              series per selection function (routing), a row per workload (name)
  generic     --y columns (one panel each; A+B: B dashed in A's panel) against --x, one series per --series value

The title is the sweep's name (DIR/plan.json) unless --title is given.`,
		Example: `  lpictl sweep plot out/lammps-pdt --figure pdt-sweep
  lpictl sweep plot out/lammps-pdt --figure idle-hist --where predictor.pdt=10ns --class nic -o idle.svg
  lpictl sweep plot out/lammps-pdt --figure generic --x predictor.pdt --logx --y energy_links_j,frac_deep_sleep --series power.mode`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if o.Figure == "" {
				return configs.BadInput(fmt.Errorf("--figure is required (one of %s)", strings.Join(plot.Figures(), ", ")))
			}
			var err error
			if o.Where, err = plot.ParseWhere(where); err != nil {
				return err
			}
			if out == "" {
				out = filepath.Join(dir, o.Figure+".png")
			}
			if err := plot.Write(dir, out, o); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Figure, "figure", "", "figure: "+strings.Join(plot.Figures(), ", "))
	f.StringVarP(&out, "output", "o", "", "output file, .png or .svg (default DIR/<figure>.png)")
	f.StringVar(&o.X, "x", "", "generic: x column (numbers, durations or categories)")
	f.StringSliceVar(&o.Y, "y", nil, "generic: y column(s), one panel each")
	f.StringSliceVar(&o.Series, "series", nil, "generic: column(s) whose joined values name a series")
	f.BoolVar(&o.LogX, "logx", false, "generic: log x axis")
	f.BoolVar(&o.LogY, "logy", false, "generic: log y axis")
	f.StringArrayVar(&where, "where", nil, "keep only rows with COL=VALUE (repeatable)")
	f.StringVar(&o.Class, "class", "all", "idle-hist: idle_hist.csv class (all, a switch role, port<i>, or port: each run's tracked port)")
	f.StringVar(&o.Weight, "weight", "count", "idle-hist: bars of count (idle periods per bin, as paper 000 Fig. 1) or time (share of idle time)")
	f.StringVar(&o.Title, "title", "", "figure title (default: the sweep's name)")
	return cmd
}
