package agent

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"path"
	"reflect"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/lpictl/lpictl/configs"
	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/predictor"
)

// Mode says whether the agent changes anything.
type Mode string

// Modes.
const (
	// Observe decides and exports what would be applied; changes nothing.
	Observe Mode = "observe"
	// Enforce applies decisions to the ports.
	Enforce Mode = "enforce"
)

// Backend names.
const (
	BackendHW  = "hw"
	BackendSim = "sim"
)

// Defaults of the agent (ours; docs/agent.md lists them).
const (
	DefaultInterval = 100 * time.Millisecond
	// MaxInterval bounds interval: a controller consulted less often
	// leaves its port on a stale t_PDT (the idle periods change within
	// seconds), and its ledger settles over intervals.
	MaxInterval              = time.Minute
	DefaultListen            = "127.0.0.1:9720"
	DefaultStateDir          = "/var/lib/lpictl"
	DefaultHysteresis        = 0.25
	DefaultMinChangeInterval = 5 * time.Minute
	DefaultFlapWindow        = 10 * time.Second
	DefaultBackoffInitial    = 10 * time.Minute
	DefaultBackoffMax        = 6 * time.Hour
	DefaultQuarantineAfter   = 3
	DefaultFlapReset         = 24 * time.Hour
	DefaultRescanInterval    = 30 * time.Second
	DefaultEEERefresh        = 10 * time.Second
	DefaultPollInterval      = 10 * time.Millisecond
	DefaultWarmup            = time.Minute
	DefaultHarmWindow        = 30 * time.Second
	DefaultHarmErrors        = 10
	// DefaultBPFFS is where `lpictl emulate attach` pins emulated ports
	// (emulate.DefaultBPFFS).
	DefaultBPFFS = "/sys/fs/bpf"
	// DefaultWakeTime is t_w of 1000BASE-T Deep Sleep (docs/model.md §1, paper 000
	// Table 3), the commonest EEE link on hosts; set predictor.wake_time
	// for faster links.
	DefaultWakeTime = 16 * time.Microsecond
	// DefaultLogSummaryInterval: one INFO summary line per minute.
	DefaultLogSummaryInterval = time.Minute
	// DefaultLogRepeatInterval: a repeated warning about a port at most
	// once a minute.
	DefaultLogRepeatInterval = time.Minute
)

// Config is the agent's configuration: /etc/lpictl/agent.yaml, LPICTL_*
// environment variables and flags (configs/agent.yaml documents every key).
type Config struct {
	Mode    Mode   `yaml:"mode"`
	Backend string `yaml:"backend"`
	// Interval is the decision interval: each port's predictor is
	// consulted this often (controller recompute: interval).
	Interval predictor.Duration `yaml:"interval"`
	// StateDir holds state.json (original EEE settings of changed ports).
	StateDir  string           `yaml:"state_dir"`
	Log       LogConfig        `yaml:"log"`
	Metrics   MetricsConfig    `yaml:"metrics"`
	Ports     PortsConfig      `yaml:"ports"`
	Predictor predictor.Config `yaml:"predictor"`
	Limits    Limits           `yaml:"limits"`
	Safety    SafetyConfig     `yaml:"safety"`
	HW        HWConfig         `yaml:"hw"`
	Sim       SimConfig        `yaml:"sim"`
	// TraceDir, when set, receives each controlled port's trace when the
	// agent stops: TraceDir/<port>.port_trace.csv, the simulator's port
	// trace format (one row per idle period the controller consumed), for
	// controller/replay (ReadTraceInfo, docs/agent.md "Port traces").
	TraceDir string `yaml:"trace_dir"`
	// Estimate configures the per-port estimates of what EEE would save
	// (docs/agent.md "What EEE would save (estimates)").
	Estimate EstimateConfig `yaml:"estimate"`
}

// LogConfig configures log/slog output (to stderr, i.e. the journal).
type LogConfig struct {
	Level  string `yaml:"level"`  // debug, info, warn, error
	Format string `yaml:"format"` // text or json
	// SummaryInterval is how often one INFO line sums up what happened
	// since the last (timer changes, clamps, ledger holds, quarantines,
	// errors); 0 = no summary. Each change is logged at DEBUG.
	SummaryInterval predictor.Duration `yaml:"summary_interval"`
	// RepeatInterval rate-limits repeated warnings: the same message about
	// the same port at most once per interval, the next one saying how many
	// were suppressed; 0 = no limit.
	RepeatInterval predictor.Duration `yaml:"repeat_interval"`
}

// MetricsOff as metrics.listen turns the HTTP endpoint off.
const MetricsOff = "off"

// MetricsConfig configures the HTTP endpoint.
type MetricsConfig struct {
	// Listen is host:port of /metrics, /healthz and /readyz ("off" = none).
	Listen string `yaml:"listen"`
	// WebConfigFile is an exporter-toolkit web configuration file (TLS,
	// basic auth; the format of Prometheus' --web.config.file), read
	// again on every connection and request ("" = plain HTTP, no auth).
	WebConfigFile string `yaml:"web_config_file"`
}

// PortsConfig selects ports: a port is selected when its name matches
// Names or its driver matches Drivers, and it matches no Exclude pattern.
// Patterns are shell globs (path.Match).
type PortsConfig struct {
	Names     []string       `yaml:"names"`
	Drivers   []string       `yaml:"drivers"`
	Exclude   []string       `yaml:"exclude"`
	Overrides []PortOverride `yaml:"overrides"`
	// RescanInterval: how often the backend's ports are listed again to
	// pick up new or vanished ports (0 = only at start and SIGHUP).
	RescanInterval predictor.Duration `yaml:"rescan_interval"`
}

// PortOverride changes the predictor and limits of the ports matching
// Match (globs). Later overrides win over earlier ones; set fields replace
// the global ones, unset fields inherit them.
type PortOverride struct {
	Match     []string         `yaml:"match"`
	Predictor predictor.Config `yaml:"predictor"`
	Limits    Limits           `yaml:"limits"`
}

// Limits bound and pace one port's t_PDT. Nil fields inherit (from the
// global limits, then from the defaults and the driver's range).
type Limits struct {
	// Min, Max: the t_PDT range applied (intersected with the driver's).
	Min *predictor.Duration `yaml:"min,omitempty"`
	Max *predictor.Duration `yaml:"max,omitempty"`
	// Resolution rounds t_PDT (default: the driver's unit, 1µs on hardware).
	Resolution *predictor.Duration `yaml:"resolution,omitempty"`
	// Hysteresis keeps t_PDT when the new answer differs by at most this
	// fraction of it.
	Hysteresis *float64 `yaml:"hysteresis,omitempty"`
	// MinChangeInterval is the least time between two changes of a port.
	MinChangeInterval *predictor.Duration `yaml:"min_change_interval,omitempty"`
	// Ledger is the port's delay ledger (controller.ledger): auto (every
	// adaptive predictor), on or off.
	Ledger *controller.LedgerMode `yaml:"ledger,omitempty"`
	// MissCost is the ledger's reserve c (controller.miss_cost); unset,
	// the agent takes it from what it knows of the port (docs/agent.md
	// "The delay budget").
	MissCost *predictor.Duration `yaml:"miss_cost,omitempty"`
}

// SafetyConfig is what protects production ports.
type SafetyConfig struct {
	// FlapWindow: a carrier change within this time after a change is a
	// flap caused by the change.
	FlapWindow predictor.Duration `yaml:"flap_window"`
	// BackoffInitial doubles with every consecutive flap up to BackoffMax:
	// no change is applied to the port during the backoff.
	BackoffInitial predictor.Duration `yaml:"backoff_initial"`
	BackoffMax     predictor.Duration `yaml:"backoff_max"`
	// QuarantineAfter consecutive flaps restore the port's original
	// settings and stop changing it until the agent restarts (0 = never).
	QuarantineAfter int `yaml:"quarantine_after"`
	// FlapReset: this long without a flap clears the flap count.
	FlapReset predictor.Duration `yaml:"flap_reset"`
	// RestoreOnExit restores original settings when the agent stops.
	RestoreOnExit *bool `yaml:"restore_on_exit"`
	// EEERefresh: how often each port's EEE state is read back.
	EEERefresh predictor.Duration `yaml:"eee_refresh"`
	// Warmup: no change is applied to a port during its first Warmup
	// (the predictor learns first).
	Warmup *predictor.Duration `yaml:"warmup"`
	// HarmWindow: errors or drops rising within this time after a change
	// are harm caused by it: the port is restored and quarantined.
	HarmWindow predictor.Duration `yaml:"harm_window"`
	// HarmErrors: more rx/tx and CRC errors than this within HarmWindow
	// after a change are harm (0 = errors are not checked).
	HarmErrors int `yaml:"harm_errors"`
	// HarmDrops: more rx/tx drops than this within HarmWindow after a
	// change are harm (0, the default = drops are not checked: Linux
	// counts e.g. frames of unknown protocols as rx drops).
	HarmDrops int `yaml:"harm_drops"`
}

// HWConfig configures the hardware backend.
type HWConfig struct {
	// NetNS: network namespace of the ports ("" = the agent's own; a name
	// from `ip netns` or a path). Entering another namespace needs
	// CAP_SYS_ADMIN, which the shipped unit does not grant.
	NetNS string `yaml:"netns"`
	// Observe: auto (emulated for a port with an emulator, else eBPF,
	// else counters), ebpf, counters, emulated or none.
	Observe string `yaml:"observe"`
	// Attach: auto, tcx or tc (eBPF attach point).
	Attach string `yaml:"attach"`
	// Ingress also observes received traffic (histogram only).
	Ingress bool `yaml:"ingress"`
	// PollInterval is the counter poll interval (counter observation).
	PollInterval predictor.Duration `yaml:"poll_interval"`
	// SampleFloor: gaps shorter than this are not delivered by eBPF.
	SampleFloor predictor.Duration `yaml:"sample_floor"`
	// HopsFile: hop-count table (hwlink hops.yaml) for PerfBound.
	HopsFile string `yaml:"hops_file"`
	// EEEBackend: ethtool (the kernel), model (a driver-model file,
	// ModelFile, for demos and tests: no hardware is touched) or emulated
	// (the emulated EEE ports of `lpictl emulate attach` in NetNS; other
	// ports are observe-only).
	EEEBackend string `yaml:"eee_backend"`
	ModelFile  string `yaml:"model_file"`
	// BPFFS is the bpffs mount holding the emulators' pins (emulated EEE
	// backend and observation).
	BPFFS string `yaml:"bpffs"`
}

// SimConfig configures the simulator backend.
type SimConfig struct {
	// Scenario is a simulator scenario file (configs/sim/*.yaml).
	Scenario string `yaml:"scenario"`
	// Set are --set overrides for the scenario.
	Set []string `yaml:"set"`
	// Speed: simulated seconds per wall-clock second.
	Speed float64 `yaml:"speed"`
	// Loop restarts the workload when the scenario ends.
	Loop *bool `yaml:"loop"`
}

// Default returns the configuration with every default filled.
func Default() Config { return Config{}.WithDefaults() }

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

func dur(d time.Duration) *predictor.Duration { v := predictor.Duration(d); return &v }
func ptr[T any](v T) *T                       { return &v }

// WithDefaults fills unset fields. A field that is not a pointer is unset
// when it is zero; Load also keeps the zeros a file, the environment, a flag
// or --set gave explicitly (and Validate rejects those that mean nothing).
func (c Config) WithDefaults() Config { return c.withDefaults(nil) }

// withDefaults fills unset fields; explicit names the keys whose zero
// value was given explicitly and is kept (absent = default, explicit 0 =
// what Validate says of 0).
func (c Config) withDefaults(explicit map[string]bool) Config {
	unset := func(key string, zero bool) bool { return zero && !explicit[key] }
	if c.Mode == "" {
		c.Mode = Observe
	}
	c.Mode = Mode(strings.ToLower(string(c.Mode)))
	if c.Backend == "" {
		c.Backend = BackendHW
	}
	c.Backend = strings.ToLower(c.Backend)
	if unset("interval", c.Interval == 0) {
		c.Interval = predictor.Duration(DefaultInterval)
	}
	if c.StateDir == "" {
		c.StateDir = DefaultStateDir
	}
	if c.Log.Level == "" {
		c.Log.Level = "info"
	}
	if c.Log.Format == "" {
		c.Log.Format = "text"
	}
	if unset("log.summary_interval", c.Log.SummaryInterval == 0) {
		c.Log.SummaryInterval = predictor.Duration(DefaultLogSummaryInterval)
	}
	if unset("log.repeat_interval", c.Log.RepeatInterval == 0) {
		c.Log.RepeatInterval = predictor.Duration(DefaultLogRepeatInterval)
	}
	if unset("ports.rescan_interval", c.Ports.RescanInterval == 0) {
		c.Ports.RescanInterval = predictor.Duration(DefaultRescanInterval)
	}
	if c.Predictor.WakeTime == 0 && c.Backend == BackendHW {
		c.Predictor.WakeTime = predictor.Duration(DefaultWakeTime)
	}
	c.Predictor = c.Predictor.WithDefaults()
	c.Ports.Names = nilIfEmpty(c.Ports.Names)
	c.Ports.Drivers = nilIfEmpty(c.Ports.Drivers)
	c.Ports.Exclude = nilIfEmpty(c.Ports.Exclude)
	c.Sim.Set = nilIfEmpty(c.Sim.Set)
	if len(c.Ports.Overrides) == 0 {
		c.Ports.Overrides = nil
	}
	if len(c.Predictor.Hops) == 0 {
		c.Predictor.Hops = nil
	}
	if c.Metrics.Listen == "" {
		c.Metrics.Listen = DefaultListen
	}
	l := &c.Limits
	if l.Hysteresis == nil {
		l.Hysteresis = ptr(DefaultHysteresis)
	}
	if l.MinChangeInterval == nil {
		l.MinChangeInterval = dur(DefaultMinChangeInterval)
	}
	s := &c.Safety
	if unset("safety.flap_window", s.FlapWindow == 0) {
		s.FlapWindow = predictor.Duration(DefaultFlapWindow)
	}
	if unset("safety.backoff_initial", s.BackoffInitial == 0) {
		s.BackoffInitial = predictor.Duration(DefaultBackoffInitial)
	}
	if unset("safety.backoff_max", s.BackoffMax == 0) {
		s.BackoffMax = predictor.Duration(DefaultBackoffMax)
	}
	if unset("safety.quarantine_after", s.QuarantineAfter == 0) {
		s.QuarantineAfter = DefaultQuarantineAfter
	}
	if unset("safety.flap_reset", s.FlapReset == 0) {
		s.FlapReset = predictor.Duration(DefaultFlapReset)
	}
	if s.RestoreOnExit == nil {
		s.RestoreOnExit = ptr(true)
	}
	if unset("safety.eee_refresh", s.EEERefresh == 0) {
		s.EEERefresh = predictor.Duration(DefaultEEERefresh)
	}
	if s.Warmup == nil {
		s.Warmup = dur(DefaultWarmup)
	}
	if unset("safety.harm_window", s.HarmWindow == 0) {
		s.HarmWindow = predictor.Duration(DefaultHarmWindow)
	}
	if unset("safety.harm_errors", s.HarmErrors == 0) {
		s.HarmErrors = DefaultHarmErrors
	}
	h := &c.HW
	if h.Observe == "" {
		h.Observe = "auto"
	}
	if h.Attach == "" {
		h.Attach = "auto"
	}
	if unset("hw.poll_interval", h.PollInterval == 0) {
		h.PollInterval = predictor.Duration(DefaultPollInterval)
	}
	if h.EEEBackend == "" {
		h.EEEBackend = "ethtool"
	}
	if h.BPFFS == "" {
		h.BPFFS = DefaultBPFFS
	}
	if unset("sim.speed", c.Sim.Speed == 0) {
		c.Sim.Speed = 1
	}
	if c.Sim.Loop == nil {
		c.Sim.Loop = ptr(true)
	}
	c.Estimate = c.Estimate.withDefaults()
	return c
}

// Validate reports the first invalid field by its dotted key. Call it on a
// config with defaults filled.
func (c Config) Validate() error {
	bad := func(key, format string, args ...any) error {
		return fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...))
	}
	switch c.Mode {
	case Observe, Enforce:
	default:
		return bad("mode", "unknown mode %q (want observe or enforce)", c.Mode)
	}
	switch c.Backend {
	case BackendHW, BackendSim:
	default:
		return bad("backend", "unknown backend %q (want hw or sim)", c.Backend)
	}
	if c.Interval.D() < time.Millisecond {
		return bad("interval", "must be ≥ 1ms, got %v", c.Interval)
	}
	if c.Interval.D() > MaxInterval {
		return bad("interval", "must be ≤ %v (each port's predictor is consulted this often), got %v", MaxInterval, c.Interval)
	}
	if c.StateDir == "" || !path.IsAbs(c.StateDir) {
		return bad("state_dir", "must be an absolute path, got %q", c.StateDir)
	}
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		return bad("log.level", "unknown level %q (want debug, info, warn or error)", c.Log.Level)
	}
	switch c.Log.Format {
	case "text", "json":
	default:
		return bad("log.format", "unknown format %q (want text or json)", c.Log.Format)
	}
	if c.Log.SummaryInterval < 0 {
		return bad("log.summary_interval", "must be ≥ 0 (0 = no summary), got %v", c.Log.SummaryInterval)
	}
	if c.Log.RepeatInterval < 0 {
		return bad("log.repeat_interval", "must be ≥ 0 (0 = no limit), got %v", c.Log.RepeatInterval)
	}
	if c.Ports.RescanInterval < 0 {
		return bad("ports.rescan_interval", "must be ≥ 0 (0 = only at start and on SIGHUP), got %v", c.Ports.RescanInterval)
	}
	if c.Metrics.Listen != MetricsOff {
		if _, port, err := net.SplitHostPort(c.Metrics.Listen); err != nil || port == "" {
			return bad("metrics.listen", "want host:port (e.g. 127.0.0.1:9720 or [::1]:9720), got %q", c.Metrics.Listen)
		} else if n, err := strconv.ParseUint(port, 10, 64); err != nil || n > 65535 {
			return bad("metrics.listen", "port %q: want a number in 0..65535 (e.g. 127.0.0.1:9720), got %q", port, c.Metrics.Listen)
		}
	}
	for _, g := range []struct {
		key  string
		pats []string
	}{{"ports.names", c.Ports.Names}, {"ports.drivers", c.Ports.Drivers}, {"ports.exclude", c.Ports.Exclude}} {
		if err := checkGlobs(g.pats); err != nil {
			return bad(g.key, "%v", err)
		}
	}
	for i, o := range c.Ports.Overrides {
		key := fmt.Sprintf("ports.overrides[%d]", i)
		if len(o.Match) == 0 {
			return bad(key+".match", "want at least one port name or glob")
		}
		if err := checkGlobs(o.Match); err != nil {
			return bad(key+".match", "%v", err)
		}
		pc, lim := clonePredictor(c.Predictor), c.Limits
		mergeSet(reflect.ValueOf(&pc).Elem(), reflect.ValueOf(o.Predictor))
		mergeSet(reflect.ValueOf(&lim).Elem(), reflect.ValueOf(o.Limits))
		if err := checkPredictor(pc); err != nil {
			return fmt.Errorf("%s.%w", key, err)
		}
		if err := lim.validate(key + ".limits"); err != nil {
			return err
		}
	}
	if err := checkPredictor(c.Predictor); err != nil {
		return err
	}
	if err := c.Limits.validate("limits"); err != nil {
		return err
	}
	s := c.Safety
	if s.FlapWindow <= 0 {
		return bad("safety.flap_window", "must be > 0, got %v (quarantine_after: 0 never quarantines)", s.FlapWindow)
	}
	if s.BackoffInitial < 0 {
		return bad("safety.backoff_initial", "must be ≥ 0 (0 = no backoff), got %v", s.BackoffInitial)
	}
	if s.BackoffMax < s.BackoffInitial {
		return bad("safety.backoff_max", "must be ≥ safety.backoff_initial (%v)", s.BackoffInitial)
	}
	if s.QuarantineAfter < 0 {
		return bad("safety.quarantine_after", "must be ≥ 0, got %d", s.QuarantineAfter)
	}
	if s.FlapReset <= 0 {
		return bad("safety.flap_reset", "must be > 0, got %v", s.FlapReset)
	}
	if s.Warmup != nil && *s.Warmup < 0 {
		return bad("safety.warmup", "must be ≥ 0 (0 = none), got %v", *s.Warmup)
	}
	if s.HarmWindow <= 0 {
		return bad("safety.harm_window", "must be > 0, got %v (harm_errors: 0 and harm_drops: 0 turn the check off)", s.HarmWindow)
	}
	if s.HarmErrors < 0 {
		return bad("safety.harm_errors", "must be ≥ 0 (0 = errors not checked), got %d", s.HarmErrors)
	}
	if s.HarmDrops < 0 {
		return bad("safety.harm_drops", "must be ≥ 0 (0 = drops not checked), got %d", s.HarmDrops)
	}
	if s.EEERefresh.D() < c.Interval.D() {
		return bad("safety.eee_refresh", "must be ≥ interval (%v)", c.Interval)
	}
	h := c.HW
	switch h.Observe {
	case "auto", "ebpf", "counters", "emulated", "none":
	default:
		return bad("hw.observe", "unknown method %q (want auto, ebpf, counters, emulated or none)", h.Observe)
	}
	switch h.Attach {
	case "auto", "tcx", "tc":
	default:
		return bad("hw.attach", "unknown attach mode %q (want auto, tcx or tc)", h.Attach)
	}
	if h.SampleFloor < 0 {
		return bad("hw.sample_floor", "must be ≥ 0, got %v", h.SampleFloor)
	}
	if h.PollInterval.D() < time.Millisecond {
		return bad("hw.poll_interval", "must be ≥ 1ms, got %v", h.PollInterval)
	}
	switch h.EEEBackend {
	case "ethtool", "emulated":
	case "model":
		if h.ModelFile == "" {
			return bad("hw.model_file", "required with hw.eee_backend: model")
		}
	default:
		return bad("hw.eee_backend", "unknown EEE backend %q (want ethtool, model or emulated)", h.EEEBackend)
	}
	if !path.IsAbs(h.BPFFS) {
		return bad("hw.bpffs", "must be an absolute path (a bpffs mount, e.g. /sys/fs/bpf), got %q", h.BPFFS)
	}
	if strings.ContainsRune(c.TraceDir, 0) {
		return bad("trace_dir", "not a path: %q", c.TraceDir)
	}
	if c.Backend == BackendSim {
		if c.Sim.Scenario == "" {
			return bad("sim.scenario", "required with backend: sim (e.g. configs/sim/quick.yaml)")
		}
	}
	if !(c.Sim.Speed > 0) || math.IsInf(c.Sim.Speed, 0) {
		return bad("sim.speed", "must be > 0, got %v", c.Sim.Speed)
	}
	return c.Estimate.validate()
}

func checkPredictor(pc predictor.Config) error {
	pc = pc.WithDefaults()
	if pc.WakeTime == 0 {
		// The sim backend fills t_w from the scenario's power preset.
		pc.WakeTime = predictor.Duration(time.Microsecond)
	}
	return pc.Validate()
}

func (l Limits) validate(key string) error {
	if l.Min != nil && *l.Min < 0 {
		return fmt.Errorf("%s.min: must be ≥ 0, got %v", key, *l.Min)
	}
	if l.Min != nil && l.Max != nil && *l.Max < *l.Min {
		return fmt.Errorf("%s.max: must be ≥ %s.min (%v), got %v", key, key, *l.Min, *l.Max)
	}
	if l.Resolution != nil && *l.Resolution <= 0 {
		return fmt.Errorf("%s.resolution: must be > 0", key)
	}
	if h := l.Hysteresis; h != nil && !(*h >= 0 && *h < 1) {
		return fmt.Errorf("%s.hysteresis: must be a fraction in [0, 1) (0.25 = ±25 %%, 0 = none), got %v", key, *h)
	}
	if m := l.MissCost; m != nil && *m < 0 {
		return fmt.Errorf("%s.miss_cost: must be ≥ 0 (0 = from the port), got %v", key, *m)
	}
	if m := l.Ledger; m != nil {
		switch controller.LedgerMode(strings.ToLower(string(*m))) {
		case controller.LedgerAuto, controller.LedgerOn, controller.LedgerOff:
		default:
			return fmt.Errorf("%s.ledger: unknown mode %q (want auto, on or off)", key, *m)
		}
	}
	if m := l.MinChangeInterval; m != nil && *m < 0 {
		return fmt.Errorf("%s.min_change_interval: must be ≥ 0 (0 = no rate limit), got %v", key, *m)
	}
	return nil
}

// ListenWarning says, in one line, why metrics.listen is exposed beyond
// this host without protection, or returns "" when it is loopback (or off)
// or metrics.web_config_file sets both TLS and basic auth. 0.0.0.0 and [::]
// (or no host) bind every address, IPv4 and IPv6 alike. A host name other
// than localhost is not resolved here and is warned about as well.
func (c Config) ListenWarning() string {
	if c.Metrics.Listen == MetricsOff {
		return ""
	}
	host, _, err := net.SplitHostPort(c.Metrics.Listen)
	if err != nil || strings.EqualFold(host, "localhost") {
		return ""
	}
	ip, err := netip.ParseAddr(host)
	if err == nil && ip.IsLoopback() {
		return ""
	}
	tls, auth := c.Metrics.webProtection()
	var missing string
	switch {
	case tls && auth:
		return ""
	case tls:
		missing = "metrics.web_config_file sets TLS but no basic auth: anyone who reaches it can scrape"
	case auth:
		missing = "metrics.web_config_file sets basic auth but no TLS: passwords cross the network in clear"
	default:
		missing = "no TLS or basic auth (metrics.web_config_file)"
	}
	if host == "" || (err == nil && ip.IsUnspecified()) {
		return fmt.Sprintf("metrics.listen %s is not loopback: it binds every address (IPv4 and IPv6), so /metrics, /healthz and /readyz are reachable from other hosts, with %s (use 127.0.0.1:9720 or [::1]:9720 unless that is intended)", c.Metrics.Listen, missing)
	}
	return fmt.Sprintf("metrics.listen %s is not loopback: /metrics, /healthz and /readyz are reachable from other hosts, with %s (use 127.0.0.1:9720 or [::1]:9720 unless that is intended)", c.Metrics.Listen, missing)
}

// webProtection says whether the web config file configures TLS and basic
// auth. An unreadable or invalid file protects nothing (Load and the
// server reject it).
func (m MetricsConfig) webProtection() (tls, auth bool) {
	if m.WebConfigFile == "" {
		return false, false
	}
	data, err := configs.ReadFile(m.WebConfigFile)
	if err != nil {
		return false, false
	}
	var wc struct {
		TLS struct {
			CertFile string `yaml:"cert_file"`
			Cert     string `yaml:"cert"`
		} `yaml:"tls_server_config"`
		Users map[string]string `yaml:"basic_auth_users"`
	}
	if yaml.Unmarshal(data, &wc) != nil {
		return false, false
	}
	return wc.TLS.CertFile != "" || wc.TLS.Cert != "", len(wc.Users) > 0
}

func checkGlobs(pats []string) error {
	for _, p := range pats {
		if p == "" {
			return errors.New("empty pattern")
		}
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("bad glob %q: %w", p, err)
		}
	}
	return nil
}

// NoneSelected says, in one line, which patterns selected no port of the
// n listed.
func (p PortsConfig) NoneSelected(n int) string {
	q := func(pats []string) string {
		if len(pats) == 0 {
			return "[] (unset)"
		}
		return "[" + strings.Join(pats, ", ") + "]"
	}
	return fmt.Sprintf("ports.names %s and ports.drivers %s match none of the %d ports listed (ports.exclude %s); `lpictl ports` lists them",
		q(p.Names), q(p.Drivers), n, q(p.Exclude))
}

func matchAny(pats []string, s string) bool {
	for _, p := range pats {
		if ok, _ := path.Match(p, s); ok {
			return true
		}
	}
	return false
}

// Selected says whether a port is selected by name and driver.
func (p PortsConfig) Selected(name, driver string) bool {
	if matchAny(p.Exclude, name) {
		return false
	}
	return matchAny(p.Names, name) || (driver != "" && matchAny(p.Drivers, driver))
}

// portSpecFor returns the predictor and limits of a port: the global ones
// with every matching override merged on top, in order.
func (c Config) portSpecFor(name string) (predictor.Config, Limits) {
	pc, lim := clonePredictor(c.Predictor), c.Limits
	for _, o := range c.Ports.Overrides {
		if matchAny(o.Match, name) {
			mergeSet(reflect.ValueOf(&pc).Elem(), reflect.ValueOf(o.Predictor))
			mergeSet(reflect.ValueOf(&lim).Elem(), reflect.ValueOf(o.Limits))
		}
	}
	return pc, lim
}

// PortSpec is one port's effective predictor and controller configuration.
type PortSpec struct {
	Predictor  predictor.Config  `json:"predictor"`
	Controller controller.Config `json:"controller"`
}

// Register limits that a backend reports for a port (the driver's range).
type Register struct {
	Unit     time.Duration
	Min, Max time.Duration // Max 0 = no limit
}

// Spec builds a port's effective configuration from the config, the
// matching overrides, the backend's register limits and t_w.
func (c Config) Spec(name string, reg Register, wake time.Duration, hops map[int]float64) PortSpec {
	pc, lim := c.portSpecFor(name)
	if pc.WakeTime == 0 {
		pc.WakeTime = predictor.Duration(wake)
	}
	if len(pc.Hops) == 0 && len(hops) > 0 {
		pc.Hops = hops
	}
	pc = pc.WithDefaults()
	cc := controller.Config{Recompute: controller.OnInterval, Interval: c.Interval}
	res := reg.Unit
	if lim.Resolution != nil {
		res = lim.Resolution.D()
	}
	if res <= 0 {
		res = time.Nanosecond
	}
	cc.Register.Resolution = predictor.Duration(res)
	lo, hi := reg.Min, reg.Max
	if lim.Min != nil && lim.Min.D() > lo {
		lo = lim.Min.D()
	}
	if lim.Max != nil && (hi == 0 || lim.Max.D() < hi) {
		hi = lim.Max.D()
	}
	if hi != 0 && hi < lo {
		hi = lo
	}
	cc.Register.Min, cc.Register.Max = predictor.Duration(lo), predictor.Duration(hi)
	if lim.Hysteresis != nil {
		cc.Hysteresis = *lim.Hysteresis
	}
	if lim.MinChangeInterval != nil {
		cc.MinChangeInterval = *lim.MinChangeInterval
	}
	if lim.Ledger != nil {
		cc.Ledger = *lim.Ledger
	}
	if lim.MissCost != nil {
		cc.MissCost = *lim.MissCost
	}
	return PortSpec{Predictor: pc, Controller: cc.WithDefaults()}
}

func clonePredictor(pc predictor.Config) predictor.Config {
	if pc.Hops != nil {
		h := make(map[int]float64, len(pc.Hops))
		for k, v := range pc.Hops {
			h[k] = v
		}
		pc.Hops = h
	}
	return pc
}

// mergeSet copies every non-zero field of src onto dst (recursively for
// structs): an override's set fields replace, unset ones inherit.
func mergeSet(dst, src reflect.Value) {
	for i := 0; i < src.NumField(); i++ {
		f := src.Field(i)
		if !src.Type().Field(i).IsExported() {
			continue
		}
		if f.Kind() == reflect.Struct {
			mergeSet(dst.Field(i), f)
			continue
		}
		if !f.IsZero() {
			dst.Field(i).Set(f)
		}
	}
}
