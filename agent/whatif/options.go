package whatif

import (
	"fmt"
	"time"

	"github.com/lpictl/lpictl/configs"
	"github.com/lpictl/lpictl/sim/power"
)

// Bounds and defaults of an observation.
const (
	// MaxDuration is the longest observation.
	MaxDuration = time.Hour
	// DefaultMaxDelay bounds the mean delay a recommended policy may add
	// per packet: about one 1000BASE-T Deep Sleep wake-up (t_w 16.5 µs).
	DefaultMaxDelay = 20 * time.Microsecond
	// poll is how often the observers are drained.
	poll = 20 * time.Millisecond
)

// Observation methods of Options.Observe.
const (
	ObserveAuto     = "auto" // eBPF where the port's plan says so, else counters
	ObserveEBPF     = "ebpf"
	ObserveCounters = "counters"
)

// Options are `lpictl ports --what-if`'s settings.
type Options struct {
	Duration time.Duration // how long to observe (≤ MaxDuration)
	MaxDelay time.Duration // most mean added delay per packet a recommendation may cost
	// Preset is every port's power preset ("": an emulated port's own,
	// else by link speed); FallbackPreset is used where that is unknown.
	Preset, FallbackPreset string
	FixedPDT               time.Duration // the fixed policy's t_PDT
	Observe                string        // ObserveAuto, ObserveEBPF or ObserveCounters
	Ports                  []string      // only these ports (default: every port that is up)
	NetNS                  string        // the ports' network namespace
	BPFFS                  string        // where emulated ports' pins are (`lpictl emulate attach --bpffs`)
}

// Validate checks the options; what it refuses is bad input
// (configs.InputError).
func (o Options) Validate() error {
	switch {
	case o.Duration <= 0:
		return configs.BadInput(fmt.Errorf("--what-if %v: want a positive duration such as 10s", o.Duration))
	case o.Duration > MaxDuration:
		return configs.BadInput(fmt.Errorf("--what-if %v: at most %v", o.Duration, MaxDuration))
	case o.MaxDelay < 0:
		return configs.BadInput(fmt.Errorf("--max-delay %v: must be ≥ 0", o.MaxDelay))
	case o.FixedPDT < 0:
		return configs.BadInput(fmt.Errorf("--fixed-pdt %v: must be ≥ 0", o.FixedPDT))
	}
	switch o.Observe {
	case ObserveAuto, ObserveEBPF, ObserveCounters:
	default:
		return configs.BadInput(fmt.Errorf("--observe %q: want auto, ebpf or counters", o.Observe))
	}
	for _, k := range []struct{ flag, name string }{{"--preset", o.Preset}, {"--fallback-preset", o.FallbackPreset}} {
		if k.name == "" {
			continue
		}
		if _, err := power.Load(k.name); err != nil {
			return configs.BadInput(fmt.Errorf("%s: %w", k.flag, err))
		}
	}
	return nil
}
