package scenario

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/lpictl/lpictl/configs"
	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/eee"
	"github.com/lpictl/lpictl/sim/engine"
	"github.com/lpictl/lpictl/sim/network"
	"github.com/lpictl/lpictl/sim/power"
	"github.com/lpictl/lpictl/sim/tcep"
	"github.com/lpictl/lpictl/sim/topo"
	"github.com/lpictl/lpictl/sim/workload"
	"github.com/lpictl/lpictl/sim/workload/apps"
	_ "github.com/lpictl/lpictl/sim/workload/traces" // workload kinds ti and goal
)

// DefaultFile is the shipped scenario used when none is given.
const DefaultFile = "sim/megafly-4160.yaml"

// Scenario is a simulator scenario file (docs/scenario.md). A key left out
// takes its default; an explicit 0 is refused unless 0 is one of the key's
// values (ZeroKeys, checkZeros), so a zero field after loading is a key
// left out, except for ZeroKeys' (pointers where the default is not 0).
type Scenario struct {
	Name       string            `yaml:"name" json:"name"`
	Seed       uint64            `yaml:"seed" json:"seed"`
	Topology   topo.Config       `yaml:"topology" json:"topology"`
	Network    Network           `yaml:"network" json:"network"`
	Routing    Routing           `yaml:"routing" json:"routing,omitzero"`
	Power      Power             `yaml:"power" json:"power"`
	Predictor  predictor.Config  `yaml:"predictor" json:"predictor"`
	Controller controller.Config `yaml:"controller" json:"controller"`
	Workload   workload.Config   `yaml:"workload" json:"workload"`
	Engine     Engine            `yaml:"engine" json:"engine"`
	Output     Output            `yaml:"output" json:"output"`

	// source names the scenario's file in errors found after parsing
	// (docs/scenario.md: every config error names the file and the key).
	source string
	// deadlockProne (tests only) lets a configuration that can deadlock
	// by construction through Build, to test how a deadlock is reported.
	deadlockProne bool
}

// named prefixes a configuration error with the scenario's file.
func (s *Scenario) named(err error) error {
	if err == nil || s.source == "" {
		return err
	}
	return fmt.Errorf("%s: %w", s.source, err)
}

// Network holds the link and switch parameters (docs/model.md §3, Table 6).
type Network struct {
	LinkRate      float64             `yaml:"link_rate" json:"link_rate"` // bit/s; 0: the preset's rate
	MTU           int64               `yaml:"mtu" json:"mtu"`
	Propagation   *predictor.Duration `yaml:"propagation" json:"propagation"`
	SwitchLatency *predictor.Duration `yaml:"switch_latency" json:"switch_latency"`
	NICLatency    *predictor.Duration `yaml:"nic_latency" json:"nic_latency"`
	QueueSize     int64               `yaml:"queue_size" json:"queue_size"`
	PFCGo         *int64              `yaml:"pfc_go" json:"pfc_go"`
	PFCStop       int64               `yaml:"pfc_stop" json:"pfc_stop"`
	Speedup       float64             `yaml:"speedup" json:"speedup"`
	ControlBytes  int64               `yaml:"control_bytes" json:"control_bytes"`
}

// Power selects the preset and the low-power mode (docs/model.md §1).
type Power struct {
	Preset     string              `yaml:"preset" json:"preset"`
	Mode       string              `yaml:"mode" json:"mode"`
	HybridHold *predictor.Duration `yaml:"hybrid_hold" json:"hybrid_hold"`
	// LPI overrides the preset's symmetry (model §1.2): per-link or
	// per-direction; empty: the preset's.
	LPI string `yaml:"lpi" json:"lpi,omitempty"`
	// EndToEnd makes the bound hold for the application rather than per
	// port (docs/predictors.md "End-to-end bound").
	EndToEnd EndToEnd `yaml:"end_to_end" json:"end_to_end,omitzero"`
	// Consolidation turns links off at the network level above the
	// per-port controllers (docs/scenario.md "power.consolidation").
	Consolidation Consolidation `yaml:"consolidation" json:"consolidation,omitzero"`
}

// Consolidation is power.consolidation: kind tcep (paper 004, with PAL
// routing; HyperX and fbfly only) or none (default); unset keys take
// tcep.DefaultConfig's values.
type Consolidation struct {
	Kind              string              `yaml:"kind" json:"kind,omitempty"`
	Hwm               *float64            `yaml:"hwm" json:"hwm,omitempty"`
	ActivationEpoch   *predictor.Duration `yaml:"activation_epoch" json:"activation_epoch,omitempty"`
	DeactivationEpoch *predictor.Duration `yaml:"deactivation_epoch" json:"deactivation_epoch,omitempty"`
	// IndirectActivation: false turns indirect activation off (an
	// ablation); unset or true keeps it, as the paper does.
	IndirectActivation *bool `yaml:"indirect_activation" json:"indirect_activation,omitempty"`
	// Window: how much traffic a utilisation reading covers (longer than
	// the activation epoch: an exponentially weighted average over it).
	Window *predictor.Duration `yaml:"window" json:"window,omitempty"`
	// Warmup: the consolidation report's link counts start here.
	Warmup *predictor.Duration `yaml:"warmup" json:"warmup,omitempty"`
	// ControlPackets: requests and answers as packets (default false:
	// fixed delays).
	ControlPackets *bool `yaml:"control_packets" json:"control_packets,omitempty"`
	// InnerMin: Algorithm 1's boundary first tested with 2 inner links
	// (as printed, default) or 1.
	InnerMin *int `yaml:"inner_min" json:"inner_min,omitempty"`
}

// check validates the section against the topology kind (one-line errors
// naming the keys).
func (c *Consolidation) check(topoKind string) error {
	c.Kind = strings.ToLower(strings.TrimSpace(c.Kind))
	switch c.Kind {
	case "", "none":
		for _, k := range []struct {
			name string
			set  bool
		}{{"hwm", c.Hwm != nil}, {"activation_epoch", c.ActivationEpoch != nil}, {"deactivation_epoch", c.DeactivationEpoch != nil}, {"indirect_activation", c.IndirectActivation != nil},
			{"window", c.Window != nil}, {"warmup", c.Warmup != nil}, {"control_packets", c.ControlPackets != nil},
			{"inner_min", c.InnerMin != nil}} {
			if k.set {
				return fmt.Errorf("power.consolidation.%s: used only with power.consolidation.kind tcep", k.name)
			}
		}
		return nil
	case "tcep":
	default:
		return fmt.Errorf("power.consolidation.kind: unknown kind %q (want none or tcep)", c.Kind)
	}
	if topoKind != topo.KindHyperX && topoKind != topo.KindFBFly {
		return fmt.Errorf("power.consolidation.kind: tcep needs topology.kind hyperx or fbfly (fully connected subnetworks), not %s", topoKind)
	}
	return c.params().Config.Validate()
}

// params resolves the section over tcep.DefaultConfig.
func (c *Consolidation) params() network.TCEP {
	t := network.TCEP{Enabled: c.Kind == "tcep", Config: tcep.DefaultConfig()}
	if c.Hwm != nil {
		t.Hwm = *c.Hwm
	}
	if c.ActivationEpoch != nil {
		t.ActivationEpoch = ps(*c.ActivationEpoch)
	}
	if c.DeactivationEpoch != nil {
		t.DeactivationEpoch = ps(*c.DeactivationEpoch)
	}
	t.NoIndirect = c.IndirectActivation != nil && !*c.IndirectActivation
	if c.Window != nil {
		t.Window = ps(*c.Window)
	}
	if c.Warmup != nil {
		t.Warmup = ps(*c.Warmup)
	}
	t.ControlPackets = c.ControlPackets != nil && *c.ControlPackets
	if c.InnerMin != nil {
		t.InnerMin = *c.InnerMin
	}
	return t
}

// EndToEnd is the end-to-end bound's configuration (network.EndToEnd).
type EndToEnd struct {
	Enabled bool `yaml:"enabled" json:"enabled"`
	// Bound is the tolerated execution-time overhead; 0 = predictor.bound.
	Bound float64 `yaml:"bound" json:"bound"`
	// Headroom is the stall kept in reserve; unset = one wake-up cycle.
	Headroom *predictor.Duration `yaml:"headroom" json:"headroom"`
}

// Routing selects how switches route packets (docs/scenario.md "routing").
type Routing struct {
	// Kind is minimal (default: the topology's deterministic minimal
	// routing), ecmp (each message hashed onto one of the equal-cost
	// minimal paths) or powar (paper 002's power-aware selection among
	// them, fat trees and the Megafly).
	Kind string `yaml:"kind" json:"kind,omitempty"`
	// POWAR tunes routing.kind: powar and the powar_model summary block.
	POWAR RoutingPOWAR `yaml:"powar" json:"powar,omitzero"`
}

// RoutingPOWAR is the routing.powar section (network.POWAR); unset keys
// take the defaults of network.DefaultPOWAR.
type RoutingPOWAR struct {
	TOn     *float64            `yaml:"t_on" json:"t_on,omitempty"`
	TOff    *float64            `yaml:"t_off" json:"t_off,omitempty"`
	Cycle   *predictor.Duration `yaml:"cycle" json:"cycle,omitempty"`
	FirstOn bool                `yaml:"first_on" json:"first_on,omitempty"`
	// RoundRobin: the paper's power-oblivious Round-Robin selection
	// (network.POWAR.RoundRobin).
	RoundRobin bool `yaml:"round_robin" json:"round_robin,omitempty"`
	// Alonso: the paper's Alonso configuration (network.POWAR.Alonso).
	Alonso bool `yaml:"alonso" json:"alonso,omitempty"`
	// InitialSelectable: the selectable count switches start with; unset:
	// every port (network.POWAR.Initial).
	InitialSelectable *int `yaml:"initial_selectable" json:"initial_selectable,omitempty"`
	// Queue: with no free selectable port, queue at once instead of the
	// paper's wait and retry (network.POWAR.Queue).
	Queue bool `yaml:"queue" json:"queue,omitempty"`
	// Retry: the retry period of a waiting packet (network.POWAR.Retry); unset,
	// a waiting packet is retried when a retry can succeed.
	Retry *predictor.Duration `yaml:"retry" json:"retry,omitempty"`
	// TorusWait: the wait on a torus3d too (network.POWAR.TorusWait).
	TorusWait bool `yaml:"torus_wait" json:"torus_wait,omitempty"`
	// NonMinimal: Megafly only, non-minimal candidates (network.POWAR).
	NonMinimal bool `yaml:"non_minimal" json:"non_minimal,omitempty"`
	// TorusAdaptive: torus3d only, P spans every minimal aggregate
	// (network.POWAR.TorusAdaptive).
	TorusAdaptive bool       `yaml:"torus_adaptive" json:"torus_adaptive,omitempty"`
	Model         POWARModel `yaml:"model" json:"model,omitzero"`
}

// POWARModel is routing.powar.model: paper 002's power model (Table 2)
// and whether runs of any routing report it.
type POWARModel struct {
	Report     bool     `yaml:"report" json:"report,omitempty"`
	SleepPort  *float64 `yaml:"sleep_port" json:"sleep_port,omitempty"`
	Ports      *float64 `yaml:"ports" json:"ports,omitempty"`
	Net        *float64 `yaml:"net" json:"net,omitempty"`
	SleepNodes *float64 `yaml:"sleep_nodes" json:"sleep_nodes,omitempty"`
}

// check refuses routing.powar keys that routing kind rk does not use and
// POWAR on a topology kind it does not support (one-line errors naming
// the keys).
func (r *RoutingPOWAR) check(rk network.Routing, topoKind string) error {
	if rk != network.RoutingPOWAR {
		for _, k := range []struct {
			name string
			set  bool
		}{{"t_on", r.TOn != nil}, {"t_off", r.TOff != nil}, {"cycle", r.Cycle != nil}, {"first_on", r.FirstOn}, {"non_minimal", r.NonMinimal}, {"torus_adaptive", r.TorusAdaptive},
			{"round_robin", r.RoundRobin}, {"alonso", r.Alonso}, {"initial_selectable", r.InitialSelectable != nil}, {"queue", r.Queue}, {"retry", r.Retry != nil}, {"torus_wait", r.TorusWait}} {
			if k.set {
				return fmt.Errorf("routing.powar.%s: used only with routing.kind powar (routing.kind is %s)", k.name, rk)
			}
		}
		return nil
	}
	if r.NonMinimal && topoKind != topo.KindMegafly {
		return fmt.Errorf("routing.powar.non_minimal: only the megafly has non-minimal paths (topology.kind is %s)", topoKind)
	}
	if r.RoundRobin && (topoKind == topo.KindTorus3D || r.NonMinimal) {
		return fmt.Errorf("routing.powar.round_robin: fat trees and the megafly's minimal paths only (topology.kind is %s)", topoKind)
	}
	if r.Alonso && topoKind != topo.KindFatTree && topoKind != topo.KindRLFT {
		return fmt.Errorf("routing.powar.alonso: fat trees only (topology.kind is %s)", topoKind)
	}
	if r.TorusWait && topoKind != topo.KindTorus3D {
		return fmt.Errorf("routing.powar.torus_wait: only for topology.kind torus3d (topology.kind is %s)", topoKind)
	}
	if r.TorusAdaptive && topoKind != topo.KindTorus3D {
		return fmt.Errorf("routing.powar.torus_adaptive: only for topology.kind torus3d (topology.kind is %s)", topoKind)
	}
	switch topoKind {
	case topo.KindFatTree, topo.KindRLFT, topo.KindMegafly, topo.KindTorus3D:
		return nil
	}
	return fmt.Errorf("routing.kind: powar needs topology.kind fattree, rlft, megafly (adaptive up ports) or torus3d (aggregated links), not %s", topoKind)
}

// params resolves the section over network.DefaultPOWAR.
func (r *RoutingPOWAR) params() network.POWAR {
	c := network.DefaultPOWAR()
	set := func(dst *float64, v *float64) {
		if v != nil {
			*dst = *v
		}
	}
	set(&c.Thresholds.On, r.TOn)
	set(&c.Thresholds.Off, r.TOff)
	if r.Cycle != nil {
		c.Cycle = ps(*r.Cycle)
	}
	c.FirstOn = r.FirstOn
	c.RoundRobin = r.RoundRobin
	c.Alonso = r.Alonso
	if r.InitialSelectable != nil {
		c.Initial = *r.InitialSelectable
	}
	c.Queue = r.Queue
	c.TorusWait = r.TorusWait
	if r.Retry != nil {
		c.Retry = ps(*r.Retry)
	}
	c.NonMinimal = r.NonMinimal
	c.TorusAdaptive = r.TorusAdaptive
	m := r.Model
	c.Report = m.Report
	set(&c.Model.SleepPort, m.SleepPort)
	set(&c.Model.Ports, m.Ports)
	set(&c.Model.Net, m.Net)
	set(&c.Model.SleepNodes, m.SleepNodes)
	return c
}

// Engine selects the event queue.
type Engine struct {
	Queue            string `yaml:"queue" json:"queue"`
	CalendarBucketPS int64  `yaml:"calendar_bucket_ps" json:"calendar_bucket_ps"`
	CalendarBuckets  int    `yaml:"calendar_buckets" json:"calendar_buckets"`
	// Threads runs the network on this many goroutines (0, 1: one), with
	// the same results (docs/simulator.md "Parallel runs").
	Threads int `yaml:"threads" json:"threads"`
}

// Output tunes the reports.
type Output struct {
	IdleHistBins int `yaml:"idle_hist_bins" json:"idle_hist_bins"`
	// IdleHistPort gives one port (its index in ports.csv; nodes' NICs are
	// 0…nodes−1) its own rows in idle_hist.csv and idle_log.csv.
	IdleHistPort *int `yaml:"idle_hist_port" json:"idle_hist_port"`
}

// Defaults not given by the preset (docs/model.md §3 Table 6 and "ours").
const (
	DefaultMTU          = 9600
	DefaultPropagation  = 10 * time.Nanosecond
	DefaultSwitchLat    = 100 * time.Nanosecond
	DefaultNICLat       = 100 * time.Nanosecond
	DefaultQueueSize    = 49152
	DefaultPFCGo        = 3200
	DefaultPFCStop      = 37900
	DefaultSpeedup      = 2.44
	DefaultControlBytes = 64
	DefaultMode         = power.DeepSleep
	DefaultHybridHold   = 10 * time.Microsecond
	DefaultIdleBins     = 50
	DefaultSeed         = 1
)

// Load reads a scenario file (empty path: the shipped default) with the
// LPICTL_SCENARIO_* environment (a key in upper case, _ for .) and the
// --set overrides over it. Errors name the file and the key; all are bad
// input (configs.InputError).
func Load(path string, sets []string) (*Scenario, error) {
	data, name, err := configs.Read(path, DefaultFile)
	if err != nil {
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			err = fmt.Errorf("scenario: %w", err)
		}
		return nil, configs.BadInput(err)
	}
	s, err := load(configs.LoadOptions{Data: data, Name: name, EnvPrefix: configs.EnvScenario, EnvExample: "power.mode", Sets: sets}, false)
	if err != nil {
		return nil, err
	}
	if path != "" {
		s.Workload.Resolve(filepath.Dir(path))
	}
	return s, nil
}

// Parse decodes a scenario, applies overrides, fills defaults and checks
// it. Its errors are bad input (configs.InputError).
func Parse(data []byte, name string, sets []string) (*Scenario, error) {
	return load(configs.LoadOptions{Data: data, Name: name, Sets: sets}, false)
}

// ParseResolved decodes a scenario lpictl wrote itself from a resolved one
// (a sweep's scenario.json, the HIL check's scenario), in which a key the
// user left unset is written as 0: there a 0 is an unset key, not an
// explicit zero (ZeroKeys).
func ParseResolved(data []byte, name string) (*Scenario, error) {
	return load(configs.LoadOptions{Data: data, Name: name}, true)
}

func load(opts configs.LoadOptions, resolved bool) (*Scenario, error) {
	var s Scenario
	l, err := configs.Load(opts, &s)
	if err != nil {
		return nil, configs.BadInput(oneLine(err))
	}
	s.source = opts.Name
	if !resolved {
		if key, err := checkZeros(l.Doc); err != nil {
			// Named by where the 0 came from: the file, a variable, --set.
			if src := l.Source(key); src != opts.Name && src != "--set" {
				return nil, configs.BadInput(fmt.Errorf("%s: %w", src, err))
			}
			return nil, configs.BadInput(s.named(err))
		}
	}
	if err := s.normalize(); err != nil {
		return nil, configs.BadInput(s.named(err))
	}
	if s.Name == "" {
		s.Name = strings.TrimSuffix(strings.TrimSuffix(baseName(opts.Name), ".yaml"), ".yml")
	}
	return &s, nil
}

// oneLine keeps an error on one line (a --set key may hold a line break).
func oneLine(err error) error {
	msg := err.Error()
	if !strings.ContainsAny(msg, "\r\n") {
		return err
	}
	return errors.New(strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(msg))
}

func baseName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

func dur(d time.Duration) *predictor.Duration { v := predictor.Duration(d); return &v }

// normalize fills defaults and validates what can be checked without
// building (Build checks the rest).
func (s *Scenario) normalize() error {
	if s.Seed == 0 {
		s.Seed = DefaultSeed
	}
	n := &s.Network
	if n.LinkRate < 0 || math.IsNaN(n.LinkRate) || math.IsInf(n.LinkRate, 0) {
		return fmt.Errorf("network.link_rate: must be > 0 bit/s (left out: the preset's rate), got %v", n.LinkRate)
	}
	for _, f := range []struct {
		name string
		v    *int64
		def  int64
	}{{"mtu", &n.MTU, DefaultMTU}, {"queue_size", &n.QueueSize, DefaultQueueSize}, {"pfc_stop", &n.PFCStop, DefaultPFCStop}, {"control_bytes", &n.ControlBytes, DefaultControlBytes}} {
		if *f.v < 0 {
			return fmt.Errorf("network.%s: must be > 0 bytes, got %d", f.name, *f.v)
		}
		if *f.v > math.MaxInt32 {
			return fmt.Errorf("network.%s: %d bytes is too large", f.name, *f.v)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	if n.PFCGo == nil {
		v := int64(DefaultPFCGo)
		n.PFCGo = &v
	}
	if *n.PFCGo < 0 || *n.PFCGo > math.MaxInt32 {
		return fmt.Errorf("network.pfc_go: must be ≥ 0 bytes, got %d", *n.PFCGo)
	}
	if n.Speedup == 0 {
		n.Speedup = DefaultSpeedup
	}
	if !(n.Speedup >= 1) || math.IsInf(n.Speedup, 0) {
		return fmt.Errorf("network.speedup: must be ≥ 1, got %v", n.Speedup)
	}
	if n.Propagation == nil {
		n.Propagation = dur(DefaultPropagation)
	}
	if n.SwitchLatency == nil {
		n.SwitchLatency = dur(DefaultSwitchLat)
	}
	if n.NICLatency == nil {
		n.NICLatency = dur(DefaultNICLat)
	}
	p := &s.Power
	if p.Preset == "" {
		p.Preset = power.DefaultPreset
	}
	if p.Mode == "" {
		p.Mode = string(DefaultMode)
	}
	m, err := power.ParseMode(p.Mode)
	if err != nil {
		return fmt.Errorf("power.mode: %w", err)
	}
	p.Mode = string(m)
	if p.HybridHold == nil {
		p.HybridHold = dur(DefaultHybridHold)
	}
	if p.LPI != "" {
		l, err := power.ParseLPI(p.LPI)
		if err != nil {
			return fmt.Errorf("power.lpi: %w", err)
		}
		p.LPI = string(l)
	}
	w := &s.Workload
	if w.Kind == "" && len(w.Jobs) == 0 {
		w.Kind = apps.KindSynthetic
	}
	if err := w.Validate(); err != nil {
		return err
	}
	if e := &s.Engine; e.Queue == "" {
		e.Queue = string(engine.QueueHeap)
	}
	if s.Engine.CalendarBucketPS < 0 || s.Engine.CalendarBuckets < 0 || s.Engine.CalendarBuckets > 1<<24 {
		return errors.New("engine.calendar_bucket_ps, calendar_buckets: must be > 0 (left out: derived), buckets ≤ 2^24")
	}
	if s.Engine.Threads < 0 || s.Engine.Threads > engine.MaxParts {
		return fmt.Errorf("engine.threads: must be in 0..%d, got %d", engine.MaxParts, s.Engine.Threads)
	}
	if s.Output.IdleHistBins == 0 {
		s.Output.IdleHistBins = DefaultIdleBins
	}
	if s.Output.IdleHistBins < 0 || s.Output.IdleHistBins > 100000 {
		return fmt.Errorf("output.idle_hist_bins: must be in 1..100000, got %d", s.Output.IdleHistBins)
	}
	if p := s.Output.IdleHistPort; p != nil && *p < 0 {
		return fmt.Errorf("output.idle_hist_port: must be a port index ≥ 0, got %d", *p)
	}
	s.Routing.Kind = strings.ToLower(strings.TrimSpace(s.Routing.Kind))
	rk, err := network.ParseRouting(s.Routing.Kind)
	if err != nil {
		return fmt.Errorf("routing.kind: %w", err)
	}
	tc, err := s.Topology.Normalized()
	if err != nil {
		return err
	}
	s.Topology = tc
	if err := s.Routing.POWAR.check(rk, tc.Kind); err != nil {
		return err
	}
	if err := s.Power.Consolidation.check(tc.Kind); err != nil {
		return err
	}
	if rk == network.RoutingUGAL && tc.Kind != topo.KindHyperX && tc.Kind != topo.KindFBFly {
		return fmt.Errorf("routing.kind: ugal needs topology.kind hyperx or fbfly (fully connected dimensions), not %s", tc.Kind)
	}
	if s.Power.Consolidation.Kind == "tcep" && rk != network.RoutingMinimal {
		return fmt.Errorf("power.consolidation.kind: tcep routes with PAL and needs routing.kind minimal, not %s", rk)
	}
	return nil
}

// Built is a scenario turned into model inputs.
type Built struct {
	Topology topo.Topology
	Preset   *power.Preset
	Params   network.Params
	// Workload is the built workload: the network replays it.
	Workload *workload.Workload
	scenario *Scenario // what it was built from (errors name its file)
}

func ps(d predictor.Duration) int64 { return int64(d) * 1000 }

// Build resolves the preset, builds the topology and the model parameters.
// Errors in the configuration name the scenario's file and the key; errors
// of a workload's own files (a trace) name those files. All are bad input
// (configs.InputError).
func (s *Scenario) Build() (*Built, error) {
	b, err := s.build()
	return b, configs.BadInput(err)
}

func (s *Scenario) build() (*Built, error) {
	cfgErr := s.named
	pre, err := power.Load(s.Power.Preset)
	if err != nil {
		return nil, cfgErr(fmt.Errorf("power.preset: %w", err))
	}
	if s.Power.Consolidation.Kind == "tcep" && pre.Off == nil {
		return nil, cfgErr(fmt.Errorf("power.preset: %s has no off state (off: power_w, wake_time, source), which power.consolidation.kind tcep needs to switch links off", pre.Name))
	}
	mode := power.Mode(s.Power.Mode)
	if _, err := pre.State(mode); err != nil {
		return nil, cfgErr(fmt.Errorf("power.mode: %w", err))
	}
	em, err := eee.ModeFor(mode)
	if err != nil {
		return nil, cfgErr(fmt.Errorf("power.mode: %w", err))
	}
	lpi := pre.Symmetry()
	if s.Power.LPI != "" {
		lpi = power.LPI(s.Power.LPI)
	}
	if err := s.deadlockFree(); err != nil {
		return nil, cfgErr(err)
	}
	t, err := topo.Build(s.Topology)
	if err != nil {
		return nil, cfgErr(err)
	}
	n := s.Network
	rate := n.LinkRate
	if rate == 0 {
		rate = pre.RateBps
	}
	p := network.Params{
		RateBps: rate, MTU: int32(n.MTU),
		Propagation: ps(*n.Propagation), SwitchLatency: ps(*n.SwitchLatency), NICLatency: ps(*n.NICLatency),
		QueueBytes: int32(n.QueueSize), PFCGo: int32(*n.PFCGo), PFCStop: int32(n.PFCStop),
		Speedup: n.Speedup, ControlBytes: int32(n.ControlBytes),
		EEE: eee.Params{Mode: em, HybridHold: ps(*s.Power.HybridHold)},
		Power: network.Power{
			SwitchW:  pre.System.SwitchW,
			NodeMinW: pre.System.NodeMinW, NodeMaxW: pre.System.NodeMaxW,
		},
		Controller:       s.Controller,
		Queue:            engine.QueueKind(s.Engine.Queue),
		CalendarBucketPS: s.Engine.CalendarBucketPS,
		CalendarBuckets:  s.Engine.CalendarBuckets,
		Threads:          s.Engine.Threads,
	}
	if lpi == power.PerDirection {
		p.EEE.LPI = eee.PerDirection
	}
	p.Routing, _ = network.ParseRouting(s.Routing.Kind) // normalize checked it
	p.POWAR = s.Routing.POWAR.params()
	p.TCEP = s.Power.Consolidation.params()
	p.Seed = s.Seed
	p.Power.WakeW = pre.WakePowerW
	p.Power.IdleFraction = pre.IdleFraction()
	if o := pre.Off; o != nil {
		p.Power.OffW, p.EEE.WakeOff = o.PowerW, ps(o.WakeTime)
	}
	if fw := pre.FastWake; fw != nil {
		p.EEE.SleepFW, p.EEE.WakeFW = ps(fw.SleepTime), ps(fw.WakeTime)
		p.Power.FastWakeW = fw.Power(pre.WakePowerW)
	}
	if ds := pre.DeepSleep; ds != nil {
		p.EEE.SleepDS, p.EEE.WakeDS = ps(ds.SleepTime), ps(ds.WakeTime)
		p.Power.DeepSleepW = ds.Power(pre.WakePowerW)
	}
	p.Predictor = s.Predictor
	if p.Predictor.WakeTime == 0 {
		p.Predictor.WakeTime = predictor.Duration(pre.WakeTime(mode))
	}
	if st, err := pre.State(mode); err == nil && st != nil && p.Predictor.SleepTime == 0 {
		p.Predictor.SleepTime = st.SleepTime // t_s of the state the mode enters first
	}
	if h := &p.Predictor.Hybrid; mode == power.Hybrid && h.DeepWakeTime == 0 {
		// The predictor chooses the hold from both states' wake costs and
		// powers (docs/predictors.md "Hybrid holds").
		*h = pre.Hybrid(1)
	}
	if e := s.Power.EndToEnd; e.Enabled && mode != power.AlwaysOn {
		p.EndToEnd.Bound = e.Bound
		if e.Bound == 0 {
			p.EndToEnd.Bound = p.Predictor.WithDefaults().Bound
		}
		if e.Headroom != nil {
			if *e.Headroom <= 0 {
				return nil, cfgErr(errors.New("power.end_to_end.headroom: must be > 0 (unset = one wake-up cycle)"))
			}
			p.EndToEnd.Headroom = ps(*e.Headroom)
		}
	}
	if mode != power.AlwaysOn {
		pc := p.Predictor.WithDefaults()
		if err := pc.Validate(); err != nil {
			return nil, cfgErr(err)
		}
		if err := s.Controller.WithDefaults().Validate(); err != nil {
			return nil, cfgErr(err)
		}
	}
	if err := p.Validate(); err != nil {
		return nil, cfgErr(err)
	}
	if err := s.checkRanks(t.Nodes()); err != nil {
		return nil, cfgErr(err)
	}
	wl, err := workload.Build(s.Workload, t.Nodes(), s.Seed)
	if err != nil {
		return nil, err // it names the workload's files
	}
	return &Built{Topology: t, Preset: pre, Params: p, Workload: wl, scenario: s}, nil
}

// checkRanks refuses more ranks than nodes before anything is generated.
func (s *Scenario) checkRanks(nodes int) error {
	ranks := s.Workload.Ranks
	for _, j := range s.Workload.Jobs {
		ranks += j.Ranks
	}
	if k := max(1, s.Workload.RanksPerNode); ranks > nodes*k {
		return fmt.Errorf("workload.ranks: %d ranks do not fit on %d nodes (%d per node: workload.ranks_per_node)", ranks, nodes, k)
	}
	return nil
}

// deadlockFree refuses the configurations whose routing can deadlock by
// construction: PFC pauses links, and a routing whose channel dependency
// graph has a cycle can fill it and stop for good (docs/simulator.md
// "Deadlocks"). A channel is a link direction in a traffic class: there
// are two classes where the routing carries classes (PAL's, and the hop
// classes of network.HopClasses: a torus3d with topology.dateline, the
// dragonfly, ECMP on a HyperX of two dimensions), one otherwise. The error names the keys.
func (s *Scenario) deadlockFree() error {
	if s.deadlockProne {
		return nil
	}
	tc := s.Topology
	rk, _ := network.ParseRouting(s.Routing.Kind) // normalize checked it
	ring := 0
	for _, k := range tc.Dims {
		ring = max(ring, k)
	}
	switch tc.Kind {
	case topo.KindTorus3D:
		if rk == network.RoutingPOWAR && s.Routing.POWAR.TorusAdaptive {
			// Fully adaptive minimal routing on a torus needs an adaptive
			// class beside the dateline's two escape classes (Duato); with
			// two classes the turns between dimensions close cycles.
			return errors.New("routing.powar.torus_adaptive: mixes dimension orders, which can deadlock: a torus's two traffic classes are the dateline's, for dimension order (fully adaptive routing needs a third, adaptive class); leave it false")
		}
		if tc.Dateline {
			return nil // deadlock-free under DOR, ECMP and POWAR (docs/topologies.md)
		}
		if ring >= 4 {
			return fmt.Errorf("topology.dateline: a torus3d whose rings have 4 or more switches (topology.dims %v) can deadlock without a dateline: the routes around each ring's wrap-around link form a cycle of channel dependencies; set topology.dateline: true (two traffic classes, any topology.trunk), or dims of at most 3", tc.Dims)
		}
		if rk == network.RoutingECMP {
			return errors.New("routing.kind: ecmp on a torus3d without topology.dateline mixes dimension orders with one traffic class and can deadlock; use minimal, or topology.dateline: true (ECMP then keeps dimension order)")
		}
	case topo.KindHyperX, topo.KindFBFly:
		dims := 0
		for _, k := range tc.Dims {
			if k > 1 {
				dims++
			}
		}
		if rk == network.RoutingECMP && dims > 2 {
			// Two dimensions: class 1 on the last hop (topo.HyperX.HopClass).
			return fmt.Errorf("routing.kind: ecmp on a %s of %d dimensions mixes dimension orders and can deadlock: two traffic classes make it deadlock-free on at most 2 dimensions (class 1 on the last hop); use minimal (dimension order) or power.consolidation.kind tcep (PAL)", tc.Kind, dims)
		}
	}
	return nil
}
