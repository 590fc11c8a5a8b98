package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lpictl/lpictl/agent"
	"github.com/lpictl/lpictl/configs"
	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/controller/replay"
	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/estimate"
	"github.com/lpictl/lpictl/sim/power"
	"github.com/lpictl/lpictl/sim/replaycfg"
	"github.com/lpictl/lpictl/sim/scenario"
)

type predictOptions struct {
	config  string
	sets    []string
	json    bool
	trace   bool
	kind    string
	whatIf  bool
	compare bool
}

func newPredictCommand() *cobra.Command {
	var o predictOptions
	cmd := &cobra.Command{
		Use:   "predict [flags] FILE",
		Short: "Replay a file of idle periods through a predictor and summarise",
		Long: `Replays idle periods through one port's controller and predictor, simulating the
port's PDT timer as the simulator's link model does (docs/model.md §1.1): a gap ≥ t_PDT is a miss;
the port goes down 2 × handshake after t_PDT, taking t_s, and the packet pays the rest of
that and the wake-up time t_w. A gap of 0 (back-to-back packets) is no idle period: it
is skipped and counted apart.

FILE (- reads stdin) is either a gap file (one idle period per line: 12.5us, 3ms or
plain nanoseconds; # comments) or a simulator port trace (port_trace.csv, recognised by
its header line start_ps,gap_ps,pdt_ps,outcome,delay_ps,sent): then the replay uses the
trace's start times and hop counts and reports how many of the simulator's decisions
(t_PDT and outcome) it reproduces.

Configuration comes from -c FILE (configs/predict/*.yaml), then LPICTL_PREDICT_<KEY>
variables (LPICTL_PREDICT_PREDICTOR_BOUND=0.05), then the flags below, then --set key=value,
each overriding the one before. Nothing is printed unless the whole
input replays: bad input exits 2 with one line on stderr.

--what-if instead estimates what EEE would save on this input (sim/estimate, the code
behind the agent's live estimates): a table per policy (always-on, eee, fixed 10us, the
predictor, and --driver-default DUR) × mode (--mode, or fast-wake and deep-sleep) with the
idle and low-power shares, the saving (J, W, %), the added delay and the wake-ups. One port
end, no handshake unless --handshake; the packets' waits shift no idle period (see
docs/predictors.md). An optimal row per mode gives the offline optimum at the bound.

--predictor optimal prints the offline optimum instead of a replay: knowing every idle
period, it sleeps at once in those that buy the most time asleep (hybrid: energy saved)
within the delay budget bound × hop factor × elapsed time. It is exact, and holds the
input in memory (at most 50 million idle periods). --compare replays the input through
every predictor (fixed only with --pdt) with the same configuration and adds the optimum:
one table of time asleep, added delay, its share of the budget, misses and the share of
the optimum each reaches (--json: an array of objects; see docs/predictors.md).`,
		Example: `  lpictl predict --predictor perfboundcorrect configs/predict/gaps-demo.txt
  lpictl predict -c configs/predict/perfbound.yaml --set predictor.bound=0.05 gaps.txt
  lpictl predict --predictor fixed --pdt 1us --json gaps.txt
  lpictl predict --predictor perfboundcorrect --trace out/port_trace.csv
  lpictl predict --what-if --preset eee-10gbase-t --driver-default 1ms gaps.txt
  lpictl predict --predictor optimal --bound 0.05 gaps.txt
  lpictl predict --compare --mode hybrid configs/predict/gaps-demo.txt`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return configs.BadInput(fmt.Errorf("predict: want exactly one FILE of idle periods (or - for stdin), got %d", len(args)))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPredict(cmd, o, args[0])
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.config, "config", "c", "", "YAML config file (see configs/predict/)")
	f.StringArrayVar(&o.sets, "set", nil, "override a config key, e.g. predictor.bound=0.02 (repeatable)")
	f.BoolVar(&o.json, "json", false, "print the summary as JSON")
	f.BoolVar(&o.trace, "trace", false, "print every decision")
	f.StringVar(&o.kind, "predictor", "", "predictor: fixed, perfbound, perfboundcorrect, perfboundcorrect-weighted, ngram, or optimal: the offline optimum (default perfboundcorrect)")
	f.String("pdt", "", "fixed t_PDT (predictor fixed)")
	f.String("initial-pdt", "", "t_PDT while the histogram is empty (default 10us)")
	f.Float64("bound", 0, "tolerated degradation, e.g. 0.01 for 1% (default 0.01)")
	f.String("wake-time", "", "t_w (default: the preset's for the mode)")
	f.String("sleep-time", "", "t_s (default: the preset's for the mode; 0 = instantaneous)")
	f.String("handshake", "", fmt.Sprintf("one-way power-down handshake H, e.g. 11.28ns (default: the simulator's, %d B at the preset's link rate + %v; 0 = none)",
		scenario.DefaultControlBytes, scenario.DefaultPropagation))
	f.String("preset", "", "power preset: "+strings.Join(power.Names(), ", ")+" or a file (default "+power.DefaultPreset+")")
	f.String("mode", "", "low-power mode: fast-wake, deep-sleep, hybrid (default deep-sleep)")
	f.String("strategy", "", "histogram strategy: unbounded, clearing, circular (default clearing)")
	f.String("bin-width", "", "histogram bin width r_bin (default 100ns)")
	f.String("max-value", "", "histogram clamp h_maxval (default 10ms)")
	f.String("ttl", "", "clearing histogram TTL_hist (default 1s)")
	f.Int("max-records", 0, "h_maxN (default 250 clearing, 20000 circular)")
	f.Int("history", 0, "PerfBoundCorrect n_R (default 32)")
	f.BoolVar(&o.whatIf, "what-if", false, "estimate what EEE would save: every policy (always-on, eee, fixed 10us, the predictor) × mode (sim/estimate)")
	f.String("driver-default", "", "with --what-if: add a driver-default policy with this tx LPI timer, e.g. 1ms")
	f.BoolVar(&o.compare, "compare", false, "replay every predictor (fixed only with --pdt) and the offline optimum; one table")
	return cmd
}

// predictFlagKinds lists the flags that only some predictors use. Giving
// one for another predictor is an error, not silently ignored (the config
// keys behind them are ignored by the other kinds, so that one file can
// switch kinds: see docs/configuration.md).
var predictFlagKinds = []struct {
	flag  string
	kinds []predictor.Kind
}{
	{"pdt", []predictor.Kind{predictor.KindFixed}},
	{"initial-pdt", perfBoundKinds},
	{"bound", perfBoundKinds},
	{"strategy", perfBoundKinds},
	{"bin-width", perfBoundKinds},
	{"max-value", perfBoundKinds},
	{"ttl", perfBoundKinds},
	{"max-records", perfBoundKinds},
	{"history", []predictor.Kind{predictor.KindPerfBoundCorrect, predictor.KindPerfBoundCorrectWeighted}},
}

// perfBoundKinds are the predictors with a PerfBound histogram inside
// (n-gram falls back to one): the histogram flags apply to all of them.
var perfBoundKinds = []predictor.Kind{predictor.KindPerfBound, predictor.KindPerfBoundCorrect,
	predictor.KindPerfBoundCorrectWeighted, predictor.KindNGram}

// checkPredictFlags refuses flags that do not apply to the mode of
// predict or to the predictor in use (replaycfg.CheckFlags checked their
// values).
func checkPredictFlags(flags *pflag.FlagSet, o predictOptions, kind predictor.Kind) error {
	if o.whatIf {
		for _, f := range []string{"trace", "sleep-time"} {
			if flags.Changed(f) {
				return fmt.Errorf("--%s: not used by --what-if (t_s comes from the preset; there is no per-decision trace)", f)
			}
		}
	} else if flags.Changed("driver-default") {
		return errors.New("--driver-default: only used with --what-if")
	}
	if err := checkOptimalFlags(flags, o); err != nil || o.compare || o.optimal() || !slices.Contains(predictor.Kinds, kind) {
		return err // checkOptimalFlags checked the predictor flags; predictor.Validate names a bad kind
	}
	for _, fk := range predictFlagKinds {
		if flags.Changed(fk.flag) && !slices.Contains(fk.kinds, kind) {
			names := make([]string, len(fk.kinds))
			for i, k := range fk.kinds {
				names[i] = string(k)
			}
			which := "predictor " + names[0]
			if len(names) > 1 {
				which = "predictors " + strings.Join(names, ", ")
			}
			return fmt.Errorf("--%s: only used by %s; the predictor is %s (set --predictor)", fk.flag, which, kind)
		}
	}
	return nil
}

// loadPredictConfig merges file < LPICTL_PREDICT_* < flags < --set
// (sim/replaycfg) and resolves the replayed port's timing.
func loadPredictConfig(flags *pflag.FlagSet, o predictOptions) (replaycfg.File, replay.Timing, error) {
	keys := replaycfg.FlagKeys()
	if flags.Changed("predictor") && !o.optimal() {
		k, err := predictor.ParseKind(o.kind)
		if err != nil {
			return replaycfg.File{}, replay.Timing{}, fmt.Errorf("--predictor: %w, or %s (the offline optimum)", err, optimalKind)
		}
		keys["predictor"] = "predictor.kind"
		_ = flags.Set("predictor", string(k))
	}
	if err := replaycfg.CheckFlags(flags); err != nil {
		return replaycfg.File{}, replay.Timing{}, err
	}
	pf, err := replaycfg.Load(replaycfg.Options{File: o.config, Sets: o.sets, Flags: flags, FlagKeys: keys})
	if err != nil {
		return pf, replay.Timing{}, err
	}
	if err := checkPredictFlags(flags, o, pf.Predictor.WithDefaults().Kind); err != nil {
		return pf, replay.Timing{}, err
	}
	timing, err := pf.Timing()
	return pf, timing, err
}

func runPredict(cmd *cobra.Command, o predictOptions, file string) error {
	pf, timing, err := loadPredictConfig(cmd.Flags(), o)
	if err != nil {
		return configs.BadInput(err)
	}
	pred, err := predictor.New(pf.Predictor)
	if err != nil {
		return configs.BadInput(err)
	}
	if pf.Controller.MissCost == 0 { // the ledger's miss cost: one power-down cycle
		pf.Controller.MissCost = predictor.Duration(timing.Cycle())
	}
	port, err := controller.NewPort(pf.Controller, pred, 0)
	if err != nil {
		return configs.BadInput(err)
	}
	var start time.Duration // when the controllers start (an agent trace's Opened)

	in, name := io.Reader(os.Stdin), "stdin"
	if file != "-" {
		fh, err := os.Open(file)
		if err != nil {
			return configs.BadInput(err)
		}
		defer fh.Close()
		in, name = fh, file
	}
	// A port trace written by the agent names the controller that decided
	// it (its predictor, controller settings and start time): replaying
	// through that one reproduces the agent's decisions, unless a
	// predictor is chosen here.
	br := bufio.NewReaderSize(in, 64<<10)
	in = br
	head, _ := br.Peek(64 << 10)
	if ctl, ok := replay.AgentTraceHeader(head); ok && !predictorChosen(cmd.Flags(), o) {
		ti, err := agent.ReadTraceInfo(bytes.NewReader(ctl))
		if err != nil {
			return configs.BadInput(fmt.Errorf("%s: %w", name, err))
		}
		if port, err = ti.NewController(); err != nil {
			return configs.BadInput(fmt.Errorf("%s: port trace header: %w", name, err))
		}
		pf.Predictor, pf.Controller, start = ti.Spec.Predictor, ti.Spec.Controller, ti.Opened
	}
	// Everything goes to a spool first (memory, then a temporary file:
	// a --trace of millions of periods): on bad input stdout stays empty.
	var out replay.Spool
	defer out.Close()
	switch {
	case o.whatIf:
		err = whatIfPredict(&out, in, name, cmd.Flags(), o, pf)
	case o.compare:
		err = comparePredict(&out, in, name, o, pf, timing, start)
	case o.optimal():
		err = optimalPredict(&out, in, name, o, pf, timing)
	default:
		err = replayPredict(&out, in, name, o, pf, timing, port)
	}
	if err != nil {
		return configs.BadInput(err)
	}
	_, err = out.WriteTo(cmd.OutOrStdout())
	return err
}

// predictorChosen reports whether the command line chooses the predictor
// or the controller (a config file, --set, a predictor flag or variable).
func predictorChosen(flags *pflag.FlagSet, o predictOptions) bool {
	if o.config != "" || len(o.sets) > 0 || slices.ContainsFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "LPICTL_PREDICT_PREDICTOR_") || strings.HasPrefix(kv, "LPICTL_PREDICT_CONTROLLER_")
	}) {
		return true
	}
	for _, f := range []string{"predictor", "pdt", "initial-pdt", "bound", "strategy", "bin-width", "max-value", "ttl", "max-records", "history"} {
		if flags.Changed(f) {
			return true
		}
	}
	return false
}

// replayPredict replays the input through port and writes the trace (with
// --trace) and the summary to w.
func replayPredict(w io.Writer, in io.Reader, name string, o predictOptions, pf replaycfg.File, timing replay.Timing, port *controller.Port) error {
	var row func(cells ...string)
	var tw *replay.TraceTable // the --trace table, streamed through a spool
	if o.trace {
		tw = new(replay.TraceTable)
		defer tw.Close()
		row = tw.Row
	}
	res, err := replay.ReplayInput(in, name, replay.New(port, timing), row)
	if err != nil {
		return err
	}
	if tw != nil {
		if _, err := tw.WriteTo(w); err != nil {
			return err
		}
	}
	sum := replay.NewSummary(pf.Predictor.WithDefaults().Kind, timing, res)
	if o.json {
		return writeJSON(w, sum)
	}
	sum.Print(w)
	return nil
}

// whatIfPredict estimates every policy × mode over the input
// (estimate.WhatIf) and adds the offline optimum's rows.
func whatIfPredict(w io.Writer, in io.Reader, name string, flags *pflag.FlagSet, o predictOptions, pf replaycfg.File) error {
	cfg, err := pf.Estimate(flags)
	if err != nil {
		return err
	}
	oi, err := estimate.OptimumInput(pf.Predictor, pf.Preset, pf.Mode, replay.Timing{})
	if err != nil {
		return err
	}
	best, err := estimate.NewOptimalRows(cfg, oi.Rate())
	if err != nil {
		return err
	}
	rep, err := estimate.WhatIf(in, name, cfg, best.Add)
	if err != nil {
		return err
	}
	rows, err := best.Rows(rep.Elapsed(), rep.IdlePeriods)
	if err != nil {
		return err
	}
	rep.Results = append(rep.Results, rows...)
	if o.json {
		return writeJSON(w, rep)
	}
	return rep.Print(w)
}
