package emulate

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/cilium/ebpf/ringbuf"

	"github.com/lpictl/lpictl/bpf"
	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/observe"
)

// Event is one ended idle period of an emulated EEE port, as the
// eBPF program exports it (bpf/eeeemu.c struct emu_event): the port's own
// idle period, from its last departure to the next packet's arrival, with
// the port's own outcome. Times are CLOCK_MONOTONIC.
type Event struct {
	End    time.Duration // the packet that ended the period reached the port
	Length time.Duration // > 0; the period began at End − Length
	PDT    time.Duration // the t_PDT the period ran (armed, or held by the ledger)
	// Delay is the wait the packet paid for the port's power state: the
	// rest of t_s and t_w, or t_w (0 on a hit).
	Delay time.Duration
	// Seq numbers the port's idle periods since attach, from 1.
	Seq    uint64
	Missed bool // the period reached t_PDT: the port went down
	// Sleeps: the port could go down in this period (its armed mode was
	// not always-on: EEE and tx LPI enabled in a sleeping mode).
	Sleeps bool
	// Held: the port's delay ledger kept it awake past the armed t_PDT;
	// PDT is then the t_PDT the period ran.
	Held bool
	Mode Mode // the mode armed for the period
}

// emuEventSize is sizeof(struct emu_event) (checked against the object's
// BTF in bpf/eeeemu_test.go).
const emuEventSize = 48

// emu_event.flags (bpf/eeeemu.c EVENT_*).
const (
	emuEventMissed = 1 << 0
	emuEventSleeps = 1 << 1
	emuEventHeld   = 1 << 2
)

// errShortEvent: a record shorter than struct emu_event.
var errShortEvent = errors.New("emulator event: short record")

// DecodeEvent decodes one record of the emulator's events ring
// buffer (native byte order, as the program wrote it).
func DecodeEvent(b []byte) (Event, error) {
	if len(b) < emuEventSize {
		return Event{}, fmt.Errorf("%w: %d bytes, want %d", errShortEvent, len(b), emuEventSize)
	}
	u := func(off int) uint64 { return binary.NativeEndian.Uint64(b[off:]) }
	dur := func(v uint64) time.Duration { return time.Duration(min(v, uint64(1<<63-1))) }
	flags := binary.NativeEndian.Uint32(b[40:])
	return Event{
		End: dur(u(0)), Length: dur(u(8)), PDT: dur(u(16)), Delay: dur(u(24)), Seq: u(32),
		Missed: flags&emuEventMissed != 0, Sleeps: flags&emuEventSleeps != 0, Held: flags&emuEventHeld != 0,
		Mode: Mode(binary.NativeEndian.Uint32(b[44:])),
	}, nil
}

// GapSample returns the event as an egress gap sample with the port's
// outcome (MissedKnown).
func (e Event) GapSample() observe.GapSample {
	return observe.GapSample{End: e.End, Length: e.Length, Dir: observe.Egress, MissedKnown: true, Missed: e.Missed,
		PDT: e.PDT, NeverSleeps: !e.Sleeps, Delay: e.Delay, Seq: e.Seq}
}

// emuReorderWindow: an event missing from the sequence while a later one,
// which ended at least this long ago, has been read is taken as lost (the
// ring was full). Events are submitted microseconds after the period they
// describe ends, so two CPUs can swap only over such a short span.
const emuReorderWindow = time.Millisecond

// emuHoldMax bounds the events held back waiting for a missing one.
const emuHoldMax = 64

// Observer drains an emulated EEE port's ended idle periods from
// its events ring buffer (MethodEmulated): the port's own idle periods
// (from a departure to the next arrival, which is what the port's PDT
// timer runs on; the idlegap observer at the same hook sees arrivals, not
// departures), each with the port's outcome, the t_PDT armed for it and
// the wait its packet paid. Samples come in the order the periods ended:
// events that two CPUs submitted the other way round are put back in
// order by their sequence number, and a missing number (the ring was
// full) is counted as lost. Only events of periods that end after
// OpenObserver are delivered.
//
// The ring buffer has one consumer position: one observer per port at a
// time (the agent's). DrainGaps and ReadStats do not allocate.
type Observer struct {
	port   *Port
	reader *ringbuf.Reader
	rec    ringbuf.Record

	next    uint64              // the next sequence number to deliver
	hold    []observe.GapSample // later events waiting for a missing one, by Seq
	lost    uint64              // sequence numbers given up (ring full)
	samples uint64              // delivered
	st      bpf.EeeemuEmuState
	now     func() time.Duration
}

var _ observe.Observer = (*Observer)(nil)

// OpenObserver opens the events of the emulated port of
// ref.Interface (ErrNotEmulated if it has none). Periods that ended before
// the call are skipped.
func OpenObserver(ctx context.Context, ref Ref) (*Observer, error) {
	p, err := Open(ctx, ref)
	if err != nil {
		return nil, err
	}
	o, err := newEmulatedObserver(p)
	if err != nil {
		p.Close()
		return nil, err
	}
	return o, nil
}

// newEmulatedObserver takes ownership of p.
func newEmulatedObserver(p *Port) (*Observer, error) {
	o := &Observer{port: p, hold: make([]observe.GapSample, 0, emuHoldMax), now: observe.MonotonicNow}
	var err error
	if o.reader, err = ringbuf.NewReader(p.evMap); err != nil {
		return nil, fmt.Errorf("%s: events ring buffer reader: %w", p.ifname, hwlink.ClassifyBPFErr(err))
	}
	// Draining never blocks: the program submits without wake-ups and a
	// deadline in the past makes ReadInto return at the end of the data.
	o.reader.SetDeadline(time.Unix(0, 1))
	if err := p.readState(&o.st); err != nil {
		o.reader.Close()
		return nil, err
	}
	o.next = o.st.IdlePeriods + 1
	// Free the ring of what came before (their numbers are below next).
	for o.reader.AvailableBytes() > 0 {
		if err := o.reader.ReadInto(&o.rec); err != nil {
			break
		}
	}
	return o, nil
}

// Interface is the observed interface's name.
func (o *Observer) Interface() string { return o.port.ifname }

// Port is the emulated port (status, EEE registers).
func (o *Observer) Port() *Port { return o.port }

// Method implements Observer.
func (o *Observer) Method() observe.Method { return observe.MethodEmulated }

// Resolution implements Observer: the program's clock, in ns.
func (o *Observer) Resolution() time.Duration { return time.Nanosecond }

// Lost is the number of idle periods that were not delivered: their
// events found the ring full (or came more than emuReorderWindow after a
// later one, and were dropped).
func (o *Observer) Lost() uint64 { return o.lost }

// DrainGaps implements Observer: up to len(dst) of the port's ended idle
// periods, in order, each with MissedKnown, Missed, PDT, NeverSleeps,
// Delay and Seq set.
func (o *Observer) DrainGaps(dst []observe.GapSample) (int, error) {
	if o.reader == nil {
		return 0, fmt.Errorf("%s: %w", o.port.ifname, os.ErrClosed)
	}
	n := o.release(dst, 0)
	for n < len(dst) && o.reader.AvailableBytes() > 0 {
		if err := o.reader.ReadInto(&o.rec); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				break
			}
			return n, fmt.Errorf("%s: read emulator events: %w", o.port.ifname, err)
		}
		ev, err := DecodeEvent(o.rec.RawSample)
		if err != nil {
			continue
		}
		n = o.accept(ev.GapSample(), dst, n)
	}
	return o.expire(dst, n), nil
}

// expire gives up the events missing before the oldest held one once that
// one ended emuReorderWindow ago: they are not coming (the ring was full).
func (o *Observer) expire(dst []observe.GapSample, n int) int {
	if n < len(dst) && len(o.hold) > 0 && o.now()-o.hold[0].End >= emuReorderWindow {
		o.lost += o.hold[0].Seq - o.next
		o.next = o.hold[0].Seq
		n = o.release(dst, n)
	}
	return n
}

// accept takes one decoded event, with n < len(dst): delivered into
// dst[n] if it is the next in sequence, held if an earlier one is missing,
// dropped if its number was given up as lost or precedes the observer. It
// returns the new n.
func (o *Observer) accept(g observe.GapSample, dst []observe.GapSample, n int) int {
	switch {
	case g.Seq < o.next:
		return n
	case g.Seq == o.next:
		dst[n] = g
		o.next++
		o.samples++
		return o.release(dst, n+1)
	}
	// A later event: hold it, in order of sequence.
	if len(o.hold) == cap(o.hold) {
		// Too many waiting: the missing ones are lost. n < len(dst), so
		// this frees at least one place.
		o.lost += o.hold[0].Seq - o.next
		o.next = o.hold[0].Seq
		n = o.release(dst, n)
		switch {
		case g.Seq < o.next:
			return n // given up just now
		case g.Seq == o.next && n < len(dst):
			dst[n] = g
			o.next++
			o.samples++
			return o.release(dst, n+1)
		}
	}
	i := len(o.hold)
	for i > 0 && o.hold[i-1].Seq > g.Seq {
		i--
	}
	if i > 0 && o.hold[i-1].Seq == g.Seq {
		return n // a duplicate (cannot happen)
	}
	o.hold = append(o.hold, observe.GapSample{})
	copy(o.hold[i+1:], o.hold[i:])
	o.hold[i] = g
	return n
}

// release delivers held events that are next in sequence.
func (o *Observer) release(dst []observe.GapSample, n int) int {
	k := 0
	for k < len(o.hold) && n < len(dst) && o.hold[k].Seq == o.next {
		dst[n] = o.hold[k]
		o.next++
		o.samples++
		n++
		k++
	}
	if k > 0 {
		o.hold = o.hold[:copy(o.hold, o.hold[k:])]
	}
	return n
}

// ReadStats implements Observer for egress from the emulator's state:
// packets, bytes, idle periods (Gaps) and packets that found the port busy
// or back to back (Busy); Samples are the periods delivered, SamplesLost
// those given up (their events found the ring full). The emulator
// keeps no idle-time total or histogram (Idle and Hist stay 0). Ingress is
// not emulated: ErrNotSupported.
func (o *Observer) ReadStats(dir observe.Direction, st *observe.GapStats) error {
	if dir != observe.Egress {
		return fmt.Errorf("%s: the emulated port is the egress direction: %w", o.port.ifname, hwlink.ErrNotSupported)
	}
	if err := o.port.readState(&o.st); err != nil {
		return err
	}
	*st = observe.GapStats{Packets: o.st.Packets, Bytes: o.st.Bytes, Gaps: o.st.IdlePeriods,
		Busy: o.st.Packets - o.st.IdlePeriods, Samples: o.samples, SamplesLost: o.lost}
	return nil
}

// Close implements Observer: it releases this process's handles; the
// emulated port stays attached.
func (o *Observer) Close() error {
	var errs []error
	if o.reader != nil {
		errs = append(errs, o.reader.Close())
		o.reader = nil
	}
	if o.port != nil {
		errs = append(errs, o.port.Close())
	}
	return errors.Join(errs...)
}
