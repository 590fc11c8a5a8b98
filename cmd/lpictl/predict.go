package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lpictl/lpictl/configs"
	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/controller/replay"
	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/power"
)

// predictFile is the schema of configs/predict/*.yaml.
type predictFile struct {
	// Preset and Mode give t_w (and t_s) of the low-power state entered
	// after t_PDT; predictor.wake_time and sleep_time override them.
	Preset     string              `yaml:"preset"`
	Mode       string              `yaml:"mode"`
	SleepTime  *predictor.Duration `yaml:"sleep_time"`
	Predictor  predictor.Config    `yaml:"predictor"`
	Controller controller.Config   `yaml:"controller"`
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
	preset   string
	mode     string
	strategy string
	binWidth string
	maxValue string
	ttl      string
	records  int
	history  int
}

func newPredictCommand() *cobra.Command {
	var o predictOptions
	cmd := &cobra.Command{
		Use:   "predict [flags] FILE",
		Short: "Replay a file of idle periods through a predictor and summarise",
		Long: `Replays idle periods (one per line: 12.5us, 3ms or plain nanoseconds; # comments;
FILE - reads stdin) through one port's controller and predictor, simulating the port's
PDT timer: a gap longer than t_PDT is a miss that sleeps and pays the wake-up time t_w.

Configuration comes from -c FILE (configs/predict/*.yaml), then --set key=value, then
the flags below, each overriding the one before.`,
		Example: `  lpictl predict --predictor perfboundcorrect configs/predict/gaps-demo.txt
  lpictl predict -c configs/predict/perfbound.yaml --set predictor.bound=0.05 gaps.txt
  lpictl predict --predictor fixed --pdt 1us --json gaps.txt`,
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
	f.StringVar(&o.kind, "predictor", "", "predictor: fixed, perfbound, perfboundcorrect (default perfboundcorrect)")
	f.StringVar(&o.pdt, "pdt", "", "fixed t_PDT (predictor fixed)")
	f.StringVar(&o.initial, "initial-pdt", "", "t_PDT while the histogram is empty (default 10us)")
	f.Float64Var(&o.bound, "bound", 0, "tolerated degradation, e.g. 0.01 for 1% (default 0.01)")
	f.StringVar(&o.wake, "wake-time", "", "t_w (default: the preset's for the mode)")
	f.StringVar(&o.sleep, "sleep-time", "", "t_s (default: the preset's for the mode; 0 = instantaneous)")
	f.StringVar(&o.preset, "preset", "", "power preset: "+joinNames(power.Names())+" or a file (default "+power.DefaultPreset+")")
	f.StringVar(&o.mode, "mode", "", "low-power mode: fast-wake, deep-sleep, hybrid (default deep-sleep)")
	f.StringVar(&o.strategy, "strategy", "", "histogram strategy: unbounded, clearing, circular (default clearing)")
	f.StringVar(&o.binWidth, "bin-width", "", "histogram bin width r_bin (default 100ns)")
	f.StringVar(&o.maxValue, "max-value", "", "histogram clamp h_maxval (default 10ms)")
	f.StringVar(&o.ttl, "ttl", "", "clearing histogram TTL_hist (default 1s)")
	f.IntVar(&o.records, "max-records", 0, "h_maxN (default 250 clearing, 20000 circular)")
	f.IntVar(&o.history, "history", 0, "PerfBoundCorrect n_R (default 32)")
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

// loadPredictConfig merges file, --set and flags into one configuration.
func loadPredictConfig(flags *pflag.FlagSet, o predictOptions) (predictFile, replay.Timing, error) {
	var pf predictFile
	if o.config != "" || len(o.sets) > 0 {
		var data []byte
		name := "--set"
		if o.config != "" {
			var err error
			if data, err = os.ReadFile(o.config); err != nil {
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
	if flags.Changed("predictor") {
		k, err := predictor.ParseKind(o.kind)
		if err != nil {
			return pf, replay.Timing{}, fmt.Errorf("--predictor: %w", err)
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
	for _, e := range []error{
		dur("pdt", o.pdt, &p.PDT),
		dur("initial-pdt", o.initial, &p.InitialPDT),
		dur("sleep-time", o.sleep, &pf.SleepTime),
		durVal("wake-time", o.wake, &p.WakeTime),
		durVal("bin-width", o.binWidth, &p.Histogram.BinWidth),
		durVal("max-value", o.maxValue, &p.Histogram.MaxValue),
		durVal("ttl", o.ttl, &p.Histogram.TTL),
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
	if p.WakeTime == 0 {
		p.WakeTime = state.WakeTime
	}
	timing := replay.Timing{Wake: p.WakeTime.D(), Sleep: state.SleepTime.D()}
	if pf.SleepTime != nil {
		timing.Sleep = pf.SleepTime.D()
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
	port, err := controller.NewPort(pf.Controller, pred, 0)
	if err != nil {
		return badInput(err)
	}

	in, name := io.Reader(os.Stdin), "stdin"
	if file != "-" {
		fh, err := os.Open(file)
		if err != nil {
			return badInput(err)
		}
		defer fh.Close()
		in, name = fh, file
	}
	out := cmd.OutOrStdout()
	r := replay.New(port, timing)
	var tw *tabwriter.Writer
	if o.trace {
		tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "#\tline\tstart\tgap\tt_PDT\toutcome\tasleep\tdelay\t")
	}
	err = replay.ReadGaps(in, name, func(line int, gap time.Duration) error {
		st := r.Gap(gap)
		if tw != nil {
			outcome := "hit"
			if st.Missed {
				outcome = "miss"
			}
			fmt.Fprintf(tw, "%d\t%d\t%v\t%v\t%v\t%s\t%v\t%v\t\n",
				st.Index, line, st.Start, st.Gap, st.PDT, outcome, st.Asleep, st.Delay)
		}
		return nil
	})
	if tw != nil {
		tw.Flush()
	}
	if err != nil {
		return badInput(err)
	}
	sum := newPredictSummary(pf, timing, r.Result())
	if o.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(sum)
	}
	sum.print(out)
	return nil
}

// predictSummary is what lpictl predict reports; times in seconds.
type predictSummary struct {
	Predictor          predictor.Kind `json:"predictor"`
	WakeTimeS          float64        `json:"wake_time_s"`
	SleepTimeS         float64        `json:"sleep_time_s"`
	IdlePeriods        uint64         `json:"idle_periods"`
	Hits               uint64         `json:"hits"`
	Misses             uint64         `json:"misses"`
	HitRate            float64        `json:"hit_rate"`
	IdleTimeS          float64        `json:"idle_time_s"`
	AsleepTimeS        float64        `json:"asleep_time_s"`
	AsleepShare        float64        `json:"asleep_share"`
	AddedDelayS        float64        `json:"added_delay_s"`
	AddedDelayPerIdleS float64        `json:"added_delay_per_idle_period_s"`
	PDTMeanS           float64        `json:"pdt_mean_s"`
	PDTMinS            float64        `json:"pdt_min_s"`
	PDTMaxS            float64        `json:"pdt_max_s"`
	Decisions          uint64         `json:"decisions"`
	Changes            uint64         `json:"changes"`
	Clamps             uint64         `json:"clamps"`
	StateBytes         int            `json:"state_bytes"`
}

func newPredictSummary(pf predictFile, t replay.Timing, r replay.Result) predictSummary {
	s := predictSummary{
		Predictor:   pf.Predictor.WithDefaults().Kind,
		WakeTimeS:   t.Wake.Seconds(),
		SleepTimeS:  t.Sleep.Seconds(),
		IdlePeriods: r.IdlePeriods,
		Hits:        r.Hits,
		Misses:      r.Misses,
		IdleTimeS:   r.IdleTime.Seconds(),
		AsleepTimeS: r.Asleep.Seconds(),
		AddedDelayS: r.Delay.Seconds(),
		PDTMeanS:    r.MeanPDT.Seconds(),
		PDTMinS:     r.MinPDT.Seconds(),
		PDTMaxS:     r.MaxPDT.Seconds(),
		Decisions:   r.Port.Decisions,
		Changes:     r.Port.Changes,
		Clamps:      r.Port.Clamps,
		StateBytes:  r.Port.StateBytes,
	}
	if r.IdlePeriods > 0 {
		s.HitRate = float64(r.Hits) / float64(r.IdlePeriods)
		s.AddedDelayPerIdleS = r.Delay.Seconds() / float64(r.IdlePeriods)
	}
	if r.IdleTime > 0 {
		s.AsleepShare = float64(r.Asleep) / float64(r.IdleTime)
	}
	return s
}

func (s predictSummary) print(w io.Writer) {
	d := func(sec float64) time.Duration { return time.Duration(sec * 1e9).Round(time.Nanosecond) }
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "predictor\t%s\t(t_w %v, t_s %v)\n", s.Predictor, d(s.WakeTimeS), d(s.SleepTimeS))
	fmt.Fprintf(tw, "idle periods\t%d\n", s.IdlePeriods)
	fmt.Fprintf(tw, "hits / misses\t%d / %d\t(hit rate %.1f %%)\n", s.Hits, s.Misses, 100*s.HitRate)
	fmt.Fprintf(tw, "time asleep\t%v of %v idle\t(%.1f %%)\n", d(s.AsleepTimeS), d(s.IdleTimeS), 100*s.AsleepShare)
	fmt.Fprintf(tw, "added wake-up delay\t%v\t(%v per idle period)\n", d(s.AddedDelayS), d(s.AddedDelayPerIdleS))
	fmt.Fprintf(tw, "t_PDT mean / min / max\t%v / %v / %v\n", d(s.PDTMeanS), d(s.PDTMinS), d(s.PDTMaxS))
	fmt.Fprintf(tw, "decisions / changes / clamps\t%d / %d / %d\n", s.Decisions, s.Changes, s.Clamps)
	fmt.Fprintf(tw, "predictor state\t%d bytes\n", s.StateBytes)
	tw.Flush()
}
