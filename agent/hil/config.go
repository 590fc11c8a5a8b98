package hil

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/lpictl/lpictl/agent/hwbackend"
	"github.com/lpictl/lpictl/configs"
	"github.com/lpictl/lpictl/hwlink/eeectl"
	"github.com/lpictl/lpictl/hwlink/emulate"
	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/power"
)

// DefaultFile is the shipped experiment used when none is given.
const DefaultFile = "hil/quick.yaml"

// Defaults (ours; docs/hil.md lists them).
const (
	DefaultPreset     = "eee-1000base-t"
	DefaultMode       = power.DeepSleep
	DefaultScale      = 10
	DefaultRate       = "preset"
	DefaultInitialPDT = time.Millisecond // stmmac's default tx LPI timer
	DefaultInterval   = 50 * time.Millisecond
	DefaultDuration   = 5 * time.Second
	DefaultSettle     = 300 * time.Millisecond
	DefaultProbeSize  = 64
	DefaultUDPSize    = 512
	DefaultTCPChunk   = 64 << 10
	DefaultTCPBytes   = 16 << 20
	DefaultTimeout    = 100 * time.Millisecond
	DefaultSimMTU     = 1500
	DefaultSimPhases  = 8 // sim.phases
	MaxSimPhases      = 64
	// PathLatencyMeasured: sim.path_latency from the always-on run.
	PathLatencyMeasured = "measured"
	MaxPathLatency      = 10 * time.Millisecond
	DefaultSeed         = 1
	// LineHops is the hop count of every path of the line (a–s–b).
	LineHops = 2
)

// Hard bounds: an experiment is bounded in time and traffic whatever its
// file says.
const (
	MaxDuration    = 60 * time.Second // traffic per run
	MaxFlows       = 8
	MaxPredictors  = 4
	MaxFlowPackets = 200_000 // per flow and run
	MaxPackets     = 500_000 // all flows, per run (expected)
	MaxTCPBytes    = 1 << 30
	MaxUDPSize     = 1472 // one datagram in one 1500-byte frame
	MinUDPSize     = headerLen
	MinInterval    = 10 * time.Microsecond
	MaxRate        = 50_000 // Poisson datagrams/s
	MaxScale       = 1000
)

// Flow kinds.
const (
	KindProbe   = "probe"
	KindOnOff   = "onoff"
	KindPoisson = "poisson"
	KindTCP     = "tcp"
	KindIperf3  = "iperf3"
)

// Config is an experiment file (configs/hil/*.yaml; docs/hil.md lists every
// key). Zero values take the defaults; pointers distinguish an explicit 0.
type Config struct {
	Name string `yaml:"name" json:"name"`
	Seed uint64 `yaml:"seed" json:"seed"`
	// Port is the emulated EEE port on every egress.
	Port PortConfig `yaml:"port" json:"port"`
	// Agent tunes the agents (the rest of their configuration is fixed:
	// enforce mode, the emulated EEE backend, the port of each namespace).
	Agent AgentConfig `yaml:"agent" json:"agent"`
	// Predictors: one run each, after the always-on run.
	Predictors []predictor.Kind `yaml:"predictors" json:"predictors"`
	// Predictor configures them (kind comes from Predictors; wake_time
	// defaults to the scaled t_w of the preset's state, hops to {2: 1}).
	Predictor predictor.Config `yaml:"predictor" json:"predictor"`
	Traffic   TrafficConfig    `yaml:"traffic" json:"traffic"`
	Sim       SimConfig        `yaml:"sim" json:"sim"`

	source     string
	hopsByRole bool // predictor.hops was unset: 2 at the hosts, 1 at the switch
	preset     *power.Preset
	mode       power.Mode
	rate       uint64
	// pathLatency is sim.path_latency once known (Run resolves measured
	// from the always-on run).
	pathLatency time.Duration
	// blockingSends: the ports hold packets with the spin delay, so a
	// sender's next packet leaves only after its last one has crossed the
	// line; the simulated senders do the same (workload.blocking_sends).
	blockingSends bool
}

// PortConfig is the emulated EEE port (emulate.Config).
type PortConfig struct {
	Preset string  `yaml:"preset" json:"preset"`
	Mode   string  `yaml:"mode" json:"mode"`
	Scale  float64 `yaml:"scale" json:"scale"`
	// Delay: auto (edt where the kernel has fq, else spin), edt, spin or
	// none.
	Delay   string             `yaml:"delay" json:"delay"`
	SpinMax predictor.Duration `yaml:"spin_max" json:"spin_max"`
	// Rate is the emulated serialisation: none, preset, or a rate (1G).
	Rate   string `yaml:"rate" json:"rate"`
	Driver string `yaml:"driver" json:"driver"`
	// InitialPDT is the tx LPI timer the ports start with (the driver's
	// default), before the agent changes it.
	InitialPDT *predictor.Duration `yaml:"initial_pdt" json:"initial_pdt"`
	HybridHold *predictor.Duration `yaml:"hybrid_hold" json:"hybrid_hold"`
	// LPI is the emulated ports' symmetry (model §1.2): preset (the
	// default: the preset's PHY's), per-direction, each egress port
	// deciding alone, or per-link, the two egress ports of each cable one
	// emulated link (emulate.PerLink).
	LPI string `yaml:"lpi" json:"lpi"`
}

// AgentConfig is what the experiment sets in each agent's configuration.
type AgentConfig struct {
	Interval          predictor.Duration  `yaml:"interval" json:"interval"`
	Warmup            *predictor.Duration `yaml:"warmup" json:"warmup"`
	Hysteresis        *float64            `yaml:"hysteresis" json:"hysteresis"`
	MinChangeInterval *predictor.Duration `yaml:"min_change_interval" json:"min_change_interval"`
	LogLevel          string              `yaml:"log_level" json:"log_level"`
}

// TrafficConfig is the traffic of one run; every run sends the same
// (same seed).
type TrafficConfig struct {
	// Duration of a run's traffic phase.
	Duration predictor.Duration `yaml:"duration" json:"duration"`
	// Settle: wait between the agents' start and the traffic.
	Settle *predictor.Duration `yaml:"settle" json:"settle"`
	Flows  []Flow              `yaml:"flows" json:"flows"`
}

// Flow is one traffic generator. Flows run concurrently, each from Start
// for Duration within the run's traffic phase.
type Flow struct {
	Kind string `yaml:"kind" json:"kind"`
	// From is the sending host, a or b (the probe's requester).
	From     string             `yaml:"from" json:"from"`
	Start    predictor.Duration `yaml:"start" json:"start"`
	Duration predictor.Duration `yaml:"duration" json:"duration"`
	// Size: UDP payload bytes (probe, onoff, poisson) or TCP write size.
	Size int `yaml:"size" json:"size"`
	// Interval: probe spacing (mean with exponential spacing), or the
	// spacing of datagrams within an on/off burst.
	Interval predictor.Duration `yaml:"interval" json:"interval"`
	Spacing  string             `yaml:"spacing" json:"spacing"` // probe: fixed or exponential
	OnTime   predictor.Duration `yaml:"on_time" json:"on_time"`
	OffTime  predictor.Duration `yaml:"off_time" json:"off_time"`
	Rate     float64            `yaml:"rate" json:"rate"`   // poisson: datagrams/s
	Count    int                `yaml:"count" json:"count"` // cap on datagrams / probes
	Bytes    int64              `yaml:"bytes" json:"bytes"` // tcp, iperf3: bytes to send
	Timeout  predictor.Duration `yaml:"timeout" json:"timeout"`
}

// SimConfig configures the simulator half of the sim-to-real check.
type SimConfig struct {
	Enabled *bool `yaml:"enabled" json:"enabled"`
	MTU     int64 `yaml:"mtu" json:"mtu"`
	// LPI is the symmetry the simulator runs (model §1.2): per-direction
	// or per-link; default the emulated ports' (port.lpi), so both sides
	// run one link model.
	LPI string `yaml:"lpi" json:"lpi"`
	// Phases is how many simulations the column averages: the agents'
	// round phase relative to the traffic is shifted by k × agent.interval
	// / Phases (k = 0 … Phases−1) from the phase measured (simEnsemble).
	Phases *int `yaml:"phases" json:"phases"`
	// PathLatency is the simulated line's one-way latency of a lone
	// packet, split evenly between the NIC and the switch (serialisation
	// comes on top): "measured" (the always-on run's median one-way
	// latency, which already holds the two serialisations, 1.7 µs for a
	// probe at 1 Gb/s) or a duration.
	PathLatency string `yaml:"path_latency" json:"path_latency"`
}

// Load reads an experiment file (empty path: the shipped
// configs/hil/quick.yaml) with --set overrides; every error is bad input (configs.InputError).
func Load(path string, sets []string) (*Config, error) {
	data, name, err := configs.Read(path, DefaultFile)
	if err != nil {
		return nil, configs.BadInput(fmt.Errorf("config: %w", err))
	}
	c, err := Parse(data, name, sets)
	return c, configs.BadInput(err)
}

// Parse decodes an experiment strictly (unknown keys are errors naming
// file and line), applies the overrides, fills the defaults and validates.
// Errors read "NAME: key: …".
func Parse(data []byte, name string, sets []string) (*Config, error) {
	var c Config
	if err := configs.Decode(data, name, &c, sets); err != nil {
		return nil, err
	}
	c.source = name
	if c.Name == "" {
		c.Name = strings.TrimSuffix(strings.TrimSuffix(filepath.Base(name), ".yaml"), ".yml")
	}
	if err := c.normalize(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &c, nil
}

func durp(d time.Duration) *predictor.Duration { v := predictor.Duration(d); return &v }

func bad(key, format string, args ...any) error {
	return fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...))
}

// normalize fills defaults and checks every key.
func (c *Config) normalize() error {
	if c.Seed == 0 {
		c.Seed = DefaultSeed
	}
	if err := c.Port.normalize(c); err != nil {
		return err
	}
	if err := c.Agent.normalize(); err != nil {
		return err
	}
	if err := c.normalizePredictors(); err != nil {
		return err
	}
	if err := c.Traffic.normalize(); err != nil {
		return err
	}
	s := &c.Sim
	if s.Enabled == nil {
		t := true
		s.Enabled = &t
	}
	if s.MTU == 0 {
		s.MTU = DefaultSimMTU
	}
	if s.MTU < 64 || s.MTU > 65536 {
		return bad("sim.mtu", "must be in 64..65536 bytes, got %d", s.MTU)
	}
	if s.Phases == nil {
		n := DefaultSimPhases
		s.Phases = &n
	}
	if *s.Phases < 1 || *s.Phases > MaxSimPhases {
		return bad("sim.phases", "must be in 1..%d simulations, got %d", MaxSimPhases, *s.Phases)
	}
	if s.PathLatency == "" {
		s.PathLatency = PathLatencyMeasured
	}
	if s.PathLatency != PathLatencyMeasured {
		d, err := predictor.ParseDuration(s.PathLatency)
		if err != nil || d < 0 || d > MaxPathLatency {
			return bad("sim.path_latency", "want measured or a duration in [0, %v], got %q", MaxPathLatency, s.PathLatency)
		}
		c.pathLatency = d
	}
	if s.LPI == "" {
		s.LPI = c.Port.LPI
	}
	l, err := power.ParseLPI(s.LPI)
	if err != nil {
		return bad("sim.lpi", "%v", err)
	}
	s.LPI = string(l)
	return nil
}

// SimLPI is the symmetry of the simulator's runs.
func (c *Config) SimLPI() power.LPI { return power.LPI(c.Sim.LPI) }

// PortLPI is the symmetry of the emulated ports.
func (c *Config) PortLPI() power.LPI { return power.LPI(c.Port.LPI) }

func (p *PortConfig) normalize(c *Config) error {
	if p.Preset == "" {
		p.Preset = DefaultPreset
	}
	pre, err := power.Load(p.Preset)
	if err != nil {
		return bad("port.preset", "%v", err)
	}
	c.preset = pre
	if p.Mode == "" {
		p.Mode = string(DefaultMode)
	}
	m, err := power.ParseMode(p.Mode)
	if err != nil {
		return bad("port.mode", "%v", err)
	}
	if m == power.AlwaysOn {
		return bad("port.mode", "always-on never sleeps; the always-on run is made anyway: pick fast-wake, deep-sleep or hybrid")
	}
	if _, err := pre.State(m); err != nil {
		return bad("port.mode", "%v", err)
	}
	p.Mode, c.mode = string(m), m
	if p.Scale == 0 {
		p.Scale = DefaultScale
	}
	if !(p.Scale > 0) || p.Scale > MaxScale || math.IsInf(p.Scale, 0) {
		return bad("port.scale", "must be in (0, %d], got %v", MaxScale, p.Scale)
	}
	if p.Delay == "" {
		p.Delay = "auto"
	}
	p.Delay = strings.ToLower(p.Delay)
	if p.Delay != "auto" {
		if _, err := emulate.ParseDelay(p.Delay); err != nil {
			return bad("port.delay", "%v (or auto: edt where the kernel has fq, else spin)", err)
		}
	}
	if p.SpinMax == 0 {
		p.SpinMax = predictor.Duration(emulate.DefaultSpinMax)
	}
	if p.SpinMax.D() > 100*time.Millisecond {
		return bad("port.spin_max", "must be ≤ 100ms, got %v", p.SpinMax)
	}
	if p.Rate == "" {
		p.Rate = DefaultRate
	}
	if c.rate, err = emulate.ParseRate(p.Rate, pre.RateBps); err != nil {
		return bad("port.rate", "%v", err)
	}
	if p.Driver == "" {
		p.Driver = emulate.DefaultDriver
	}
	if _, known := eeectl.LookupDriver(p.Driver); !known {
		return bad("port.driver", "%q is not in lpictl's driver table (e.g. st_gmac, mvneta, tg3; docs/hwlink.md)", p.Driver)
	}
	if p.InitialPDT == nil {
		p.InitialPDT = durp(DefaultInitialPDT)
	}
	if p.HybridHold == nil {
		p.HybridHold = durp(10 * time.Microsecond)
	}
	// The preset's PHY decides by default (model §1.2), as for the
	// simulator's power.lpi and emulate attach --lpi preset.
	if p.LPI == "" || p.LPI == "preset" {
		p.LPI = string(pre.Symmetry())
	}
	l, err := power.ParseLPI(p.LPI)
	if err != nil {
		return bad("port.lpi", "%v", err)
	}
	p.LPI = string(l)
	ec := c.emulateConfig("probe0", emulate.ModeAlwaysOn, emulate.DelayNone)
	em, _ := emulate.ParseMode(p.Mode)
	ec.Mode = em
	if err := ec.Validate(); err != nil {
		return bad("port", "%v", err)
	}
	return nil
}

func (a *AgentConfig) normalize() error {
	if a.Interval == 0 {
		a.Interval = predictor.Duration(DefaultInterval)
	}
	if a.Interval.D() < time.Millisecond || a.Interval.D() > 10*time.Second {
		return bad("agent.interval", "must be in [1ms, 10s], got %v", a.Interval)
	}
	if a.Warmup == nil {
		a.Warmup = durp(0)
	}
	if a.MinChangeInterval == nil {
		a.MinChangeInterval = durp(0)
	}
	if a.Hysteresis == nil {
		// 0, not the agent's 0.25: a hysteresis keeps an early round's
		// t_PDT for seconds, so which value a ledger predictor settles on
		// turns on the rounds' phase and one run becomes one draw of a
		// bimodal outcome (docs/hil.md "What is compared").
		a.Hysteresis = new(float64)
	}
	if h := *a.Hysteresis; !(h >= 0 && h < 1) {
		return bad("agent.hysteresis", "must be a fraction in [0, 1) (0.25 = ±25 %%, 0 = none), got %v", h)
	}
	if a.LogLevel == "" {
		a.LogLevel = "info"
	}
	switch a.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return bad("agent.log_level", "unknown level %q (want debug, info, warn or error)", a.LogLevel)
	}
	return nil
}

func (c *Config) normalizePredictors() error {
	if c.Predictor.Kind != "" {
		return bad("predictor.kind", "comes from predictors (the list of runs); leave it out")
	}
	if len(c.Predictors) == 0 {
		c.Predictors = []predictor.Kind{predictor.KindPerfBoundCorrect}
	}
	if len(c.Predictors) > MaxPredictors {
		return bad("predictors", "at most %d, got %d", MaxPredictors, len(c.Predictors))
	}
	if c.Predictor.WakeTime == 0 {
		c.Predictor.WakeTime = predictor.Duration(c.ScaledWake())
	}
	if c.Predictor.SleepTime == 0 {
		c.Predictor.SleepTime = predictor.Duration(c.ScaledSleep())
	}
	if h := &c.Predictor.Hybrid; c.mode == power.Hybrid && h.DeepWakeTime == 0 {
		// Predictors that choose holds (docs/predictors.md "Hybrid
		// holds") budget both states' wake-ups: the emulated port's, scaled.
		*h = c.preset.Hybrid(c.Port.Scale)
	}
	if len(c.Predictor.Hops) == 0 {
		// Every path of the line is host–switch–host: a host's packets
		// cross 2 links, the switch's 1 — as the simulator counts them
		// per port (PerfBound's hop factor l = bound / 2 at a host, bound
		// at the switch; PredictorAt).
		c.Predictor.Hops = map[int]float64{LineHops: 1}
		c.hopsByRole = true
	}
	seen := map[predictor.Kind]bool{}
	for i, k := range c.Predictors {
		k = predictor.Kind(strings.ToLower(string(k)))
		c.Predictors[i] = k
		if seen[k] {
			return bad(fmt.Sprintf("predictors[%d]", i), "%s is listed twice", k)
		}
		seen[k] = true
		pc := c.PredictorFor(k)
		if err := pc.Validate(); err != nil {
			if k != predictor.KindFixed || c.Predictor.PDT != nil || !strings.Contains(err.Error(), "pdt") {
				return fmt.Errorf("predictors[%d] %s: %w", i, k, err)
			}
			return bad(fmt.Sprintf("predictors[%d]", i), "fixed needs predictor.pdt (e.g. pdt: 200us)")
		}
	}
	return nil
}

// PredictorAt is the configuration of predictor kind k's run on host
// role's ports: with predictor.hops unset, the switch's packets travel one
// hop from there.
func (c *Config) PredictorAt(k predictor.Kind, role string) predictor.Config {
	pc := c.PredictorFor(k)
	if c.hopsByRole && role == "s" {
		pc.Hops = map[int]float64{1: 1}
	}
	return pc
}

// roleOf is the host of an emulated port (s0, s1: the switch).
func roleOf(port string) string {
	for _, p := range LinePorts {
		if p.Dev == port {
			return p.Host
		}
	}
	return ""
}

// PredictorFor is the configuration of predictor kind k's run.
func (c *Config) PredictorFor(k predictor.Kind) predictor.Config {
	pc := c.Predictor
	if pc.Hops != nil {
		h := make(map[int]float64, len(pc.Hops))
		for k, v := range pc.Hops {
			h[k] = v
		}
		pc.Hops = h
	}
	pc.Kind = k
	return pc.WithDefaults()
}

func (t *TrafficConfig) normalize() error {
	if t.Duration == 0 {
		t.Duration = predictor.Duration(DefaultDuration)
	}
	if t.Duration.D() > MaxDuration {
		return bad("traffic.duration", "must be ≤ %v, got %v", MaxDuration, t.Duration)
	}
	if t.Settle == nil {
		t.Settle = durp(DefaultSettle)
	}
	if t.Settle.D() > 10*time.Second {
		return bad("traffic.settle", "must be ≤ 10s, got %v", t.Settle)
	}
	if len(t.Flows) == 0 {
		return bad("traffic.flows", "want at least one flow (kind probe, onoff, poisson, tcp or iperf3)")
	}
	if len(t.Flows) > MaxFlows {
		return bad("traffic.flows", "at most %d flows, got %d", MaxFlows, len(t.Flows))
	}
	probes := 0
	var total float64
	for i := range t.Flows {
		f := &t.Flows[i]
		key := fmt.Sprintf("traffic.flows[%d]", i)
		if err := f.normalize(key, t.Duration.D()); err != nil {
			return err
		}
		if f.Kind == KindProbe {
			probes++
		}
		total += float64(f.ExpectedPackets())
	}
	if probes == 0 {
		return bad("traffic.flows", "want a probe flow (kind: probe): the RTT figures come from it")
	}
	if total > MaxPackets {
		return bad("traffic.flows", "about %.0f datagrams per run, more than the %d allowed: lower rates, counts or durations", total, MaxPackets)
	}
	return nil
}

// uses lists which keys each kind reads (the others must be absent).
var uses = map[string][]string{
	KindProbe:   {"size", "interval", "spacing", "count", "timeout"},
	KindOnOff:   {"size", "interval", "on_time", "off_time", "count"},
	KindPoisson: {"size", "rate", "count"},
	KindTCP:     {"size", "bytes"},
	KindIperf3:  {"bytes"},
}

func (f *Flow) set() map[string]bool {
	return map[string]bool{
		"size": f.Size != 0, "interval": f.Interval != 0, "spacing": f.Spacing != "",
		"on_time": f.OnTime != 0, "off_time": f.OffTime != 0, "rate": f.Rate != 0,
		"count": f.Count != 0, "bytes": f.Bytes != 0, "timeout": f.Timeout != 0,
	}
}

func (f *Flow) normalize(key string, total time.Duration) error {
	f.Kind = strings.ToLower(f.Kind)
	used, ok := uses[f.Kind]
	if !ok {
		return bad(key+".kind", "unknown flow kind %q (want probe, onoff, poisson, tcp or iperf3)", f.Kind)
	}
	for k, isSet := range f.set() {
		if isSet && !contains(used, k) {
			return bad(key+"."+k, "not used by kind %s (it reads %s)", f.Kind, strings.Join(used, ", "))
		}
	}
	switch f.From {
	case "":
		f.From = "a"
	case "a", "b":
	default:
		return bad(key+".from", "want a or b, got %q", f.From)
	}
	if f.Start.D() >= total {
		return bad(key+".start", "must be before the end of the traffic (%v), got %v", total, f.Start)
	}
	if f.Duration == 0 {
		f.Duration = predictor.Duration(total - f.Start.D())
	}
	if f.Start.D()+f.Duration.D() > total {
		return bad(key+".duration", "start + duration must be ≤ traffic.duration (%v), got %v", total, f.Start.D()+f.Duration.D())
	}
	if f.Count < 0 || f.Count > MaxFlowPackets {
		return bad(key+".count", "must be in 0..%d (0: no cap but the duration), got %d", MaxFlowPackets, f.Count)
	}
	udpSize := func(def int) error {
		if f.Size == 0 {
			f.Size = def
		}
		if f.Size < MinUDPSize || f.Size > MaxUDPSize {
			return bad(key+".size", "UDP payload must be in %d..%d bytes, got %d", MinUDPSize, MaxUDPSize, f.Size)
		}
		return nil
	}
	switch f.Kind {
	case KindProbe:
		if err := udpSize(DefaultProbeSize); err != nil {
			return err
		}
		if f.Interval == 0 {
			f.Interval = predictor.Duration(2 * time.Millisecond)
		}
		if f.Interval.D() < 100*time.Microsecond {
			return bad(key+".interval", "must be ≥ 100µs, got %v", f.Interval)
		}
		if f.Spacing == "" {
			f.Spacing = "exponential"
		}
		if f.Spacing != "fixed" && f.Spacing != "exponential" {
			return bad(key+".spacing", "want fixed or exponential, got %q", f.Spacing)
		}
		if f.Timeout == 0 {
			f.Timeout = predictor.Duration(DefaultTimeout)
		}
		if f.Timeout.D() > time.Second {
			return bad(key+".timeout", "must be ≤ 1s, got %v", f.Timeout)
		}
	case KindOnOff:
		if err := udpSize(DefaultUDPSize); err != nil {
			return err
		}
		if f.Interval == 0 {
			f.Interval = predictor.Duration(100 * time.Microsecond)
		}
		if f.Interval.D() < MinInterval {
			return bad(key+".interval", "must be ≥ %v, got %v", MinInterval, f.Interval)
		}
		if f.OnTime == 0 {
			f.OnTime = predictor.Duration(2 * time.Millisecond)
		}
		if f.OffTime == 0 {
			f.OffTime = predictor.Duration(20 * time.Millisecond)
		}
	case KindPoisson:
		if err := udpSize(DefaultUDPSize); err != nil {
			return err
		}
		if f.Rate == 0 {
			f.Rate = 500
		}
		if !(f.Rate > 0) || f.Rate > MaxRate {
			return bad(key+".rate", "datagrams/s must be in (0, %d], got %v", MaxRate, f.Rate)
		}
	case KindTCP:
		if f.Size == 0 {
			f.Size = DefaultTCPChunk
		}
		if f.Size < 1 || f.Size > 1<<20 {
			return bad(key+".size", "TCP write size must be in 1..%d bytes, got %d", 1<<20, f.Size)
		}
		if f.Bytes == 0 {
			f.Bytes = DefaultTCPBytes
		}
		if f.Bytes < 1 || f.Bytes > MaxTCPBytes {
			return bad(key+".bytes", "must be in 1..%d, got %d", MaxTCPBytes, f.Bytes)
		}
	case KindIperf3:
		if f.Bytes < 0 || f.Bytes > MaxTCPBytes {
			return bad(key+".bytes", "must be in 0..%d (0: for the flow's duration), got %d", MaxTCPBytes, f.Bytes)
		}
	}
	if n := f.ExpectedPackets(); n > MaxFlowPackets && f.Count == 0 {
		return bad(key, "about %d datagrams in %v, more than %d: set count, or lower the rate", n, f.Duration, MaxFlowPackets)
	}
	return nil
}

// ExpectedPackets estimates the datagrams a UDP flow sends (its cap if it
// has one); 0 for TCP.
func (f *Flow) ExpectedPackets() int {
	d := f.Duration.D().Seconds()
	var n float64
	switch f.Kind {
	case KindProbe:
		n = 2 * d / f.Interval.D().Seconds()
	case KindOnOff:
		n = d * f.OnTime.D().Seconds() / (f.OnTime.D() + f.OffTime.D()).Seconds() / f.Interval.D().Seconds()
	case KindPoisson:
		n = d * f.Rate
	}
	if f.Count > 0 && float64(f.Count) < n {
		n = float64(f.Count)
		if f.Kind == KindProbe {
			n *= 2
		}
	}
	return int(math.Ceil(n))
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// Source names the file the configuration came from.
func (c *Config) Source() string { return c.source }

// PowerPreset is the resolved preset (unscaled).
func (c *Config) PowerPreset() *power.Preset { return c.preset }

// PowerMode is the low-power mode of the predictor runs.
func (c *Config) PowerMode() power.Mode { return c.mode }

// RateBps is the emulated serialisation rate (0: none).
func (c *Config) RateBps() uint64 { return c.rate }

// lowPower is the state the mode enters first.
func (c *Config) lowPower() *power.LowPower {
	s, _ := c.preset.State(c.mode)
	return s
}

// ScaledWake is t_w of the mode's state after the scale factor.
func (c *Config) ScaledWake() time.Duration {
	return time.Duration(math.Round(float64(c.lowPower().WakeTime) * c.Port.Scale))
}

// ScaledSleep is t_s of the mode's state after the scale factor.
func (c *Config) ScaledSleep() time.Duration {
	return time.Duration(math.Round(float64(c.lowPower().SleepTime) * c.Port.Scale))
}

// SimRateBps is the link rate of the simulated line: the emulated rate,
// or the preset's where the emulator does not serialise.
func (c *Config) SimRateBps() float64 {
	if c.rate > 0 {
		return float64(c.rate)
	}
	return c.preset.RateBps
}

// emulateConfig is the emulator of one port.
func (c *Config) emulateConfig(ifname string, mode emulate.Mode, delay emulate.Delay) emulate.Config {
	pdt := c.Port.InitialPDT.D()
	return emulate.Config{
		Interface: ifname, Preset: hwbackend.EmulatedPreset(c.preset), Mode: mode, PDT: &pdt,
		HybridHold: c.Port.HybridHold.D(), Rate: c.rate, Delay: delay, SpinMax: c.Port.SpinMax.D(),
		Scale: c.Port.Scale, Driver: c.Port.Driver,
	}
}
