package controller

import (
	"math"
	"time"

	"github.com/lpictl/lpictl/predictor"
)

// Stats are a port's counters and its t_PDT figures.
type Stats struct {
	IdlePeriods uint64 `json:"idle_periods"`
	Hits        uint64 `json:"hits"`
	Misses      uint64 `json:"misses"`
	Decisions   uint64 `json:"decisions"`    // predictor consultations
	Changes     uint64 `json:"changes"`      // t_PDT in force changed
	Clamps      uint64 `json:"clamps"`       // answers cut by the register range
	Suppressed  uint64 `json:"suppressed"`   // changes held back by hysteresis
	RateLimited uint64 `json:"rate_limited"` // changes held back by min_change_interval
	// Current is the t_PDT in force, Recommended the predictor's last raw
	// answer, Mean the time-weighted mean of t_PDT since the port started.
	Current     time.Duration `json:"current_pdt_ns"`
	Recommended time.Duration `json:"recommended_pdt_ns"`
	Mean        time.Duration `json:"mean_pdt_ns"`
	StateBytes  int           `json:"state_bytes"`
	// Hold is the hybrid hold the predictor chose with its last answer
	// (predictor.HoldChooser; absent when it chooses none).
	Hold *time.Duration `json:"hold_ns,omitempty"`
	// RoundedUp counts answers the register raised to its next step
	// (Register.Rounding up) rather than lowering them below the gap
	// they were meant to outlast.
	RoundedUp uint64 `json:"rounded_up"`
	// Ledger is the delay ledger's state; absent when the port has none.
	Ledger *LedgerStats `json:"ledger,omitempty"`
}

// Port controls the t_PDT of one link end.
//
// Its layout puts what Decide, IdleEnded and Sent touch in its first two
// cache lines; the ledger and the rarely changed counters follow (256 B in
// all). The configuration is not copied: a port points at its Shared one,
// which many ports may share, and which keeps the register's range and
// resolution resolved.
type Port struct {
	// First line: the decision.
	pred        predictor.Predictor
	current     time.Duration // t_PDT in force (Stats.Current)
	recommended time.Duration // the predictor's last raw answer
	decisions   uint64
	hi          time.Duration // the register's top (its bottom and resolution are sh's)
	sh          *Shared       // the configuration: read-only, shared with other ports
	since       time.Duration // when current took effect

	// Second line: observations and changes.
	trafficSince bool // an observation arrived since the last computation
	changed      bool
	onInterval   bool // cfg.Recompute == OnInterval
	hasRounds    bool // rounds != nil, kept in this hot cache line: every Decide and SleepAllowedAt asks
	roundUp      bool // cfg.Register.Rounding == RoundUp
	holds        bool // pred is a predictor.HoldChooser: it chooses hybrid holds
	holdOK       bool // hold is the predictor's choice (it made one)
	rationed     bool // pred is a predictor.Rationed: it chooses what a held port does
	lastCompute  time.Duration
	hits, misses uint64
	clamps       uint64
	changes      uint64
	lastChange   time.Duration

	// The delay ledger (ledger.go): what Decide and IdleEnded check.
	led ledger

	// Cold: changes held back, the time-weighted mean, the configuration.
	weighted    float64 // ∫ t_PDT dt before since, in ns²
	suppressed  uint64
	rateLimited uint64
	start       time.Duration
	hold        time.Duration // the predictor's last hold (holdOK)
	roundedUp   uint64

	// rounds is the agent's rounds (Config.Rounds; nil: none).
	rounds *rounds
}

// Shared is a port configuration with its defaults filled and validated
// once (NewShared), for many ports: the ports built from it
// (Shared.InitPort) point at it rather than each keeping a copy. It is
// never changed after NewShared.
type Shared struct {
	cfg     Config
	lo, res time.Duration // the register's bottom and resolution
	hi      time.Duration // and top
}

// NewShared fills cfg's defaults and validates it.
func NewShared(cfg Config) (*Shared, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Shared{cfg: cfg, res: cfg.Register.Resolution.D()}
	s.lo, s.hi = cfg.Register.Range()
	return s, nil
}

// Config returns the configuration with defaults filled.
func (s *Shared) Config() Config { return s.cfg }

// NewPort returns a port that starts at now with the predictor's first answer.
func NewPort(cfg Config, pred predictor.Predictor, now time.Duration) (*Port, error) {
	p := new(Port)
	if err := InitPort(p, cfg, pred, now); err != nil {
		return nil, err
	}
	return p, nil
}

// InitPort makes *p the port NewPort(cfg, pred, now) returns, in place
// (e.g. in an array of ports, or next to its predictor). *p must not be in
// use.
func InitPort(p *Port, cfg Config, pred predictor.Predictor, now time.Duration) error {
	s, err := NewShared(cfg)
	if err != nil {
		return err
	}
	s.InitPort(p, pred, now)
	return nil
}

// InitPort makes *p the port NewPort(s.Config(), pred, now) returns, in
// place, pointing at s. *p must not be in use.
func (s *Shared) InitPort(p *Port, pred predictor.Predictor, now time.Duration) {
	cfg := &s.cfg
	*p = Port{
		pred: pred, hi: s.hi, sh: s,
		onInterval: cfg.Recompute == OnInterval,
		start:      now, since: now, lastCompute: now,
		roundUp: cfg.Register.Rounding == RoundUp,
	}
	p.led.init(*cfg, pred, now)
	_, p.holds = pred.(predictor.HoldChooser)
	_, p.rationed = pred.(predictor.Rationed)
	p.current = p.consult(now)
	if cfg.Rounds != nil {
		p.initRounds(cfg.Rounds, now)
	}
}

// Config returns the port's configuration with defaults filled.
func (p *Port) Config() Config { return p.sh.cfg }

// Predictor returns the port's predictor.
func (p *Port) Predictor() predictor.Predictor { return p.pred }

// IdleEnded records an ended idle period: a hit if the port was still awake
// when the next packet came, a miss otherwise.
func (p *Port) IdleEnded(ip predictor.IdlePeriod) {
	if ip.Missed {
		p.misses++
	} else {
		p.hits++
	}
	if p.hasRounds {
		p.idleEndedRounds(ip)
		return
	}
	if p.led.rated != nil {
		p.led.charge(ip, false)
	}
	p.pred.Observe(ip)
	p.trafficSince = true
}

// Sent records packets sent that travel hops hops to their destination.
func (p *Port) Sent(hops int, packets uint64) {
	p.pred.ObserveHops(hops, packets)
	p.trafficSince = true
}

// PDT returns the t_PDT in force: with Config.Rounds, the one the agent
// last wrote to the port.
func (p *Port) PDT() time.Duration {
	if p.hasRounds {
		return p.rounds.written
	}
	return p.current
}

// Hold returns the hybrid hold (time in Fast Wake before Deep Sleep) the
// predictor chose with its last answer; ok is false when it chooses none
// (the caller then uses its configured hold). The hold follows every
// consultation: hysteresis and the change interval hold back t_PDT only.
func (p *Port) Hold() (hold time.Duration, ok bool) { return p.hold, p.holdOK }

// Decide returns the t_PDT to arm now, recomputing it when the policy says
// so: with OnQueueEmpty (call it when the output queue empties) if there was
// traffic since the last computation; with OnInterval once Interval has
// passed since the last computation.
//
// Under the delay ledger (ledger.go) the answer is at least the time until
// the ledger lets the port go down: with OnQueueEmpty the idle period
// starting now holds the port awake that long; with OnInterval the whole
// interval does (Never). Stats.Current stays the register's value.
//
// With Config.Rounds the answer is what the agent last wrote to the port,
// held per idle period by the port's ledger (rounds.go).
func (p *Port) Decide(now time.Duration) time.Duration {
	if p.hasRounds {
		return p.decideRounds(now)
	}
	if p.onInterval {
		if now-p.lastCompute >= p.sh.cfg.Interval.D() {
			p.Recompute(now)
		}
	} else if p.trafficSince {
		p.Recompute(now)
	}
	if p.led.rated == nil {
		return p.current
	}
	allow := p.led.allowedAt(now)
	if allow <= now {
		return p.current
	}
	if p.onInterval {
		p.led.held++
		return Never
	}
	if hold := allow - now; hold > p.current {
		p.led.held++
		if p.rationed {
			return max(p.pred.(predictor.Rationed).Held(now, hold), hold)
		}
		return hold
	}
	return p.current
}

// ChargeDelay charges the ledger a wait that ended no idle period: a
// packet that found the link asleep before its port had ever transmitted
// (a link starts idle, with the t_PDT Decide gave at the start). Nothing
// else is recorded: the predictor sees idle periods only.
func (p *Port) ChargeDelay(now, d time.Duration) {
	if p.hasRounds && !p.rounds.ledgerOn {
		return
	}
	if p.led.rated != nil && d > 0 {
		p.led.charge(predictor.IdlePeriod{End: now, Delay: d}, p.hasRounds)
	}
}

// SleepAllowedAt is the earliest time ≥ now at which the ledger lets the
// port's link start going down (now without a ledger). A link whose two
// ends both pay for its wake-ups sleeps only when both allow it.
func (p *Port) SleepAllowedAt(now time.Duration) time.Duration {
	return max(p.SleepFloor(), now)
}

// SleepFloor is the time before which the ledger keeps the port's link
// from going down, as the port last worked it out (math.MinInt64 without a
// ledger): SleepAllowedAt(now) is max(SleepFloor(), now). Only Decide,
// IdleEnded and ChargeDelay change it, so a caller may keep a copy taken
// after each.
func (p *Port) SleepFloor() time.Duration {
	if p.led.rated == nil || (p.hasRounds && !p.rounds.ledgerOn) {
		return math.MinInt64
	}
	return p.led.readyAt
}

// Guarded reports whether the port runs under the delay ledger.
func (p *Port) Guarded() bool { return p.led.rated != nil }

// Recompute consults the predictor now and applies its answer, subject to
// the register, hysteresis and the minimum change interval.
func (p *Port) Recompute(now time.Duration) time.Duration {
	v := p.consult(now)
	cur := p.current
	if v == cur {
		return cur
	}
	if p.changed && now-p.lastChange < p.sh.cfg.MinChangeInterval.D() {
		p.rateLimited++
		return cur
	}
	if h := p.sh.cfg.Hysteresis; h > 0 && float64(absDiff(v, cur)) <= h*float64(cur) {
		p.suppressed++
		return cur
	}
	p.weighted += float64(cur) * float64(now-p.since)
	p.since = now
	p.current = v
	p.changes++
	p.lastChange, p.changed = now, true
	return v
}

// consult asks the predictor and fits the answer to the register
// (Register.Apply with the range resolved once).
func (p *Port) consult(now time.Duration) time.Duration {
	p.decisions++
	p.trafficSince = false
	p.lastCompute = now
	raw := p.pred.Predict(now)
	p.recommended = raw
	if p.holds {
		p.hold, p.holdOK = p.chooseHold()
	}
	if raw >= p.hi {
		if raw > p.hi {
			p.clamps++
		}
		return p.hi
	}
	res := p.sh.res
	v := roundTo(raw, res, p.roundUp)
	if p.roundUp && v != raw && v-raw > res/2 {
		p.roundedUp++ // half up would have rounded it down
	}
	if v > p.hi {
		p.clamps++
		return p.hi
	}
	if lo := p.sh.lo; v < lo {
		p.clamps++
		return lo
	}
	return v
}

// chooseHold asks the predictor (a HoldChooser) for its hold: without an
// interface lookup when it is the simulator's PerfBoundCorrect.
func (p *Port) chooseHold() (time.Duration, bool) {
	if pbc, ok := p.pred.(*predictor.PerfBoundCorrect); ok {
		return pbc.Hold()
	}
	return p.pred.(predictor.HoldChooser).Hold()
}

// Stats returns the counters and t_PDT figures at now.
func (p *Port) Stats(now time.Duration) Stats {
	s := p.Figures(now)
	if l, ok := p.LedgerStats(now); ok {
		s.Ledger = &l
	}
	if p.holdOK {
		h := p.hold
		s.Hold = &h
	}
	return s
}

// Figures is Stats without its optional parts (Ledger, Hold), so that it
// allocates nothing: for callers that sum millions of ports (the
// simulator's report and ports.csv), where Stats would leave 64 B of
// garbage a port.
func (p *Port) Figures(now time.Duration) Stats {
	s := Stats{
		IdlePeriods: p.hits + p.misses, Hits: p.hits, Misses: p.misses,
		Decisions: p.decisions, Changes: p.changes, Clamps: p.clamps,
		Suppressed: p.suppressed, RateLimited: p.rateLimited,
		Current: p.current, Recommended: p.recommended,
	}
	s.StateBytes = p.pred.StateBytes()
	s.RoundedUp = p.roundedUp
	s.Mean = s.Current
	if span := now - p.start; span > 0 {
		w := p.weighted + float64(s.Current)*float64(now-p.since)
		s.Mean = time.Duration(w / float64(span))
	}
	return s
}

// LedgerStats is Stats' Ledger as a value; ok is false when the port has
// no ledger.
func (p *Port) LedgerStats(now time.Duration) (l LedgerStats, ok bool) {
	return p.led.stats(now)
}

func absDiff(a, b time.Duration) time.Duration {
	if a > b {
		return a - b
	}
	return b - a
}
