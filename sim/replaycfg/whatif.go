package replaycfg

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/estimate"
	"github.com/lpictl/lpictl/sim/power"
)

// Estimate is the configuration of --what-if's estimator (sim/estimate)
// after Timing: the preset, the predictor and controller (t_w and t_s each
// mode's unless given), the mode only when given, the handshake (whole
// nanoseconds), the default policies and, with --driver-default DUR, a
// driver-default policy.
func (f File) Estimate(flags *pflag.FlagSet) (estimate.Config, error) {
	preset, err := power.Load(f.Preset)
	if err != nil {
		return estimate.Config{}, fmt.Errorf("preset: %w", err)
	}
	cfg := estimate.Config{Preset: preset, Predictor: f.Predictor, Controller: f.Controller, Policies: estimate.DefaultPolicies()}
	if !f.WakeSet {
		cfg.Predictor.WakeTime = 0 // each mode's t_w
	}
	if !f.SleepSet {
		cfg.Predictor.SleepTime = 0 // each mode's t_s
	}
	if f.Mode != "" {
		m, err := power.ParseMode(f.Mode)
		if err != nil {
			return cfg, fmt.Errorf("mode: %w", err)
		}
		cfg.Modes = []power.Mode{m}
	}
	if f.Handshake != nil {
		h := *f.Handshake
		if h%1000 != 0 {
			return cfg, fmt.Errorf("handshake (--handshake): --what-if takes whole nanoseconds, got %v", h)
		}
		cfg.Handshake = h.D()
	}
	if fl := flags.Lookup("driver-default"); fl != nil && fl.Changed {
		d, err := predictor.ParseDuration(fl.Value.String())
		if err != nil || d <= 0 {
			return cfg, fmt.Errorf("--driver-default: want the driver's tx LPI timer (> 0), e.g. 1ms: got %q", fl.Value.String())
		}
		cfg.Policies = append(cfg.Policies, estimate.Policy{Name: estimate.DriverDefault, Kind: estimate.DriverDefault, PDT: d})
	}
	return cfg, nil
}
