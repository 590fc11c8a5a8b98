package workload

import (
	"errors"
	"fmt"
	"io"
	"unsafe"

	"github.com/lpictl/lpictl/sim/internal/cache"
	"github.com/lpictl/lpictl/sim/internal/hugepage"
	"github.com/lpictl/lpictl/sim/workload/vef"
)

// Options tunes a Replayer.
type Options struct {
	// Window is the number of message slots (rounded up to a power of two;
	// 0 = vef.DefaultWindow). Reading stops while the slot the next message
	// needs still holds an unfinished one, and a dependency may reach back
	// at most Window messages.
	Window int64
	// MemberWindow bounds the members of all collectives read but not yet
	// finished (0 = DefaultMemberWindow); one collective is always allowed.
	MemberWindow int64
	Collectives  Collectives
	// BlockingSends makes each task send one point-to-point message at a
	// time: a message released while the task's previous one is not yet
	// delivered is sent at that delivery, in release order. It models a
	// send call that returns only once the message has arrived (a
	// synchronous send; a veth sender held by an emulated EEE port under
	// the spin delay, docs/hil.md). Collectives' messages are not held.
	BlockingSends bool
}

// DefaultMemberWindow is the default bound on collective members in flight.
const DefaultMemberWindow = 1 << 18

const (
	slotPending uint8 = iota + 1
	slotSent
	slotDone
)

const (
	memRead uint8 = iota + 1
	memEntered
	memFinished
)

const noRef = int64(-1)

const collBit = uint64(1) << 63

type msgSlot struct {
	id                 int64
	line               int64 // in the trace file (0: generated)
	bytes              int64
	time               int64
	depID              int64
	sendT, recvT       int64
	sendHead, sendTail int64
	recvHead, recvTail int64
	next               int64
	src, dst           int32
	dep                vef.Dep
	state              uint8
}

type member struct {
	line        int64 // in the trace file (0: generated)
	send, recv  int64
	time, depID int64
	next        int64
	waitHead    int64
	waitTail    int64
	finishT     int64
	early       []int32
	task        int32
	step, need  int32
	dep         vef.Dep
	state       uint8
}

type opState struct {
	g        int64
	comm     int32
	op       vef.Op
	read     int32
	finished int32
	ready    bool
	slab     int32
	plan     plan
	sizes    []int64
	members  []member
}

type collMsg struct {
	slab, member, step int32
}

type gdone struct {
	g       int64
	finishT int64
}

// waiters are the records waiting for a message not read yet (a forward
// reference), moved into its slot when it is read.
type waiters struct {
	sendHead, sendTail int64
	recvHead, recvTail int64
}

// collWaiters are the records of task waiting for its part of a
// collective not read yet, moved to the member when the operation starts.
type collWaiters struct {
	task       int32
	head, tail int64
}

// evicted is the finished message whose slot the message being read
// takes: a dependency exactly one window back is on it.
type evicted struct {
	id, sendT, recvT int64
}

// Replayer replays a stream of VEF records against a Host: it releases each
// record when its dependency has happened plus its delay, expands collectives
// into point-to-point messages, and counts. It is driven only by the
// Host's callbacks (no goroutines) and is deterministic.
type Replayer struct {
	src   vef.Source
	file  string // the trace's name, if the source has one (errors)
	node  []int32
	opts  Options
	h     Host
	comms [][]int32
	pos   []map[int32]int32 // nil: identity

	ring    []msgSlot
	mask    int64
	evicted evicted

	// Forward references (docs/model.md §5 does not order records by their
	// dependencies): a record whose dependency is read later waits here
	// until it is. A stream whose dependencies all point backwards never
	// touches these maps.
	nextMsg, nextG int64 // the next message ID and new G number the stream will give
	fwdMsg         map[int64]waiters
	fwdColl        map[int64][]collWaiters

	rec     vef.Record
	have    bool
	eof     bool
	stalled bool

	ops       map[int64]int32
	slab      []*opState
	freeSlab  []int32
	members   int64
	cmsgs     []collMsg
	freeCmsgs []int32

	gdone  []gdone
	gdnext []uint8

	ready []int64
	rhead int

	// BlockingSends: whether each task has a message on its way, and the
	// messages released behind it (FIFO from heldHead).
	sending  []bool
	held     [][]int64
	heldHead []int

	started     []bool
	closed      []bool  // the task has a record with a dependency (not open-loop)
	initBusy    []int64 // compute before the task's first record (dependency 0)
	busyUntil   []int64
	outstanding int64
	pending     int64
	done        bool
	err         error
	stats       Stats
}

// NewReplayer prepares a replay of src with task t on node nodes[t].
func NewReplayer(src vef.Source, nodes []int, opts Options) (*Replayer, error) {
	tasks := src.Tasks()
	if len(nodes) != tasks {
		return nil, fmt.Errorf("workload: %d tasks but a mapping of %d", tasks, len(nodes))
	}
	if opts.Window <= 0 {
		opts.Window = vef.DefaultWindow
	}
	ring := opts.Window
	if h, ok := src.(interface{ Header() vef.Header }); ok {
		// A trace of fewer messages than the window never reuses a slot:
		// a smaller ring replays it identically.
		ring = max(1, min(ring, h.Header().Messages))
	}
	w := int64(1)
	for w < ring {
		w <<= 1
	}
	if opts.MemberWindow <= 0 {
		opts.MemberWindow = DefaultMemberWindow
	}
	opts.Collectives = opts.Collectives.normalized()
	r := &Replayer{
		src:       src,
		node:      make([]int32, tasks),
		opts:      opts,
		comms:     src.Comms(),
		ring:      hugepage.Make[msgSlot](int(w)),
		mask:      w - 1,
		ops:       map[int64]int32{},
		gdnext:    make([]uint8, tasks),
		started:   make([]bool, tasks),
		closed:    make([]bool, tasks),
		initBusy:  make([]int64, tasks),
		busyUntil: make([]int64, tasks),
		fwdMsg:    map[int64]waiters{},
		fwdColl:   map[int64][]collWaiters{},
	}
	if opts.BlockingSends {
		r.sending, r.held, r.heldHead = make([]bool, tasks), make([][]int64, tasks), make([]int, tasks)
	}
	if n, ok := src.(interface{ Name() string }); ok {
		r.file = n.Name()
	}
	for i := range r.ring {
		r.ring[i].id = -1
	}
	for t, n := range nodes {
		r.node[t] = int32(n)
	}
	for _, c := range r.comms {
		ident := len(c) == tasks
		for i, t := range c {
			if int(t) != i {
				ident = false
				break
			}
		}
		if ident {
			r.pos = append(r.pos, nil)
			continue
		}
		m := make(map[int32]int32, len(c))
		for i, t := range c {
			m[t] = int32(i)
		}
		r.pos = append(r.pos, m)
	}
	r.stats.RankFinish = make([]int64, tasks)
	r.stats.RankBusy = make([]int64, tasks)
	r.stats.RankSends, r.stats.RankRecvs = make([]int64, tasks), make([]int64, tasks)
	r.stats.RankBytesSent, r.stats.RankBytesRecv = make([]int64, tasks), make([]int64, tasks)
	r.stats.Node = append([]int32(nil), r.node...)
	return r, nil
}

// Start begins the replay on h.
func (r *Replayer) Start(h Host) {
	r.h = h
	r.pump()
}

// Done reports whether every record has been replayed (or replay failed).
func (r *Replayer) Done() bool { return r.done || r.err != nil }

// Err is the error that stopped the replay, if any (a bad record found
// while streaming, or a deadlock).
func (r *Replayer) Err() error { return r.err }

// Close closes the source if it holds a file.
func (r *Replayer) Close() error {
	if c, ok := r.src.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

func (r *Replayer) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// Delivered is called by the host when the message tagged tag has arrived.
func (r *Replayer) Delivered(tag uint64) {
	if r.Done() {
		return
	}
	r.outstanding--
	if tag&collBit != 0 {
		idx := int32(tag &^ collBit)
		c := r.cmsgs[idx]
		r.freeCmsgs = append(r.freeCmsgs, idx)
		r.arrive(r.slab[c.slab], c.member, c.step)
	} else {
		s := &r.ring[int64(tag)&r.mask]
		r.delivered(s)
	}
	r.pump()
}

// Timer is called by the host at the time asked for with Schedule.
func (r *Replayer) Timer(tag uint64) {
	if r.Done() {
		return
	}
	r.outstanding--
	r.fire(timerRef(tag))
	r.pump()
}

// PrefetchTimer implements Prefetcher: the slot of the message whose
// timer it is (a collective member's timer reads no slot).
func (r *Replayer) PrefetchTimer(tag uint64) {
	if ref := timerRef(tag); ref&1 == 0 {
		prefetchSlot(&r.ring[(ref>>1)&r.mask])
	}
}

// PrefetchDelivered implements Prefetcher: the delivered message's slot
// (a collective's messages have none).
func (r *Replayer) PrefetchDelivered(tag uint64) {
	if tag&collBit == 0 {
		prefetchSlot(&r.ring[int64(tag)&r.mask])
	}
}

// prefetchSlot loads the lines of s, which a send and a delivery read
// from end to end.
func prefetchSlot(s *msgSlot) {
	a := uintptr(unsafe.Pointer(s))
	cache.Prefetch2(a, a+unsafe.Sizeof(*s)-1)
}

func msgRef(id int64) int64         { return id << 1 }
func memberRef(slab, m int32) int64 { return (int64(slab)<<24|int64(m))<<1 | 1 }
func splitMember(ref int64) (int32, int32) {
	v := ref >> 1
	return int32(v >> 24), int32(v & (1<<24 - 1))
}

func timerTag(ref int64) uint64 { return uint64(ref) }
func timerRef(tag uint64) int64 { return int64(tag) }

// pump reads and fires until nothing more can happen now.
func (r *Replayer) pump() {
	for r.err == nil {
		r.fill()
		if r.rhead == len(r.ready) {
			break
		}
		for r.rhead < len(r.ready) && r.err == nil {
			ref := r.ready[r.rhead]
			r.rhead++
			r.fire(ref)
		}
		r.ready, r.rhead = r.ready[:0], 0
	}
	if r.err != nil || r.done || r.outstanding > 0 {
		return
	}
	if r.eof && r.pending == 0 {
		r.done = true
		for _, f := range r.stats.RankFinish {
			r.stats.ExecTime = max(r.stats.ExecTime, f)
		}
		return
	}
	r.fail(r.deadlock())
}

// fill reads records while the window has room.
func (r *Replayer) fill() {
	for r.err == nil && !r.eof {
		if !r.have {
			err := r.src.Next(&r.rec)
			if errors.Is(err, io.EOF) {
				r.eof = true
				break
			}
			if err != nil {
				r.fail(err)
				return
			}
			r.have = true
		}
		rec := &r.rec
		if rec.Kind == vef.Message {
			s := &r.ring[rec.ID&r.mask]
			if s.id >= 0 && s.state != slotDone {
				r.stalled = true
				return
			}
			r.readMessage(rec, s)
		} else {
			if _, ok := r.ops[rec.ID]; !ok && r.members > 0 && r.members+int64(len(r.comms[rec.Comm])) > r.opts.MemberWindow {
				r.stalled = true
				return
			}
			r.readMember(rec)
		}
		r.have = false
	}
	r.stalled = false
}

func (r *Replayer) readMessage(rec *vef.Record, s *msgSlot) {
	r.evicted = evicted{id: s.id, sendT: s.sendT, recvT: s.recvT}
	*s = msgSlot{
		id: rec.ID, line: rec.Line, bytes: rec.Bytes, time: rec.Time, depID: rec.DepID,
		sendHead: noRef, sendTail: noRef, recvHead: noRef, recvTail: noRef, next: noRef,
		src: rec.Src, dst: rec.Dst, dep: rec.Dep, state: slotPending,
	}
	r.nextMsg = rec.ID + 1
	if len(r.fwdMsg) > 0 {
		if w, ok := r.fwdMsg[rec.ID]; ok {
			s.sendHead, s.sendTail, s.recvHead, s.recvTail = w.sendHead, w.sendTail, w.recvHead, w.recvTail
			delete(r.fwdMsg, rec.ID)
		}
	}
	r.pending++
	r.resolve(msgRef(rec.ID), rec.Src, rec.Dep, rec.DepID, rec.Time)
}

func (r *Replayer) readMember(rec *vef.Record) {
	idx, ok := r.ops[rec.ID]
	var op *opState
	if ok {
		op = r.slab[idx]
	} else {
		op = r.newOp(rec)
		idx = op.slab
	}
	mi := int32(0)
	if pm := r.pos[rec.Comm]; pm != nil {
		mi = pm[rec.Src]
	} else {
		mi = rec.Src
	}
	m := &op.members[mi]
	m.send, m.recv, m.time, m.depID, m.dep = rec.Bytes, rec.Recv, rec.Time, rec.DepID, rec.Dep
	m.task, m.state, m.line = rec.Src, memRead, rec.Line
	m.next = noRef // waitHead/waitTail may already hold forward waiters (newOp)
	m.step, m.need, m.early = 0, 0, m.early[:0]
	op.read++
	r.pending++
	if op.read == int32(len(op.members)) {
		r.prepare(op)
	}
	r.resolve(memberRef(idx, mi), rec.Src, rec.Dep, rec.DepID, rec.Time)
}

func (r *Replayer) newOp(rec *vef.Record) *opState {
	var op *opState
	if n := len(r.freeSlab); n > 0 {
		op = r.slab[r.freeSlab[n-1]]
		r.freeSlab = r.freeSlab[:n-1]
	} else {
		op = &opState{slab: int32(len(r.slab))}
		r.slab = append(r.slab, op)
	}
	p := len(r.comms[rec.Comm])
	op.g, op.comm, op.op, op.read, op.finished, op.ready = rec.ID, rec.Comm, rec.Op, 0, 0, false
	if cap(op.members) < p {
		op.members = make([]member, p)
	}
	op.members = op.members[:p]
	for i := range op.members {
		m := &op.members[i]
		m.state, m.waitHead, m.waitTail = 0, noRef, noRef
		m.task = r.comms[rec.Comm][i]
	}
	r.ops[rec.ID] = op.slab
	r.members += int64(p)
	r.nextG = max(r.nextG, rec.ID+1)
	if len(r.fwdColl) > 0 {
		if ws, ok := r.fwdColl[rec.ID]; ok {
			delete(r.fwdColl, rec.ID)
			for _, w := range ws {
				mi, ok := r.memberIndex(rec.Comm, w.task)
				if !ok {
					r.fail(fmt.Errorf("workload: task %d depends on collective G%d, which it is not part of", w.task, rec.ID))
					continue
				}
				op.members[mi].waitHead, op.members[mi].waitTail = w.head, w.tail
			}
		}
	}
	return op
}

// memberIndex is task's rank in communicator comm.
func (r *Replayer) memberIndex(comm int32, task int32) (int32, bool) {
	pm := r.pos[comm]
	if pm == nil {
		return task, true
	}
	mi, ok := pm[task]
	return mi, ok
}

// prepare chooses the algorithm once every member's record is known.
func (r *Replayer) prepare(op *opState) {
	p := int32(len(op.members))
	pl := plan{p: p}
	if cap(op.sizes) < int(p) {
		op.sizes = make([]int64, p)
	}
	op.sizes = op.sizes[:p]
	var x int64
	for i := range op.members {
		m := &op.members[i]
		switch op.op {
		case vef.Bcast:
			if m.send > 0 {
				pl.root, x = int32(i), m.send
			}
		case vef.Reduce:
			if m.recv > 0 {
				pl.root, x = int32(i), m.recv
			}
		case vef.Gather:
			op.sizes[i] = m.send
			if m.recv > 0 {
				pl.root = int32(i)
			}
		case vef.Scatter:
			op.sizes[i] = m.recv
			if m.send > 0 {
				pl.root = int32(i)
			}
		case vef.Allreduce, vef.Allgather, vef.Alltoall:
			op.sizes[i] = m.send
			x = max(x, m.send)
			if op.op == vef.Alltoall && m.recv == 1 {
				pl.vectorial = true
			}
		}
	}
	if op.op == vef.Reduce && x == 0 {
		for i := range op.members {
			x = max(x, op.members[i].send)
		}
	}
	pl.x, pl.sizes = x, op.sizes
	pl.alg = choose(op.op, p, x, pl.vectorial, r.opts.Collectives)
	pl.init()
	op.plan = pl
	op.ready = true
	for i := range op.members {
		if op.members[i].state == memEntered {
			r.advance(op, int32(i))
		}
	}
}

// resolve looks at a just-read record's dependency.
func (r *Replayer) resolve(ref int64, task int32, dep vef.Dep, depID, delay int64) {
	first := !r.started[task]
	r.started[task] = true
	if dep != vef.DepNone {
		r.closed[task] = true
	}
	switch dep {
	case vef.DepNone:
		if first {
			// Compute only if the task turns out to be closed-loop (see
			// Stats): an open-loop task merely waits for its first send.
			r.compute(task, 0, delay)
			r.initBusy[task] = r.stats.RankBusy[task]
		}
		r.schedule(ref, delay)
	case vef.DepSend, vef.DepRecv:
		if depID >= r.nextMsg { // forward: message depID is read later
			w, ok := r.fwdMsg[depID]
			if !ok {
				w = waiters{noRef, noRef, noRef, noRef}
			}
			if dep == vef.DepSend {
				r.link(&w.sendHead, &w.sendTail, ref)
			} else {
				r.link(&w.recvHead, &w.recvTail, ref)
			}
			r.fwdMsg[depID] = w
			return
		}
		s := &r.ring[depID&r.mask]
		if s.id != depID {
			if e := r.evicted; e.id == depID {
				// Exactly one window back: finished, its slot just reused.
				t := e.sendT
				if dep == vef.DepRecv {
					t = e.recvT
				}
				r.release(ref, task, t, delay)
				return
			}
			r.fail(fmt.Errorf("workload: dependency on message %d, which has left the replay window of %d messages (raise workload.window)", depID, len(r.ring)))
			return
		}
		if dep == vef.DepSend && s.state >= slotSent {
			r.release(ref, task, s.sendT, delay)
		} else if dep == vef.DepRecv && s.state == slotDone {
			r.release(ref, task, s.recvT, delay)
		} else if dep == vef.DepSend {
			r.link(&s.sendHead, &s.sendTail, ref)
		} else {
			r.link(&s.recvHead, &s.recvTail, ref)
		}
	case vef.DepColl:
		if idx, ok := r.ops[depID]; ok {
			op := r.slab[idx]
			mi, in := r.memberIndex(op.comm, task)
			if !in {
				r.fail(fmt.Errorf("workload: task %d depends on collective G%d, which it is not part of", task, depID))
				return
			}
			m := &op.members[mi]
			if m.state == memFinished {
				r.release(ref, task, m.finishT, delay)
			} else {
				// Also when task's own record in it is not read yet.
				r.link(&m.waitHead, &m.waitTail, ref)
			}
			return
		}
		if depID >= r.nextG { // forward: the operation starts later
			ws := r.fwdColl[depID]
			k := -1
			for i := range ws {
				if ws[i].task == task {
					k = i
					break
				}
			}
			if k < 0 {
				ws = append(ws, collWaiters{task: task, head: noRef, tail: noRef})
				k = len(ws) - 1
			}
			r.link(&ws[k].head, &ws[k].tail, ref)
			r.fwdColl[depID] = ws
			return
		}
		gd := r.collDone()
		ring := gd[int(task)*vef.CollectiveHistory : int(task+1)*vef.CollectiveHistory]
		for _, d := range ring {
			if d.g == depID {
				r.release(ref, task, d.finishT, delay)
				return
			}
		}
		r.fail(fmt.Errorf("workload: task %d depends on collective G%d, which is not among its last %d collectives", task, depID, vef.CollectiveHistory))
	}
}

// MemoryBytes returns the bytes of the replayer's per-task state and its
// message ring (the network's Memory report).
func (r *Replayer) MemoryBytes() int64 {
	return int64(cap(r.node))*4 + int64(cap(r.ring))*int64(unsafe.Sizeof(msgSlot{})) +
		int64(cap(r.gdone))*int64(unsafe.Sizeof(gdone{})) + int64(cap(r.gdnext)+cap(r.started)+cap(r.closed)) +
		int64(cap(r.initBusy)+cap(r.busyUntil)+cap(r.ready)+cap(r.heldHead))*8 + int64(cap(r.sending)) +
		int64(cap(r.held))*int64(unsafe.Sizeof([]int64(nil)))
}

// collDone returns the tasks' last collectives (gdone), made on first use:
// a workload without collectives (synthetic traffic on a million nodes)
// never pays its 256 bytes per task.
func (r *Replayer) collDone() []gdone {
	if r.gdone == nil {
		r.gdone = make([]gdone, len(r.node)*vef.CollectiveHistory)
		for i := range r.gdone {
			r.gdone[i].g = -1
		}
	}
	return r.gdone
}

// link appends ref to a waiter list.
func (r *Replayer) link(head, tail *int64, ref int64) {
	*r.nextOf(ref) = noRef
	if *tail == noRef {
		*head = ref
	} else {
		*r.nextOf(*tail) = ref
	}
	*tail = ref
}

func (r *Replayer) nextOf(ref int64) *int64 {
	if ref&1 == 0 {
		return &r.ring[(ref>>1)&r.mask].next
	}
	s, m := splitMember(ref)
	return &r.slab[s].members[m].next
}

// wake releases every waiter of a list at time t.
func (r *Replayer) wake(head int64, t int64) {
	for ref := head; ref != noRef; {
		next := *r.nextOf(ref)
		if ref&1 == 0 {
			s := &r.ring[(ref>>1)&r.mask]
			r.release(ref, s.src, t, s.time)
		} else {
			si, mi := splitMember(ref)
			m := &r.slab[si].members[mi]
			r.release(ref, m.task, t, m.time)
		}
		ref = next
	}
}

// compute records the task computing over [from, to].
func (r *Replayer) compute(task int32, from, to int64) {
	if to <= from {
		return
	}
	if bu := r.busyUntil[task]; bu > from {
		from = bu
	}
	if to > from {
		r.stats.RankBusy[task] += to - from
		r.busyUntil[task] = to
	}
}

// release: the dependency of ref happened at t; ref goes delay later.
func (r *Replayer) release(ref int64, task int32, t, delay int64) {
	r.compute(task, t, t+delay)
	r.schedule(ref, t+delay)
}

func (r *Replayer) schedule(ref int64, at int64) {
	if at <= r.h.Now() {
		r.ready = append(r.ready, ref)
		return
	}
	r.outstanding++
	r.h.Schedule(at, timerTag(ref))
}

func (r *Replayer) noteFinish(task int32) {
	if now := r.h.Now(); now > r.stats.RankFinish[task] {
		r.stats.RankFinish[task] = now
	}
}

// fire sends a released message or enters a released collective member.
func (r *Replayer) fire(ref int64) {
	if ref&1 == 0 {
		s := &r.ring[(ref>>1)&r.mask]
		if r.sending != nil && s.src != s.dst {
			if r.sending[s.src] {
				r.held[s.src] = append(r.held[s.src], ref)
				return
			}
			r.sending[s.src] = true
		}
		s.state = slotSent
		s.sendT = r.h.Now()
		r.noteFinish(s.src)
		r.stats.P2P++
		r.stats.P2PBytes += s.bytes
		r.wake(s.sendHead, s.sendT)
		if s.src == s.dst {
			r.stats.SelfMessages++
			r.delivered(s)
			return
		}
		r.stats.Messages++
		r.stats.Bytes += s.bytes
		r.countRanks(s.src, s.dst, s.bytes)
		r.outstanding++
		r.h.Send(int(r.node[s.src]), int(r.node[s.dst]), s.bytes, uint64(s.id))
		return
	}
	si, mi := splitMember(ref)
	op := r.slab[si]
	m := &op.members[mi]
	m.state = memEntered
	r.noteFinish(m.task)
	if op.ready {
		r.advance(op, mi)
	}
}

// countRanks counts a message from task src to task dst.
func (r *Replayer) countRanks(src, dst int32, bytes int64) {
	st := &r.stats
	st.RankSends[src]++
	st.RankRecvs[dst]++
	st.RankBytesSent[src] += bytes
	st.RankBytesRecv[dst] += bytes
}

func (r *Replayer) delivered(s *msgSlot) {
	s.state = slotDone
	s.recvT = r.h.Now()
	r.noteFinish(s.dst)
	r.pending--
	if r.sending != nil && s.src != s.dst {
		r.sendHeld(s.src)
	}
	r.wake(s.recvHead, s.recvT)
}

// sendHeld: task's message on its way has been delivered; its first held
// message, if any, is sent now.
func (r *Replayer) sendHeld(task int32) {
	r.sending[task] = false
	q, h := r.held[task], r.heldHead[task]
	if h == len(q) {
		return
	}
	r.ready = append(r.ready, q[h])
	if h+1 == len(q) {
		r.held[task], r.heldHead[task] = q[:0], 0
	} else {
		r.heldHead[task] = h + 1
	}
}

// advance issues member mi's sends from its current step on, until it must
// wait for a receive or has finished.
func (r *Replayer) advance(op *opState, mi int32) {
	pl := &op.plan
	m := &op.members[mi]
	n := pl.steps(mi)
	for m.step < n {
		s := m.step
		for i, c := int32(0), pl.sendCount(mi, s); i < c; i++ {
			d, b := pl.send(mi, s, i)
			r.sendColl(op, mi, d, s, b)
		}
		need := pl.recvs(mi, s)
		for i := 0; i < len(m.early) && need > 0; {
			if m.early[i] == s {
				need--
				m.early[i] = m.early[len(m.early)-1]
				m.early = m.early[:len(m.early)-1]
				continue
			}
			i++
		}
		if need > 0 {
			m.need = need
			return
		}
		m.step++
	}
	r.finishMember(op, mi)
}

func (r *Replayer) sendColl(op *opState, from, to, step int32, bytes int64) {
	var idx int32
	if n := len(r.freeCmsgs); n > 0 {
		idx = r.freeCmsgs[n-1]
		r.freeCmsgs = r.freeCmsgs[:n-1]
	} else {
		idx = int32(len(r.cmsgs))
		r.cmsgs = append(r.cmsgs, collMsg{})
	}
	r.cmsgs[idx] = collMsg{slab: op.slab, member: to, step: step}
	r.stats.Messages++
	r.stats.Bytes += bytes
	r.stats.CollMessages++
	r.stats.CollBytes += bytes
	r.outstanding++
	src, dst := op.members[from].task, op.members[to].task
	r.countRanks(src, dst, bytes)
	r.h.Send(int(r.node[src]), int(r.node[dst]), bytes, collBit|uint64(idx))
}

func (r *Replayer) arrive(op *opState, mi, step int32) {
	m := &op.members[mi]
	r.noteFinish(m.task)
	if m.state == memEntered && step == m.step && m.need > 0 {
		m.need--
		if m.need == 0 {
			m.step++
			r.advance(op, mi)
		}
		return
	}
	m.early = append(m.early, step)
}

func (r *Replayer) finishMember(op *opState, mi int32) {
	m := &op.members[mi]
	m.state = memFinished
	m.finishT = r.h.Now()
	r.noteFinish(m.task)
	k := r.gdnext[m.task]
	r.collDone()[int(m.task)*vef.CollectiveHistory+int(k)] = gdone{g: op.g, finishT: m.finishT}
	r.gdnext[m.task] = uint8((int(k) + 1) % vef.CollectiveHistory)
	r.pending--
	r.wake(m.waitHead, m.finishT)
	op.finished++
	if op.finished == int32(len(op.members)) {
		r.stats.Collectives[op.op]++
		r.stats.Algorithms[op.plan.alg]++
		delete(r.ops, op.g)
		r.members -= int64(len(op.members))
		r.freeSlab = append(r.freeSlab, op.slab)
	}
}
