package replaycfg

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	ctlreplay "github.com/lpictl/lpictl/controller/replay"
	"github.com/lpictl/lpictl/predictor"
)

// FlagKeys maps lpictl predict's flags to the keys they set (--predictor
// → predictor.kind is the caller's: its "optimal" is no kind).
func FlagKeys() map[string]string {
	return map[string]string{
		"pdt": "predictor.pdt", "initial-pdt": "predictor.initial_pdt", "bound": "predictor.bound",
		"wake-time": "predictor.wake_time", "sleep-time": "sleep_time", "handshake": "handshake",
		"preset": "preset", "mode": "mode", "strategy": "predictor.histogram.strategy",
		"bin-width": "predictor.histogram.bin_width", "max-value": "predictor.histogram.max_value",
		"ttl": "predictor.histogram.ttl", "max-records": "predictor.histogram.max_records", "history": "predictor.history",
	}
}

// durationFlags are the flags holding a predictor.Duration.
var durationFlags = []string{"pdt", "initial-pdt", "sleep-time", "wake-time", "bin-width", "max-value", "ttl"}

// CheckFlags checks the values of the flags given, with errors that name
// the flag: durations and the handshake parse; a bound is in (0, 1];
// counts are ≥ 1; a duration 0 or an empty name, which the configuration
// would read as "unset", is refused (leave the flag out for the default).
func CheckFlags(flags *pflag.FlagSet) error {
	for _, name := range durationFlags {
		if f := flags.Lookup(name); f != nil && f.Changed {
			d, err := predictor.ParseDuration(f.Value.String())
			if err != nil {
				return fmt.Errorf("--%s: %w", name, err)
			}
			if d == 0 && name != "pdt" && name != "initial-pdt" && name != "sleep-time" {
				return fmt.Errorf("--%s: must be > 0 (leave it out for the default)", name)
			}
		}
	}
	if f := flags.Lookup("handshake"); f != nil && f.Changed {
		if _, err := ctlreplay.ParsePS(f.Value.String()); err != nil {
			return fmt.Errorf("--handshake: %w", err)
		}
	}
	if b, err := flags.GetFloat64("bound"); err == nil && flags.Changed("bound") && !(b > 0 && b <= 1) {
		return fmt.Errorf("--bound: must be in (0, 1], got %v", b)
	}
	for _, name := range []string{"max-records", "history"} {
		if v, err := flags.GetInt(name); err == nil && flags.Changed(name) && v < 1 {
			return fmt.Errorf("--%s: must be ≥ 1, got %d", name, v)
		}
	}
	for _, name := range []string{"strategy", "preset", "mode"} {
		if f := flags.Lookup(name); f != nil && f.Changed && strings.TrimSpace(f.Value.String()) == "" {
			return fmt.Errorf("--%s: empty value (leave it out for the default)", name)
		}
	}
	return nil
}
