package agent

import (
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
	// DefaultFallbackPreset is the power preset of ports whose speed is
	// unknown or has no preset (veth, virtual links).
	DefaultFallbackPreset = "eee-1000base-t"
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
	// Preset is the power preset of every port ("" = chosen by the port's
	// link speed, estimate.PresetForSpeed).
	Preset string `yaml:"preset"`
	// FallbackPreset is used where the speed is unknown or has no preset.
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

// EstimatePreset returns the power preset of a port of speed bps (0 =
// unknown) and where it came from: "configured" (preset set), "speed"
// (estimate.PresetForSpeed) or "fallback".
func EstimatePreset(preset, fallback string, bps uint64) (*power.Preset, string, error) {
	if preset != "" {
		p, err := power.Load(preset)
		return p, "configured", err
	}
	if bps > 0 {
		if p, err := estimate.PresetForSpeed(int(bps / 1_000_000)); err == nil && p != nil {
			return p, "speed", nil
		}
	}
	if fallback == "" {
		fallback = DefaultFallbackPreset
	}
	p, err := power.Load(fallback)
	return p, "fallback", err
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

// newEstimator builds a port's estimator from the agent's configuration,
// the port's speed and driver default, and its predictor configuration.
func newEstimator(c EstimateConfig, in PortInfo, spec PortSpec, now time.Duration) (*estimate.Estimator, string, error) {
	c = c.withDefaults()
	pr, from, err := EstimatePreset(c.Preset, c.FallbackPreset, in.Speed)
	if err != nil {
		return nil, "", err
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
