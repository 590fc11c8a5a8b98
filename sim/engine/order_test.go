package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// orderModel is a model of a few objects for the event-order tests. Kind
// wake (Obj o, Arg c) makes object o schedule chunk c of its script; the
// other kinds are payload: when object p runs one, it records it and
// schedules a fixed follow-up (for itself or another object, at a delay
// that may be zero) from the event's own fields, until a depth is reached.
type orderModel struct {
	e      *Engine
	script [][][]scripted // object → chunk → events it schedules
	ran    []Event
}

// scripted is an event an object schedules when it wakes.
type scripted struct {
	at        int64 // when (after every wake)
	kind      uint8
	obj, hops int32
}

// kindWake is the wake kind.
const kindWake uint8 = 0

const (
	orderKinds = 4 // payload kinds 1..3
	orderDepth = 3 // follow-ups per scripted event
)

func (m *orderModel) Handle(ev Event) {
	if ev.Kind == kindWake {
		for _, s := range m.script[ev.Obj][ev.Arg] {
			m.e.ScheduleAux(s.at, s.kind, s.obj, s.hops, 0)
		}
		return
	}
	m.ran = append(m.ran, ev)
	if ev.Arg >= orderDepth {
		return
	}
	// A follow-up that depends only on the event: to the object itself or
	// the next one, at a delay of 0, 1 or 7 ps.
	h := uint32(ev.Seq*0x9e3779b97f4a7c15>>40) ^ uint32(ev.Obj)
	obj := ev.Obj
	if h&1 != 0 {
		obj = (obj + 1) % int32(len(m.script))
	}
	d := []int64{0, 1, 7}[h>>1%3]
	m.e.ScheduleAux(ev.At+d, uint8(1+h>>3%(orderKinds-1)), obj, ev.Arg+1, 0)
}

// randomScript draws objects' scripts: events at a few times (many ties),
// of the payload kinds, for any object.
func randomScript(r *rand.Rand) [][][]scripted {
	objects := 2 + r.IntN(6)
	script := make([][][]scripted, objects)
	for o := range script {
		for range r.IntN(4) {
			var chunk []scripted
			for range r.IntN(8) {
				chunk = append(chunk, scripted{
					at:   1000 + r.Int64N(6),
					kind: uint8(1 + r.IntN(orderKinds-1)),
					obj:  int32(r.IntN(objects)),
				})
			}
			script[o] = append(script[o], chunk)
		}
	}
	return script
}

// runScript runs a script on the given queue, with or without lanes,
// waking the objects' chunks in the given interleaving (a sequence of
// objects: each one's next chunk). It returns the payload events run.
func runScript(script [][][]scripted, interleave []int32, q Queue, lanes bool) []Event {
	m := &orderModel{script: script}
	m.e = New(q, m)
	if lanes {
		m.e.UseLane(1)
		m.e.UseLane(2, 3)
	}
	next := make([]int32, len(script))
	for i, o := range interleave {
		// One wake per picosecond, in the interleaving's order: each
		// object's chunks in its own order, the objects' interleaved.
		m.e.Schedule(int64(i), kindWake, o, next[o])
		next[o]++
	}
	for until := int64(500); m.e.Run(until, 37); until += 500 {
	}
	return m.ran
}

// randomInterleaving returns a random merge of the objects' chunk
// sequences.
func randomInterleaving(r *rand.Rand, script [][][]scripted) []int32 {
	var seq []int32
	for o, chunks := range script {
		for range chunks {
			seq = append(seq, int32(o))
		}
	}
	r.Shuffle(len(seq), func(i, j int) { seq[i], seq[j] = seq[j], seq[i] })
	return seq
}

// TestOrderIndependentOfInterleaving is the event order's property (doc.go,
// "Event order"): the objects schedule the same events, each in its own
// order, but the objects take turns in a random interleaving; the events
// run must be the same, in the same order, every time, on the heap, on
// calendars and with lanes. Thousands of seeded cases.
func TestOrderIndependentOfInterleaving(t *testing.T) {
	queues := []struct {
		name  string
		mk    func() Queue
		lanes bool
	}{
		{"heap", func() Queue { return NewHeap(0) }, false},
		{"heap+lanes", func() Queue { return NewHeap(0) }, true},
		{"calendar", func() Queue { return NewCalendar(1, 64) }, false},
		{"calendar-wide+lanes", func() Queue { return NewCalendar(256, 64) }, true},
	}
	cases := 3000
	if testing.Short() {
		cases = 300
	}
	r := rand.New(rand.NewPCG(11, 12))
	for c := range cases {
		script := randomScript(r)
		var want []Event
		for k := range 4 {
			il := randomInterleaving(r, script)
			for _, q := range queues {
				got := runScript(script, il, q.mk(), q.lanes)
				if want == nil {
					want = got
					checkOrder(t, fmt.Sprintf("case %d", c), got)
					continue
				}
				if !slices.Equal(got, want) {
					i := 0
					for i < min(len(got), len(want)) && got[i] == want[i] {
						i++
					}
					t.Fatalf("case %d, interleaving %d, %s: %d events run, first difference at %d from the first run's %d",
						c, k, q.name, len(got), i, len(want))
				}
			}
		}
	}
}

// checkOrder checks that the events ran in time order with unique keys.
// (Not in key order within a picosecond: a follow-up at a zero delay runs
// after the event that scheduled it, whatever their keys.)
func checkOrder(t *testing.T, name string, evs []Event) {
	t.Helper()
	seen := map[uint64]bool{}
	for i, e := range evs {
		if seen[e.Seq] {
			t.Fatalf("%s: key %#x twice", name, e.Seq)
		}
		seen[e.Seq] = true
		if i > 0 && e.At < evs[i-1].At {
			t.Fatalf("%s: event %d at %d after one at %d", name, i, e.At, evs[i-1].At)
		}
	}
}

// TestKeysFromSources checks the keys the engine gives: events scheduled
// outside Run have source Outside, those scheduled while an event runs
// have the source of the object that runs it (SetOwner: per object or
// one for the kind), and each source counts its own events from 1.
func TestKeysFromSources(t *testing.T) {
	var got []Event
	var e *Engine
	h := handlerFunc(func(ev Event) {
		got = append(got, ev)
		if ev.Arg == 0 {
			e.Schedule(ev.At+1, ev.Kind, ev.Obj, 1)
			e.Schedule(ev.At+1, ev.Kind, ev.Obj+1, 1)
		}
	})
	e = New(NewHeap(0), h)
	e.SetOwner(2, 100, false) // kind 2: object 100 whatever Obj
	e.SetOwner(3, 50, true)   // kind 3: object 50 + Obj
	e.Schedule(0, 1, 4, 0)
	e.Schedule(0, 2, 4, 0)
	e.Schedule(0, 3, 4, 0)
	e.Schedule(0, 1, 4, 0)
	e.Run(Forever, 0)
	e.Schedule(5, 1, 9, 1)
	want := map[uint64]bool{
		Key(Outside, 1): true, Key(Outside, 2): true, Key(Outside, 3): true, Key(Outside, 4): true,
		Key(5, 1): true, Key(5, 2): true, Key(5, 3): true, Key(5, 4): true, // kind 1, Obj 4 (twice)
		Key(100, 1): true, Key(100, 2): true, // kind 2
		Key(54, 1): true, Key(54, 2): true, // kind 3, Obj 4
	}
	for _, ev := range got {
		if !want[ev.Seq] {
			t.Errorf("unexpected key: source %d count %d", ev.Source(), ev.Seq&(1<<CountBits-1))
		}
		delete(want, ev.Seq)
	}
	if len(want) != 0 {
		t.Errorf("keys not given: %v", want)
	}
	if e.lanes.n+e.q.Len() != 1 || e.q.Peek().Seq != Key(Outside, 5) {
		t.Errorf("after Run, Outside's count does not resume")
	}
	// Ties in time run by source, then count: Outside's events first.
	for i := 1; i < len(got); i++ {
		if got[i].At == got[i-1].At && got[i].Seq < got[i-1].Seq {
			t.Fatalf("event %d: key %#x after %#x at the same time", i, got[i].Seq, got[i-1].Seq)
		}
	}
}

type handlerFunc func(Event)

func (f handlerFunc) Handle(e Event) { f(e) }

// TestKeyLimits checks the panics at a source beyond MaxSource and at a
// source's count overflowing into its source bits.
func TestKeyLimits(t *testing.T) {
	panics := func(name string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s: no panic", name)
			}
		}()
		f()
	}
	var e *Engine
	e = New(NewHeap(0), handlerFunc(func(ev Event) { e.Schedule(ev.At, 1, 0, 0) }))
	e.SetOwner(2, MaxSource, true)
	e.Schedule(0, 2, 1, 0)
	panics("source beyond MaxSource", func() { e.Run(Forever, 0) })

	e = New(NewHeap(0), handlerFunc(func(ev Event) { e.Schedule(ev.At, 1, 0, 0) }))
	e.Schedule(0, 1, 0, 0)
	e.last = append(e.last, Key(1, maxCount)) // object 1 + Obj 0 has counted to the limit
	panics("count overflow", func() { e.Run(Forever, 1) })

	panics("owner after scheduling", func() { e.SetOwner(3, 1, false) })
	panics("owner Outside", func() { New(NewHeap(0), nil).SetOwner(3, Outside, false) })
}

// SetOwner sizes the per-object counts to the highest owner base exactly
// (a model's objects come first and the owners' bases just past them),
// even one past the last (doubling there left a million-node model's
// counts at twice their size), and an owner below it allocates nothing.
func TestSetOwnerSizesCountsExactly(t *testing.T) {
	e := New(NewHeap(0), nil)
	e.SetOwner(2, 1000, false)
	if len(e.last) != 1001 {
		t.Fatalf("after an owner at 1000: %d counts, want 1001", len(e.last))
	}
	e.SetOwner(3, 999, false)
	if len(e.last) != 1001 {
		t.Errorf("after an owner at 999: %d counts, want 1001", len(e.last))
	}
	e.SetOwner(4, 1001, false) // one past: not twice the size
	if len(e.last) != 1002 {
		t.Errorf("after an owner at 1001: %d counts, want 1002", len(e.last))
	}
	for i, k := range e.last {
		if k != Key(uint32(i), 0) {
			t.Fatalf("count %d starts at %#x, want %#x", i, k, Key(uint32(i), 0))
		}
	}
}
