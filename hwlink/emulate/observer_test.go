package emulate

import (
	"encoding/binary"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/lpictl/lpictl/hwlink/observe"
)

// encodeEvent writes e as the program does (struct emu_event).
func encodeEvent(e Event) []byte {
	b := make([]byte, emuEventSize)
	for i, v := range []uint64{uint64(e.End), uint64(e.Length), uint64(e.PDT), uint64(e.Delay), e.Seq} {
		binary.NativeEndian.PutUint64(b[8*i:], v)
	}
	var f uint32
	if e.Missed {
		f |= emuEventMissed
	}
	if e.Sleeps {
		f |= emuEventSleeps
	}
	binary.NativeEndian.PutUint32(b[40:], f)
	binary.NativeEndian.PutUint32(b[44:], uint32(e.Mode))
	return b
}

func TestDecodeEmulatedEvent(t *testing.T) {
	for _, e := range []Event{
		{End: 5_000_000_123, Length: 40_000, PDT: 30_000, Delay: 16_500, Seq: 7, Missed: true, Sleeps: true, Mode: ModeDeepSleep},
		{End: 1, Length: 1, PDT: 0, Seq: 1, Sleeps: true, Mode: ModeHybrid},
		{End: 9, Length: 3, PDT: 1000, Seq: 1 << 40, Mode: ModeAlwaysOn},
	} {
		got, err := DecodeEvent(encodeEvent(e))
		if err != nil || got != e {
			t.Errorf("decode: %+v, %v; want %+v", got, err, e)
		}
		g := got.GapSample()
		if g.End != e.End || g.Length != e.Length || g.Dir != observe.Egress || !g.MissedKnown || g.Missed != e.Missed ||
			g.PDT != e.PDT || g.NeverSleeps == e.Sleeps || g.Delay != e.Delay || g.Seq != e.Seq {
			t.Errorf("gap sample %+v of %+v", g, e)
		}
	}
	// Extra bytes (a ring record is rounded up to 8) are ignored; short
	// records are refused.
	if _, err := DecodeEvent(append(encodeEvent(Event{Seq: 1}), 0, 0, 0, 0, 0, 0, 0, 0)); err != nil {
		t.Errorf("longer record: %v", err)
	}
	if _, err := DecodeEvent(make([]byte, emuEventSize-1)); !errors.Is(err, errShortEvent) {
		t.Errorf("short record: %v", err)
	}
	// Values beyond time.Duration saturate instead of going negative.
	b := encodeEvent(Event{})
	binary.NativeEndian.PutUint64(b[16:], ^uint64(0))
	if e, _ := DecodeEvent(b); e.PDT < 0 {
		t.Errorf("huge t_PDT decoded as %v", e.PDT)
	}
}

func FuzzDecodeEmulatedEvent(f *testing.F) {
	f.Add(encodeEvent(Event{End: 5, Length: 4, PDT: 3, Delay: 2, Seq: 1, Missed: true, Sleeps: true, Mode: ModeDeepSleep}))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := DecodeEvent(b)
		if err != nil {
			if len(b) >= emuEventSize {
				t.Fatalf("%d bytes refused: %v", len(b), err)
			}
			return
		}
		if e.End < 0 || e.Length < 0 || e.PDT < 0 || e.Delay < 0 {
			t.Fatalf("negative duration: %+v", e)
		}
		if e2, err := DecodeEvent(encodeEvent(e)); err != nil || (e2 != e && e.End < 1<<62 && e.Length < 1<<62) {
			// Round trip, for values that do not saturate.
			if b2 := encodeEvent(e); len(b) >= emuEventSize && string(b2[:40]) == string(b[:40]) {
				t.Fatalf("round trip %+v → %+v, %v", e, e2, err)
			}
		}
	})
}

// testObserver is an observer without a ring: accept, release and expire
// are driven directly, with a clock set by the test.
func testObserver(next uint64, now *time.Duration) *Observer {
	return &Observer{next: next, hold: make([]observe.GapSample, 0, emuHoldMax), now: func() time.Duration { return *now }}
}

// feed passes events with the given sequence numbers (End = seq µs) and
// returns the sequence numbers delivered, draining dst in chunks of size.
func feed(o *Observer, seqs []uint64, size int) []uint64 {
	var out []uint64
	dst := make([]observe.GapSample, size)
	n := 0
	flush := func() {
		for _, g := range dst[:n] {
			out = append(out, g.Seq)
		}
		n = 0
	}
	for _, s := range seqs {
		for n == len(dst) { // accept needs room for one
			flush()
			n = o.release(dst, 0)
		}
		n = o.accept(observe.GapSample{Seq: s, End: time.Duration(s) * time.Microsecond, Length: 1}, dst, n)
	}
	for {
		flush()
		if n = o.expire(dst, o.release(dst, 0)); n == 0 {
			return out
		}
	}
}

func seqRange(a, b uint64) []uint64 {
	var s []uint64
	for i := a; i <= b; i++ {
		s = append(s, i)
	}
	return s
}

// TestEmulatedObserverOrder: events submitted out of order by two CPUs
// come out in order; events of periods before the observer are dropped;
// a number that never comes is given up after the reorder window (the ring
// was full) and counted as lost; a late arrival of a given-up number is
// dropped.
func TestEmulatedObserverOrder(t *testing.T) {
	now := time.Second
	t.Run("swapped", func(t *testing.T) {
		o := testObserver(10, &now)
		got := feed(o, []uint64{3, 9, 10, 12, 11, 13, 15, 14, 16}, 4)
		if want := seqRange(10, 16); !slices.Equal(got, want) || o.Lost() != 0 {
			t.Errorf("delivered %v (lost %d), want %v", got, o.Lost(), want)
		}
	})
	t.Run("hole-waits", func(t *testing.T) {
		now := 10*time.Microsecond + emuReorderWindow/2 // 12 ended recently: 11 may still come
		o := testObserver(10, &now)
		if got := feed(o, []uint64{10, 12, 13}, 8); !slices.Equal(got, []uint64{10}) || len(o.hold) != 2 {
			t.Fatalf("delivered %v, held %d", got, len(o.hold))
		}
		if got := feed(o, []uint64{11}, 8); !slices.Equal(got, []uint64{11, 12, 13}) || o.Lost() != 0 {
			t.Errorf("after the late one: %v, lost %d", got, o.Lost())
		}
	})
	t.Run("hole-lost", func(t *testing.T) {
		now := time.Second
		o := testObserver(1, &now)
		got := feed(o, []uint64{1, 2, 5, 6, 7}, 8)
		if want := []uint64{1, 2, 5, 6, 7}; !slices.Equal(got, want) || o.Lost() != 2 {
			t.Errorf("delivered %v (lost %d), want %v and 2 lost", got, o.Lost(), want)
		}
		if got := feed(o, []uint64{3, 8}, 8); !slices.Equal(got, []uint64{8}) || o.Lost() != 2 {
			t.Errorf("given-up number came late: %v, lost %d", got, o.Lost())
		}
	})
	t.Run("hold-full", func(t *testing.T) {
		now := 0 * time.Second // nothing expires by time
		o := testObserver(1, &now)
		seqs := seqRange(2, 2+emuHoldMax) // 1 never comes; one more than the hold takes
		got := feed(o, seqs, 1000)
		if !slices.Equal(got, seqs) || o.Lost() != 1 {
			t.Errorf("delivered %d of %d (lost %d)", len(got), len(seqs), o.Lost())
		}
	})
}

func FuzzEmulatedObserverOrder(f *testing.F) {
	f.Add([]byte{0, 2, 1, 3, 5, 4}, uint8(3))
	f.Add([]byte{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}, uint8(1))
	f.Fuzz(func(t *testing.T, perm []byte, size uint8) {
		now := time.Duration(0)
		o := testObserver(1, &now)
		seqs := make([]uint64, len(perm))
		for i, b := range perm {
			seqs[i] = uint64(b) + 1
		}
		got := feed(o, seqs, int(size%16)+1)
		// Whatever the order: strictly increasing, each at most once, and
		// every number either delivered or counted lost up to the last.
		for i := 1; i < len(got); i++ {
			if got[i] <= got[i-1] {
				t.Fatalf("out of order: %v from %v", got, seqs)
			}
		}
		if len(got) > 0 && uint64(len(got))+o.Lost() != got[len(got)-1] {
			now = time.Hour
			t.Fatalf("delivered %d + lost %d ≠ last %d (%v from %v)", len(got), o.Lost(), got[len(got)-1], got, seqs)
		}
	})
}
