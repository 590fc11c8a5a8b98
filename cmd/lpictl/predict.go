package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lpictl/lpictl/agent"
	"github.com/lpictl/lpictl/configs"
	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/controller/replay"
	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/estimate"
	"github.com/lpictl/lpictl/sim/network"
	"github.com/lpictl/lpictl/sim/power"
	"github.com/lpictl/lpictl/sim/scenario"
)

// predictFile is the schema of configs/predict/*.yaml.
type predictFile struct {
	// Preset and Mode give t_w (and t_s) of the low-power state entered
	// after t_PDT; predictor.wake_time and sleep_time override them.
	Preset    string              `yaml:"preset"`
	Mode      string              `yaml:"mode"`
	SleepTime *predictor.Duration `yaml:"sleep_time"`
	// Handshake is the one-way power-down handshake H (picosecond
	// resolution); default: the simulator's for the preset's link rate.
	Handshake *replay.PS `yaml:"handshake"`
	// HybridHold is hybrid mode's time in Fast Wake before Deep Sleep when
	// the predictor chooses none (default: the simulator's, 10 µs).
	HybridHold *predictor.Duration `yaml:"hybrid_hold"`
	Predictor  predictor.Config    `yaml:"predictor"`
	Controller controller.Config   `yaml:"controller"`

	// wakeSet: predictor.wake_time was given (file, --set or flag), not
	// filled from the preset.
	wakeSet bool
	// sleepSet: predictor.sleep_time was given, likewise.
	sleepSet bool
}

type predictOptions struct {
	config   string
	sets     []string
	json     bool
	trace    bool
	kind     string
	pdt      string
	initial  string
	bound    float64
	wake     string
	sleep    string
	hand     string
	preset   string
	mode     string
	strategy string
	binWidth string
	maxValue string
	ttl      string
	records  int
	history  int
	whatIf   bool
	driver   string
	compare  bool
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

Configuration comes from -c FILE (configs/predict/*.yaml), then --set key=value, then
the flags below, each overriding the one before. Nothing is printed unless the whole
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
				return badInput(fmt.Errorf("predict: want exactly one FILE of idle periods (or - for stdin), got %d", len(args)))
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
	f.StringVar(&o.pdt, "pdt", "", "fixed t_PDT (predictor fixed)")
	f.StringVar(&o.initial, "initial-pdt", "", "t_PDT while the histogram is empty (default 10us)")
	f.Float64Var(&o.bound, "bound", 0, "tolerated degradation, e.g. 0.01 for 1% (default 0.01)")
	f.StringVar(&o.wake, "wake-time", "", "t_w (default: the preset's for the mode)")
	f.StringVar(&o.sleep, "sleep-time", "", "t_s (default: the preset's for the mode; 0 = instantaneous)")
	f.StringVar(&o.hand, "handshake", "", fmt.Sprintf("one-way power-down handshake H, e.g. 11.28ns (default: the simulator's, %d B at the preset's link rate + %v; 0 = none)",
		scenario.DefaultControlBytes, scenario.DefaultPropagation))
	f.StringVar(&o.preset, "preset", "", "power preset: "+joinNames(power.Names())+" or a file (default "+power.DefaultPreset+")")
	f.StringVar(&o.mode, "mode", "", "low-power mode: fast-wake, deep-sleep, hybrid (default deep-sleep)")
	f.StringVar(&o.strategy, "strategy", "", "histogram strategy: unbounded, clearing, circular (default clearing)")
	f.StringVar(&o.binWidth, "bin-width", "", "histogram bin width r_bin (default 100ns)")
	f.StringVar(&o.maxValue, "max-value", "", "histogram clamp h_maxval (default 10ms)")
	f.StringVar(&o.ttl, "ttl", "", "clearing histogram TTL_hist (default 1s)")
	f.IntVar(&o.records, "max-records", 0, "h_maxN (default 250 clearing, 20000 circular)")
	f.IntVar(&o.history, "history", 0, "PerfBoundCorrect n_R (default 32)")
	f.BoolVar(&o.whatIf, "what-if", false, "estimate what EEE would save: every policy (always-on, eee, fixed 10us, the predictor) × mode (sim/estimate)")
	f.StringVar(&o.driver, "driver-default", "", "with --what-if: add a driver-default policy with this tx LPI timer, e.g. 1ms")
	f.BoolVar(&o.compare, "compare", false, "replay every predictor (fixed only with --pdt) and the offline optimum; one table")
	return cmd
}

func joinNames(s []string) string {
	out := ""
	for i, n := range s {
		if i > 0 {
			out += ", "
		}
		out += n
	}
	return out
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

// maxTiming bounds t_w, t_s and the handshake (the replay's picosecond
// clock must hold their sums; real values are microseconds).
const maxTiming = time.Hour

// checkPredictFlags refuses flag values that the configuration would read
// as "unset" (0 means default in the config schema) or that do not apply
// to the predictor in use.
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
	if err := checkOptimalFlags(flags, o); err != nil {
		return err
	}
	if flags.Changed("bound") && !(o.bound > 0 && o.bound <= 1) {
		return fmt.Errorf("--bound: must be in (0, 1], got %v", o.bound)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"max-records", o.records}, {"history", o.history}} {
		if flags.Changed(f.name) && f.v < 1 {
			return fmt.Errorf("--%s: must be ≥ 1, got %d", f.name, f.v)
		}
	}
	for _, f := range []struct{ name, v string }{
		{"wake-time", o.wake}, {"bin-width", o.binWidth}, {"max-value", o.maxValue}, {"ttl", o.ttl},
	} {
		if !flags.Changed(f.name) {
			continue
		}
		if d, err := predictor.ParseDuration(f.v); err == nil && d == 0 {
			return fmt.Errorf("--%s: must be > 0 (leave it out for the default)", f.name)
		}
	}
	for _, f := range []struct{ name, v string }{{"strategy", o.strategy}, {"preset", o.preset}, {"mode", o.mode}} {
		if flags.Changed(f.name) && strings.TrimSpace(f.v) == "" {
			return fmt.Errorf("--%s: empty value (leave it out for the default)", f.name)
		}
	}
	if o.compare || o.optimal() {
		return nil // checkOptimalFlags checked the predictor flags
	}
	known := false
	for _, k := range predictor.Kinds {
		known = known || k == kind
	}
	if !known {
		return nil // predictor.Validate names the bad kind
	}
	for _, fk := range predictFlagKinds {
		if !flags.Changed(fk.flag) {
			continue
		}
		ok := false
		names := make([]string, len(fk.kinds))
		for i, k := range fk.kinds {
			ok = ok || k == kind
			names[i] = string(k)
		}
		if !ok {
			which := "predictor " + names[0]
			if len(names) > 1 {
				which = "predictors " + strings.Join(names, ", ")
			}
			return fmt.Errorf("--%s: only used by %s; the predictor is %s (set --predictor)", fk.flag, which, kind)
		}
	}
	return nil
}

// stepOutcome is a replayed idle period's outcome for --trace: hit, miss,
// or miss-deep for a hybrid port woken from Deep Sleep.
func stepOutcome(st replay.Step) string {
	if st.Deep {
		return "miss-deep"
	}
	return outcome(st.Missed)
}

// defaultHandshake is the simulator's one-way power-down handshake on a
// link at rate bps with the scenario defaults: a control message's
// serialisation plus the link's propagation (sim/network).
func defaultHandshake(rateBps float64) replay.PS {
	return replay.PS(network.Ser(scenario.DefaultControlBytes, rateBps) + scenario.DefaultPropagation.Nanoseconds()*1000)
}

// loadPredictConfig merges file, --set and flags into one configuration.
func loadPredictConfig(flags *pflag.FlagSet, o predictOptions) (predictFile, replay.Timing, error) {
	var pf predictFile
	if o.config != "" || len(o.sets) > 0 {
		var data []byte
		name := "--set"
		if o.config != "" {
			var err error
			if data, err = configs.ReadFile(o.config); err != nil {
				return pf, replay.Timing{}, err
			}
			name = o.config
		}
		if err := configs.Decode(data, name, &pf, o.sets); err != nil {
			return pf, replay.Timing{}, err
		}
	}
	dur := func(flag, val string, dst **predictor.Duration) error {
		if !flags.Changed(flag) {
			return nil
		}
		d, err := predictor.ParseDuration(val)
		if err != nil {
			return fmt.Errorf("--%s: %w", flag, err)
		}
		v := predictor.Duration(d)
		*dst = &v
		return nil
	}
	durVal := func(flag, val string, dst *predictor.Duration) error {
		var p *predictor.Duration
		if err := dur(flag, val, &p); err != nil || p == nil {
			return err
		}
		*dst = *p
		return nil
	}
	p := &pf.Predictor
	if flags.Changed("predictor") && !o.optimal() {
		k, err := predictor.ParseKind(o.kind)
		if err != nil {
			return pf, replay.Timing{}, fmt.Errorf("--predictor: %w, or %s (the offline optimum)", err, optimalKind)
		}
		p.Kind = k
	}
	if flags.Changed("bound") {
		p.Bound = o.bound
	}
	if flags.Changed("max-records") {
		p.Histogram.MaxRecords = o.records
	}
	if flags.Changed("history") {
		p.History = o.history
	}
	if flags.Changed("strategy") {
		p.Histogram.Strategy = predictor.Strategy(o.strategy)
	}
	if flags.Changed("preset") {
		pf.Preset = o.preset
	}
	if flags.Changed("mode") {
		pf.Mode = o.mode
	}
	if flags.Changed("handshake") {
		h, err := replay.ParsePS(o.hand)
		if err != nil {
			return pf, replay.Timing{}, fmt.Errorf("--handshake: %w", err)
		}
		pf.Handshake = &h
	}
	for _, e := range []error{
		dur("pdt", o.pdt, &p.PDT),
		dur("initial-pdt", o.initial, &p.InitialPDT),
		dur("sleep-time", o.sleep, &pf.SleepTime),
		durVal("wake-time", o.wake, &p.WakeTime),
		durVal("bin-width", o.binWidth, &p.Histogram.BinWidth),
		durVal("max-value", o.maxValue, &p.Histogram.MaxValue),
		durVal("ttl", o.ttl, &p.Histogram.TTL),
		checkPredictFlags(flags, o, p.WithDefaults().Kind),
	} {
		if e != nil {
			return pf, replay.Timing{}, e
		}
	}

	preset, err := power.Load(pf.Preset)
	if err != nil {
		return pf, replay.Timing{}, fmt.Errorf("preset: %w", err)
	}
	mode := power.DeepSleep
	if pf.Mode != "" {
		if mode, err = power.ParseMode(pf.Mode); err != nil {
			return pf, replay.Timing{}, fmt.Errorf("mode: %w", err)
		}
	}
	if mode == power.AlwaysOn {
		return pf, replay.Timing{}, errors.New("mode: always-on never sleeps; pick fast-wake, deep-sleep or hybrid")
	}
	state, err := preset.State(mode)
	if err != nil {
		return pf, replay.Timing{}, fmt.Errorf("mode: %w", err)
	}
	pf.wakeSet = p.WakeTime != 0
	if p.WakeTime == 0 {
		p.WakeTime = state.WakeTime
	}
	timing := replay.Timing{Wake: p.WakeTime.D(), Sleep: state.SleepTime.D(), Handshake: defaultHandshake(preset.RateBps)}
	if pf.SleepTime != nil {
		timing.Sleep = pf.SleepTime.D()
	}
	if pf.Handshake != nil {
		timing.Handshake = *pf.Handshake
	}
	pf.sleepSet = p.SleepTime != 0
	if p.SleepTime == 0 { // the t_s replayed: the n-gram's break-even
		p.SleepTime = predictor.Duration(timing.Sleep)
	}
	if mode == power.Hybrid {
		// Fast Wake first, Deep Sleep after the hold: the predictor
		// chooses the hold from both states' costs (docs/predictors.md
		// "Hybrid holds"), else hybrid_hold.
		ds := preset.DeepSleep
		timing.DeepWake, timing.Hold = ds.WakeTime.D(), scenario.DefaultHybridHold
		if pf.HybridHold != nil {
			if *pf.HybridHold < 0 {
				return pf, replay.Timing{}, fmt.Errorf("hybrid_hold: must be ≥ 0, got %v", *pf.HybridHold)
			}
			timing.Hold = pf.HybridHold.D()
		}
		if h := &pf.Predictor.Hybrid; h.DeepWakeTime == 0 {
			*h = preset.Hybrid(1)
		}
		if timing.DeepWake > maxTiming {
			return pf, replay.Timing{}, fmt.Errorf("preset: deep_sleep wake_time must be ≤ %v, got %v", maxTiming, timing.DeepWake)
		}
	}
	for _, c := range []struct {
		what string
		v    time.Duration
	}{
		{"predictor.wake_time (--wake-time): t_w", timing.Wake},
		{"sleep_time (--sleep-time): t_s", timing.Sleep},
	} {
		if c.v > maxTiming {
			return pf, replay.Timing{}, fmt.Errorf("%s must be ≤ %v, got %v", c.what, maxTiming, c.v)
		}
	}
	if timing.Handshake > replay.PS(maxTiming)*1000 {
		return pf, replay.Timing{}, fmt.Errorf("handshake (--handshake) must be ≤ %v, got %v", maxTiming, timing.Handshake)
	}
	return pf, timing, nil
}

func runPredict(cmd *cobra.Command, o predictOptions, file string) error {
	pf, timing, err := loadPredictConfig(cmd.Flags(), o)
	if err != nil {
		return badInput(err)
	}
	pred, err := predictor.New(pf.Predictor)
	if err != nil {
		return badInput(err)
	}
	if pf.Controller.MissCost == 0 { // the ledger's miss cost: one power-down cycle
		pf.Controller.MissCost = predictor.Duration(timing.Cycle())
	}
	port, err := controller.NewPort(pf.Controller, pred, 0)
	if err != nil {
		return badInput(err)
	}
	var start time.Duration // when the controllers start (an agent trace's Opened)

	in, name := io.Reader(os.Stdin), "stdin"
	if file != "-" {
		fh, err := os.Open(file)
		if err != nil {
			return badInput(err)
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
	if ctl, ok := agentTraceHeader(head); ok && !predictorChosen(cmd.Flags(), o) {
		ti, err := agent.ReadTraceInfo(bytes.NewReader(ctl))
		if err != nil {
			return badInput(fmt.Errorf("%s: %w", name, err))
		}
		if port, err = ti.NewController(); err != nil {
			return badInput(fmt.Errorf("%s: port trace header: %w", name, err))
		}
		pf.Predictor, pf.Controller, start = ti.Spec.Predictor, ti.Spec.Controller, ti.Opened
	}
	// Everything goes to a spool first (memory, then a temporary file:
	// a --trace of millions of periods): on bad input stdout stays empty.
	var out spool
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
		return badInput(err)
	}
	_, err = out.WriteTo(cmd.OutOrStdout())
	return err
}

// agentTraceHeader finds the "# controller: …" line of a port trace
// written by lpictl agent: a comment line of the header block, before the
// first content line, which must be the port trace header. Such a line
// anywhere else (in a gap file, or among a trace's rows) is a comment.
func agentTraceHeader(head []byte) (line []byte, ok bool) {
	head = replay.StripBOM(head)
	for len(head) > 0 {
		text := head
		if i := bytes.IndexByte(head, '\n'); i >= 0 {
			text, head = head[:i], head[i+1:]
		} else {
			head = nil
		}
		text = bytes.TrimRight(text, "\r")
		if bytes.HasPrefix(text, []byte("#")) {
			if line == nil && bytes.HasPrefix(text, []byte("# controller: ")) {
				line = text
			}
			continue
		}
		if i := bytes.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		if text = bytes.TrimSpace(text); len(text) == 0 {
			continue
		}
		return line, line != nil && string(text) == replay.TraceHeader
	}
	return nil, false
}

// predictorChosen reports whether the command line chooses the predictor
// or the controller (a config file, --set or a predictor flag).
func predictorChosen(flags *pflag.FlagSet, o predictOptions) bool {
	if o.config != "" || len(o.sets) > 0 {
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
func replayPredict(w io.Writer, in io.Reader, name string, o predictOptions, pf predictFile, timing replay.Timing, port *controller.Port) error {
	r := replay.New(port, timing)
	var tw *streamTable // the --trace table, streamed through a spool
	if o.trace {
		tw = new(streamTable)
		defer tw.rows.Close()
	}
	headed := false
	header := func(cols ...string) {
		if !headed {
			tw.row(cols...)
			headed = true
		}
	}
	str := func(v any) string { return fmt.Sprint(v) }
	zeroLines := 0
	format, err := replay.Read(in, name, func(line int, gap time.Duration) error {
		st, err := r.Gap(gap)
		if err != nil {
			return fmt.Errorf("%s:%d: %w", name, line, err)
		}
		if st.Skipped {
			zeroLines++
			return nil
		}
		if tw != nil {
			header("#", "line", "start", "gap", "t_PDT", "outcome", "asleep", "delay")
			tw.row(str(st.Index), str(line), st.Start.String(), st.Gap.String(), pdtString(st.PDTPS()), stepOutcome(st), st.Asleep.String(), st.Delay.String())
		}
		return nil
	}, func(row replay.TraceRow) error {
		st, err := r.Row(row)
		if err != nil {
			return fmt.Errorf("%s:%d: %w", name, row.Line, err)
		}
		if tw != nil {
			header("#", "line", "start", "gap", "t_PDT", "sim t_PDT", "outcome", "sim outcome", "asleep", "delay", "agree")
			agree := "yes"
			if st.PDTPS() != row.PDT || st.Missed != row.Missed {
				agree = "NO"
			}
			tw.row(str(st.Index), str(row.Line), st.Start.String(), st.Gap.String(), pdtString(st.PDTPS()), pdtString(row.PDT),
				stepOutcome(st), outcome(row.Missed), st.Asleep.String(), st.Delay.String(), agree)
		}
		return nil
	})
	if err != nil {
		return err
	}
	res := r.Result()
	if res.IdlePeriods == 0 {
		switch {
		case format == replay.FormatTrace:
			return fmt.Errorf("%s: no idle periods to replay: the port trace has no rows", name)
		case zeroLines > 0:
			return fmt.Errorf("%s: no idle periods to replay: all %d gaps are 0 (back-to-back packets leave no idle period)", name, zeroLines)
		}
		return fmt.Errorf("%s: no idle periods to replay: the gap file has no gaps", name)
	}
	if tw != nil {
		if _, err := tw.WriteTo(w); err != nil {
			return err
		}
	}
	sum := newPredictSummary(pf, timing, res)
	if o.json {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(sum)
	}
	sum.print(w)
	return nil
}

func outcome(missed bool) string {
	if missed {
		return "miss"
	}
	return "hit"
}

// pdtString writes a t_PDT in ps, or "never" for a port that never sleeps.
func pdtString(p replay.PS) string {
	if p == replay.Never {
		return "never"
	}
	return p.String()
}

// predictSummary is what lpictl predict reports; times in seconds.
type predictSummary struct {
	Predictor       predictor.Kind `json:"predictor"`
	WakeTimeS       float64        `json:"wake_time_s"`
	SleepTimeS      float64        `json:"sleep_time_s"`
	HandshakeS      float64        `json:"handshake_s"`
	IdlePeriods     uint64         `json:"idle_periods"`
	ZeroGapsSkipped uint64         `json:"zero_gaps_skipped"`
	Hits            uint64         `json:"hits"`
	Misses          uint64         `json:"misses"`
	HitRate         float64        `json:"hit_rate"`
	// DeepMisses: hybrid mode only, the misses that woke the port from
	// Deep Sleep.
	DeepMisses         *uint64           `json:"deep_misses,omitempty"`
	IdleTimeS          float64           `json:"idle_time_s"`
	AsleepTimeS        float64           `json:"asleep_time_s"`
	AsleepShare        float64           `json:"asleep_share"`
	AddedDelayS        float64           `json:"added_delay_s"`
	AddedDelayPerIdleS float64           `json:"added_delay_per_idle_period_s"`
	PDTMeanS           float64           `json:"pdt_mean_s"`
	PDTMinS            float64           `json:"pdt_min_s"`
	PDTMaxS            float64           `json:"pdt_max_s"`
	Decisions          uint64            `json:"decisions"`
	Changes            uint64            `json:"changes"`
	Clamps             uint64            `json:"clamps"`
	StateBytes         int               `json:"state_bytes"`
	RoundedUp          uint64            `json:"rounded_up"`
	Ledger             *predictLedger    `json:"ledger,omitempty"`
	Agreement          *predictAgreement `json:"agreement,omitempty"`

	handshake replay.PS // exact, for the text summary
}

// predictLedger is the port's delay ledger at the end of the replay
// (controller.LedgerStats; docs/predictors.md "The delay ledger").
type predictLedger struct {
	Rate     float64 `json:"rate"`
	BudgetS  float64 `json:"budget_s"`
	SpentS   float64 `json:"spent_s"`
	ReserveS float64 `json:"reserve_s"`
	Ratio    float64 `json:"spent_ratio"`
	Held     uint64  `json:"held"`
	Overruns uint64  `json:"overruns"`
}

// predictAgreement compares a port trace's decisions with the replay's.
type predictAgreement struct {
	Decisions     uint64           `json:"decisions"`
	Matching      uint64           `json:"matching"` // same t_PDT and outcome
	FirstMismatch *predictMismatch `json:"first_mismatch,omitempty"`
}

// predictMismatch is the first trace row decided differently; t_PDT in ps
// as in the trace (-1: never sleeps).
type predictMismatch struct {
	Line          int    `json:"line"`
	IdlePeriod    int    `json:"idle_period"`
	SimPDTPS      int64  `json:"sim_pdt_ps"`
	ReplayPDTPS   int64  `json:"replay_pdt_ps"`
	SimOutcome    string `json:"sim_outcome"`
	ReplayOutcome string `json:"replay_outcome"`
}

func newPredictSummary(pf predictFile, t replay.Timing, r replay.Result) predictSummary {
	s := predictSummary{
		Predictor:       pf.Predictor.WithDefaults().Kind,
		WakeTimeS:       t.Wake.Seconds(),
		SleepTimeS:      t.Sleep.Seconds(),
		HandshakeS:      t.Handshake.Seconds(),
		IdlePeriods:     r.IdlePeriods,
		ZeroGapsSkipped: r.ZeroGaps,
		Hits:            r.Hits,
		Misses:          r.Misses,
		IdleTimeS:       r.IdleTime.Seconds(),
		AsleepTimeS:     r.Asleep.Seconds(),
		AddedDelayS:     r.Delay.Seconds(),
		PDTMeanS:        r.MeanPDT.Seconds(),
		PDTMinS:         r.MinPDT.Seconds(),
		PDTMaxS:         r.MaxPDT.Seconds(),
		Decisions:       r.Port.Decisions,
		Changes:         r.Port.Changes,
		Clamps:          r.Port.Clamps,
		StateBytes:      r.Port.StateBytes,
		RoundedUp:       r.Port.RoundedUp,
		handshake:       t.Handshake,
	}
	if l := r.Port.Ledger; l != nil {
		s.Ledger = &predictLedger{Rate: l.Rate, BudgetS: l.Budget.Seconds(), SpentS: l.Spent.Seconds(),
			ReserveS: l.Reserve.Seconds(), Ratio: l.Ratio(), Held: l.Held, Overruns: l.Overruns}
	}
	if t.DeepWake > 0 {
		d := r.DeepMisses
		s.DeepMisses = &d
	}
	if r.IdlePeriods > 0 {
		s.HitRate = float64(r.Hits) / float64(r.IdlePeriods)
		s.AddedDelayPerIdleS = r.Delay.Seconds() / float64(r.IdlePeriods)
	}
	if r.IdleTime > 0 {
		s.AsleepShare = float64(r.Asleep) / float64(r.IdleTime)
	}
	if a := r.Agreement; a != nil {
		s.Agreement = &predictAgreement{Decisions: a.Decisions, Matching: a.Matching}
		if m := a.First; m != nil {
			s.Agreement.FirstMismatch = &predictMismatch{
				Line: m.Line, IdlePeriod: m.Index, SimPDTPS: int64(m.SimPDT), ReplayPDTPS: int64(m.PDT),
				SimOutcome: outcome(m.SimMissed), ReplayOutcome: outcome(m.Missed),
			}
		}
	}
	return s
}

func (s predictSummary) print(w io.Writer) {
	d := func(sec float64) time.Duration { return time.Duration(sec * 1e9).Round(time.Nanosecond) }
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	hs := ""
	if s.handshake > 0 {
		hs = fmt.Sprintf(", handshake %v", s.handshake)
	}
	fmt.Fprintf(tw, "predictor\t%s\t(t_w %v, t_s %v%s)\n", s.Predictor, d(s.WakeTimeS), d(s.SleepTimeS), hs)
	fmt.Fprintf(tw, "idle periods\t%d\n", s.IdlePeriods)
	if s.ZeroGapsSkipped > 0 {
		fmt.Fprintf(tw, "zero gaps skipped\t%d\t(back-to-back packets: no idle period)\n", s.ZeroGapsSkipped)
	}
	fmt.Fprintf(tw, "hits / misses\t%d / %d\t(hit rate %.1f %%)\n", s.Hits, s.Misses, 100*s.HitRate)
	if s.DeepMisses != nil {
		fmt.Fprintf(tw, "misses from deep sleep\t%d\t(hybrid: the others woke from fast wake)\n", *s.DeepMisses)
	}
	fmt.Fprintf(tw, "time asleep\t%v of %v idle\t(%.1f %%)\n", d(s.AsleepTimeS), d(s.IdleTimeS), 100*s.AsleepShare)
	fmt.Fprintf(tw, "added wake-up delay\t%v\t(%v per idle period)\n", d(s.AddedDelayS), d(s.AddedDelayPerIdleS))
	fmt.Fprintf(tw, "t_PDT mean / min / max\t%v / %v / %v\n", d(s.PDTMeanS), d(s.PDTMinS), d(s.PDTMaxS))
	fmt.Fprintf(tw, "decisions / changes / clamps\t%d / %d / %d\n", s.Decisions, s.Changes, s.Clamps)
	fmt.Fprintf(tw, "predictor state\t%d bytes\n", s.StateBytes)
	if s.RoundedUp > 0 {
		fmt.Fprintf(tw, "rounded up\t%d\t(answers the register raised rather than lowered below a gap)\n", s.RoundedUp)
	}
	if l := s.Ledger; l != nil {
		fmt.Fprintf(tw, "ledger\tspent %v of %v\t(%.3f of the budget l·T, l = %.4g; reserve %v; %d idle periods held)\n",
			d(l.SpentS), d(l.BudgetS), l.Ratio, l.Rate, d(l.ReserveS), l.Held)
	}
	if a := s.Agreement; a != nil {
		fmt.Fprintf(tw, "simulator agreement\t%d of %d decisions\t(same t_PDT and outcome)\n", a.Matching, a.Decisions)
		if m := a.FirstMismatch; m != nil {
			fmt.Fprintf(tw, "first mismatch\tline %d\t(idle period %d: sim t_PDT %s %s, replay %s %s)\n", m.Line, m.IdlePeriod,
				pdtString(replay.PS(m.SimPDTPS)), m.SimOutcome, pdtString(replay.PS(m.ReplayPDTPS)), m.ReplayOutcome)
		}
	}
	tw.Flush()
}

// whatIfPredict runs the shadow EEE estimator (sim/estimate, the code the
// agent's live estimates use) over the input: every policy × mode on one
// timeline. A gap file has no busy time: each gap starts where the
// previous one ended; a port trace gives each period's start. The text
// table or --json goes to w.
func whatIfPredict(w io.Writer, in io.Reader, name string, flags *pflag.FlagSet, o predictOptions, pf predictFile) error {
	preset, err := power.Load(pf.Preset)
	if err != nil {
		return fmt.Errorf("preset: %w", err)
	}
	cfg := estimate.Config{Preset: preset, Predictor: pf.Predictor, Controller: pf.Controller}
	if !pf.wakeSet {
		cfg.Predictor.WakeTime = 0 // each mode's t_w
	}
	if !pf.sleepSet {
		cfg.Predictor.SleepTime = 0 // each mode's t_s
	}
	if pf.Mode != "" {
		m, err := power.ParseMode(pf.Mode)
		if err != nil {
			return fmt.Errorf("mode: %w", err)
		}
		cfg.Modes = []power.Mode{m}
	}
	if pf.Handshake != nil {
		h := *pf.Handshake
		if h%1000 != 0 {
			return fmt.Errorf("handshake (--handshake): --what-if takes whole nanoseconds, got %v", h)
		}
		cfg.Handshake = h.D()
	}
	cfg.Policies = estimate.DefaultPolicies()
	if flags.Changed("driver-default") {
		d, err := predictor.ParseDuration(o.driver)
		if err != nil || d <= 0 {
			return fmt.Errorf("--driver-default: want the driver's tx LPI timer (> 0), e.g. 1ms: got %q", o.driver)
		}
		cfg.Policies = append(cfg.Policies, estimate.Policy{Name: estimate.DriverDefault, Kind: estimate.DriverDefault, PDT: d})
	}
	est, err := estimate.New(cfg)
	if err != nil {
		return err
	}
	best, err := newWhatIfOptimal(cfg, pf)
	if err != nil {
		return err
	}

	var (
		sum             whatIfSummary
		now, idle, prev time.Duration
	)
	sum.Preset, sum.HandshakeS = preset.Name, cfg.Handshake.Seconds()
	const maxClock = time.Duration(math.MaxInt64 / 1000) // the estimator's picosecond clock
	format, err := replay.Read(in, name, func(line int, gap time.Duration) error {
		if gap < 0 {
			return fmt.Errorf("%s:%d: negative gap %v", name, line, gap)
		}
		if gap == 0 {
			sum.ZeroGaps++
			return nil
		}
		if gap >= maxClock-now {
			return fmt.Errorf("%s:%d: time overflows: the gaps so far add up to more than the picosecond clock holds (about 106 days)", name, line)
		}
		now += gap
		idle += gap
		sum.IdlePeriods++
		est.Idle(now, gap)
		if err := best.add(now-gap, gap); err != nil {
			return fmt.Errorf("%s:%d: %w", name, line, err)
		}
		return nil
	}, func(row replay.TraceRow) error {
		start, end := row.Start.D(), (row.Start + row.Gap).D()
		if start < prev {
			return fmt.Errorf("%s:%d: start_ps %d is before the end of the previous idle period", name, row.Line, row.Start)
		}
		if end >= maxClock {
			return fmt.Errorf("%s:%d: time overflows the picosecond clock", name, row.Line)
		}
		if end > start { // sub-ns gaps vanish at the estimator's ns resolution
			idle += end - start
			sum.IdlePeriods++
			est.Idle(end, end-start)
			if err := best.add(start, end-start); err != nil {
				return fmt.Errorf("%s:%d: %w", name, row.Line, err)
			}
		}
		now, prev = end, end
		return nil
	})
	if err != nil {
		return err
	}
	if sum.IdlePeriods == 0 {
		return fmt.Errorf("%s: no idle periods to estimate (the input has none of length > 0)", name)
	}
	sum.Input = "gaps"
	if format == replay.FormatTrace {
		sum.Input = "port-trace"
	}
	sum.ElapsedS, sum.IdleTimeS = now.Seconds(), idle.Seconds()
	sum.IdleShare = float64(idle) / float64(now)
	for _, r := range est.Results(now) {
		sum.Results = append(sum.Results, whatIfRow{
			Policy: r.Policy, Kind: r.Kind, Mode: string(r.Mode), PDTMeanS: r.MeanPDT.Seconds(),
			IdlePeriods: r.IdlePeriods, Absorbed: r.Absorbed, Hits: r.Hits, Misses: r.Misses, WakeUps: r.WakeUps,
			LowPowerS: r.LowPower.Seconds(), LowPowerShare: float64(r.LowPower) / float64(now),
			EnergyJ: r.EnergyJ, AlwaysOnEnergyJ: r.AlwaysOnEnergyJ, SavedJ: r.SavedJ, SavedW: r.SavedW, SavedPct: r.SavedPct,
			AddedDelayS: r.AddedDelay.Seconds(), AddedDelayPerIdleS: r.AddedDelay.Seconds() / float64(sum.IdlePeriods),
		})
	}
	rows, err := best.rows(now, sum.IdlePeriods)
	if err != nil {
		return err
	}
	sum.Results = append(sum.Results, rows...)
	if o.json {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(sum)
	}
	return sum.print(w)
}

// whatIfSummary is lpictl predict --what-if's report (docs/predictors.md);
// times in seconds. Every key is always present.
type whatIfSummary struct {
	Preset      string      `json:"preset"`
	HandshakeS  float64     `json:"handshake_s"`
	Input       string      `json:"input"` // gaps or port-trace
	IdlePeriods uint64      `json:"idle_periods"`
	ZeroGaps    uint64      `json:"zero_gaps_skipped"`
	ElapsedS    float64     `json:"elapsed_s"`
	IdleTimeS   float64     `json:"idle_time_s"`
	IdleShare   float64     `json:"idle_share"`
	Results     []whatIfRow `json:"results"`
}

// whatIfRow is one policy × mode.
type whatIfRow struct {
	Policy             string  `json:"policy"`
	Kind               string  `json:"kind"`
	Mode               string  `json:"mode"`
	PDTMeanS           float64 `json:"pdt_mean_s"`
	IdlePeriods        uint64  `json:"idle_periods"`
	Absorbed           uint64  `json:"absorbed"`
	Hits               uint64  `json:"hits"`
	Misses             uint64  `json:"misses"`
	WakeUps            uint64  `json:"wakeups"`
	LowPowerS          float64 `json:"low_power_s"`
	LowPowerShare      float64 `json:"low_power_share"`
	EnergyJ            float64 `json:"energy_j"`
	AlwaysOnEnergyJ    float64 `json:"always_on_energy_j"`
	SavedJ             float64 `json:"saved_j"`
	SavedW             float64 `json:"saved_w"`
	SavedPct           float64 `json:"saved_pct"`
	AddedDelayS        float64 `json:"added_delay_s"`
	AddedDelayPerIdleS float64 `json:"added_delay_per_idle_period_s"`
}

func (s whatIfSummary) print(w io.Writer) error {
	d := func(sec float64) time.Duration { return time.Duration(math.Round(sec * 1e9)) }
	fmt.Fprintf(w, "preset %s, %d idle periods (%s), idle %v of %v (%.1f %%)", s.Preset, s.IdlePeriods, s.Input,
		d(s.IdleTimeS), d(s.ElapsedS), 100*s.IdleShare)
	if s.ZeroGaps > 0 {
		fmt.Fprintf(w, ", %d zero gaps skipped", s.ZeroGaps)
	}
	if s.HandshakeS > 0 {
		fmt.Fprintf(w, ", handshake %v", d(s.HandshakeS))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\tmode\tmean t_PDT\tlow power\tsaved J\tsaved W\tsaved\tadded delay\tper idle period\twake-ups\thits\tmisses\tabsorbed\t")
	for _, r := range s.Results {
		fmt.Fprintf(tw, "%s\t%s\t%v\t%.1f %%\t%.4g\t%.4g\t%.1f %%\t%v\t%v\t%d\t%d\t%d\t%d\t\n",
			r.Policy, r.Mode, d(r.PDTMeanS), 100*r.LowPowerShare, r.SavedJ, r.SavedW, r.SavedPct,
			d(r.AddedDelayS), d(r.AddedDelayPerIdleS), r.WakeUps, r.Hits, r.Misses, r.Absorbed)
	}
	return tw.Flush()
}
