package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/lpictl/lpictl/controller/replay"
	"github.com/lpictl/lpictl/sim/estimate"
	"github.com/lpictl/lpictl/sim/replaycfg"
)

// optimalKind is --predictor's name for the offline optimum.
const optimalKind = replay.OptimalKind

func (o predictOptions) optimal() bool {
	return strings.EqualFold(strings.TrimSpace(o.kind), optimalKind)
}

// checkOptimalFlags refuses what --compare and --predictor optimal do not
// use. --compare runs every kind, so each predictor flag applies to one of
// them; the optimum reads only the bound (and the timing).
func checkOptimalFlags(flags *pflag.FlagSet, o predictOptions) error {
	if !o.compare && !o.optimal() {
		return nil
	}
	what := "--predictor optimal"
	if o.compare {
		what = "--compare"
		if flags.Changed("predictor") {
			return errors.New("--predictor: not used by --compare, which replays every predictor and the optimum")
		}
	}
	if o.whatIf {
		return fmt.Errorf("--what-if: not used with %s (--what-if has an optimal row of its own)", what)
	}
	if flags.Changed("trace") {
		return fmt.Errorf("--trace: not used by %s (there is no single sequence of decisions to print)", what)
	}
	if o.optimal() {
		for _, fk := range predictFlagKinds {
			if fk.flag != "bound" && flags.Changed(fk.flag) {
				return fmt.Errorf("--%s: not used by the offline optimum (it reads only --bound and the timing)", fk.flag)
			}
		}
	}
	return nil
}

// optimalPredict prints the offline optimum of the input.
func optimalPredict(w io.Writer, in io.Reader, name string, o predictOptions, pf replaycfg.File, timing replay.Timing) error {
	oi, err := estimate.OptimumInput(pf.Predictor, pf.Preset, pf.Mode, timing)
	if err != nil {
		return err
	}
	sum, err := replay.Optimal(in, name, oi)
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(w, sum)
	}
	return sum.WriteText(w)
}

// comparePredict replays the input through every predictor kind and the
// offline optimum, in one pass, and prints one table.
func comparePredict(w io.Writer, in io.Reader, name string, o predictOptions, pf replaycfg.File, timing replay.Timing, start time.Duration) error {
	oi, err := estimate.OptimumInput(pf.Predictor, pf.Preset, pf.Mode, timing)
	if err != nil {
		return err
	}
	oi.Controller, oi.Start = pf.Controller, start
	c, err := replay.Compare(in, name, oi)
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(w, c.Rows)
	}
	return c.WriteText(w)
}
