package eee

import (
	"fmt"
	"math"

	"github.com/lpictl/lpictl/sim/power"
)

// Mode is a run's low-power mode (docs/model.md §1).
type Mode uint8

// Modes.
const (
	AlwaysOn Mode = iota
	FastWake
	DeepSleep
	Hybrid
)

// ModeFor maps a run's low-power mode (sim/power, where mode names are
// parsed) to the link model's.
func ModeFor(m power.Mode) (Mode, error) {
	switch m {
	case power.AlwaysOn:
		return AlwaysOn, nil
	case power.FastWake:
		return FastWake, nil
	case power.DeepSleep:
		return DeepSleep, nil
	case power.Hybrid:
		return Hybrid, nil
	}
	return 0, fmt.Errorf("unknown mode %q", m)
}

func (m Mode) String() string {
	return [...]string{"always-on", "fast-wake", "deep-sleep", "hybrid"}[m]
}

// State is a link's power state.
type State uint8

// States, in the order of [Link.Times].
const (
	Wake State = iota
	GoingDown
	LowFastWake
	LowDeepSleep
	GoingUp
	// Off: switched off by consolidation (docs/model.md §1.3), not
	// low-power idle; it ends only when the network switches the link on
	// again (Link.PowerOn), after which it goes up for Params.WakeOff.
	Off
	NumStates
)

func (s State) String() string {
	return [...]string{"wake", "going_down", "fast_wake", "deep_sleep", "going_up", "off"}[s]
}

// LPI is how the two directions of a link enter low-power idle (model
// §1.2): together after a handshake, or each transmitter on its own.
type LPI uint8

// Symmetries.
const (
	// PerLink: both ends go down together when both are idle and the
	// owner's timer has expired, after the power-down handshake (model
	// §1.1). The zero value: the papers' model.
	PerLink LPI = iota
	// PerDirection: each end's transmitter has its own state machine and
	// t_PDT timer and goes down alone, with no handshake; a packet pays
	// the wake-up of its own direction only. A network in this mode keeps
	// one Link per direction, used by one end (end 0) with Handshake 0:
	// the same timeline as PerLink with the peer never busy and H = 0.
	PerDirection
)

func (l LPI) String() string {
	if l == PerDirection {
		return "per-direction"
	}
	return "per-link"
}

// Never is a t_PDT that never expires.
const Never int64 = math.MaxInt64

// Params are the timing of a link's power states, in picoseconds.
type Params struct {
	Mode            Mode
	SleepFW, WakeFW int64 // t_s and t_w of Fast Wake
	SleepDS, WakeDS int64 // t_s and t_w of Deep Sleep
	HybridHold      int64 // hybrid: time in Fast Wake before Deep Sleep, when the owner's predictor chooses none
	Handshake       int64 // one-way time of a control message: serialisation + propagation (0 per direction)
	// LPI is the link's symmetry (model §1.2). Link's timeline is the same
	// in both; with PerDirection the caller keeps one Link per direction,
	// used by end 0 only, and sets Handshake to 0 (nothing is negotiated).
	LPI LPI
	// Gate, when set, is the application-level delay budget every link of
	// the network shares (gate.go): a link sleeps only while it is open
	// and is woken when it closes.
	Gate *Gate
	// WakeOff is the time a link switched off (Off) takes to carry bits
	// again once switched on (the preset's off.wake_time).
	WakeOff        int64
	firstS, firstW int64
	firstLow       State
}

// Prepare fills derived fields; call it once after setting the others.
func (p *Params) Prepare() {
	switch p.Mode {
	case FastWake, Hybrid:
		p.firstS, p.firstW, p.firstLow = p.SleepFW, p.WakeFW, LowFastWake
	default:
		p.firstS, p.firstW, p.firstLow = p.SleepDS, p.WakeDS, LowDeepSleep
	}
}

// Cycle is the longest stall one power-down can cause: a packet that comes
// as both ends commit to going down waits two handshakes, t_s and the
// deepest t_w of the mode. Call it after Prepare and setting Handshake.
func (p *Params) Cycle() int64 {
	w := p.firstW
	if p.Mode == Hybrid {
		w = max(w, p.WakeDS)
	}
	return 2*p.Handshake + p.firstS + w
}

// WakeTime is the t_w a packet pays when it finds the link in the first
// low-power state the mode enters.
func (p *Params) WakeTime() int64 { return p.firstW }

// Link is the power state of one link, shared by its two ends (0 and 1):
// both ends change state together (docs/model.md §1.1).
type Link struct {
	// ReadyAt is when the link carries bits again (awake): later than now
	// while it wakes up.
	ReadyAt   int64
	idleFrom  int64 // when the link last became idle (both ends)
	pdt       int64 // t_PDT of the owner for this idle period
	hold      int64 // hybrid hold of the owner for this idle period (−1: Params.HybridHold)
	accounted int64 // state times are counted up to here
	busy      uint8 // bit per end: output queue non-empty or transmitting
	owner     uint8 // end that transmitted last: its PDT timer runs
	off       bool  // switched off (PowerOff) until PowerOn
	// Times is the time spent in each state (ps), up to the last event.
	Times [NumStates]int64
	// Downs counts power-down transitions, Ups wake-ups, Deepens hybrid
	// Fast Wake → Deep Sleep steps; Offs the times the link was switched
	// off, Ons switched on again.
	Downs, Ups, Deepens uint32
	Offs, Ons           uint32
}

// PowerOff switches the idle link off at now (docs/model.md §1.3): its
// states up to now are resolved as at the end of a run, then it is Off,
// drawing the off power, whatever its t_PDT, until PowerOn. The caller
// makes sure neither end holds or sends a packet, and that the owner's
// t_PDT is set.
func (l *Link) PowerOff(p *Params, now int64) {
	if l.off {
		return
	}
	l.Finish(p, now)
	l.off = true
	l.Offs++
}

// PowerOn switches an Off link on at now: it goes up for p.WakeOff and is
// then idle, from the returned ready time, with end 0's t_PDT pdt running
// (as after Start). No packet waits for it: the network routes none over
// the link before ready.
func (l *Link) PowerOn(p *Params, now, pdt int64) (ready int64) {
	if !l.off {
		return now
	}
	l.account(Off, now)
	ready = now + p.WakeOff
	l.account(GoingUp, ready)
	l.off = false
	l.Ons++
	l.ReadyAt, l.idleFrom, l.owner, l.pdt, l.hold = ready, ready, 0, pdt, -1
	return ready
}

// IsOff reports whether the link is switched off.
func (l *Link) IsOff() bool { return l.off }

// Start makes the link idle at time now with end 0's t_PDT running, as if a
// transmission had just ended (so that a link nothing uses goes down).
func (l *Link) Start(now, pdt int64) {
	*l = Link{ReadyAt: now, idleFrom: now, pdt: pdt, hold: -1, accounted: now}
}

// wakeFrom accounts the link low from downEnd (going down over) to a
// wake-up at `at` — in hybrid mode Fast Wake for the hold, then Deep
// Sleep — and returns the t_w of the state it wakes from.
func (l *Link) wakeFrom(p *Params, downEnd, at int64) int64 {
	if hold := l.holdOf(p); p.Mode == Hybrid && at-downEnd >= hold {
		l.account(LowFastWake, downEnd+hold)
		l.Deepens++
		l.account(LowDeepSleep, at)
		return p.WakeDS
	}
	l.account(p.firstLow, at)
	return p.firstW
}

// holdOf is the hybrid hold in force for the idle period.
func (l *Link) holdOf(p *Params) int64 {
	if l.hold >= 0 {
		return l.hold
	}
	return p.HybridHold
}

// Busy reports whether an end holds or sends a packet.
func (l *Link) Busy() bool { return l.busy != 0 }

func (l *Link) account(s State, until int64) {
	if until > l.accounted {
		l.Times[s] += until - l.accounted
		l.accounted = until
	}
}

// Need reports that a packet entered the output queue of end at time now
// (the queue was empty and the end was not transmitting). It returns when
// the end may transmit, and whether the packet had to wait for the link's
// power state (a miss: the link had started going down, was low, or was
// waking up).
//
// Timeline of an idle period that began at I with the owner's t_PDT = P and
// one-way handshake time H: the owner's timer expires at T = I + P and it
// sends a power-down request; the peer answers at T + H; both ends start
// going down at D = T + 2H; going down ends at D + t_s. A packet for the
// peer before T + H makes the peer refuse (it is transmitting): no delay.
// A packet in [T, D) at the owner, or in [T+H, D) at the peer, finds the
// link committed to going down: it waits for D + t_s, then t_w. A packet
// in [D, D+t_s) waits the t_s remainder and t_w; a packet finding the link
// low waits the t_w of that state.
func (l *Link) Need(p *Params, now int64, end uint8) (ready int64, missed bool) {
	if l.off {
		// The network never sends over a link it switched off; if it
		// did, the packet would wait for the link to come back.
		ready = l.PowerOn(p, now, Never)
		l.busy |= 1 << end
		return ready, true
	}
	if l.busy != 0 {
		l.busy |= 1 << end
		if l.ReadyAt > now {
			return l.ReadyAt, true
		}
		return now, false
	}
	l.busy |= 1 << end
	// A packet in the picosecond the link became idle: back-to-back
	// traffic, no idle period, no timer (docs/model.md §1.1).
	if p.Mode == AlwaysOn || now == l.idleFrom || l.pdt >= Never-l.idleFrom-4*p.Handshake {
		l.account(Wake, now)
		l.ReadyAt = now
		return now, false
	}
	expire := l.idleFrom + l.pdt
	if p.Gate != nil {
		var waking int64
		if expire, waking = l.gatedExpiry(p, now); waking > now {
			l.account(GoingUp, waking)
			l.ReadyAt = waking
			p.Gate.Charge(now, waking)
			return waking, true
		}
	}
	if now < expire || (end != l.owner && now < expire+p.Handshake) {
		l.account(Wake, now)
		l.ReadyAt = now
		return now, false
	}
	down := expire + 2*p.Handshake
	downEnd := down + p.firstS
	l.account(Wake, down)
	l.Downs++
	l.Ups++
	if now < downEnd {
		l.account(GoingDown, downEnd)
		ready = downEnd + p.firstW
	} else {
		l.account(GoingDown, downEnd)
		ready = now + l.wakeFrom(p, downEnd, now)
	}
	l.account(GoingUp, ready)
	l.ReadyAt = ready
	if p.Gate != nil {
		p.Gate.Charge(now, ready)
	}
	return ready, true
}

// Release reports that end's output queue emptied after its last bit at
// time now, with pdt the end's t_PDT (Never for no timer). When the other
// end is idle too, the link's idle period starts and end owns the timer.
func (l *Link) Release(now int64, end uint8, pdt int64) {
	l.busy &^= 1 << end
	if l.busy == 0 {
		l.idleFrom, l.owner, l.pdt, l.hold = now, end, pdt, -1
	}
}

// Owner is the end whose PDT timer runs while the link is idle (the end
// that transmitted last).
func (l *Link) Owner() uint8 { return l.owner }

// IdleFrom is when the link last became idle (both ends).
func (l *Link) IdleFrom() int64 { return l.idleFrom }

// SetPDT sets the t_PDT of the idle period in progress: the owner's timer
// value, when the owner decides it after Release (lazily, at most once per
// idle period and before any packet needs the link again).
func (l *Link) SetPDT(pdt int64) { l.pdt = pdt }

// SetHold sets the hybrid hold of the idle period in progress, chosen by
// the owner's predictor with its t_PDT (−1: Params.HybridHold).
func (l *Link) SetHold(hold int64) { l.hold = hold }

// Finish accounts the link's states up to the end of the run at now.
func (l *Link) Finish(p *Params, now int64) {
	if l.off {
		l.account(Off, now)
		return
	}
	if l.busy != 0 || p.Mode == AlwaysOn || l.pdt >= Never-l.idleFrom-4*p.Handshake {
		l.account(Wake, now)
		return
	}
	expire := l.idleFrom + l.pdt
	if p.Gate != nil {
		var waking int64
		if expire, waking = l.gatedExpiry(p, now); waking > now {
			l.account(GoingUp, now)
			return
		}
	}
	down := expire + 2*p.Handshake
	if now <= down {
		l.account(Wake, now)
		return
	}
	l.account(Wake, down)
	l.Downs++
	downEnd := down + p.firstS
	l.account(GoingDown, min(now, downEnd))
	if now <= downEnd {
		return
	}
	if hold := l.holdOf(p); p.Mode == Hybrid && now-downEnd > hold {
		l.account(LowFastWake, downEnd+hold)
		l.Deepens++
		l.account(LowDeepSleep, now)
		return
	}
	l.account(p.firstLow, now)
}

// Accounted is the time up to which Times runs.
func (l *Link) Accounted() int64 { return l.accounted }
