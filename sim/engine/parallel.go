package engine

import (
	"fmt"
	"math/bits"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"
)

// MaxParts is the most partitions a Parallel run has (a partition is a bit
// of a Plan.Conflict mask).
const MaxParts = 64

// Plan is how a Parallel run splits a model into partitions (doc.go,
// "Parallel runs").
type Plan struct {
	// Parts is the number of partitions, each run by a goroutine of its
	// own: 1 to MaxParts.
	Parts int
	// Part is the partition of each object, indexed by source (the
	// object that runs an event: SetOwner). Objects past its end are in
	// partition 0. The objects that run late events (SetLate) run them
	// apart, whatever their partition.
	Part []uint8
	// Conflict is, per object (missing: none), the set of other
	// partitions (bit q for partition q) whose objects' events touch
	// state this object's events touch too, with no delay between them
	// (the two ends of a link that share its power state). Such an event
	// calls Engine.Sync before it touches that state, which returns once
	// those partitions have run every event that comes before it in the
	// sequential order, and none that comes after.
	Conflict []uint64
	// Crossing is the kinds of the events an object may schedule for an
	// object of another partition (nil: any kind). An event of another
	// kind goes to its own partition's queue without looking up where
	// its object is (checked in race-detector builds).
	Crossing []uint8
	// Lookahead is the least delay of an event an object schedules for
	// an object of another partition, and of a non-late event a late
	// event schedules: > 0. The run advances in windows this long.
	Lookahead int64
	// LateLookahead, if larger, is the least delay of a non-late event a
	// late event schedules. From twice the Lookahead, a window's late
	// events run during the next window, on goroutines that would wait.
	LateLookahead int64
}

// Parallel runs an engine's events on several goroutines, partition by
// partition, in conservative windows of Plan.Lookahead, with the results
// of the sequential engine (doc.go, "Parallel runs"). The model gives
// each partition's engine (Part) and the late events' engine (Late) a
// handler bound to that engine, and schedules through it; between runs,
// the events and the sources' counts are the main engine's.
type Parallel struct {
	// Export, when set, is called on partition from's goroutine for each
	// event it schedules for partition to, as it does, with the buffer
	// (0 or 1) the event waits in: the model may copy what the event's
	// operands address into storage of its own for (from, to, buf) and
	// return the event rewritten (from's memory is from's alone during a
	// window). By value: a pointer would move every routed event to the
	// heap.
	Export func(from, to, buf int, ev Event) Event
	// Import, when set, is called on partition to's goroutine, as its
	// next window starts (or on Run's at Run's end), with the events
	// partition from sent it in buffer buf, in the order sent, before
	// they join its queue: the model moves what they address into to's
	// memory and rewrites them; the storage Export filled for (from, to,
	// buf) is free again once it returns.
	Import func(from, to, buf int, evs []Event)
	// AfterWindow, when set, is called after each window (the late events
	// included), with no partition running; true stops the run there.
	AfterWindow func() (stop bool)
	// Rejoin, when set, is called as Run ends for each event left in
	// partition part's queue, before it goes back to the main engine: the
	// model may rewrite what its operands address (into memory it is
	// moving to the main engine's side), so that a Run of the main engine
	// can go on from there.
	Rejoin func(part int, ev Event) Event

	main  *Engine
	plan  Plan
	parts []*Engine
	late  *Engine
	prog  []progress
	// The late events of the last windows, run during the next one
	// (helpLate): those before lateEnd (Forever: none pending), under
	// lateLock; what they schedule for the partitions waits in lateOut.
	// On lines of their own, away from what the partitions read: the
	// goroutines that wait read latePending in their loops, and the lock
	// and what it guards move to the core that runs the late events.
	_           [64]byte
	latePending atomic.Bool
	_           [127]byte
	lateLock    atomic.Int32
	lateEnd     int64
	lateOut     []Event
	lateHeld    bool // Run's goroutine holds lateLock (between windows)
	_           [87]byte

	crowded bool           // more goroutines than GOMAXPROCS: spinning yields (pause)
	workers sync.WaitGroup // the workers' goroutines

	slots  []workerSlot // the workers'
	active []int        // the partitions with events in the window
	// next is each partition's first pending time between windows: the
	// partition's own at its window's end, lowered by what joins it. The
	// loop reads it rather than the partitions' queues, which another
	// core has in its cache.
	next []int64
	// inbound marks the partitions sent events in the last window: they
	// run the next one, if only to take them (pull).
	inbound []bool
	// win counts the windows started: its parity picks the out buffers,
	// and it is the command a worker runs a window for.
	win int64
	// serialReversed (tests only) runs a window's partitions one after
	// the other on the caller's goroutine, the last first: a run with no
	// conflicts then still has no race, but no order across partitions.
	serialReversed bool
}

// progress is how far a partition's run is, published for the partitions
// whose events conflict with its own: every event before (at, key) in the
// order of the run has run (see partState.enter). Two words written key
// first and read at first, so that a reader sees a position at or before
// the partition's (never after it).
//
// A partition waiting on another (waitPast) posts the position it waits
// for (the least of the waiters'); the other publishes its own as soon as
// it is past it, and not at every event: each publication takes the line
// from the waiter's core and back. The waiters' part is on lines of its
// own, read by the partition at every event and written once per wait.
type progress struct {
	at  atomic.Int64
	key atomic.Uint64
	_   [128 - 16]byte

	wanted  atomic.Int32 // partitions waiting on this one
	lock    atomic.Int32 // taken by a waiter that posts its target
	wantAt  atomic.Int64 // the least position waited for (while wanted)
	wantKey atomic.Uint64
	_       [128 - 24]byte
}

func (p *progress) publish(at int64, key uint64) {
	p.key.Store(key)
	p.at.Store(at)
}

// past reports whether the partition is past position (at, key).
func (p *progress) past(at int64, key uint64) bool {
	t := p.at.Load()
	k := p.key.Load()
	return t > at || t == at && k > key
}

// awaited reports whether a partition waits for this one to pass a
// position that (at, key) is past. A target read while another waiter
// posts its own may be torn: the publication then comes an event early
// or late, never lost (the partition publishes every publishEvery events
// and at the window's end).
func (p *progress) awaited(at int64, key uint64) bool {
	if p.wanted.Load() == 0 {
		return false
	}
	t := p.wantAt.Load()
	return at > t || at == t && key > p.wantKey.Load()
}

// want posts (at, key) as a position a waiter waits for.
func (p *progress) want(at int64, key uint64) {
	p.take()
	if p.wanted.Load() == 0 || at < p.wantAt.Load() || at == p.wantAt.Load() && key < p.wantKey.Load() {
		p.wantKey.Store(key)
		p.wantAt.Store(at)
	}
	p.wanted.Add(1) // after the target: the partition reads wanted first
	p.lock.Store(0)
}

// unwant ends a wait (the target stays until the last waiter is gone: the
// partition then publishes at every event, as the remaining waiters need
// no less).
func (p *progress) unwant() {
	p.take()
	p.wanted.Add(-1)
	p.lock.Store(0)
}

// take takes the waiters' lock (held for a few instructions; yielding
// after a while in case its holder's goroutine lost its processor).
func (p *progress) take() {
	for i := 0; !p.lock.CompareAndSwap(0, 1); i++ {
		if i >= 64 {
			runtime.Gosched()
		}
	}
}

// partState is a partition engine's part in a Parallel run.
type partState struct {
	p    *Parallel
	self int       // partition, or −1 for the late engine
	prog *progress // its published position (the late engine's: published to no one)
	// cross marks the kinds route looks at (Plan.Crossing; every kind
	// for the late engine): the late kinds and those that may cross.
	cross *[256]bool
	// Events for other partitions, by buffer (the window's number mod 2)
	// and partition: each partition takes its own from the senders'
	// buffers as its next window starts (pull), while they fill the other
	// buffer. outMin is the earliest time sent to each this window.
	out     [2][][]Event
	outMin  []int64
	lateOut []Event // late events, run after the window's others
	// Position of the running event in the sequential order: its time
	// and the largest key run at that time so far, itself included.
	curT   int64
	runmax uint64
	since  int  // events run since the last publication
	synced bool // the running event has called Sync
	// To 256 bytes, a size the allocator aligns to 256: the partitions'
	// states, allocated one after the other, then share no cache line
	// (at 160 bytes, one's position, written at every event, shared a
	// line with the next one's fields that its every push reads).
	_ [96]byte
}

var _ = [1]struct{}{}[unsafe.Sizeof(partState{})-256] // compiles only at 256 bytes

// publishEvery is how often (in events) a partition publishes its
// progress when nobody waits on it.
const publishEvery = 32

// NewParallel prepares parallel runs of main's model under plan: the
// partitions' engines get main's lanes, owners and late kinds, and heap
// queues. The model then sets their handlers (Part(i).SetHandler,
// Late().SetHandler) before calling Run.
func NewParallel(main *Engine, plan Plan) (*Parallel, error) {
	if plan.Parts < 1 || plan.Parts > MaxParts {
		return nil, fmt.Errorf("engine: %d partitions (want 1 to %d)", plan.Parts, MaxParts)
	}
	if plan.Lookahead <= 0 {
		return nil, fmt.Errorf("engine: lookahead %d ps (want > 0)", plan.Lookahead)
	}
	for o, q := range plan.Part {
		if int(q) >= plan.Parts {
			return nil, fmt.Errorf("engine: object %d in partition %d of %d", o, q, plan.Parts)
		}
	}
	plan.LateLookahead = max(plan.LateLookahead, plan.Lookahead) // "if larger"
	p := &Parallel{main: main, plan: plan, prog: make([]progress, plan.Parts)}
	var every, crossing [256]bool
	for k := range every {
		every[k] = true
		crossing[k] = plan.Crossing == nil || main.lateKind[k] != 0
	}
	for _, k := range plan.Crossing {
		crossing[k] = true
	}
	mk := func(self int) *Engine {
		e := New(NewHeap(1024), nil)
		for _, k := range main.laneKinds {
			e.UseLane(k...)
		}
		e.owner, e.lateKind = main.owner, main.lateKind
		e.par = &partState{p: p, self: self, prog: new(progress), cross: &every, outMin: make([]int64, plan.Parts)}
		for b := range e.par.out {
			e.par.out[b] = make([][]Event, plan.Parts)
		}
		for q := range e.par.outMin {
			e.par.outMin[q] = Forever
		}
		if self >= 0 {
			e.par.prog, e.par.cross = &p.prog[self], &crossing
		}
		return e
	}
	for i := range plan.Parts {
		p.parts = append(p.parts, mk(i))
	}
	p.late = mk(-1)
	return p, nil
}

// Part is partition i's engine.
func (p *Parallel) Part(i int) *Engine { return p.parts[i] }

// Late is the engine that runs the late events.
func (p *Parallel) Late() *Engine { return p.late }

// partOf is the partition of object src.
func (p *Parallel) partOf(src uint32) int {
	if int(src) < len(p.plan.Part) {
		return int(p.plan.Part[src])
	}
	return 0
}

// ownerOf is the object that runs ev.
func (e *Engine) ownerOf(ev *Event) uint32 {
	o := e.owner[ev.Kind]
	return o.base + uint32(ev.Obj)&o.mask
}

// route sends an event the running event of a partition (or of the late
// engine) schedules where it runs, and reports whether it went elsewhere
// than e's own queue.
func (s *partState) route(e *Engine, ev Event) bool {
	late := ev.Seq&lateBit != 0
	p := s.p
	if s.self < 0 {
		if late {
			return false
		}
		// To a partition, which may be running: at the next window's end.
		if ev.At-e.now < p.plan.LateLookahead {
			p.tooSoon(e, &ev, p.plan.LateLookahead)
		}
		p.lateOut = append(p.lateOut, ev)
		return true
	}
	if late {
		s.lateOut = append(s.lateOut, ev)
		return true
	}
	q := p.partOf(e.ownerOf(&ev))
	if q == s.self {
		return false
	}
	if ev.At-e.now < p.plan.Lookahead {
		p.tooSoon(e, &ev, p.plan.Lookahead)
	}
	buf := int(p.win & 1)
	if p.Export != nil {
		ev = p.Export(s.self, q, buf, ev)
	}
	s.out[buf][q] = append(s.out[buf][q], ev)
	s.outMin[q] = min(s.outMin[q], ev.At)
	return true
}

// checkLocal panics, in race-detector builds, on an event of a kind that
// Plan.Crossing leaves out scheduled for an object of another partition:
// the plan is wrong for the model.
func (s *partState) checkLocal(e *Engine, ev *Event) {
	if !raceEnabled || s.self < 0 {
		return
	}
	if q := s.p.partOf(e.ownerOf(ev)); q != s.self {
		panic(fmt.Sprintf("engine: event kind %d for object %d in partition %d, scheduled from partition %d: not a crossing kind (Plan.Crossing)",
			ev.Kind, e.ownerOf(ev), q, s.self))
	}
}

// tooSoon panics on an event that leaves its partition (or the late
// events) sooner than the plan's lookahead: the plan is wrong for the
// model. The check does not depend on the window the event falls in, so
// that the error does not depend on the partitions' timing.
//
//go:noinline
func (p *Parallel) tooSoon(e *Engine, ev *Event, lookahead int64) {
	panic(fmt.Sprintf("engine: event kind %d for object %d scheduled %d ps ahead, across partitions: less than the lookahead (%d ps)",
		ev.Kind, e.ownerOf(ev), ev.At-e.now, lookahead))
}

// enter is called before a partition runs an event of object src at
// (at, seq): it updates the partition's position and publishes it from
// time to time, and as soon as it is past the position another partition
// waits for (progress.awaited).
func (s *partState) enter(at int64, seq uint64) {
	if at != s.curT {
		s.curT, s.runmax = at, seq
	} else if seq > s.runmax {
		s.runmax = seq
	}
	s.synced = false
	if s.since++; s.since >= publishEvery || s.prog.awaited(at, s.runmax) {
		s.prog.publish(at, s.runmax)
		s.since = 0
	}
}

// Sync is called by a handler before its event touches state that its
// object shares with the objects of other partitions with no delay
// (Plan.Conflict): it returns once those partitions have run every event
// that comes before the running one in the sequential order, and none
// that comes after (until this event ends). A no-op in a sequential run,
// for an object that conflicts with no partition, and after the event's
// first call.
//
// Why this is the sequential order: at one time, a partition's events run
// in an order of their own (no event reaches it from another partition
// with no delay), and the sequential engine interleaves the partitions'
// sequences by always running the least pending event. In such a merge,
// an event comes before another partition's event exactly when the
// largest key its partition has run at that time up to it (runmax) is
// less than the other's. So an event may touch the shared state once
// every conflicting partition has published a position past its own:
// whatever they ran touched the state before it, whatever they run next
// (which waits in turn) after it. Two partitions never wait on each other:
// the one with the least position does not wait.
func (e *Engine) Sync() {
	if s := e.par; s != nil && !s.synced {
		s.sync(e.src)
	}
}

func (s *partState) sync(src uint32) {
	s.synced = true
	p := s.p
	if s.self < 0 || int(src) >= len(p.plan.Conflict) {
		return
	}
	if mask := p.plan.Conflict[src]; mask != 0 {
		p.prog[s.self].publish(s.curT, s.runmax)
		s.since = 0
		p.waitPast(mask, s.curT, s.runmax)
	}
}

// waitPast waits until every partition in mask is past (at, key).
func (p *Parallel) waitPast(mask uint64, at int64, key uint64) {
	for m := mask; m != 0; m &= m - 1 {
		pr := &p.prog[bits.TrailingZeros64(m)]
		if pr.past(at, key) {
			continue
		}
		pr.want(at, key)
		for i := 0; !pr.past(at, key); i++ {
			p.helpLate()
			p.pause(i)
		}
		pr.unwant()
	}
}

// Events is the number of events run so far by the current Run (for a
// progress report from AfterWindow).
func (p *Parallel) Events() uint64 {
	n := p.late.events
	for _, e := range p.parts {
		n += e.events
	}
	return n
}

// Now is the time of the latest event run so far by the current Run.
func (p *Parallel) Now() int64 {
	t := p.late.now
	for _, e := range p.parts {
		t = max(t, e.now)
	}
	return t
}

// pushKeyed adds an event that already has its key (from another engine).
func (e *Engine) pushKeyed(ev Event) {
	if e.lanes.push(ev.At, ev.Seq, ev.Kind, ev.Obj, ev.Arg, ev.Aux) {
		return
	}
	e.enqueue(ev)
}

// popFront removes and returns the first pending event (false if none).
func (e *Engine) popFront() (Event, bool) {
	next, laned := e.front()
	if next == nil {
		return Event{}, false
	}
	ev := *next
	e.dropFront(laned)
	return ev, true
}

// nextAt is the time of the first pending event (Forever if none).
func (e *Engine) nextAt() int64 {
	if next, _ := e.front(); next != nil {
		return next.At
	}
	return Forever
}

// Run runs the main engine's events until none is left, an event handler
// calls Stop on its engine (the other partitions finish the window) or
// AfterWindow stops it, or the next event is later than until, as
// Engine.Run does, on Plan.Parts
// goroutines. It reports whether events remain. The events run, their
// order within each object and what they see of the state they share are
// those of the main engine's Run.
func (p *Parallel) Run(until int64) bool {
	p.split()
	defer p.join()
	L, LL := p.plan.Lookahead, p.plan.LateLookahead
	if !p.serialReversed && len(p.parts) > 1 {
		p.startWorkers()
		defer p.stopWorkers()
	}
	// Between windows nothing runs: Run holds the late events' lock. The
	// late events of the last windows (before lateEnd) may still be to
	// run: they run during the next window, by whichever goroutine is
	// idle (helpLate), if that window ends before anything they send the
	// partitions can arrive (a late lookahead after the first of them);
	// else first, alone.
	p.lateEnd = Forever
	defer p.finishLate()
	p.lockLate()
	p.next, p.inbound = p.next[:0], p.inbound[:0]
	for _, e := range p.parts {
		p.next, p.inbound = append(p.next, e.nextAt()), append(p.inbound, false)
	}
	for {
		t := slices.Min(p.next)
		lateMin := p.late.nextAt()
		pending := p.lateEnd != Forever && lateMin < p.lateEnd
		if !pending {
			t = min(t, lateMin)
		}
		if pending && (t > until || t > lateMin+LL-L || p.serialReversed) {
			// The next window could not run with them: run them now.
			p.runLate()
			if p.afterWindow() {
				p.unlockLate()
				return p.pending() > 0
			}
			continue
		}
		if t == Forever || t > until {
			p.unlockLate()
			return t != Forever
		}
		end := until + 1 // the window's end, exclusive
		if until == Forever || t+L <= until {
			end = t + L
		}
		if pending {
			end = min(end, lateMin+LL)
			p.latePending.Store(true)
		}
		// The partitions with events in the window, each on a goroutine
		// of its own. Their published positions, from the last window's
		// end, are behind them: safe (a waiter waits until they publish).
		p.active = p.active[:0]
		for i, next := range p.next {
			if next < end || p.inbound[i] {
				p.active = append(p.active, i)
				p.inbound[i] = false
			} else {
				// Nothing to run: past the window before any other starts.
				p.prog[i].publish(end, 0)
			}
		}
		p.unlockLate()
		p.win++
		if p.serialReversed {
			for _, i := range slices.Backward(p.active) {
				p.next[i] = p.window(i, end)
			}
		} else {
			p.runWindow(end)
		}
		// The late events left go on during the next window (the check
		// above runs them first when it could not run with them); what
		// they sent the partitions joins them now.
		p.lockLate()
		p.sendLateOut()
		stopped := p.late.stopped
		for _, e := range p.parts {
			stopped = stopped || e.stopped
			s := e.par
			for q, at := range s.outMin {
				if at != Forever {
					p.next[q] = min(p.next[q], at)
					p.inbound[q] = true
					s.outMin[q] = Forever
				}
			}
			for _, ev := range s.lateOut {
				p.late.pushKeyed(ev)
			}
			s.lateOut = s.lateOut[:0]
		}
		// The window's own late events: during the next one.
		p.lateEnd = end
		p.latePending.Store(false)
		if p.afterWindow() || stopped {
			p.unlockLate()
			return p.pending() > 0
		}
	}
}

func (p *Parallel) afterWindow() bool { return p.AfterWindow != nil && p.AfterWindow() }

// lateChunk is how many late events a goroutine runs at a time while it
// would otherwise wait.
const lateChunk = 16

// helpLate runs a few of the pending late events if no other goroutine is
// running them: called by goroutines that wait (for a conflicting
// partition, for the other partitions at the window's end, for a window).
func (p *Parallel) helpLate() {
	if !p.latePending.Load() || !p.lateLock.CompareAndSwap(0, 1) {
		return
	}
	if p.latePending.Load() {
		p.late.checkHandler()
		p.late.Run(p.lateEnd-1, lateChunk)
		if p.late.nextAt() >= p.lateEnd || p.late.stopped {
			p.latePending.Store(false)
		}
	}
	p.lateLock.Store(0)
}

// finishLate runs the pending late events that no goroutine has run yet
// (with nothing else running but helpers, which it waits for), then sends
// the partitions what they scheduled for them.
func (p *Parallel) finishLate() {
	if !p.lateHeld { // held if Run's loop panicked between windows
		p.lockLate()
	}
	p.runLate()
	p.unlockLate()
}

// runLate runs the pending late events and sends the partitions what they
// scheduled for them, under the late events' lock.
func (p *Parallel) runLate() {
	if p.lateEnd != Forever && p.late.nextAt() < p.lateEnd {
		p.late.checkHandler()
		p.late.Run(p.lateEnd-1, 0)
	}
	p.latePending.Store(false)
	p.lateEnd = Forever
	p.sendLateOut()
}

// lockLate takes the late events' lock, waiting for a goroutine that runs
// a chunk of them (helpLate).
func (p *Parallel) lockLate() {
	p.spinUntil(func() (int64, bool) { return 0, p.lateLock.CompareAndSwap(0, 1) })
	p.lateHeld = true
}

// unlockLate releases the late events' lock that Run's goroutine holds.
func (p *Parallel) unlockLate() {
	p.lateHeld = false
	p.lateLock.Store(0)
}

// sendLateOut gives the partitions what the late events run so far sent
// them (with no partition and no late event running).
func (p *Parallel) sendLateOut() {
	for _, ev := range p.lateOut {
		q := p.partOf(p.late.ownerOf(&ev))
		p.parts[q].pushKeyed(ev)
		p.next[q] = min(p.next[q], ev.At)
	}
	p.lateOut = p.lateOut[:0]
}

// The workers: a window's partitions with events run one on Run's
// goroutine, the others on worker goroutines, each told its partition
// through its slot. Between windows a worker spins on its slot, yielding
// now and then: a window is a few hundred events, less time than the
// scheduler takes to wake a sleeping goroutine on another core. A window
// in which one partition has events runs on Run's goroutine alone.
type workerSlot struct {
	cmd  atomic.Int64 // the window to run (its number), −1: stop
	done atomic.Int64 // the last window run
	part int          // the partition to run (written before cmd)
	end  int64
	next int64 // the partition's first pending time after the window (written before done)
	_    [88]byte
}

func (p *Parallel) startWorkers() {
	p.crowded = len(p.parts) > runtime.GOMAXPROCS(0)
	p.slots = make([]workerSlot, len(p.parts)-1)
	p.workers.Add(len(p.slots))
	for j := range p.slots {
		go p.worker(&p.slots[j])
	}
}

// stopWorkers stops the workers and waits for them to return: a Run after
// this one starts its own.
func (p *Parallel) stopWorkers() {
	for j := range p.slots {
		p.slots[j].cmd.Store(-1)
	}
	p.workers.Wait()
}

func (p *Parallel) worker(w *workerSlot) {
	defer p.workers.Done()
	var seen int64
	for {
		c := p.spinUntil(func() (int64, bool) {
			c := w.cmd.Load()
			if c == seen {
				p.helpLate()
			}
			return c, c != seen
		})
		if c < 0 {
			return
		}
		seen = c
		w.next = p.window(w.part, w.end)
		w.done.Store(c)
	}
}

// runWindow runs the active partitions' events before end and returns
// when every one has run them.
func (p *Parallel) runWindow(end int64) {
	switch len(p.active) {
	case 0:
		return
	case 1:
		p.next[p.active[0]] = p.window(p.active[0], end)
		return
	}
	for j, i := range p.active[1:] {
		w := &p.slots[j]
		w.part, w.end = i, end
		w.cmd.Store(p.win) // after part and end: the worker reads them after it loads the command
	}
	p.next[p.active[0]] = p.window(p.active[0], end)
	for j, i := range p.active[1:] {
		w := &p.slots[j]
		p.spinUntil(func() (int64, bool) {
			d := w.done.Load()
			if d != p.win {
				p.helpLate()
			}
			return d, d == p.win
		})
		p.next[i] = w.next
	}
}

// spinUntil calls f until it reports true, pausing between calls.
func (p *Parallel) spinUntil(f func() (int64, bool)) int64 {
	for n := 0; ; n++ {
		if v, ok := f(); ok {
			return v
		}
		p.pause(n)
	}
}

// pause is the n-th pause of a goroutine that spins. With a core for every
// goroutine it only spins: a yield enters the scheduler, which costs more
// than the waits (a few events of another partition). With more
// goroutines than the processors Go runs them on, it yields from the 64th
// on, or the goroutine it waits for may not run.
func (p *Parallel) pause(n int) {
	if n >= 64 && (p.crowded || n&4095 == 4095) {
		runtime.Gosched()
	}
}

// window runs partition i's events before end, publishes that it is past
// them and returns its first pending time.
func (p *Parallel) window(i int, end int64) int64 {
	e := p.parts[i]
	p.pull(i, int((p.win-1)&1))
	e.checkHandler()
	e.Run(end-1, 0)
	p.prog[i].publish(end, 0)
	return e.nextAt()
}

// pull moves the events the other partitions sent partition i in buffer
// buf into its queue (Import first).
func (p *Parallel) pull(i, buf int) {
	e := p.parts[i]
	for from, f := range p.parts {
		evs := f.par.out[buf][i]
		if from == i || len(evs) == 0 {
			continue
		}
		if p.Import != nil {
			p.Import(from, i, buf, evs)
		}
		for _, ev := range evs {
			e.pushKeyed(ev)
		}
		f.par.out[buf][i] = evs[:0]
	}
}

func (e *Engine) checkHandler() {
	if e.h == nil {
		panic("engine: a Parallel partition with events has no handler (SetHandler)")
	}
}

func (p *Parallel) pending() int {
	n := p.late.Pending()
	for _, e := range p.parts {
		n += e.Pending()
		for _, evs := range e.par.out {
			for _, q := range evs {
				n += len(q)
			}
		}
	}
	return n
}

// split moves the main engine's pending events to the partitions (late
// ones to the late engine) and gives every engine the sources' counts.
func (p *Parallel) split() {
	m := p.main
	m.last[Outside] = m.key
	for _, e := range append(p.parts, p.late) {
		e.last = append(e.last[:0], m.last...)
		e.key, e.now, e.events, e.stopped = m.key, m.now, 0, false
		e.par.curT, e.par.runmax, e.par.since = -1, 0, 0
	}
	for {
		ev, ok := m.popFront()
		if !ok {
			break
		}
		if ev.Seq&lateBit != 0 {
			p.late.pushKeyed(ev)
			continue
		}
		p.parts[p.partOf(m.ownerOf(&ev))].pushKeyed(ev)
	}
}

// join moves every pending event back to the main engine, with the
// sources' counts (each source counts in one engine only: the largest),
// the number of events run and the time of the last.
func (p *Parallel) join() {
	for i := range p.parts {
		p.pull(i, 0)
		p.pull(i, 1)
	}
	m := p.main
	for i, e := range append(p.parts, p.late) {
		for {
			ev, ok := e.popFront()
			if !ok {
				break
			}
			if p.Rejoin != nil && i < len(p.parts) {
				ev = p.Rejoin(i, ev)
			}
			m.pushKeyed(ev)
		}
		if len(e.last) > len(m.last) {
			m.grow(uint32(len(e.last) - 1))
		}
		for s, k := range e.last {
			m.last[s] = max(m.last[s], k)
		}
		m.events += e.events
		m.now = max(m.now, e.now)
	}
	m.key = m.last[Outside]
}
