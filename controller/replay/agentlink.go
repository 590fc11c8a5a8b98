package replay

import (
	"fmt"
	"math"
	"time"

	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/predictor"
)

// AgentLinkEnd is one end of a link whose two egress ports share one
// power state (LPI per link, docs/model.md §1.2), each driven by its own
// agent as AgentPort says: its agent's controller (built at the trace's
// clock, without a ledger), its port trace (rows in order) and how the
// agent drove it.
type AgentLinkEnd struct {
	Port  *controller.Port
	Rows  []TraceRow
	Agent AgentPort
	// TraceOutcomes makes the controller learn, where the port ran its
	// decision, the trace's own outcome and wait of the idle period (the
	// port's: what the agent fed its controller) rather than the
	// replay's: the decisions then follow the agent's even where the
	// replayed link parts from the measured one, whose errors would
	// otherwise feed back into both ends' decisions. The ledger still
	// charges the replay's waits (its holds follow the replay's own
	// spending). Off, the replay feeds its own outcomes back, as
	// ReplayAgentPort does.
	TraceOutcomes bool
}

// ReplayAgentLink replays the two ends' traces of one link jointly, on
// one timeline (both traces on the same clock), as the emulated link
// (bpf/eeeemu.c "Link mode") ran them:
//
//   - each end's decisions, rounds and ledger are its own, as
//     ReplayAgentPort has them, except that the ledger's S counts the
//     waits of the idle periods that end from its start on (the agents
//     program it when they open the port) and an end's ledger holds the
//     link only from the end's first packet (the program reads an end's
//     ledger at its packets);
//   - an end is busy from the packet that ends one of its idle periods
//     to the start of its next one; the link's idle period begins when
//     both are idle, at the later of their last departures (or when the
//     last wake-up completed, if later), and the end that departed last
//     owns the timer with the t_PDT it armed;
//   - the timer expires at that start + t_PDT, or later where either
//     end's ledger does not allow going down yet (the later of their
//     allowed times); a packet at the owner from then, or at the other
//     end from then + H (timing.Handshake), finds the link committed: it
//     goes down at expiry + 2H, is low t_s later, and the first packet on
//     either end wakes it (the rest of t_s, then t_w; hybrid: the owner's
//     hold); before that the link stays awake;
//   - a packet on either end while the link wakes up waits until it is
//     up (a miss of that end, its wait charged to its ledger);
//   - the time the link is low counts in the idle periods of both ends
//     that span it.
//
// It gives each end's steps and result as ReplayAgentPort does; Missed,
// Delay and Asleep are the link's as the end saw them. The traces fix
// every packet's time: an end's busy stretch ends where its trace's next
// idle period starts, and after its last row the end is taken as idle
// from its last packet's start (its departure is not in the trace).
func ReplayAgentLink(timing Timing, ends [2]AgentLinkEnd) ([2][]Step, [2]Result, error) {
	var l agentLink
	l.timing = timing
	for k, e := range ends {
		x := &l.ends[k]
		x.agentReplay = agentReplay{port: e.Port, ap: e.Agent, timing: timing, portPDT: e.Agent.Initial, next: e.Agent.FirstRound}
		x.bounded, _ = e.Port.Predictor().(predictor.Bounded)
		x.ledger = e.Agent.Interval <= 0 && e.Agent.Ledger != nil
		x.rows = e.Rows
		x.traceOutcomes, x.fromStart = e.TraceOutcomes, true
		x.steps = make([]Step, 0, len(e.Rows))
	}
	err := l.run()
	var steps [2][]Step
	var res [2]Result
	for k := range l.ends {
		steps[k], res[k] = l.ends[k].steps, l.ends[k].result()
	}
	return steps, res, err
}

type agentLink struct {
	timing Timing
	ends   [2]linkEnd
	ready  PS // when the last wake-up completed
}

// linkEnd is one end's agent and port, at its row i: armed for it (its
// decision d, r.portPDT the timer it runs), idle from the row's start
// until its end, busy from the previous row's end until then.
type linkEnd struct {
	agentReplay
	rows  []TraceRow
	steps []Step
	i     int
	d     time.Duration
	// asleep and deepAsleep are the link's low time within row i so far.
	asleep, deepAsleep PS
	// last is, once the rows are done, when the last packet started.
	last PS
}

func (x *linkEnd) arm() error {
	if x.i >= len(x.rows) {
		return nil
	}
	d, err := x.agentReplay.arm(x.rows, x.i)
	if err != nil {
		return fmt.Errorf("row %d (line %d): %w", x.i+1, x.rows[x.i].Line, err)
	}
	x.d = d
	return nil
}

// departure is the end's last departure as of at (sent false: it has
// sent nothing yet, its first row not begun), whether it is busy then,
// and when the packet that began its last busy stretch came (for ties).
func (x *linkEnd) departure(at PS) (dep, began PS, sent, busy bool) {
	began = -1
	if x.i > 0 {
		began = x.rows[x.i-1].End()
	}
	switch {
	case x.i >= len(x.rows):
		return x.last, began, len(x.rows) > 0, false
	case x.rows[x.i].Start <= at:
		return x.rows[x.i].Start, began, true, false
	case x.i == 0:
		return 0, began, false, false
	}
	return x.rows[x.i].Start, began, true, true
}

func (l *agentLink) run() error {
	for k := range l.ends {
		if err := l.ends[k].arm(); err != nil {
			return fmt.Errorf("end %d: %w", k, err)
		}
	}
	for {
		// The next packet to end an idle period, on either end (end 0
		// first at the same instant).
		e := -1
		var at PS
		for k := range l.ends {
			x := &l.ends[k]
			if x.i < len(x.rows) && (e < 0 || x.rows[x.i].End() < at) {
				e, at = k, x.rows[x.i].End()
			}
		}
		if e < 0 {
			return nil
		}
		if err := l.packet(e, at); err != nil {
			return fmt.Errorf("end %d: %w", e, err)
		}
	}
}

// packet ends the idle period of end e with its packet at `at`.
func (l *agentLink) packet(e int, at PS) error {
	me, peer := &l.ends[e], &l.ends[1-e]
	row := me.rows[me.i]
	st := Step{Index: me.i + 1, Start: row.Start, Gap: row.Gap, PDT: me.d}
	ranPDT := me.portPDT

	pdep, pbegan, psent, pbusy := peer.departure(at)
	start := max(row.Start, l.ready)
	if psent {
		start = max(start, pdep)
	}
	if pbusy || start >= at {
		// The link is not idle: the packet waits only for a wake-up in
		// progress.
		if l.ready > at {
			st.Missed, st.Delay = true, l.ready-at
		}
	} else {
		owner := me
		if psent {
			mbegan := PS(-1)
			if me.i > 0 {
				mbegan = me.rows[me.i-1].End()
			}
			if pdep > row.Start || (pdep == row.Start && (pbegan > mbegan || (pbegan == mbegan && e == 1))) {
				owner = peer
			}
		}
		expiry, held, ok := l.expiry(owner, me, start, at)
		if held && owner == me {
			ranPDT = (expiry - start).D()
		}
		hs := max(l.timing.Handshake, 0)
		if ok && (at >= expiry+hs || (owner == me && at >= expiry)) {
			downEnd, okd := add(expiry, 2*hs)
			if ts, okt := FromDuration(l.timing.Sleep); okd && okt {
				downEnd, okd = add(downEnd, ts)
			}
			if !okd {
				return errOverflow
			}
			delay, asleep, deepAsleep, deep := l.timing.missAt(downEnd, at, owner.hold())
			st.Missed, st.Delay, st.Deep = true, delay, deep
			l.ready = at + delay
			// The link's low time lies in both ends' idle periods (the
			// peer's, if it has begun one that is not over).
			me.asleep += asleep
			me.deepAsleep += deepAsleep
			if psent && peer.i < len(peer.rows) {
				peer.asleep += asleep
				peer.deepAsleep += deepAsleep
			}
		}
	}
	st.Asleep, st.DeepAsleep = me.asleep, me.deepAsleep
	me.asleep, me.deepAsleep = 0, 0
	me.record(row, st, ranPDT == me.d)
	me.steps = append(me.steps, st)
	me.i++
	me.last = at + st.Delay
	return me.arm()
}

// expiry is when the link's timer, owned by owner from the link's idle
// start, lets it go down, for a packet of end me at `at`: start + the
// owner's t_PDT, or later where either end's ledger does not allow it yet
// (held); ok false: never. An end's ledger counts from its first packet
// (the program reads an end's ledger at its packets; me's is read now).
func (l *agentLink) expiry(owner, me *linkEnd, start, at PS) (t PS, held, ok bool) {
	p, okp := FromDuration(owner.portPDT)
	if owner.portPDT >= controller.Never || !okp {
		return 0, false, false
	}
	t, ok = add(start, p)
	if !ok || at < t {
		return t, false, ok
	}
	for k := range l.ends {
		x := &l.ends[k]
		if x != me && x.i == 0 {
			continue
		}
		allow, on := x.allow()
		if !on {
			continue
		}
		if allow > uint64(math.MaxInt64/1000) {
			return 0, true, false
		}
		if a := PS(allow) * 1000; a > t {
			t, held = a, true
		}
	}
	return t, held, true
}
