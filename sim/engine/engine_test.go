package engine

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestQueuesOrder pushes and pops random events (with many ties, keyed
// by a few sources each counting its own events, so that keys do not come
// in order) through both queues, interleaved as a simulation does, and
// checks that each runs them in the order's definition: the least pending
// by (At, Seq) first, as a linear search finds it.
func TestQueuesOrder(t *testing.T) {
	for _, tc := range []struct {
		name   string
		spread int64
	}{{"ties", 3}, {"dense", 50}, {"sparse", 10 * Microsecond}, {"mixed", 5 * Millisecond}} {
		t.Run(tc.name, func(t *testing.T) {
			qs := map[string]Queue{"heap": NewHeap(0), "calendar": NewCalendar(16, 256),
				"calendar-1ns": NewCalendar(1000, 64), "calendar-wide": NewCalendar(1<<20, 1024)}
			var want []Event
			for _, name := range []string{"reference", "heap", "calendar", "calendar-1ns", "calendar-wide"} {
				q := qs[name]
				if name == "reference" {
					q = &refQueue{}
				}
				r := rand.New(rand.NewPCG(1, 2))
				var seq uint64
				var count [5]uint64
				var now int64
				var got []Event
				push := func() {
					seq++
					d := r.Int64N(tc.spread)
					if r.IntN(10) == 0 {
						d = 0
					}
					s := r.IntN(len(count))
					count[s]++
					q.Push(Event{At: now + d, Seq: Key(uint32(s), count[s])})
				}
				for range 100 {
					push()
				}
				for q.Len() > 0 {
					e := q.Pop()
					if e.At < now {
						t.Fatalf("%s: popped %d after %d", name, e.At, now)
					}
					now = e.At
					got = append(got, e)
					if seq < 20000 {
						for range r.IntN(3) {
							push()
						}
					}
				}
				if want == nil {
					want = got
				}
				if !slices.Equal(got, want) {
					t.Fatalf("%s: not the least pending event first", name)
				}
				if uint64(len(got)) != seq {
					t.Fatalf("%s: popped %d of %d", name, len(got), seq)
				}
			}
		})
	}
}

// refQueue is the order's definition as a queue: Pop takes the least
// pending event by (At, Seq), found by a linear search.
type refQueue struct{ a []Event }

func (q *refQueue) Push(e Event) { q.a = append(q.a, e) }
func (q *refQueue) Len() int     { return len(q.a) }
func (q *refQueue) Peek() *Event {
	if len(q.a) == 0 {
		return nil
	}
	m := 0
	for i := range q.a {
		if q.a[i].before(&q.a[m]) {
			m = i
		}
	}
	return &q.a[m]
}
func (q *refQueue) Pop() Event {
	p := q.Peek()
	e := *p
	*p = q.a[len(q.a)-1]
	q.a = q.a[:len(q.a)-1]
	return e
}

type counter struct {
	e *Engine
	n int
	r *rand.Rand
}

func (c *counter) Handle(ev Event) {
	c.n++
	c.e.Schedule(ev.At+1+c.r.Int64N(200*Nanosecond), ev.Kind, ev.Obj, ev.Arg)
}

func TestEngineRunUntil(t *testing.T) {
	c := &counter{r: rand.New(rand.NewPCG(3, 4))}
	c.e = New(NewHeap(0), c)
	c.e.Schedule(0, 1, 0, 0)
	more := c.e.Run(Microsecond, 0)
	if !more || c.e.Now() > Microsecond {
		t.Fatalf("Run stopped at %d, more=%v", c.e.Now(), more)
	}
	if c.e.Events() != uint64(c.n) {
		t.Fatalf("events %d, handled %d", c.e.Events(), c.n)
	}
}

// hold is the classic hold-model benchmark: N pending events, each pop
// pushes one event a random exponential-ish time later.
func hold(b *testing.B, q Queue, pending int) {
	r := rand.New(rand.NewPCG(5, 6))
	var seq uint64
	for range pending {
		seq++
		q.Push(Event{At: r.Int64N(200 * Nanosecond), Seq: seq})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		e := q.Pop()
		seq++
		q.Push(Event{At: e.At + 1 + r.Int64N(400*Nanosecond), Seq: seq})
	}
}

func BenchmarkHold(b *testing.B) {
	for _, n := range []int{1000, 30000} {
		b.Run("heap/"+itoa(n), func(b *testing.B) { hold(b, NewHeap(n), n) })
		b.Run("calendar/"+itoa(n), func(b *testing.B) { hold(b, NewCalendar(64, 1<<16), n) })
	}
}

func itoa(n int) string {
	s := ""
	for n > 0 {
		s = string(rune('0'+n%10)) + s
		n /= 10
	}
	return s
}

// recorder schedules like counter, records what it runs and counts the
// prefetch hints it gets, which must name pending events.
type recorder struct {
	e     *Engine
	r     *rand.Rand
	ran   []Event
	hints int
}

func (c *recorder) Handle(ev Event) {
	c.ran = append(c.ran, ev)
	if len(c.ran) < 20000 {
		for range 1 + c.r.IntN(2) {
			d := c.r.Int64N(50 * Nanosecond)
			if c.r.IntN(4) == 0 {
				d = 0
			}
			c.e.Schedule(ev.At+d, ev.Kind, ev.Obj, ev.Arg)
		}
	}
}

func (c *recorder) Prefetch(next *Event) {
	if next.At < c.e.Now() {
		panic("prefetch hint in the past")
	}
	c.hints++
}

// TestEngineQueuesSameRun runs the same model on the heap and on calendars
// of several geometries, in chunks (Run with until and max), with a
// Prefetcher handler: the events run must be the same.
func TestEngineQueuesSameRun(t *testing.T) {
	var want []Event
	for _, q := range []Queue{NewHeap(0), NewCalendar(64, 1024), NewCalendar(1, 64), NewCalendar(1<<20, 64)} {
		c := &recorder{r: rand.New(rand.NewPCG(7, 8))}
		c.e = New(q, c)
		for i := range 50 {
			c.e.Schedule(int64(i%7)*Nanosecond, 0, int32(i), 0)
		}
		for until := Microsecond; c.e.Run(until, 997); until += Microsecond {
		}
		if c.hints == 0 {
			t.Errorf("%T: no prefetch hint", q)
		}
		if want == nil {
			want = c.ran
			continue
		}
		if !slices.Equal(c.ran, want) {
			t.Fatalf("%T: ran %d events, differing from the heap's %d", q, len(c.ran), len(want))
		}
	}
}

// laneModel schedules four kinds of event the way a packet model does:
// kind 0 at a constant delay, kind 1 at a constant delay but sometimes
// sooner (out of its lane's order), kind 2 at random short delays, kind 3
// rarely and far ahead (beyond a calendar's year).
type laneModel struct {
	e   *Engine
	r   *rand.Rand
	ran []Event
}

func (m *laneModel) Handle(ev Event) {
	m.ran = append(m.ran, ev)
	if len(m.ran) >= 30000 {
		return
	}
	for range 1 + m.r.IntN(2) {
		kind := uint8(m.r.IntN(4))
		var d int64
		switch kind {
		case 0:
			d = 10 * Nanosecond
		case 1:
			d = 192 * Nanosecond
			if m.r.IntN(5) == 0 {
				d = m.r.Int64N(192 * Nanosecond)
			}
		case 2:
			d = m.r.Int64N(300 * Nanosecond)
		case 3:
			if m.r.IntN(20) != 0 {
				continue
			}
			d = Microsecond + m.r.Int64N(20*Microsecond)
		}
		m.e.ScheduleAux(ev.At+d, kind, ev.Obj, int32(len(m.ran)), int32(kind))
	}
}

func (m *laneModel) Prefetch(next *Event) {
	if next.At < m.e.Now() {
		panic("prefetch hint in the past")
	}
}

// TestLanesSameRun runs the same model with and without lanes, on the heap
// and on calendars of several geometries, in chunks: lanes must not change
// a single event of the run, and they must have taken events.
func TestLanesSameRun(t *testing.T) {
	var want []Event
	for _, lanes := range []bool{false, true} {
		for _, mk := range []func() Queue{
			func() Queue { return NewHeap(0) },
			func() Queue { return NewCalendar(64, 1024) },
			func() Queue { return NewCalendar(1, 64) },
			func() Queue { return NewCalendar(1<<20, 64) },
			func() Queue { return NewCalendar(4096, 1<<16) },
		} {
			q := mk()
			m := &laneModel{r: rand.New(rand.NewPCG(9, 10))}
			m.e = New(q, m)
			laned := 0
			if lanes {
				m.e.UseLane(0, 2)
				m.e.UseLane(1)
				m.e.UseLane(3)
			}
			for i := range 40 {
				m.e.Schedule(int64(i%5)*Nanosecond, uint8(i%4), int32(i), 0)
			}
			for until := Microsecond; ; until += Microsecond {
				more := m.e.Run(until, 1009)
				laned = max(laned, m.e.lanes.n)
				if m.e.Pending() != q.Len()+m.e.lanes.n {
					t.Fatal("Pending miscounts")
				}
				if !more {
					break
				}
			}
			if lanes && laned == 0 {
				t.Errorf("%T: no event ever in a lane", q)
			}
			if want == nil {
				want = m.ran
				continue
			}
			if !slices.Equal(m.ran, want) {
				i := 0
				for i < min(len(m.ran), len(want)) && m.ran[i] == want[i] {
					i++
				}
				t.Fatalf("%T lanes=%v: ran %d events, first difference at %d from the reference's %d", q, lanes, len(m.ran), i, len(want))
			}
		}
	}
	if len(want) < 30000 {
		t.Fatalf("only %d events ran", len(want))
	}
}

// TestLaneRing checks a lane across chunk boundaries, chunk reuse and
// growth: it keeps (At, Seq) order, refuses an event earlier than its
// last, takes one of the same time with a larger key at its end and one
// with a smaller key among the tail chunk's events of that time.
func TestLaneRing(t *testing.T) {
	var s laneSet
	s.add([]uint8{1, 2})
	var want []laneKey
	seq := uint64(1000)
	push := func(at int64, seq uint64, kind uint8) bool {
		return s.push(at, seq, kind, 0, 0, 0)
	}
	// add puts k into want in order, as the lane must hold it.
	add := func(k laneKey) {
		j := len(want)
		for j > 0 && k.before(&want[j-1]) {
			j--
		}
		want = slices.Insert(want, j, k)
	}
	pop := func(round int) {
		t.Helper()
		e := s.pop()
		if e.At != want[0].at || e.Seq != want[0].seq {
			t.Fatalf("round %d: popped (%d, %d), want (%d, %d)", round, e.At, e.Seq, want[0].at, want[0].seq)
		}
		want = want[1:]
	}
	r := rand.New(rand.NewPCG(13, 14))
	at := int64(0)
	for round := range 5 {
		// Fill past a chunk, then drain part of it so that the next round
		// starts in a reused chunk.
		for i := range 300 + 100*round {
			at += int64(i % 3) // ties included
			seq += 10
			if !push(at, seq, uint8(1+i%2)) {
				t.Fatalf("round %d: in-order event %d refused", round, i)
			}
			add(laneKey{at, seq})
			// Sometimes one of the same time with a smaller key: taken
			// when its place is in the tail chunk.
			if r.IntN(4) == 0 {
				k := laneKey{at, seq - 1 - uint64(r.IntN(25))}
				if s.push(k.at, k.seq, 1, 0, 0, 0) {
					add(k)
				} else if s.lanes[0].ti != chunkEvents && s.lanes[0].ti > 3 && s.lanes[0].head == s.lanes[0].tail {
					t.Fatalf("round %d: a tie within the tail chunk refused", round)
				}
			}
		}
		if push(at-1, seq+10, 1) {
			t.Fatal("an event before the lane's last was accepted")
		}
		if push(at, seq+10, 7) {
			t.Fatal("a kind without a lane was accepted")
		}
		for range 250 {
			pop(round)
		}
	}
	for len(want) > 0 {
		pop(5)
	}
	if s.n != 0 || s.first() != nil {
		t.Fatalf("drained lanes hold %d events", s.n)
	}
}

// TestLaneTieAtHead checks a tie inserted in front of a lane's only
// events: the lane's first event, and the winner tree, change.
func TestLaneTieAtHead(t *testing.T) {
	var s laneSet
	s.add([]uint8{1})
	s.add([]uint8{2})
	s.push(10, Key(5, 1), 1, 0, 0, 0)
	s.push(10, Key(7, 1), 2, 0, 0, 0)
	if !s.push(10, Key(3, 1), 1, 0, 0, 0) {
		t.Fatal("tie refused")
	}
	var got []uint64
	for s.n > 0 {
		got = append(got, s.pop().Seq)
	}
	if want := []uint64{Key(3, 1), Key(5, 1), Key(7, 1)}; !slices.Equal(got, want) {
		t.Fatalf("popped %x, want %x", got, want)
	}
}

// TestUseLaneMisuse checks that a kind cannot have two lanes and that
// lanes cannot be added once events wait in them.
func TestUseLaneMisuse(t *testing.T) {
	panics := func(name string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s: no panic", name)
			}
		}()
		f()
	}
	e := New(NewHeap(0), &counter{})
	e.UseLane(1, 2)
	panics("kind twice", func() { e.UseLane(2) })
	e.Schedule(5, 1, 0, 0)
	panics("lane after scheduling", func() { e.UseLane(3) })
}
