package agent

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/estimate"
	"github.com/lpictl/lpictl/sim/power"
)

// Defaults of the estimates (docs/agent.md "What EEE would save").
const (
	// DefaultFallbackPreset is estimate.fallback_preset's default: none.
	// A port whose preset is not known — its speed unknown, without a
	// preset, or meaningless (a virtual device: veth reports 10 Gb/s) —
	// gets no estimate and a note saying so, rather than a guess.
	DefaultFallbackPreset = ""
	// LedgerFallbackPreset stands for the PHY timing behind the delay
	// ledger's reserve c where no preset is known (1000BASE-T, the
	// commonest EEE link on hosts; its t_w is DefaultWakeTime).
	LedgerFallbackPreset = "eee-1000base-t"
	// DefaultEstimateFixedPDT is the fixed policy's t_PDT.
	DefaultEstimateFixedPDT = estimate.DefaultFixedPDT
)

// EstimatePolicyKinds are the policies an estimate may include, in the
// order they are reported. always-on (the baseline) is always included.
var EstimatePolicyKinds = []string{estimate.AlwaysOn, estimate.PlainEEE, estimate.DriverDefault, estimate.Fixed, estimate.Predictor}

// EstimateConfig configures the per-port estimates of what EEE would save
// (the estimate: section).
type EstimateConfig struct {
	// Enabled turns the estimates on (default true).
	Enabled *bool `yaml:"enabled"`
	// Preset is the power preset of every port ("" = the port's own, an
	// emulated EEE port's, else by its link speed, estimate.PresetForSpeed).
	Preset string `yaml:"preset"`
	// FallbackPreset is used where the speed is unknown, has no preset or
	// means nothing (virtual devices); "" = no estimate for such ports.
	FallbackPreset string `yaml:"fallback_preset"`
	// Policies are the policies estimated besides always-on (default:
	// eee, driver-default, fixed, predictor). driver-default is skipped on
	// ports whose driver's default timer is not known.
	Policies []string `yaml:"policies"`
	// FixedPDT is the fixed policy's t_PDT (default 10µs).
	FixedPDT *predictor.Duration `yaml:"fixed_pdt"`
}

// On reports whether estimates are enabled.
func (e EstimateConfig) On() bool { return e.Enabled == nil || *e.Enabled }

func (e EstimateConfig) withDefaults() EstimateConfig {
	if e.Enabled == nil {
		e.Enabled = ptr(true)
	}
	if e.FallbackPreset == "" {
		e.FallbackPreset = DefaultFallbackPreset
	}
	if len(e.Policies) == 0 {
		e.Policies = []string{estimate.PlainEEE, estimate.DriverDefault, estimate.Fixed, estimate.Predictor}
	}
	if e.FixedPDT == nil {
		e.FixedPDT = dur(DefaultEstimateFixedPDT)
	}
	return e
}

func (e EstimateConfig) validate() error {
	for _, k := range []struct{ key, name string }{{"estimate.preset", e.Preset}, {"estimate.fallback_preset", e.FallbackPreset}} {
		if k.name == "" {
			continue
		}
		if _, err := power.Load(k.name); err != nil {
			return fmt.Errorf("%s: %w", k.key, err)
		}
	}
	seen := map[string]bool{}
	for i, p := range e.Policies {
		if !slices.Contains(EstimatePolicyKinds, p) {
			return fmt.Errorf("estimate.policies[%d]: unknown policy %q (want eee, driver-default, fixed or predictor; always-on is always included)", i, p)
		}
		if seen[p] {
			return fmt.Errorf("estimate.policies[%d]: %q listed twice", i, p)
		}
		seen[p] = true
	}
	if e.FixedPDT != nil && *e.FixedPDT < 0 {
		return fmt.Errorf("estimate.fixed_pdt: must be ≥ 0, got %v", *e.FixedPDT)
	}
	return nil
}

// PortPreset is what a port says about its power preset.
type PortPreset struct {
	// Own is the port's own preset (an emulated EEE port's), nil if none.
	Own *power.Preset
	// Speed is the link speed in bits per second (0 = unknown).
	Speed uint64
	// Virtual is the kind of a virtual device (veth, dummy, netkit, ifb)
	// whose speed means nothing for power; "" otherwise.
	Virtual string
}

// Where a port's estimate preset comes from (EstimatePreset).
const (
	PresetConfigured = "configured" // estimate.preset, --preset
	PresetOwn        = "emulator"   // the emulated port's own
	PresetSpeed      = "speed"      // estimate.PresetForSpeed
	PresetFallback   = "fallback"   // estimate.fallback_preset, --fallback-preset
	PresetUnknown    = "unknown"    // none: no estimate
)

// EstimatePreset returns a port's power preset and where it came from:
// the configured preset, else the port's own (an emulated port's), else
// the preset of its link speed (not for a virtual device, whose speed
// means nothing), else the fallback if set. With none of them it returns
// nil, PresetUnknown and why (e.g. "veth reports 10 Gb/s, which means
// nothing for a virtual device"); the caller names the keys that set one.
func EstimatePreset(preset, fallback string, pp PortPreset) (p *power.Preset, from, why string, err error) {
	if preset != "" {
		p, err := power.Load(preset)
		return p, PresetConfigured, "", err
	}
	if pp.Own != nil {
		return pp.Own, PresetOwn, "", nil
	}
	switch {
	case pp.Virtual != "":
		why = fmt.Sprintf("%s reports %s, which means nothing for a virtual device", pp.Virtual, speedText(pp.Speed))
	case pp.Speed == 0:
		why = "link speed unknown"
	default:
		p, err := estimate.PresetForSpeed(int(pp.Speed / 1_000_000))
		if err == nil && p != nil {
			return p, PresetSpeed, "", nil
		}
		why = fmt.Sprintf("no power preset for %s", speedText(pp.Speed))
	}
	if fallback != "" {
		p, err := power.Load(fallback)
		return p, PresetFallback, "", err
	}
	return nil, PresetUnknown, why, nil
}

func speedText(bps uint64) string {
	switch {
	case bps == 0:
		return "no speed"
	case bps%1_000_000_000 == 0:
		return fmt.Sprintf("%d Gb/s", bps/1_000_000_000)
	}
	return fmt.Sprintf("%d Mb/s", bps/1_000_000)
}

// presetPort is what the port says about its preset.
func (in PortInfo) presetPort() PortPreset {
	return PortPreset{Own: in.Preset, Speed: in.Speed, Virtual: in.Virtual}
}

// EstimatePolicies returns the policies of an estimate: always-on first,
// then kinds in their order; driver-default only when driverDefault > 0.
// Each policy is named by its kind (the metrics' policy label).
func EstimatePolicies(kinds []string, fixed, driverDefault time.Duration) []estimate.Policy {
	out := []estimate.Policy{{Name: estimate.AlwaysOn, Kind: estimate.AlwaysOn}}
	for _, k := range EstimatePolicyKinds[1:] {
		if !slices.Contains(kinds, k) {
			continue
		}
		p := estimate.Policy{Name: k, Kind: k}
		switch k {
		case estimate.DriverDefault:
			if driverDefault <= 0 {
				continue
			}
			p.PDT = driverDefault
		case estimate.Fixed:
			p.PDT = fixed
		}
		out = append(out, p)
	}
	return out
}

// errPresetUnknown: the port's preset is not known, so it has no estimate.
var errPresetUnknown = errors.New("preset unknown")

// newEstimator builds a port's estimator from the agent's configuration,
// the port's preset, speed and driver default, and its predictor
// configuration. A port whose preset is not known gets none: the error
// (errPresetUnknown) says why and which keys set one.
func newEstimator(c EstimateConfig, in PortInfo, spec PortSpec, now time.Duration) (*estimate.Estimator, string, error) {
	c = c.withDefaults()
	pr, from, why, err := EstimatePreset(c.Preset, c.FallbackPreset, in.presetPort())
	if err != nil {
		return nil, "", err
	}
	if pr == nil {
		return nil, "", fmt.Errorf("%w: %s: set estimate.preset (or estimate.fallback_preset for every such port)", errPresetUnknown, why)
	}
	e, err := estimate.New(estimate.Config{Preset: pr, Policies: EstimatePolicies(c.Policies, c.FixedPDT.D(), in.DefaultPDT),
		Predictor: spec.Predictor, Controller: spec.Controller, Start: now})
	if err != nil {
		return nil, "", err
	}
	return e, pr.Name + " (" + from + ")", nil
}

// estTotals are the cumulative values last exported for one policy × mode
// (kept so that the counters never go down).
type estTotals struct {
	policy, mode            string
	energy, delay, lowPower float64
}

var (
	estLabels     = []string{"device", "policy", "mode"}
	descEstEnergy = prometheus.NewDesc(ns+"_estimate_energy_joules_total",
		"Estimated energy of the port's PHY had it run this policy and low-power mode over the observed traffic (always-on: the baseline).", estLabels, nil)
	descEstDelay = prometheus.NewDesc(ns+"_estimate_added_delay_seconds_total",
		"Estimated delay added to packets by wake-ups under this policy and mode, summed over packets.", estLabels, nil)
	descEstLowPower = prometheus.NewDesc(ns+"_estimate_low_power_seconds_total",
		"Estimated time in low power under this policy and mode.", estLabels, nil)
)

// collectEstimates exports a port's estimates, accounted up to now.
func (p *portState) collectEstimates(ch chan<- prometheus.Metric, now time.Duration) {
	if p.est == nil {
		return
	}
	for _, r := range p.est.Results(now) {
		mode := string(r.Mode)
		i := slices.IndexFunc(p.estLast, func(t estTotals) bool { return t.policy == r.Policy && t.mode == mode })
		if i < 0 {
			p.estLast = append(p.estLast, estTotals{policy: r.Policy, mode: mode})
			i = len(p.estLast) - 1
		}
		t := &p.estLast[i]
		t.energy = max(t.energy, r.EnergyJ)
		t.delay = max(t.delay, r.AddedDelay.Seconds())
		t.lowPower = max(t.lowPower, r.LowPower.Seconds())
		name := p.info.Name
		ch <- prometheus.MustNewConstMetric(descEstEnergy, prometheus.CounterValue, t.energy, name, r.Policy, mode)
		ch <- prometheus.MustNewConstMetric(descEstDelay, prometheus.CounterValue, t.delay, name, r.Policy, mode)
		ch <- prometheus.MustNewConstMetric(descEstLowPower, prometheus.CounterValue, t.lowPower, name, r.Policy, mode)
	}
}
