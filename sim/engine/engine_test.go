package engine

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestQueuesOrder pushes and pops random events (with many ties) through
// both queues, interleaved as a simulation does, and checks both give the
// exact (At, Seq) order.
func TestQueuesOrder(t *testing.T) {
	for _, tc := range []struct {
		name   string
		spread int64
	}{{"ties", 3}, {"dense", 50}, {"sparse", 10 * Microsecond}, {"mixed", 5 * Millisecond}} {
		t.Run(tc.name, func(t *testing.T) {
			qs := map[string]Queue{"heap": NewHeap(0), "calendar": NewCalendar(16, 256),
				"calendar-1ns": NewCalendar(1000, 64), "calendar-wide": NewCalendar(1<<20, 1024)}
			for _, name := range []string{"heap", "calendar", "calendar-1ns", "calendar-wide"} {
				q := qs[name]
				r := rand.New(rand.NewPCG(1, 2))
				var seq uint64
				var now int64
				var got []Event
				push := func() {
					seq++
					d := r.Int64N(tc.spread)
					if r.IntN(10) == 0 {
						d = 0
					}
					q.Push(Event{At: now + d, Seq: seq})
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
				if !slices.IsSortedFunc(got, func(a, b Event) int {
					if a.before(&b) {
						return -1
					}
					if b.before(&a) {
						return 1
					}
					return 0
				}) {
					t.Fatalf("%s: not in (At, Seq) order", name)
				}
				if uint64(len(got)) != seq {
					t.Fatalf("%s: popped %d of %d", name, len(got), seq)
				}
			}
		})
	}
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
