package engine

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/lpictl/lpictl/sim/internal/cache"
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
	At int64 // when, in picoseconds
	// Seq is the event's key, which orders events of the same At (see
	// doc.go, "Event order"): the object that scheduled it (its source,
	// the high SourceBits) and that object's count of events scheduled so
	// far, this one included (the low CountBits).
	Seq  uint64
	Obj  int32
	Arg  int32
	Aux  int32 // a third operand (in the 32 bytes Kind's padding leaves)
	Kind uint8
}

// An event's key (Seq) packs its source and the source's count.
const (
	// CountBits is the width of the count: a source may schedule up to
	// 2^40 − 2^32 events (about 1.1 × 10^12; the engine panics when an
	// event's source has scheduled more before it runs, which leaves room
	// for the 2^32 − 1 events it could schedule).
	CountBits = 40
	// SourceBits is the width of the source: sources 0 to 2^23 − 1. The
	// key's top bit marks a late event (SetLate).
	SourceBits = 63 - CountBits
	// MaxSource is the largest source.
	MaxSource = 1<<SourceBits - 1
)

// lateBit is set in the key of an event of a late kind (SetLate), so that
// it sorts after every other event of its time.
const lateBit = 1 << 63

const (
	countMask = 1<<CountBits - 1
	maxCount  = 1<<CountBits - 1<<32
)

// Key returns the key of the count-th event scheduled by source.
func Key(source uint32, count uint64) uint64 { return uint64(source)<<CountBits | count }

// Source is the source packed in an event's key.
func (e *Event) Source() uint32 { return uint32(e.Seq>>CountBits) & MaxSource }

// Late reports whether the event is of a late kind (SetLate).
func (e *Event) Late() bool { return e.Seq&lateBit != 0 }

// before is the engine's total order: time, then key.
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

// Queue is a pending-event set ordered by (At, Seq). Keys are unique.
type Queue interface {
	Push(e Event)
	// Pop removes and returns the first event; the queue must not be empty.
	Pop() Event
	// Peek returns the first event without removing it (nil if none).
	Peek() *Event
	Len() int
}

// QueueKind names a Queue implementation.
type QueueKind string

// Queue implementations.
const (
	QueueHeap     QueueKind = "heap"
	QueueCalendar QueueKind = "calendar"
)

// NewQueue returns a queue of the given kind ("" is the heap: with the
// lanes of a packet model taking most events, it holds few, and beats the
// calendar). bucketPS and buckets size a calendar (0 = defaults); a heap
// ignores them.
func NewQueue(kind QueueKind, bucketPS int64, buckets int) (Queue, error) {
	switch kind {
	case QueueHeap, "":
		return NewHeap(1024), nil
	case QueueCalendar:
		return NewCalendar(bucketPS, buckets), nil
	}
	return nil, fmt.Errorf("unknown event queue %q (want heap or calendar)", kind)
}

// Engine runs events in (time, key) order (doc.go, "Event order").
type Engine struct {
	q       Queue
	h       Handler
	cal     *Calendar  // q, when it is a calendar (direct calls on the hot path)
	heap    *Heap      // q, when it is a heap
	pf      Prefetcher // h, if it prefetches and q can peek
	pk      peeker
	now     int64
	key     uint64 // key of the last event the running source scheduled (unloaded: not read yet)
	src     uint32 // the running source (Outside between runs)
	events  uint64
	stopped bool

	lanes     laneSet   // kinds scheduled in order skip the queue (lane.go)
	laneKinds [][]uint8 // the lanes' kinds, as given to UseLane (a Parallel's partitions get the same)

	// lateKind[k] is 1 for a late kind k (SetLate), else 0.
	lateKind [256]uint8
	// par is set on a partition's engine during a Parallel run
	// (parallel.go); nil in a sequential one.
	par *partState

	// Sources: which object runs each kind (owner), and every source's
	// last key (last, indexed by source; grown on demand).
	owner [256]owner
	last  []uint64
}

// owner maps an event of a kind to the object that runs it: base + Obj
// (mask all ones) or base alone (mask 0).
type owner struct{ base, mask uint32 }

// New returns an engine at time 0 that runs events with h.
func New(q Queue, h Handler) *Engine {
	e := &Engine{q: q, last: make([]uint64, 1, 64)}
	for k := range e.owner {
		e.owner[k] = owner{1, ^uint32(0)}
	}
	e.cal, _ = q.(*Calendar)
	e.heap, _ = q.(*Heap)
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

// UseLane gives events of the given kinds a lane (lane.go): a FIFO they
// join instead of the queue while they are scheduled in time order, which
// is cheap for kinds usually scheduled at one constant delay from now. The
// order of the run does not change (the engine always runs the earliest of
// the queue's and the lanes' first events, and an event that would break a
// lane's order goes to the queue), only its cost. At most sixteen lanes;
// a kind has one lane at most; call it before scheduling.
func (e *Engine) UseLane(kinds ...uint8) {
	e.lanes.add(kinds)
	e.laneKinds = append(e.laneKinds, append([]uint8(nil), kinds...))
}

// SetLate makes the given kinds late (doc.go, "Late events"): an event of
// a late kind runs after every event of another kind at the same time,
// whatever their keys (among themselves, late events keep the usual
// order). A model gives it to the events of an object that only reacts to
// the rest of the model (a workload driver told of deliveries), so that a
// Parallel run can run them apart. Call it before scheduling.
func (e *Engine) SetLate(kinds ...uint8) {
	if e.events > 0 || e.Pending() > 0 {
		panic("engine: late kinds must be set before events are scheduled")
	}
	for _, k := range kinds {
		e.lateKind[k] = 1
	}
}

// Outside is the source of the events scheduled while no event runs
// (before Run, between Runs): the model's set-up and its drivers.
const Outside uint32 = 0

// SetOwner says which object runs the events of kind, for their order
// (doc.go, "Event order"): the object base + Obj if perObj, else base
// alone, whatever Obj is. The events an event schedules have that object
// as their source. Without it, the events of a kind are run by object
// 1 + Obj (object 0 is Outside). Objects must be at most MaxSource; call
// it before scheduling.
func (e *Engine) SetOwner(kind uint8, base uint32, perObj bool) {
	if base == Outside || base > MaxSource {
		panic(fmt.Sprintf("engine: owner base %d of kind %d outside 1..%d", base, kind, MaxSource))
	}
	if e.events > 0 || e.Pending() > 0 {
		panic("engine: owners must be set before events are scheduled")
	}
	o := owner{base, 0}
	if perObj {
		o.mask = ^uint32(0)
	}
	e.owner[kind] = o
	if base >= uint32(len(e.last)) {
		// Sized for the model's objects, exactly: doubling here left a
		// million-node model's counts at twice their size.
		e.resize(int(base) + 1)
	}
}

// Now is the time of the event being run (or of the last one run).
func (e *Engine) Now() int64 { return e.now }

// Events is the number of events run so far.
func (e *Engine) Events() uint64 { return e.events }

// Pending is the number of scheduled events.
func (e *Engine) Pending() int { return e.q.Len() + e.lanes.n }

// Schedule adds an event at time at (≥ Now).
func (e *Engine) Schedule(at int64, kind uint8, obj, arg int32) {
	e.push(at, kind, obj, arg, 0)
}

// ScheduleAux is Schedule with a third operand, the event's Aux.
func (e *Engine) ScheduleAux(at int64, kind uint8, obj, arg, aux int32) {
	e.push(at, kind, obj, arg, aux)
}

// late panics on an event scheduled in the past (apart, so that push
// stays small).
//
//go:noinline
func (e *Engine) late(at int64, kind uint8) {
	panic(fmt.Sprintf("engine: event kind %d scheduled at %d ps, before now (%d ps)", kind, at, e.now))
}

// push keys an event and adds it to its kind's lane if it keeps the
// lane in order, else to the queue. It takes the fields, not an Event:
// the lane writes them straight into its slot (a struct built on the
// stack and copied whole would be read back before its stores land).
func (e *Engine) push(at int64, kind uint8, obj, arg, aux int32) {
	if at < e.now {
		e.late(at, kind)
	}
	k := e.key
	if k == unloaded {
		k = e.load()
	}
	k++
	e.key = k
	k |= uint64(e.lateKind[kind]) << 63 // lateBit
	if s := e.par; s != nil {
		if s.cross[kind] {
			if s.route(e, Event{At: at, Seq: k, Obj: obj, Arg: arg, Aux: aux, Kind: kind}) {
				return
			}
		} else if raceEnabled {
			s.checkLocal(e, &Event{At: at, Seq: k, Obj: obj, Arg: arg, Aux: aux, Kind: kind})
		}
	}
	if e.lanes.push(at, k, kind, obj, arg, aux) {
		return
	}
	e.enqueue(Event{At: at, Seq: k, Obj: obj, Arg: arg, Aux: aux, Kind: kind})
}

// enqueue adds an event to the queue behind the lanes.
func (e *Engine) enqueue(ev Event) {
	switch {
	case e.heap != nil:
		e.heap.Push(ev)
		e.lanes.moved = true
	case e.cal != nil:
		e.cal.Push(ev)
	default:
		e.q.Push(ev)
	}
}

// dropFront removes the first pending event, which front found in a lane
// (laned) or at the queue's head.
func (e *Engine) dropFront(laned bool) {
	switch {
	case laned:
		e.lanes.drop()
	case e.heap != nil:
		e.heap.drop()
	case e.cal != nil:
		e.cal.Pop()
	default:
		e.q.Pop()
	}
}

// Stop makes Run return after the current event.
func (e *Engine) Stop() { e.stopped = true }

// front returns the first pending event and whether it is in a lane (nil
// if there is none).
func (e *Engine) front() (*Event, bool) {
	best := e.lanes.first()
	var qe *Event
	switch {
	case e.heap != nil:
		qe = e.heap.Peek()
	case e.cal != nil:
		limit := Forever
		if best != nil {
			limit = best.At
		}
		qe = e.cal.peekUntil(limit)
	default:
		qe = e.q.Peek()
	}
	if qe != nil && (best == nil || qe.before(best)) {
		return qe, false
	}
	return best, true
}

// hint guesses the first pending event, for Prefetch: the earlier of the
// first lane head and the queue's guess.
func (e *Engine) hint() *Event {
	var next *Event
	switch {
	case e.heap != nil:
		next = e.heap.Peek()
	case e.cal != nil:
		next = e.cal.peek()
	default:
		next = e.pk.peek()
	}
	if h := e.lanes.first(); h != nil && (next == nil || h.before(next)) {
		next = h
	}
	return next
}

// unloaded is e.key while the running event has scheduled nothing: its
// source's last key is read at its first schedule (load), and written back
// after it only if it did. It has the late bit, which the keys kept in
// e.key and e.last never have (push sets it only in the event).
const unloaded = ^uint64(0)

// load returns the running source's last key, at the first event it
// schedules while the current event runs (an event that schedules nothing
// costs no look-up).
func (e *Engine) load() uint64 {
	s := e.src
	if s >= uint32(len(e.last)) {
		e.grow(s)
	}
	k := e.last[s]
	if k&countMask >= maxCount {
		e.overflow(s)
	}
	return k
}

// keyAddr is the address of the last key of the source of the events
// next will schedule, which it loads at its first schedule: Run prefetches
// it with next (a load would stall on a miss; a prefetch does not). No
// bounds check: a prefetch of any address is harmless.
func (e *Engine) keyAddr(next *Event) uintptr {
	o := e.owner[next.Kind]
	return uintptr(unsafe.Pointer(unsafe.SliceData(e.last))) + 8*uintptr(o.base+uint32(next.Obj)&o.mask)
}

// grow makes room for source s in last (apart: it is rare).
//
//go:noinline
func (e *Engine) grow(s uint32) {
	if s > MaxSource {
		panic(fmt.Sprintf("engine: event source %d beyond %d (an owner's base + Obj)", s, MaxSource))
	}
	e.resize(max(2*len(e.last), int(s)+1))
}

// resize makes last n long. One allocation of the new length: appending
// key by key grew a million-node model's 42 MB through 470 MB of garbage.
func (e *Engine) resize(n int) {
	last := make([]uint64, n)
	copy(last, e.last)
	for i := len(e.last); i < n; i++ {
		last[i] = Key(uint32(i), 0)
	}
	e.last = last
}

// overflow panics on a source whose count reached maxCount.
//
//go:noinline
func (e *Engine) overflow(s uint32) {
	panic(fmt.Sprintf("engine: source %d scheduled 2^%d − 2^32 events", s, CountBits))
}

// Run runs events until none is left, Stop is called, the next event is
// later than until, or max events have run (max 0 = no limit). It reports
// whether events remain. While an event runs, the events it schedules
// take their keys from the source that runs it (SetOwner).
func (e *Engine) Run(until int64, max uint64) bool {
	e.stopped = false
	if e.key&countMask >= maxCount {
		e.overflow(Outside)
	}
	e.last[Outside] = e.key
	limit := uint64(math.MaxUint64) // e.events at which to stop
	if max != 0 && max < math.MaxUint64-e.events {
		limit = e.events + max
	}
	more := false
	// With the heap, the next event found after one is removed (for
	// Prefetch) is the next one run unless the running event moves the
	// front (e.lanes.moved: an event pushed on the heap, a lane's first
	// event made earlier); then it is looked up again.
	var next *Event
	laned, known := false, false
	for !e.stopped {
		if !known || e.lanes.moved {
			next, laned = e.front()
		}
		if next == nil {
			break
		}
		if next.At > until || e.events >= limit {
			more = true
			break
		}
		// Copied here from front's pointer (just loaded), then removed:
		// no event returned through a call.
		ev := *next
		e.dropFront(laned)
		e.now = ev.At
		e.events++
		if e.heap != nil {
			e.lanes.moved = false
			// front, inlined.
			next, laned = e.lanes.first(), true
			if qe := e.heap.Peek(); qe != nil && (next == nil || qe.before(next)) {
				next, laned = qe, false
			}
			known = true
			if e.pf != nil && next != nil {
				e.pf.Prefetch(next)
				cache.Prefetch(e.keyAddr(next))
			}
		} else if e.pf != nil {
			if h := e.hint(); h != nil {
				e.pf.Prefetch(h)
				cache.Prefetch(e.keyAddr(h))
			}
		}
		// The source of the events ev schedules: the object that runs it.
		o := e.owner[ev.Kind]
		e.src, e.key = o.base+uint32(ev.Obj)&o.mask, unloaded
		if e.par != nil {
			e.par.enter(ev.At, ev.Seq)
		}
		e.h.Handle(ev)
		if e.key != unloaded {
			e.last[e.src] = e.key
		}
	}
	e.src = Outside
	e.key = e.last[Outside]
	if e.stopped {
		return e.Pending() > 0
	}
	return more
}
