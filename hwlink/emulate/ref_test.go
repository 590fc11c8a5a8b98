package emulate

import "time"

// refPort is the emulator's state machine written again in Go, from
// docs/model.md §1/§1.1 and sim/eee, as the oracle the eBPF program is checked against
// (BPF_PROG_TEST_RUN) and that predicts departures on veth.
type refPort struct {
	t         emuTiming
	q16       uint64 // ns per wire byte, Q16
	freeAt    uint64
	armedPDT  uint64
	armedMode Mode
	t0        uint64

	times                                                [numEmulatedStates]uint64
	packets, bytes, idle, hits, misses, wakeups, deepens uint64
	delayed, delayNs, delayMax                           uint64
	// events are the ended idle periods, as the program exports them.
	events []Event

	// The delay ledger (bpf/eeeemu.c "Delay ledger"): configuration
	// (rate Q32, clamped by the program to 2^32) and account.
	ledOn                      bool
	ledRate, ledRes, ledStart  uint64
	spent, ledHeld, ledOverrun uint64
}

// setLedger configures the model's ledger as Port.SetLedger does
// the program's; a new start restarts its account.
func (r *refPort) setLedger(l Ledger) {
	r.ledOn, r.ledRate, r.ledRes = l.On, rateQ32(l.Rate), uint64(l.Reserve)
	if s := uint64(l.Start); s != r.ledStart {
		r.ledStart, r.spent, r.ledHeld, r.ledOverrun = s, 0, 0, 0
	}
}

func newRefPort(t emuTiming, q16, t0, pdt uint64, mode Mode) *refPort {
	return &refPort{t: t, q16: q16, freeAt: t0, t0: t0, armedPDT: pdt, armedMode: mode}
}

// send is one packet of length n (gso segments segs) reaching the port at
// now, with its own departure time own (0 = none); mode and pdt are the
// configuration in force (armed for the idle period this packet's
// departure starts). It returns the packet's departure: the end of its
// transmission.
func (r *refPort) send(now, own uint64, n, segs uint32, mode Mode, pdt uint64) uint64 {
	arrive := max(now, own)
	if segs == 0 {
		segs = 1
	}
	tx := ((uint64(n) + 24*uint64(segs)) * r.q16) >> 16
	var start uint64
	if arrive <= r.freeAt {
		start = r.freeAt
	} else {
		gap := arrive - r.freeAt
		r.idle++
		p, m := r.armedPDT, r.armedMode
		held := false
		if m != ModeAlwaysOn && r.ledOn && r.ledRate > 0 && gap >= p {
			if allow := ledgerAllow(r.spent, r.ledRes, r.ledRate, r.ledStart); allow > r.freeAt+p {
				p, held = allow-r.freeAt, true
				r.ledHeld++
			}
		}
		if m == ModeAlwaysOn || gap < p {
			r.hits++
			r.times[StateWake] += gap
			start = arrive
		} else {
			ts, tw, low := r.t.sleepFW, r.t.wakeFW, StateFastWake
			if m == ModeDeepSleep {
				ts, tw, low = r.t.sleepDS, r.t.wakeDS, StateDeepSleep
			}
			downEnd := r.freeAt + p + ts
			r.misses++
			r.wakeups++
			r.times[StateWake] += p
			r.times[StateGoingDown] += ts
			switch {
			case arrive < downEnd:
				start = downEnd + tw
			case m == ModeHybrid && arrive-downEnd >= r.t.hold:
				r.times[StateFastWake] += r.t.hold
				r.times[StateDeepSleep] += arrive - downEnd - r.t.hold
				r.deepens++
				tw = r.t.wakeDS
				start = arrive + tw
			default:
				r.times[low] += arrive - downEnd
				start = arrive + tw
			}
			r.times[StateGoingUp] += tw
		}
		r.events = append(r.events, Event{End: time.Duration(arrive), Length: time.Duration(gap),
			PDT: time.Duration(p), Delay: time.Duration(start - arrive), Seq: r.idle,
			Missed: m != ModeAlwaysOn && gap >= p, Sleeps: m != ModeAlwaysOn, Held: held, Mode: m})
		if start > arrive {
			r.spent += start - arrive
			if r.ledRate > 0 && arrive < ledgerAllow(r.spent, 0, r.ledRate, r.ledStart) {
				r.ledOverrun++
			}
		}
	}
	end := start + tx
	r.times[StateWake] += tx
	r.freeAt = end
	r.armedMode, r.armedPDT = mode, pdt
	r.packets++
	r.bytes += uint64(n)
	if start > now {
		r.delayed++
		r.delayNs += start - now
		r.delayMax = max(r.delayMax, start-now)
	}
	return end
}
