package power

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/lpictl/lpictl/configs"
	"github.com/lpictl/lpictl/predictor"
)

// DefaultPreset names the preset used when none is given (paper 000, 400 Gb/s).
const DefaultPreset = "eee-400g"

// Preset is one set of link power figures (docs/model.md §1 tables).
type Preset struct {
	Name       string      `yaml:"name" json:"name"`
	Source     string      `yaml:"source,omitempty" json:"source,omitempty"`
	RateBps    float64     `yaml:"rate_bps" json:"rate_bps"`
	WakePowerW float64     `yaml:"wake_power_w" json:"wake_power_w"`
	FastWake   *LowPower   `yaml:"fast_wake,omitempty" json:"fast_wake,omitempty"`
	DeepSleep  *LowPower   `yaml:"deep_sleep,omitempty" json:"deep_sleep,omitempty"`
	System     SystemPower `yaml:"system" json:"system"`
	// LPI is how the link's two directions enter low-power idle (model
	// §1.2): per-link (both ends together, after the power-down
	// handshake; the default when absent) or per-direction (each
	// transmitter alone). LPISource says where that comes from.
	LPI       LPI    `yaml:"lpi,omitempty" json:"lpi,omitempty"`
	LPISource string `yaml:"lpi_source,omitempty" json:"lpi_source,omitempty"`
	// Off is the state of a link switched off by consolidation (model
	// §1.3): not low-power idle but gated, with its own power and time to
	// come back. A preset without it cannot run power.consolidation.
	Off *OffState `yaml:"off,omitempty" json:"off,omitempty"`
	// IdlePowerFraction is what an awake port draws while it does not
	// transmit, as a fraction of wake_power_w (model §1.3); absent, 1: an
	// awake port draws wake_power_w whether it transmits or not.
	// IdleSource says where it comes from.
	IdlePowerFraction float64 `yaml:"idle_power_fraction,omitempty" json:"idle_power_fraction,omitempty"`
	IdleSource        string  `yaml:"idle_source,omitempty" json:"idle_source,omitempty"`
}

// OffState is a switched-off link (model §1.3): its power (counted as
// wake_power_w is; 0 allowed) and the time it takes to carry bits again
// once switched on.
type OffState struct {
	PowerW   float64            `yaml:"power_w" json:"power_w"`
	WakeTime predictor.Duration `yaml:"wake_time" json:"wake_time"`
	Source   string             `yaml:"source" json:"source"`
}

// IdleFraction is the awake-but-idle power as a fraction of the awake
// power: IdlePowerFraction, or 1 when the preset states none.
func (p *Preset) IdleFraction() float64 {
	if p.IdlePowerFraction == 0 {
		return 1
	}
	return p.IdlePowerFraction
}

// LPI is a preset's or a run's low-power-idle symmetry (model §1.2).
type LPI string

// Symmetries.
const (
	PerLink      LPI = "per-link"
	PerDirection LPI = "per-direction"
)

// ParseLPI reads a symmetry name ("" is an error: callers decide the
// default).
func ParseLPI(s string) (LPI, error) {
	switch l := LPI(strings.ToLower(strings.TrimSpace(s))); l {
	case PerLink, PerDirection:
		return l, nil
	}
	return "", fmt.Errorf("unknown lpi %q (want per-link or per-direction)", s)
}

// Symmetry is the preset's LPI symmetry, per-link when it states none.
func (p *Preset) Symmetry() LPI {
	if p.LPI == "" {
		return PerLink
	}
	return p.LPI
}

// LowPower is one low-power state: its power (absolute, or as a fraction of
// the awake power) and its transition times.
type LowPower struct {
	PowerW        float64            `yaml:"power_w,omitempty" json:"power_w,omitempty"`
	PowerFraction float64            `yaml:"power_fraction,omitempty" json:"power_fraction,omitempty"`
	WakeTime      predictor.Duration `yaml:"wake_time" json:"wake_time"`   // t_w
	SleepTime     predictor.Duration `yaml:"sleep_time" json:"sleep_time"` // t_s
}

// SystemPower is the non-link power of paper 000 Table 7.
type SystemPower struct {
	SwitchW  float64 `yaml:"switch_w" json:"switch_w"`
	NodeMinW float64 `yaml:"node_min_w" json:"node_min_w"`
	NodeMaxW float64 `yaml:"node_max_w" json:"node_max_w"`
}

// Power returns the state's power in watts given the awake power.
func (l LowPower) Power(wakeW float64) float64 {
	if l.PowerW > 0 {
		return l.PowerW
	}
	return l.PowerFraction * wakeW
}

// Mode is a run's low-power mode (docs/model.md §1).
type Mode string

// Low-power modes.
const (
	AlwaysOn  Mode = "always-on"
	FastWake  Mode = "fast-wake"
	DeepSleep Mode = "deep-sleep"
	Hybrid    Mode = "hybrid"
)

// Modes lists every mode.
var Modes = []Mode{AlwaysOn, FastWake, DeepSleep, Hybrid}

// ParseMode reads a mode name.
func ParseMode(s string) (Mode, error) {
	m := Mode(strings.ToLower(strings.TrimSpace(s)))
	for _, k := range Modes {
		if m == k {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown mode %q (want always-on, fast-wake, deep-sleep or hybrid)", s)
}

// LowPowerModes lists the single-state modes the preset can run: Fast
// Wake if it has the state, then Deep Sleep if it has it.
func (p *Preset) LowPowerModes() []Mode {
	var modes []Mode
	if p.FastWake != nil {
		modes = append(modes, FastWake)
	}
	if p.DeepSleep != nil {
		modes = append(modes, DeepSleep)
	}
	return modes
}

// State returns the low-power state a mode enters first after t_PDT, or nil
// for always-on or when the preset lacks it. Hybrid enters Fast Wake first.
func (p *Preset) State(m Mode) (*LowPower, error) {
	var s *LowPower
	switch m {
	case AlwaysOn:
		return nil, nil
	case FastWake, Hybrid:
		s = p.FastWake
	case DeepSleep:
		s = p.DeepSleep
	default:
		return nil, fmt.Errorf("unknown mode %q", m)
	}
	if s == nil {
		return nil, fmt.Errorf("preset %s has no state for mode %s", p.Name, m)
	}
	if m == Hybrid && p.DeepSleep == nil {
		return nil, fmt.Errorf("preset %s has no deep_sleep state for mode hybrid", p.Name)
	}
	return s, nil
}

// WakeTime is the t_w a predictor should budget for under mode m: that of
// the state the mode enters first (always-on: the deep-sleep t_w, so that a
// predictor configured for it still has a sensible value).
func (p *Preset) WakeTime(m Mode) time.Duration {
	if s, err := p.State(m); err == nil && s != nil {
		return s.WakeTime.D()
	}
	if p.DeepSleep != nil {
		return p.DeepSleep.WakeTime.D()
	}
	if p.FastWake != nil {
		return p.FastWake.WakeTime.D()
	}
	return 0
}

// Hybrid is what a predictor that chooses hybrid holds needs from the
// preset (predictor.HybridConfig, docs/predictors.md "Hybrid holds"):
// Deep Sleep's t_w, multiplied by scale (1: as the preset states it; the
// emulator scales transition times), and both low states' powers as
// fractions of the awake power. The preset must have both states.
func (p *Preset) Hybrid(scale float64) predictor.HybridConfig {
	ds, fw, wake := p.DeepSleep, p.FastWake, p.WakePowerW
	return predictor.HybridConfig{
		DeepWakeTime:   predictor.Duration(math.Round(float64(ds.WakeTime) * scale)),
		FastWakePower:  fw.Power(wake) / wake,
		DeepSleepPower: ds.Power(wake) / wake,
	}
}

// Parse reads a preset from YAML; name labels errors (file name).
// Unknown keys are errors.
func Parse(data []byte, name string) (*Preset, error) {
	var p Preset
	if err := configs.Decode(data, name, &p, nil); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &p, nil
}

// Validate checks every field.
func (p *Preset) Validate() error {
	if p.Name == "" {
		return errors.New("name: required")
	}
	if !positive(p.RateBps) {
		return fmt.Errorf("rate_bps: must be > 0, got %v", p.RateBps)
	}
	if !positive(p.WakePowerW) {
		return fmt.Errorf("wake_power_w: must be > 0, got %v", p.WakePowerW)
	}
	if p.FastWake == nil && p.DeepSleep == nil {
		return errors.New("fast_wake, deep_sleep: at least one low-power state is required")
	}
	for _, s := range []struct {
		field string
		lp    *LowPower
	}{{"fast_wake", p.FastWake}, {"deep_sleep", p.DeepSleep}} {
		if s.lp == nil {
			continue
		}
		if (s.lp.PowerW > 0) == (s.lp.PowerFraction > 0) {
			return fmt.Errorf("%s: set exactly one of power_w and power_fraction", s.field)
		}
		if s.lp.PowerW < 0 || math.IsNaN(s.lp.PowerW) || math.IsInf(s.lp.PowerW, 0) ||
			s.lp.PowerFraction < 0 || s.lp.PowerFraction > 1 || math.IsNaN(s.lp.PowerFraction) {
			return fmt.Errorf("%s: power out of range", s.field)
		}
		if pw := s.lp.Power(p.WakePowerW); pw > p.WakePowerW {
			return fmt.Errorf("%s.power_w: %v W exceeds wake_power_w %v W", s.field, pw, p.WakePowerW)
		}
		if s.lp.WakeTime <= 0 {
			return fmt.Errorf("%s.wake_time: must be > 0", s.field)
		}
		if s.lp.SleepTime <= 0 {
			return fmt.Errorf("%s.sleep_time: must be > 0", s.field)
		}
	}
	if o := p.Off; o != nil {
		switch {
		case !(o.PowerW >= 0) || o.PowerW > p.WakePowerW:
			return fmt.Errorf("off.power_w: must be in [0, wake_power_w %v], got %v", p.WakePowerW, o.PowerW)
		case o.WakeTime <= 0:
			return errors.New("off.wake_time: must be > 0")
		case strings.TrimSpace(o.Source) == "":
			return errors.New("off.source: required (where the figures come from)")
		}
	}
	if f := p.IdlePowerFraction; f != 0 {
		if !(f > 0 && f <= 1) {
			return fmt.Errorf("idle_power_fraction: must be in (0, 1], got %v", f)
		}
		if strings.TrimSpace(p.IdleSource) == "" {
			return errors.New("idle_source: required with idle_power_fraction")
		}
	}
	if p.LPI != "" && p.LPI != PerLink && p.LPI != PerDirection {
		return fmt.Errorf("lpi: unknown symmetry %q (want per-link or per-direction)", p.LPI)
	}
	sys := p.System
	if !(sys.SwitchW >= 0) || math.IsInf(sys.SwitchW, 0) {
		return fmt.Errorf("system.switch_w: must be ≥ 0, got %v", sys.SwitchW)
	}
	if !(sys.NodeMinW >= 0) || !(sys.NodeMaxW >= sys.NodeMinW) || math.IsInf(sys.NodeMaxW, 0) {
		return fmt.Errorf("system.node_max_w: must be ≥ node_min_w ≥ 0, got %v and %v", sys.NodeMaxW, sys.NodeMinW)
	}
	return nil
}

func positive(f float64) bool { return f > 0 && !math.IsInf(f, 0) }

// Load returns a preset by name from the shipped presets, or from a file if
// name contains a path separator or ends in .yaml/.yml.
func Load(name string) (*Preset, error) {
	if name == "" {
		name = DefaultPreset
	}
	if strings.ContainsRune(name, os.PathSeparator) || strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml") {
		data, err := configs.ReadFile(name)
		if err != nil {
			return nil, err
		}
		return Parse(data, name)
	}
	file := path.Join("presets", name+".yaml")
	data, err := fs.ReadFile(configs.FS, file)
	if err != nil {
		return nil, fmt.Errorf("unknown power preset %q (shipped: %s)", name, strings.Join(Names(), ", "))
	}
	return Parse(data, "configs/"+file)
}

// Names lists the shipped presets.
func Names() []string {
	entries, _ := fs.ReadDir(configs.FS, "presets")
	var names []string
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".yaml"); ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}
