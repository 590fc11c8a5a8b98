package replaycfg

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/lpictl/lpictl/configs"
	"github.com/lpictl/lpictl/controller"
	ctlreplay "github.com/lpictl/lpictl/controller/replay"
	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/network"
	"github.com/lpictl/lpictl/sim/power"
	"github.com/lpictl/lpictl/sim/scenario"
)

// File is the schema of configs/predict/*.yaml.
type File struct {
	// Preset and Mode give t_w (and t_s) of the low-power state entered
	// after t_PDT; predictor.wake_time and sleep_time override them.
	Preset    string              `yaml:"preset"`
	Mode      string              `yaml:"mode"`
	SleepTime *predictor.Duration `yaml:"sleep_time"`
	// Handshake is the one-way power-down handshake H (picosecond
	// resolution); default: the simulator's for the preset's link rate.
	Handshake *ctlreplay.PS `yaml:"handshake"`
	// HybridHold is hybrid mode's time in Fast Wake before Deep Sleep when
	// the predictor chooses none (default: the simulator's, 10 µs).
	HybridHold *predictor.Duration `yaml:"hybrid_hold"`
	Predictor  predictor.Config    `yaml:"predictor"`
	Controller controller.Config   `yaml:"controller"`

	// WakeSet: predictor.wake_time was given (file, environment, flag or
	// --set), not filled from the preset by Timing.
	WakeSet bool `yaml:"-"`
	// SleepSet: predictor.sleep_time was given, likewise.
	SleepSet bool `yaml:"-"`
}

// Options say where the configuration comes from.
type Options struct {
	File     string            // -c FILE ("": none)
	Sets     []string          // --set key=value, last
	Flags    *pflag.FlagSet    // the command's flags
	FlagKeys map[string]string // flag name → key
}

// Load merges file < LPICTL_PREDICT_* < flags < --set (configs.Load).
func Load(o Options) (File, error) {
	var f File
	var data []byte
	name := "--set"
	if o.File != "" {
		var err error
		if data, err = configs.ReadFile(o.File); err != nil {
			return f, err
		}
		name = o.File
	}
	_, err := configs.Load(configs.LoadOptions{Data: data, Name: name, EnvPrefix: configs.EnvPredict, EnvExample: "predictor.bound",
		Flags: o.Flags, FlagKeys: o.FlagKeys, Sets: o.Sets}, &f)
	return f, err
}

// MaxTiming bounds t_w, t_s and the handshake (the replay's picosecond
// clock must hold their sums; real values are microseconds).
const MaxTiming = time.Hour

// DefaultHandshake is the simulator's one-way power-down handshake on a
// link at rate bps with the scenario defaults: a control message's
// serialisation plus the link's propagation (sim/network).
func DefaultHandshake(rateBps float64) ctlreplay.PS {
	return ctlreplay.PS(network.Ser(scenario.DefaultControlBytes, rateBps) + scenario.DefaultPropagation.Nanoseconds()*1000)
}

// Timing resolves the preset and mode into the replayed port's timing,
// filling the predictor's t_w, t_s and hybrid costs the file leaves out.
func (f *File) Timing() (ctlreplay.Timing, error) {
	preset, err := power.Load(f.Preset)
	if err != nil {
		return ctlreplay.Timing{}, fmt.Errorf("preset: %w", err)
	}
	mode := power.DeepSleep
	if f.Mode != "" {
		if mode, err = power.ParseMode(f.Mode); err != nil {
			return ctlreplay.Timing{}, fmt.Errorf("mode: %w", err)
		}
	}
	if mode == power.AlwaysOn {
		return ctlreplay.Timing{}, errors.New("mode: always-on never sleeps; pick fast-wake, deep-sleep or hybrid")
	}
	state, err := preset.State(mode)
	if err != nil {
		return ctlreplay.Timing{}, fmt.Errorf("mode: %w", err)
	}
	p := &f.Predictor
	f.WakeSet = p.WakeTime != 0
	if p.WakeTime == 0 {
		p.WakeTime = state.WakeTime
	}
	timing := ctlreplay.Timing{Wake: p.WakeTime.D(), Sleep: state.SleepTime.D(), Handshake: DefaultHandshake(preset.RateBps)}
	if f.SleepTime != nil {
		timing.Sleep = f.SleepTime.D()
	}
	if f.Handshake != nil {
		timing.Handshake = *f.Handshake
	}
	f.SleepSet = p.SleepTime != 0
	if p.SleepTime == 0 { // the t_s replayed: the n-gram's break-even
		p.SleepTime = predictor.Duration(timing.Sleep)
	}
	if mode == power.Hybrid {
		if err := f.hybrid(preset, &timing); err != nil {
			return ctlreplay.Timing{}, err
		}
	}
	return timing, checkTiming(timing)
}

// hybrid sets hybrid mode's timing: Fast Wake first, Deep Sleep after the
// hold the predictor chooses from both states' costs (docs/predictors.md
// "Hybrid holds"), else hybrid_hold.
func (f *File) hybrid(preset *power.Preset, timing *ctlreplay.Timing) error {
	timing.DeepWake, timing.Hold = preset.DeepSleep.WakeTime.D(), scenario.DefaultHybridHold
	if f.HybridHold != nil {
		if *f.HybridHold < 0 {
			return fmt.Errorf("hybrid_hold: must be ≥ 0, got %v", *f.HybridHold)
		}
		timing.Hold = f.HybridHold.D()
	}
	if h := &f.Predictor.Hybrid; h.DeepWakeTime == 0 {
		*h = preset.Hybrid(1)
	}
	if timing.DeepWake > MaxTiming {
		return fmt.Errorf("preset: deep_sleep wake_time must be ≤ %v, got %v", MaxTiming, timing.DeepWake)
	}
	return nil
}

func checkTiming(timing ctlreplay.Timing) error {
	for _, c := range []struct {
		what string
		v    time.Duration
	}{
		{"predictor.wake_time (--wake-time): t_w", timing.Wake},
		{"sleep_time (--sleep-time): t_s", timing.Sleep},
	} {
		if c.v > MaxTiming {
			return fmt.Errorf("%s must be ≤ %v, got %v", c.what, MaxTiming, c.v)
		}
	}
	if timing.Handshake > ctlreplay.PS(MaxTiming)*1000 {
		return fmt.Errorf("handshake (--handshake) must be ≤ %v, got %v", MaxTiming, timing.Handshake)
	}
	return nil
}
