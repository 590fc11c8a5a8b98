package emulate

import (
	"context"
	"fmt"
	"math"
	"os"
	"sync/atomic"
	"time"
)

// Ledger is the delay ledger an emulated port applies per idle
// period (bpf/eeeemu.c "Delay ledger"; controller/ledger.go is the same
// rule decided by the agent): the port starts going down only while
// S + Reserve ≤ Rate × (t − Start), S the waits the packets that ended its
// idle periods paid since Start.
type Ledger struct {
	// On makes the ledger hold the port; off, S is still accounted.
	On bool `json:"on"`
	// Rate is l, the delay the port may add per unit of time, in [0, 1]
	// (programmed as a Q32 fraction; a larger rate is taken as 1, which
	// only tightens the ledger).
	Rate float64 `json:"rate"`
	// Reserve is c: the largest wait one more miss can cost.
	Reserve time.Duration `json:"reserve_ns"`
	// Start is when the budget began (CLOCK_MONOTONIC). Setting another
	// start restarts the ledger: S, held and overruns from 0.
	Start time.Duration `json:"start_ns"`
}

// LedgerStatus is the ledger's configuration and account.
type LedgerStatus struct {
	Ledger
	// Budget is Rate × (now − Start); Spent S.
	Budget time.Duration `json:"budget_ns"`
	Spent  time.Duration `json:"spent_ns"`
	// Held counts idle periods the ledger kept awake past their t_PDT;
	// Overruns charges after which S exceeded the budget.
	Held     uint64 `json:"held"`
	Overruns uint64 `json:"overruns"`
}

// Ratio is S/B (0 while B is 0).
func (s LedgerStatus) Ratio() float64 {
	if s.Budget <= 0 {
		return 0
	}
	return float64(s.Spent) / float64(s.Budget)
}

const q32One = uint64(1) << 32

// rateQ32 is l as the program's Q32 fraction, clamped to [0, 1].
func rateQ32(l float64) uint64 {
	if !(l > 0) {
		return 0
	}
	if l >= 1 {
		return q32One
	}
	return uint64(math.Round(l * float64(q32One)))
}

// ledgerSpan is the least t − start at which floor((t − start) × rate /
// 2^32) reaches need, MaxUint64 beyond 2^63 ns: bpf/eeeemu.c's ledger_span.
// rate is in (0, 2^32].
func ledgerSpan(need, rate uint64) uint64 {
	q, r := need/rate, need%rate
	if q>>31 != 0 {
		return math.MaxUint64
	}
	rs := r << 32
	s := q<<32 + rs/rate
	if rs%rate != 0 {
		s++
	}
	return s
}

// ledgerAllow is the earliest time the ledger lets the port start going
// down: bpf/eeeemu.c's ledger_allow.
func ledgerAllow(spent, reserve, rate, start uint64) uint64 {
	need := spent + reserve
	if need < spent {
		return math.MaxUint64
	}
	span := ledgerSpan(need, rate)
	if span == math.MaxUint64 || start+span < start {
		return math.MaxUint64
	}
	return start + span
}

// SetLedger programs the port's delay ledger. The program reads the
// fields one at a time; Start is written last, so that a restart takes
// the new rate and reserve with it.
func (p *Port) SetLedger(l Ledger) error {
	if p.cfg == nil {
		return fmt.Errorf("%s: %w", p.ifname, os.ErrClosed)
	}
	if l.Reserve < 0 || l.Start < 0 || math.IsNaN(l.Rate) || l.Rate < 0 {
		return fmt.Errorf("%s: ledger: rate, reserve and start must be ≥ 0", p.ifname)
	}
	on := uint32(0)
	if l.On {
		on = 1
	}
	atomic.StoreUint64(&p.cfg.LedgerRateQ32, rateQ32(l.Rate))
	atomic.StoreUint64(&p.cfg.LedgerReserveNs, uint64(l.Reserve))
	atomic.StoreUint64(&p.cfg.LedgerStartNs, uint64(l.Start))
	atomic.StoreUint32(&p.cfg.Ledger, on)
	return nil
}

// ledgerConfig reads the ledger's configuration back.
func (p *Port) ledgerConfig() (l Ledger, rate, reserve, start uint64) {
	rate = atomic.LoadUint64(&p.cfg.LedgerRateQ32)
	reserve = atomic.LoadUint64(&p.cfg.LedgerReserveNs)
	start = atomic.LoadUint64(&p.cfg.LedgerStartNs)
	l = Ledger{On: atomic.LoadUint32(&p.cfg.Ledger) != 0, Rate: float64(min(rate, q32One)) / float64(q32One),
		Reserve: time.Duration(min(reserve, math.MaxInt64)), Start: time.Duration(min(start, math.MaxInt64))}
	return l, rate, reserve, start
}

// SetLedger programs an emulated port's delay ledger
// (Port.SetLedger); ifname must be emulated.
func (b *Backend) SetLedger(ctx context.Context, ifname string, l Ledger) error {
	return b.withEmulated(ctx, ifname, func(p *Port) error { return p.SetLedger(l) })
}

// MissCost is the largest wait one miss can cost on the port in its mode
// (scaled times): the rest of t_s and then the t_w of the deepest state the
// mode reaches, plus per link the handshake's round trip 2H (a packet that
// comes as the link commits to going down) — the delay ledger's reserve c,
// one cycle of docs/model.md §1.1. 0 for always-on.
func (s Status) MissCost() time.Duration {
	var c time.Duration
	switch s.Mode {
	case ModeFastWake.String():
		c = s.FastWake.Sleep + s.FastWake.Wake
	case ModeDeepSleep.String():
		c = s.DeepSleep.Sleep + s.DeepSleep.Wake
	case ModeHybrid.String():
		c = s.FastWake.Sleep + max(s.FastWake.Wake, s.DeepSleep.Wake)
	default:
		return 0
	}
	if s.Link != nil {
		c += 2 * s.Link.Handshake
	}
	return c
}
