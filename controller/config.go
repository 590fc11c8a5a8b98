package controller

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/lpictl/lpictl/predictor"
)

// Recompute says when a port asks its predictor for a new t_PDT.
type Recompute string

// Recompute policies.
const (
	// OnQueueEmpty recomputes when the output queue empties, but only if
	// there was traffic since the last computation (paper 000 §3.2: the
	// switch behaviour). The default.
	OnQueueEmpty Recompute = "queue-empty"
	// OnInterval recomputes when Interval has passed since the last
	// computation (a host agent's periodic loop).
	OnInterval Recompute = "interval"
)

// DefaultInterval is the recompute interval of OnInterval (ours).
const DefaultInterval = 100 * time.Millisecond

// Config is the `controller:` section of lpictl's YAML files.
type Config struct {
	Recompute Recompute          `yaml:"recompute,omitempty" json:"recompute,omitempty"`
	Interval  predictor.Duration `yaml:"interval,omitempty" json:"interval,omitempty"`
	Register  Register           `yaml:"register,omitempty" json:"register,omitempty"`
	// Hysteresis keeps the current t_PDT when a new answer differs from it
	// by at most this fraction of it (0 = apply every change).
	Hysteresis float64 `yaml:"hysteresis,omitempty" json:"hysteresis,omitempty"`
	// MinChangeInterval is the least time between two changes (0 = none).
	MinChangeInterval predictor.Duration `yaml:"min_change_interval,omitempty" json:"min_change_interval,omitempty"`
	// Ledger says whether the port's delay ledger holds the predictor to
	// its bound (ledger.go): auto (default), on or off.
	Ledger LedgerMode `yaml:"ledger,omitempty" json:"ledger,omitempty"`
	// MissCost is c, the largest delay one miss can add in the port's
	// mode (2 handshakes + t_s + the deepest t_w). The ledger keeps it in
	// reserve and charges it for a miss whose delay was not measured. The
	// simulator, lpictl predict and the agent fill it from the power
	// preset; unset, it is the predictor's deepest t_w.
	MissCost predictor.Duration `yaml:"miss_cost,omitempty" json:"miss_cost,omitempty"`
	// Rounds makes the port behave as a port that a host agent drives
	// from outside, once per round (rounds.go); nil: the controller's
	// answer is armed at once, as a switch's or NIC's own controller.
	Rounds *Rounds `yaml:"rounds,omitempty" json:"rounds,omitempty"`
}

// Rounds is how a host agent drives a port that applies the delay ledger
// itself (`lpictl agent --mode enforce` on an emulated EEE port,
// docs/hil.md): the agent's controller decides at the start of every idle
// period, but the agent writes the port's timer only once per round, and
// the port arms what was written last from its next idle period on. The
// port's ledger (if the configuration runs one) holds it per idle period,
// whatever the recompute policy: it starts when the agent opened the port
// and applies from the agent's first write, which resets its account.
type Rounds struct {
	// Interval is the agent's round (> 0).
	Interval predictor.Duration `yaml:"interval" json:"interval"`
	// Lead is how long before the port's start (NewPort's now) the agent
	// opened it: its controller's and ledger's start; its rounds fall at
	// start − Lead + k × Interval.
	Lead predictor.Duration `yaml:"lead,omitempty" json:"lead,omitempty"`
	// Initial is the port's timer until the agent's first write (unset:
	// the controller's first answer, as if written when it opened).
	Initial *predictor.Duration `yaml:"initial,omitempty" json:"initial,omitempty"`
	// Idle is how long before the port's start its first idle period
	// began: the port was idle from then until its first packet, with its
	// initial timer, and the controller observes that period when the
	// first packet comes (Port.OpenIdle), as an agent observes the period
	// an emulated port had from its attach. 0: the port's first idle
	// period is not observed.
	Idle predictor.Duration `yaml:"idle,omitempty" json:"idle,omitempty"`
}

// LedgerMode says which predictors run under the delay ledger.
type LedgerMode string

// Ledger modes.
const (
	// LedgerAuto guards every predictor that adapts to a bound
	// (predictor.Bounded) except fixed: the default.
	LedgerAuto LedgerMode = "auto"
	// LedgerOn guards fixed too, at predictor.bound.
	LedgerOn LedgerMode = "on"
	// LedgerOff is the papers' unguarded behaviour: the predictor's
	// answer is armed as it is.
	LedgerOff LedgerMode = "off"
)

// Rounding says how the register rounds an answer to its resolution.
type Rounding string

// Rounding modes.
const (
	// RoundUp rounds to the next multiple of the resolution: a threshold
	// never falls below a gap it was meant to outlast (the default).
	RoundUp Rounding = "up"
	// RoundNearest rounds half up, as the papers' register.
	RoundNearest Rounding = "nearest"
)

// Register is the port's PDT register: t_PDT is rounded to Resolution and
// clamped to [Min, Max] where Max defaults to (2^WidthBits − 1) × Resolution
// (paper 000 §3.3, Table 5). Real NICs state their own ranges and units
// (e.g. mvneta ≤ 255 µs): set Min/Max for them. The zero value is a 64-bit
// register at 1 ns, i.e. no practical limit.
type Register struct {
	WidthBits  int                `yaml:"width_bits,omitempty" json:"width_bits,omitempty"`
	Resolution predictor.Duration `yaml:"resolution,omitempty" json:"resolution,omitempty"`
	Min        predictor.Duration `yaml:"min,omitempty" json:"min,omitempty"`
	Max        predictor.Duration `yaml:"max,omitempty" json:"max,omitempty"`
	// Rounding is up (default) or nearest.
	Rounding Rounding `yaml:"rounding,omitempty" json:"rounding,omitempty"`
}

// WithDefaults fills unset fields.
func (c Config) WithDefaults() Config {
	if c.Recompute == "" {
		c.Recompute = OnQueueEmpty
	}
	c.Recompute = Recompute(strings.ToLower(string(c.Recompute)))
	if c.Interval == 0 {
		c.Interval = predictor.Duration(DefaultInterval)
	}
	if c.Register.WidthBits == 0 {
		c.Register.WidthBits = 64
	}
	if c.Register.Resolution == 0 {
		c.Register.Resolution = predictor.Duration(time.Nanosecond)
	}
	if c.Register.Rounding == "" {
		c.Register.Rounding = RoundUp
	}
	c.Register.Rounding = Rounding(strings.ToLower(string(c.Register.Rounding)))
	if c.Ledger == "" {
		c.Ledger = LedgerAuto
	}
	c.Ledger = LedgerMode(strings.ToLower(string(c.Ledger)))
	return c
}

// Validate reports the first invalid field as "controller.<field>: …".
func (c Config) Validate() error {
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("controller.%s: %s", field, fmt.Sprintf(format, args...))
	}
	switch c.Recompute {
	case OnQueueEmpty, OnInterval:
	default:
		return bad("recompute", "unknown policy %q (want queue-empty or interval)", c.Recompute)
	}
	if c.Interval <= 0 {
		return bad("interval", "must be > 0")
	}
	if c.Register.WidthBits < 1 || c.Register.WidthBits > 64 {
		return bad("register.width_bits", "must be in 1..64, got %d", c.Register.WidthBits)
	}
	if c.Register.Resolution <= 0 {
		return bad("register.resolution", "must be > 0")
	}
	if c.Register.Max != 0 && c.Register.Max < c.Register.Min {
		return bad("register.max", "must be ≥ register.min (%v), got %v", c.Register.Min, c.Register.Max)
	}
	if !(c.Hysteresis >= 0) || math.IsInf(c.Hysteresis, 0) {
		return bad("hysteresis", "must be ≥ 0, got %v", c.Hysteresis)
	}
	switch c.Register.Rounding {
	case RoundUp, RoundNearest:
	default:
		return bad("register.rounding", "unknown rounding %q (want up or nearest)", c.Register.Rounding)
	}
	switch c.Ledger {
	case LedgerAuto, LedgerOn, LedgerOff:
	default:
		return bad("ledger", "unknown mode %q (want auto, on or off)", c.Ledger)
	}
	if c.MissCost < 0 {
		return bad("miss_cost", "must be ≥ 0, got %v", c.MissCost)
	}
	if r := c.Rounds; r != nil {
		if r.Interval <= 0 {
			return bad("rounds.interval", "must be > 0")
		}
		if r.Lead < 0 {
			return bad("rounds.lead", "must be ≥ 0, got %v", r.Lead)
		}
		if r.Initial != nil && *r.Initial < 0 {
			return bad("rounds.initial", "must be ≥ 0, got %v", *r.Initial)
		}
		if r.Idle < 0 {
			return bad("rounds.idle", "must be ≥ 0, got %v", r.Idle)
		}
	}
	return nil
}

// Range returns the smallest and largest t_PDT the register holds.
func (r Register) Range() (lo, hi time.Duration) {
	res := r.Resolution.D()
	hi = time.Duration(math.MaxInt64)
	if r.WidthBits < 63 {
		steps := int64(1)<<r.WidthBits - 1
		if steps <= math.MaxInt64/int64(res) {
			hi = time.Duration(steps) * res
		}
	}
	if r.Max != 0 && r.Max.D() < hi {
		hi = r.Max.D() / res * res
	}
	lo = r.Min.D()
	if rem := lo % res; rem != 0 {
		lo += res - rem
	}
	return lo, hi
}

// Apply rounds d to the register's resolution (Rounding: up unless set to
// nearest) and clamps it to its range; clamped reports whether the range
// cut it.
func (r Register) Apply(d time.Duration) (v time.Duration, clamped bool) {
	lo, hi := r.Range()
	res := r.Resolution.D()
	if d >= hi {
		return hi, d > hi
	}
	v = roundTo(d, res, r.Rounding != RoundNearest)
	if v > hi {
		return hi, true
	}
	if v < lo {
		return lo, true
	}
	return v, false
}

// roundTo rounds d ≥ 0 to a multiple of res: up, or half up. It saturates
// at the largest multiple below 2^63 ns.
func roundTo(d, res time.Duration, up bool) time.Duration {
	add := res / 2
	if up {
		add = res - 1
	}
	if d > math.MaxInt64-add {
		return math.MaxInt64 / res * res
	}
	return (d + add) / res * res
}
