package emulate

import "time"

// refEnd is one end of refLink: its armed registers and ledger, and its
// counters and events (bpf/eeeemu.c struct emu_end).
type refEnd struct {
	epoch, freeAt, pdt, hold uint64
	mode                     Mode
	ledOn                    bool
	ledRate, ledRes          uint64
	ledStart                 uint64
	spent, ledHeld, overruns uint64

	packets, bytes, idle, hits, misses, wakeups, deepens uint64
	delayed, delayNs, delayMax                           uint64
	events                                               []Event
}

// refEndCfg is what a packet of one end reads from its configuration.
type refEndCfg struct {
	epoch     uint64 // the end's attach time
	mode      Mode   // effective: always-on when EEE or tx LPI is off
	pdt, hold uint64
	led       Ledger
}

// refLink is the link mode written again in Go from docs/model.md §1.1
// and §1.2 and sim/eee.Link (per link): the oracle of the link program
// (BPF_PROG_TEST_RUN) and of the veth tests.
type refLink struct {
	t                emuTiming // hold unused: the owner's
	q16, hs          uint64
	owner            int
	t0, busy, ready  uint64
	times            [numEmulatedStates]uint64
	wakeups, deepens uint64
	end              [2]refEnd
}

// newRefLink is a link created by end `creator` at t0 (Attach's newLink):
// the other slot waits for its end.
func newRefLink(t emuTiming, q16, hs, t0 uint64, creator int, c refEndCfg, mode Mode) *refLink {
	r := &refLink{t: t, q16: q16, hs: hs, owner: creator, t0: t0, busy: t0, ready: t0}
	r.end[creator] = refEnd{epoch: c.epoch, freeAt: t0, pdt: c.pdt, mode: c.mode, hold: c.hold, ledStart: uint64(c.led.Start)}
	r.end[1-creator] = refEnd{mode: mode}
	return r
}

// enter is end_enter: a new epoch starts the slot over; the ledger's
// configuration is the packet's.
func (x *refEnd) enter(c refEndCfg) {
	if x.epoch != c.epoch {
		*x = refEnd{epoch: c.epoch, freeAt: c.epoch, mode: c.mode, pdt: c.pdt, ledStart: uint64(c.led.Start)}
	}
	if s := uint64(c.led.Start); s != x.ledStart {
		x.ledStart, x.spent, x.ledHeld, x.overruns = s, 0, 0, 0
	}
	rate := rateQ32(c.led.Rate)
	x.hold, x.ledOn, x.ledRate, x.ledRes = c.hold, c.led.On && rate > 0, rate, uint64(c.led.Reserve)
}

// floor raises the expiry *t to when x's ledger allows going down.
func (x *refEnd) floor(t *uint64) bool {
	if !x.ledOn {
		return false
	}
	allow := ledgerAllow(x.spent, x.ledRes, x.ledRate, x.ledStart)
	if allow <= *t {
		return false
	}
	*t = allow
	x.ledHeld++
	return true
}

// idle ends the link's idle period with a packet of end e arriving at a:
// it returns the packet's start, whether it waited for the power state,
// whether a ledger held the link and the t_PDT the owner's timer ran.
func (r *refLink) idle(e int, a uint64) (start uint64, missed, held bool, ranPDT uint64) {
	me, peer := &r.end[e], &r.end[1-e]
	own := &r.end[r.owner]
	m := own.mode
	if me.mode == ModeAlwaysOn || peer.mode == ModeAlwaysOn {
		m = ModeAlwaysOn
	}
	t := r.busy + own.pdt
	ranPDT = me.pdt
	if m != ModeAlwaysOn && a >= t {
		h0 := me.floor(&t)
		h1 := peer.floor(&t)
		held = h0 || h1
		if held && r.owner == e {
			ranPDT = t - r.busy
		}
	}
	if m == ModeAlwaysOn || a < t || (r.owner != e && a < t+r.hs) {
		r.times[StateWake] += a - r.busy
		return a, false, held, ranPDT
	}
	ts, tw, low := r.t.sleepFW, r.t.wakeFW, StateFastWake
	if m == ModeDeepSleep {
		ts, tw, low = r.t.sleepDS, r.t.wakeDS, StateDeepSleep
	}
	down := t + 2*r.hs
	downEnd := down + ts
	r.times[StateWake] += down - r.busy
	r.times[StateGoingDown] += ts
	switch {
	case a < downEnd:
		start = downEnd + tw
	case m == ModeHybrid && a-downEnd >= own.hold:
		r.times[StateFastWake] += own.hold
		r.times[StateDeepSleep] += a - downEnd - own.hold
		r.deepens++
		me.deepens++
		tw = r.t.wakeDS
		start = a + tw
	default:
		r.times[low] += a - downEnd
		start = a + tw
	}
	r.times[StateGoingUp] += tw
	r.wakeups++
	me.wakeups++
	r.ready = start
	return start, true, held, ranPDT
}

// send is one packet of n bytes (segs segments) on end e at now with the
// end's configuration c; it returns the end of its transmission.
func (r *refLink) send(e int, c refEndCfg, now uint64, n, segs uint32) uint64 {
	me, peer := &r.end[e], &r.end[1-e]
	me.enter(c)
	if segs == 0 {
		segs = 1
	}
	tx := ((uint64(n) + 24*uint64(segs)) * r.q16) >> 16
	a, free, busy := now, me.freeAt, r.busy
	var start, ranPDT uint64
	var missed, held bool
	if a <= busy {
		start = max(a, free)
		if r.ready > start {
			start, missed = r.ready, a > free
		}
		ranPDT = me.pdt
	} else {
		start, missed, held, ranPDT = r.idle(e, a)
		busy, r.busy = start, start
	}
	if a > free {
		me.idle++
		if missed {
			me.misses++
			me.spent += start - a
			if me.ledRate > 0 && a < ledgerAllow(me.spent, 0, me.ledRate, me.ledStart) {
				me.overruns++
			}
		} else {
			me.hits++
		}
		me.events = append(me.events, Event{End: time.Duration(a), Length: time.Duration(a - free),
			PDT: time.Duration(ranPDT), Delay: time.Duration(start - a), Seq: me.idle,
			Missed: missed, Sleeps: me.mode != ModeAlwaysOn, Held: held, Mode: me.mode})
	}
	end := start + tx
	if end > busy {
		r.times[StateWake] += end - busy
		r.busy = end
	}
	r.owner = 1 - e
	if end >= peer.freeAt {
		r.owner = e
	}
	me.freeAt, me.mode, me.pdt = end, c.mode, c.pdt
	me.packets++
	me.bytes += uint64(n)
	if start > now {
		me.delayed++
		me.delayNs += start - now
		me.delayMax = max(me.delayMax, start-now)
	}
	return end
}
