package replay

import (
	"fmt"
	"math"
	"math/bits"
	"time"

	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/predictor"
)

// AgentPort is how a host agent drives a port that applies the delay
// ledger itself (an emulated EEE port, docs/hil.md): the agent's
// controller decides t_PDT at the start of every idle period, without a
// ledger of its own, but the agent writes the port's timer only once per
// round, and the port holds itself awake by its own ledger, per idle
// period. ReplayAgentPort replays a port trace with this model, so that
// its outcomes are the port's, not the controller's.
type AgentPort struct {
	// Interval is the agent's round; rounds fall at FirstRound + k ×
	// Interval. 0 makes the port arm every decision at once (and its
	// ledger, if any, hold from the start).
	Interval   time.Duration
	FirstRound PS
	// Rounds, when set, are the times the agent's rounds really ran for
	// the port (its trace's round lines, TraceRounds), in order: they
	// replace FirstRound + k × Interval, which Interval must still be
	// > 0 for. The agent's ticker starts after it has opened its ports
	// and each write lands later still, so modelled rounds fall early;
	// per link that changes what a controller learns (docs/hil.md).
	Rounds []PS
	// Initial is the port's timer before the agent's first write.
	Initial time.Duration
	// Ledger is the port's own ledger; nil: none.
	Ledger *PortLedger
}

// PortLedger is the delay ledger as an emulated port applies it
// (bpf/eeeemu.c "Delay ledger"): the wait of every packet that ends an
// idle period is added to S; an idle period whose timer expires at
// t = free + t_PDT starts going down only if S + c ≤ ⌊(t − start) × l⌋
// (l a Q32 fraction, integer ns), otherwise at the earliest time that
// holds, if the period lasts that long. The agent programs it when it
// first writes the port's timer (S starts from 0 then) and keeps l at its
// predictor's BudgetRate, once per round.
//
// controller's ledger is the same inequality, but with recompute
// interval its Decide can only hold a port for a whole interval (it
// answers controller.Never), which is not what the port does.
type PortLedger struct {
	Reserve time.Duration // c
	Start   PS            // when the budget began, on the trace's clock
}

// q32One is 1 as the port's Q32 rate.
const q32One = uint64(1) << 32

// RateQ32 is l as the port's Q32 fraction, clamped to [0, 1] (hwlink/emulate
// rateQ32).
func RateQ32(l float64) uint64 {
	if !(l > 0) {
		return 0
	}
	if l >= 1 {
		return q32One
	}
	return uint64(math.Round(l * float64(q32One)))
}

// LedgerAllow is the earliest time (ns) at which a port ledger with S =
// spent, reserve c, Q32 rate and start lets the port start going down:
// the least t with ⌊(t − start) × rate / 2^32⌋ ≥ spent + reserve,
// math.MaxUint64 for never (bpf/eeeemu.c ledger_allow).
func LedgerAllow(spent, reserve, rate, start uint64) uint64 {
	need := spent + reserve
	if need < spent || rate == 0 {
		return math.MaxUint64
	}
	q, r := need/rate, need%rate
	if q>>31 != 0 {
		return math.MaxUint64
	}
	rs := r << 32
	span := q<<32 + rs/rate
	if rs%rate != 0 {
		span++
	}
	if s, c := bits.Add64(start, span, 0); c == 0 {
		return s
	}
	return math.MaxUint64
}

// ReplayAgentPort replays a port trace (rows in order, as ParseTrace gives
// them) through port, the agent's controller (built at the trace's clock,
// without a ledger), with the port's timing and ap's model of the agent
// and the port:
//
//   - each row's decision is port.Decide at its start, as the agent's;
//   - at each round the agent writes the controller's t_PDT as of the
//     rows that ended before the round (the port arms it from its next
//     idle period); the first write also programs the port's ledger;
//   - the port arms its timer, extended by its ledger (PortLedger), and
//     the row's outcome, wait and sleep follow from that (Timing, as
//     Replayer; the handshake is ignored: such a port has no peer);
//   - the controller learns what the agent feeds it: the decision's own
//     outcome (length ≥ decision), with the port's wait only when the port
//     ran the decision unchanged.
//
// Step.PDT is the decision (the trace's pdt_ps column); Step.Missed,
// Delay and Asleep are the port's. Result.Agreement compares both with
// the trace, whose outcome column is the port's.
func ReplayAgentPort(port *controller.Port, timing Timing, rows []TraceRow, ap AgentPort) ([]Step, Result, error) {
	r := agentReplay{port: port, ap: ap, timing: timing, portPDT: ap.Initial, next: ap.FirstRound}
	r.bounded, _ = port.Predictor().(predictor.Bounded)
	// Without rounds the port arms every decision at once, its ledger on
	// from the start.
	r.ledger = ap.Interval <= 0 && ap.Ledger != nil
	steps := make([]Step, 0, len(rows))
	for i := range rows {
		st, err := r.row(rows, i)
		if err != nil {
			return steps, r.result(), fmt.Errorf("row %d (line %d): %w", i+1, rows[i].Line, err)
		}
		steps = append(steps, st)
	}
	return steps, r.result(), nil
}

type agentReplay struct {
	port    *controller.Port
	bounded predictor.Bounded
	ap      AgentPort
	timing  Timing

	portPDT time.Duration // the timer the port arms
	next    PS            // the next round
	// nextRound indexes the next of AgentPort.Rounds.
	nextRound int
	decided   []time.Duration
	seen      int // rows the last round had seen (ended before it)
	ledger    bool
	rate      uint64 // Q32
	// traceOutcomes: the controller learns the trace's outcome and wait
	// where the port ran its decision (AgentLinkEnd.TraceOutcomes).
	traceOutcomes bool
	// fromStart: S counts the waits of the idle periods that end from
	// the ledger's start on, not from the agent's first write.
	fromStart bool
	spent     uint64 // S, ns
	prevEnd   PS

	res    Result
	sumPDT float64
	now    PS
}

// round is the agent's round at time at: it writes the controller's t_PDT
// as of the rows that ended before it.
func (r *agentReplay) round(rows []TraceRow, i int, at PS) {
	for r.seen < i && rows[r.seen].End() < at {
		r.seen++
	}
	if r.seen == 0 {
		return
	}
	if pdt := r.decided[r.seen-1]; pdt != r.portPDT {
		r.portPDT = pdt
		if r.ap.Ledger != nil && !r.ledger {
			r.ledger = true
			if !r.fromStart {
				r.spent = 0
			}
		}
	}
	if r.ledger && r.bounded != nil {
		r.rate = RateQ32(r.bounded.BudgetRate())
	}
}

func (r *agentReplay) row(rows []TraceRow, i int) (Step, error) {
	row := rows[i]
	d, err := r.arm(rows, i)
	if err != nil {
		return Step{}, err
	}

	// The port's timer, extended by its ledger (all in ns, as the
	// program).
	p := r.portPDT
	free := uint64(row.Start / 1000)
	gapNS := row.Gap.D()
	held := false
	if p < controller.Never && gapNS >= p {
		if allow, ok := r.allow(); ok && allow > free+uint64(p) {
			held = true
			if allow-free >= uint64(controller.Never) {
				p = controller.Never
			} else {
				p = time.Duration(allow - free)
			}
		}
	}
	st := Step{Index: len(r.decided), Start: row.Start, Gap: row.Gap, PDT: d}
	if p < controller.Never && gapNS >= p {
		st.Missed = true
		downEnd, ok := FromDuration(p + r.timing.Sleep)
		if !ok {
			return st, errOverflow
		}
		st.Delay, st.Asleep, st.DeepAsleep, st.Deep = r.timing.missAt(downEnd, row.Gap, r.hold())
	}
	r.record(row, st, !held && p == d)
	return st, nil
}

// arm checks row i, runs the agent's rounds up to its start and the
// controller's decision for it, which it returns; r.portPDT is then the
// timer the port runs for the row, r.ledger and r.rate its ledger.
func (r *agentReplay) arm(rows []TraceRow, i int) (time.Duration, error) {
	row := rows[i]
	if row.Gap <= 0 {
		return 0, fmt.Errorf("gap_ps must be > 0, got %d", row.Gap)
	}
	if row.Start < r.prevEnd {
		return 0, fmt.Errorf("start_ps %d is before the end of the previous idle period (%d)", row.Start, r.prevEnd)
	}
	if _, ok := add(row.Start, row.Gap); !ok {
		return 0, errOverflow
	}
	if iv, ok := FromDuration(r.ap.Interval); ok && iv > 0 {
		if len(r.ap.Rounds) > 0 {
			for r.nextRound < len(r.ap.Rounds) && r.ap.Rounds[r.nextRound] <= row.Start {
				r.round(rows, i, r.ap.Rounds[r.nextRound])
				r.nextRound++
			}
		} else {
			for r.next <= row.Start {
				r.round(rows, i, r.next)
				r.next += iv
			}
		}
	}
	for _, hc := range row.Sent {
		r.port.Sent(hc.Hops, hc.Packets)
	}
	d := r.port.Decide(row.Start.D())
	r.decided = append(r.decided, d)
	if r.ap.Interval <= 0 {
		r.portPDT = d
		if r.ledger && r.bounded != nil {
			r.rate = RateQ32(r.bounded.BudgetRate())
		}
	}
	return d, nil
}

// allow is the earliest time (ns) the port's ledger lets it go down
// (LedgerAllow); false without a ledger.
func (r *agentReplay) allow() (uint64, bool) {
	if !r.ledger {
		return 0, false
	}
	return LedgerAllow(r.spent, uint64(r.ap.Ledger.Reserve), r.rate, uint64(r.ap.Ledger.Start/1000)), true
}

// hold is the hybrid hold the port runs: its predictor's, else the
// timing's.
func (r *agentReplay) hold() time.Duration {
	if h, ok := r.port.Hold(); ok {
		return h
	}
	return r.timing.Hold
}

// missAt is what a packet arriving at `at` pays on a port that is low
// from downEnd (going down before it): its wait, the time the port was
// low before it and the part of that in Deep Sleep (hybrid, from hold
// on), and whether it woke the port from Deep Sleep.
func (t Timing) missAt(downEnd, at PS, hold time.Duration) (delay, asleep, deepAsleep PS, deep bool) {
	wake, _ := FromDuration(t.Wake)
	if at < downEnd {
		return downEnd - at + wake, 0, 0, false
	}
	asleep, delay = at-downEnd, wake
	if t.DeepWake > 0 {
		if hp, ok := FromDuration(hold); ok && asleep >= hp {
			dw, _ := FromDuration(t.DeepWake)
			return dw, asleep, asleep - hp, true
		}
	}
	return delay, asleep, 0, false
}

// record ends the row's idle period with its step st: the ledger charges
// its wait, the controller learns the decision's own outcome (the port's
// when ran: the port ran the decision unchanged, with its wait; else
// whether the period outlasted the decision), and the results count it.
func (r *agentReplay) record(row TraceRow, st Step, ran bool) {
	d := st.PDT
	end := row.End()
	gapNS := row.Gap.D()
	wait := CeilNS(st.Delay)
	if !r.fromStart || r.ap.Ledger != nil && end >= r.ap.Ledger.Start {
		r.spent += uint64(wait)
	}
	ip := predictor.IdlePeriod{End: end.D(), Length: gapNS, Missed: gapNS >= d, PDT: min(d, maxPDT)}
	switch {
	case ran && r.traceOutcomes:
		ip.Missed, ip.Delay = row.Missed, CeilNS(row.Delay)
	case ran:
		ip.Missed, ip.Delay = st.Missed, wait
	}
	r.port.IdleEnded(ip)
	r.prevEnd = end
	r.now = max(r.now, end+st.Delay)

	res := &r.res
	if res.IdlePeriods == 0 || d < res.MinPDT {
		res.MinPDT = d
	}
	res.MaxPDT = max(res.MaxPDT, d)
	res.IdlePeriods++
	if st.Missed {
		res.Misses++
	} else {
		res.Hits++
	}
	if st.Deep {
		res.DeepMisses++
	}
	res.IdleTime = satAdd(res.IdleTime, row.Gap)
	res.Asleep = satAdd(res.Asleep, st.Asleep)
	res.DeepAsleep = satAdd(res.DeepAsleep, st.DeepAsleep)
	res.Delay = satAdd(res.Delay, st.Delay)
	r.sumPDT += float64(d)
	a := res.Agreement
	if a == nil {
		a = new(Agreement)
		res.Agreement = a
	}
	a.Decisions++
	if pdt := st.PDTPS(); pdt == row.PDT && st.Missed == row.Missed {
		a.Matching++
	} else if a.First == nil {
		a.First = &Mismatch{Line: row.Line, Index: st.Index, SimPDT: row.PDT, PDT: pdt, SimMissed: row.Missed, Missed: st.Missed}
	}
}

func (r *agentReplay) result() Result {
	return snapshot(r.res, r.sumPDT, r.port, r.now)
}
