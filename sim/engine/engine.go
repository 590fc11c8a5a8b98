package engine

import (
	"fmt"
	"math"
)

// Picosecond units.
const (
	Picosecond  int64 = 1
	Nanosecond  int64 = 1000
	Microsecond int64 = 1000 * Nanosecond
	Millisecond int64 = 1000 * Microsecond
	Second      int64 = 1000 * Millisecond
	// Forever is a time no event reaches.
	Forever int64 = math.MaxInt64
)

// Event is one scheduled action. Kind, Obj and Arg mean what the model says
// (e.g. "packet Arg arrives at port Obj"); the engine only orders events.
type Event struct {
	At   int64  // when, in picoseconds
	Seq  uint64 // insertion order: ties in At run first-scheduled first
	Obj  int32
	Arg  int32
	Aux  int32 // a third operand (in the 32 bytes Kind's padding leaves)
	Kind uint8
}

// before is the engine's total order: time, then insertion sequence.
func (e *Event) before(o *Event) bool {
	return e.At < o.At || (e.At == o.At && e.Seq < o.Seq)
}

// Handler runs events. It may schedule further events at or after e.At.
type Handler interface {
	Handle(e Event)
}

// Prefetcher is an optional extension of a Handler: the engine calls
// Prefetch with (a hint of) the event it will run next, just before it runs
// the current one, so that the handler can start loading the state that
// event needs while the current one runs (a memory-bound model hides part
// of a cache miss per event this way). It must not change anything.
type Prefetcher interface {
	Prefetch(next *Event)
}

// peeker is implemented by queues that can cheaply guess their next event
// (nil when they cannot tell without work).
type peeker interface {
	peek() *Event
}

// Queue is a pending-event set ordered by (At, Seq).
type Queue interface {
	Push(e Event)
	// Pop removes and returns the first event; the queue must not be empty.
	Pop() Event
	Len() int
}

// QueueKind names a Queue implementation.
type QueueKind string

// Queue implementations.
const (
	QueueHeap     QueueKind = "heap"
	QueueCalendar QueueKind = "calendar"
)

// NewQueue returns a queue of the given kind. bucketPS and buckets size a
// calendar (0 = defaults); a heap ignores them.
func NewQueue(kind QueueKind, bucketPS int64, buckets int) (Queue, error) {
	switch kind {
	case QueueHeap:
		return NewHeap(1024), nil
	case QueueCalendar, "":
		return NewCalendar(bucketPS, buckets), nil
	}
	return nil, fmt.Errorf("unknown event queue %q (want heap or calendar)", kind)
}

// Engine runs events in (time, sequence) order.
type Engine struct {
	q       Queue
	h       Handler
	cal     *Calendar  // q, when it is a calendar (direct calls on the hot path)
	pf      Prefetcher // h, if it prefetches and q can peek
	pk      peeker
	now     int64
	seq     uint64
	events  uint64
	stopped bool
}

// New returns an engine at time 0 that runs events with h.
func New(q Queue, h Handler) *Engine {
	e := &Engine{q: q}
	e.cal, _ = q.(*Calendar)
	e.SetHandler(h)
	return e
}

// SetHandler replaces the handler (models built after the engine).
func (e *Engine) SetHandler(h Handler) {
	e.h = h
	e.pf, e.pk = nil, nil
	if pf, ok := h.(Prefetcher); ok {
		if pk, ok := e.q.(peeker); ok {
			e.pf, e.pk = pf, pk
		}
	}
}

// Now is the time of the event being run (or of the last one run).
func (e *Engine) Now() int64 { return e.now }

// Events is the number of events run so far.
func (e *Engine) Events() uint64 { return e.events }

// Pending is the number of scheduled events.
func (e *Engine) Pending() int { return e.q.Len() }

// Schedule adds an event at time at (≥ Now).
func (e *Engine) Schedule(at int64, kind uint8, obj, arg int32) {
	if at < e.now {
		panic(fmt.Sprintf("engine: event kind %d scheduled at %d ps, before now (%d ps)", kind, at, e.now))
	}
	e.seq++
	if e.cal != nil {
		e.cal.Push(Event{At: at, Seq: e.seq, Obj: obj, Arg: arg, Kind: kind})
		return
	}
	e.q.Push(Event{At: at, Seq: e.seq, Obj: obj, Arg: arg, Kind: kind})
}

// ScheduleAux is Schedule with a third operand, the event's Aux.
func (e *Engine) ScheduleAux(at int64, kind uint8, obj, arg, aux int32) {
	if at < e.now {
		panic(fmt.Sprintf("engine: event kind %d scheduled at %d ps, before now (%d ps)", kind, at, e.now))
	}
	e.seq++
	if e.cal != nil {
		e.cal.Push(Event{At: at, Seq: e.seq, Obj: obj, Arg: arg, Aux: aux, Kind: kind})
		return
	}
	e.q.Push(Event{At: at, Seq: e.seq, Obj: obj, Arg: arg, Aux: aux, Kind: kind})
}

// Stop makes Run return after the current event.
func (e *Engine) Stop() { e.stopped = true }

// Run runs events until the queue is empty, Stop is called, the next event
// is later than until, or max events have run (max 0 = no limit). It
// reports whether events remain.
func (e *Engine) Run(until int64, max uint64) bool {
	if e.cal != nil {
		return e.runCalendar(until, max)
	}
	e.stopped = false
	var n uint64
	for e.q.Len() > 0 && !e.stopped {
		if max != 0 && n >= max {
			return true
		}
		ev := e.q.Pop()
		if ev.At > until {
			e.q.Push(ev) // keeps its sequence number: order unchanged
			return true
		}
		e.now = ev.At
		e.events++
		n++
		if e.pf != nil {
			if next := e.pk.peek(); next != nil {
				e.pf.Prefetch(next)
			}
		}
		e.h.Handle(ev)
	}
	return e.q.Len() > 0
}

// runCalendar is Run with direct calls to the calendar queue.
func (e *Engine) runCalendar(until int64, max uint64) bool {
	e.stopped = false
	c := e.cal
	var n uint64
	for c.Len() > 0 && !e.stopped {
		if max != 0 && n >= max {
			return true
		}
		ev := c.Pop()
		if ev.At > until {
			c.Push(ev) // keeps its sequence number: order unchanged
			return true
		}
		e.now = ev.At
		e.events++
		n++
		if e.pf != nil {
			if next := c.peek(); next != nil {
				e.pf.Prefetch(next)
			}
		}
		e.h.Handle(ev)
	}
	return c.Len() > 0
}
