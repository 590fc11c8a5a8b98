package sched

import (
	"fmt"
	"math"
	"slices"

	"github.com/lpictl/lpictl/sim/workload"
)

// Defaults of Options (ours).
const (
	// DefaultEagerThreshold is the largest eager message, 64 KiB: the
	// order of the eager limits of common MPI libraries' network
	// transports.
	DefaultEagerThreshold = 65536
	// DefaultIntraLatency is the intra-node (shared-memory) latency, the
	// same 0.5 µs as workload.IntraNode's.
	DefaultIntraLatency = workload.DefaultIntraLatency
)

// Options tunes an Executor.
type Options struct {
	// Nodes maps rank → node (several ranks may share a node); nil: rank r
	// on node r.
	Nodes []int
	// EagerThreshold: messages of more bytes use rendezvous: the sender
	// sends a 0-byte RTS, the receiver answers a 0-byte CTS once the
	// matching receive is posted, then the data goes. 0 means
	// DefaultEagerThreshold; a negative value makes every message
	// rendezvous.
	EagerThreshold int64
	// Intra-node messages (same node) never touch the network: they arrive
	// after IntraLatency + bytes/IntraBandwidth; RTS and CTS likewise.
	// IntraLatency 0 means DefaultIntraLatency, a negative value none.
	IntraLatency   int64   // ps
	IntraBandwidth float64 // bytes/s, 0 = infinite
}

// RankStats counts what one rank did.
type RankStats struct {
	Sends, Recvs             int64 // completed send and receive operations
	BytesSent, BytesReceived int64 // their payloads (a receive counts the message's size)
	IntraBytes               int64 // sent to ranks on the same node (never on the network)
	NetworkBytes             int64 // sent through the host (rendezvous data included; RTS/CTS are 0 bytes)
	Compute                  int64 // ps: the sum of its Calc times (they never overlap: a rank computes one Calc at a time)
}

// Op states.
const (
	opWaiting uint8 = iota
	opQueued        // a ready Calc waiting for its rank's CPU
	opStarted
	opDone
)

// Message phases.
const (
	phEager uint8 = iota // the data of an eager message (an envelope: matched)
	phRTS                // a rendezvous request to send (an envelope: matched)
	phCTS                // the receiver's clear to send, back to the sender
	phData               // the data of a rendezvous message, matched already
)

// Timer tags (below 1<<62, workload.Driver's rule).
const (
	calcBit      = uint64(1) << 40 // | global op index: a Calc ends
	intraBit     = uint64(1) << 41 // | message index: an intra-node message arrives
	calcStartBit = uint64(1) << 42 // | global op index: a queued Calc's turn on its rank's CPU
)

const none = int32(-1)

type msg struct {
	bytes          int64
	sendOp, recvOp uint32 // global op indices; recvOp once matched
	src, dst       int32  // ranks
	tag            int32
	seq            uint32 // per (src, dst) envelope number: MPI's non-overtaking order
	next           int32  // in the receiver's unexpected list
	phase          uint8
	coll           bool // a collective's step (Op.Coll)
}

type post struct {
	op   uint32 // global index of a posted Recv
	next int32
}

// pairSeq numbers the envelopes from one rank to another: sent so far and
// taken in order at the receiver so far.
type pairSeq struct{ sent, taken uint32 }

type heldKey struct {
	pair uint64
	seq  uint32
}

// Executor replays a Schedule on a workload.Host with MPI semantics. It
// implements workload.Driver and is driven only by the host's callbacks
// (no goroutines); it is deterministic.
//
// An op starts once all its dependencies are satisfied (requires: the
// other op has completed; irequires: it has started); an op without
// dependencies starts at time 0. A Calc completes Time later; a rank has
// one CPU (GOAL's "cpu C" is read and ignored), which runs its Calcs one at
// a time in the order they became ready, as LogGOPSim does: a Calc ready
// while another computes starts when that one ends (an irequires on it
// waits for that start). Messages take no CPU time. A Send of at
// most EagerThreshold bytes is eager: the data is handed to the network
// at once and the send completes then (its buffer is free). A larger Send
// is rendezvous: a 0-byte RTS goes to the receiver, which answers with a
// 0-byte CTS once a matching receive is posted, then the data goes; the
// send completes when the data has been delivered. A Recv completes when
// its message's data has arrived.
//
// Matching is MPI's: an envelope (eager data or RTS) that arrives matches
// the earliest posted receive of its rank that accepts it (source or
// AnySource, tag or AnyTag); a receive when posted takes the earliest
// arrived unmatched envelope it accepts. Envelopes from one rank to another
// are taken in the order they were sent (the network may reorder them: a
// later one waits for the earlier), so messages do not overtake. The
// receive's size is not checked against the message's (a receive counts
// the bytes that came).
//
// Messages between ranks on the same node take the intra-node path
// (Options) and never reach the host; a rank's messages to itself arrive
// at once.
type Executor struct {
	s    *Schedule
	opts Options
	node []int32
	h    workload.Host

	base      []uint32 // first global op index of each rank; base[len(Ranks)] = all ops
	pending   []uint32 // per op: dependencies not satisfied yet
	state     []uint8
	startOff  []uint32 // ops waiting for an op's start: startSucc[startOff[i]:startOff[i+1]]
	startSucc []uint32
	doneOff   []uint32 // ops waiting for an op's completion
	doneSucc  []uint32

	ready    []uint32 // ops to start now
	arrivals []int32  // messages arriving now (to self)

	msgs      []msg
	freeMsgs  []int32
	posts     []post
	freePosts []int32
	postHead  []int32 // per rank: posted receives not matched, in posting order
	postTail  []int32
	unexHead  []int32 // per rank: arrived envelopes not matched, in arrival order
	unexTail  []int32
	pairs     map[uint64]pairSeq
	held      map[heldKey]int32

	outstanding int64 // host messages and timers in flight
	remaining   int   // ops not completed
	started     bool
	done        bool
	err         error

	stats     workload.Stats
	rstats    []RankStats
	busyUntil []int64

	// onComplete, when set (tests), is told each op's completion.
	onComplete func(rank int, op uint32, at int64)
}

var _ workload.Driver = (*Executor)(nil)

// NewExecutor validates s and opts and prepares a replay.
func NewExecutor(s *Schedule, opts Options) (*Executor, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	nr := len(s.Ranks)
	if opts.EagerThreshold == 0 {
		opts.EagerThreshold = DefaultEagerThreshold
	}
	if opts.IntraLatency == 0 {
		opts.IntraLatency = DefaultIntraLatency
	} else if opts.IntraLatency < 0 {
		opts.IntraLatency = 0
	}
	if opts.IntraBandwidth < 0 || math.IsNaN(opts.IntraBandwidth) || math.IsInf(opts.IntraBandwidth, 0) {
		return nil, fmt.Errorf("sched: intra-node bandwidth %v: want a finite value ≥ 0 (0: infinite)", opts.IntraBandwidth)
	}
	node := make([]int32, nr)
	if opts.Nodes == nil {
		for r := range node {
			node[r] = int32(r)
		}
	} else {
		if len(opts.Nodes) != nr {
			return nil, fmt.Errorf("sched: %d nodes given for %d ranks: want one node per rank", len(opts.Nodes), nr)
		}
		for r, n := range opts.Nodes {
			if n < 0 || n > math.MaxInt32 {
				return nil, fmt.Errorf("sched: rank %d on node %d: out of range", r, n)
			}
			node[r] = int32(n)
		}
	}
	total := s.NumOps()
	if total >= math.MaxUint32 {
		return nil, fmt.Errorf("sched: %d operations: more than the executor's 2^32-1", total)
	}
	e := &Executor{
		s: s, opts: opts, node: node,
		base:     make([]uint32, nr+1),
		pending:  make([]uint32, total),
		state:    make([]uint8, total),
		startOff: make([]uint32, total+1),
		doneOff:  make([]uint32, total+1),
		postHead: make([]int32, nr), postTail: make([]int32, nr),
		unexHead: make([]int32, nr), unexTail: make([]int32, nr),
		pairs:     make(map[uint64]pairSeq),
		held:      make(map[heldKey]int32),
		remaining: total,
		rstats:    make([]RankStats, nr),
		busyUntil: make([]int64, nr),
	}
	for r := range nr {
		e.postHead[r], e.postTail[r], e.unexHead[r], e.unexTail[r] = none, none, none, none
	}
	// Successor lists (CSR) of the dependencies, in global op indices.
	g := uint32(0)
	for r := range s.Ranks {
		e.base[r] = g
		rk := &s.Ranks[r]
		for i := range rk.Ops {
			op := &rk.Ops[i]
			e.pending[g] = op.DepTo - op.DepFrom
			for _, d := range rk.Deps[op.DepFrom:op.DepTo] {
				if d.Start {
					e.startOff[e.base[r]+d.Op+1]++
				} else {
					e.doneOff[e.base[r]+d.Op+1]++
				}
			}
			g++
		}
	}
	e.base[nr] = g
	for i := 1; i <= total; i++ {
		e.startOff[i] += e.startOff[i-1]
		e.doneOff[i] += e.doneOff[i-1]
	}
	e.startSucc = make([]uint32, e.startOff[total])
	e.doneSucc = make([]uint32, e.doneOff[total])
	sf := slices.Clone(e.startOff[:total])
	df := slices.Clone(e.doneOff[:total])
	for r := range s.Ranks {
		rk := &s.Ranks[r]
		for i := range rk.Ops {
			op := &rk.Ops[i]
			gi := e.base[r] + uint32(i)
			for _, d := range rk.Deps[op.DepFrom:op.DepTo] {
				j := e.base[r] + d.Op
				if d.Start {
					e.startSucc[sf[j]] = gi
					sf[j]++
				} else {
					e.doneSucc[df[j]] = gi
					df[j]++
				}
			}
		}
	}
	st := &e.stats
	st.RankFinish = make([]int64, nr)
	st.RankBusy = make([]int64, nr)
	st.RankSends, st.RankRecvs = make([]int64, nr), make([]int64, nr)
	st.RankBytesSent, st.RankBytesRecv = make([]int64, nr), make([]int64, nr)
	st.Node = slices.Clone(node)
	return e, nil
}

// Start implements workload.Driver: the ops without dependencies start at
// h.Now().
func (e *Executor) Start(h workload.Host) {
	if e.started {
		e.fail(fmt.Errorf("sched: executor started twice"))
		return
	}
	e.started = true
	e.h = h
	for g, p := range e.pending {
		if p == 0 {
			e.ready = append(e.ready, uint32(g))
		}
	}
	e.pump()
}

// Delivered implements workload.Driver: a message handed to the host has
// arrived.
func (e *Executor) Delivered(tag uint64) {
	if e.Done() {
		return
	}
	e.outstanding--
	if tag >= uint64(len(e.msgs)) {
		e.fail(fmt.Errorf("sched: delivery of unknown message tag %d", tag))
		return
	}
	e.arrive(int32(tag))
	e.pump()
}

// Timer implements workload.Driver.
func (e *Executor) Timer(tag uint64) {
	if e.Done() {
		return
	}
	e.outstanding--
	switch {
	case tag&intraBit != 0 && tag&^intraBit < uint64(len(e.msgs)):
		e.arrive(int32(tag &^ intraBit))
	case tag&calcBit != 0 && tag&^calcBit < uint64(len(e.state)):
		e.complete(uint32(tag &^ calcBit))
	case tag&calcStartBit != 0 && tag&^calcStartBit < uint64(len(e.state)):
		e.start(uint32(tag &^ calcStartBit)) // its turn on the rank's CPU
	default:
		e.fail(fmt.Errorf("sched: unknown timer tag %#x", tag))
		return
	}
	e.pump()
}

// Done implements workload.Driver: every op has completed, or the replay
// failed.
func (e *Executor) Done() bool { return e.done || e.err != nil }

// Err implements workload.Driver: a deadlock names a rank and op that are
// stuck.
func (e *Executor) Err() error { return e.err }

// Close implements workload.Driver (the schedule is in memory).
func (e *Executor) Close() error { return nil }

// Stats implements workload.Driver: ExecTime, RankFinish (a rank's last
// op start or completion), RankBusy (its Calc time; Calcs never overlap),
// Node; Messages/Bytes are what went through the host (RTS and CTS count
// as 0-byte messages), IntraMessages/IntraBytes what took the intra-node
// path, P2P/P2PBytes the schedule's messages (SelfMessages those to the
// sender itself), RankSends/… per rank, counted when sent.
func (e *Executor) Stats() workload.Stats {
	s := e.stats
	s.RankFinish = slices.Clone(s.RankFinish)
	s.RankBusy = slices.Clone(s.RankBusy)
	s.RankSends, s.RankRecvs = slices.Clone(s.RankSends), slices.Clone(s.RankRecvs)
	s.RankBytesSent, s.RankBytesRecv = slices.Clone(s.RankBytesSent), slices.Clone(s.RankBytesRecv)
	s.Node = slices.Clone(s.Node)
	s.ExecTime = slices.Max(append(s.RankFinish, 0))
	return s
}

// RankStats returns a copy of the per-rank counters.
func (e *Executor) RankStats() []RankStats { return slices.Clone(e.rstats) }

func (e *Executor) fail(err error) {
	if e.err == nil {
		e.err = err
	}
}

// rankOf is the rank of global op g.
func (e *Executor) rankOf(g uint32) int {
	lo, hi := 0, len(e.s.Ranks)-1
	for lo < hi { // the last rank r with base[r] ≤ g
		m := (lo + hi + 1) / 2
		if e.base[m] <= g {
			lo = m
		} else {
			hi = m - 1
		}
	}
	return lo
}

func (e *Executor) op(g uint32) (int, *Op) {
	r := e.rankOf(g)
	return r, &e.s.Ranks[r].Ops[g-e.base[r]]
}

// pump starts the ready ops and takes the local arrivals until nothing
// more happens now, then checks for the end or a deadlock.
func (e *Executor) pump() {
	for e.err == nil {
		if len(e.ready) > 0 {
			// start in FIFO order; starting may append more
			for k := 0; k < len(e.ready) && e.err == nil; k++ {
				e.start(e.ready[k])
			}
			e.ready = e.ready[:0]
			continue
		}
		if len(e.arrivals) > 0 {
			for k := 0; k < len(e.arrivals) && e.err == nil; k++ {
				e.arrive(e.arrivals[k])
			}
			e.arrivals = e.arrivals[:0]
			continue
		}
		break
	}
	if e.err != nil || e.done {
		return
	}
	if e.remaining == 0 {
		e.done = true
		return
	}
	if e.outstanding == 0 {
		e.fail(e.deadlock())
	}
}

func (e *Executor) noteFinish(r int) {
	if now := e.h.Now(); now > e.stats.RankFinish[r] {
		e.stats.RankFinish[r] = now
	}
}

// start starts op g: its start successors are released, then it acts.
// A Calc ready while its rank's CPU computes another waits its turn
// (queued, first come first served): calcs of one rank never overlap, as
// LogGOPSim runs local operations one at a time per CPU.
func (e *Executor) start(g uint32) {
	r, op := e.op(g)
	now := e.h.Now()
	if op.Kind == Calc && e.state[g] == opWaiting && e.busyUntil[r] > now {
		e.state[g] = opQueued
		at := e.busyUntil[r]
		e.busyUntil[r] = at + op.Time
		e.outstanding++
		e.h.Schedule(at, calcStartBit|uint64(g))
		return
	}
	e.state[g] = opStarted
	for _, j := range e.startSucc[e.startOff[g]:e.startOff[g+1]] {
		e.release(j)
	}
	e.noteFinish(r)
	switch op.Kind {
	case Calc:
		e.rstats[r].Compute += op.Time
		e.stats.RankBusy[r] += op.Time
		e.busyUntil[r] = max(e.busyUntil[r], now+op.Time)
		if op.Time == 0 {
			e.complete(g)
			return
		}
		e.outstanding++
		e.h.Schedule(now+op.Time, calcBit|uint64(g))
	case Send:
		e.send(g, r, op)
	case Recv:
		e.postRecv(g, r, op)
	}
}

// release satisfies one dependency of op j.
func (e *Executor) release(j uint32) {
	e.pending[j]--
	if e.pending[j] == 0 {
		e.ready = append(e.ready, j)
	}
}

// complete completes op g now.
func (e *Executor) complete(g uint32) {
	e.state[g] = opDone
	e.remaining--
	r := e.rankOf(g)
	e.noteFinish(r)
	if e.onComplete != nil {
		e.onComplete(r, g-e.base[r], e.h.Now())
	}
	for _, j := range e.doneSucc[e.doneOff[g]:e.doneOff[g+1]] {
		e.release(j)
	}
}

func (e *Executor) newMsg() int32 {
	if n := len(e.freeMsgs); n > 0 {
		m := e.freeMsgs[n-1]
		e.freeMsgs = e.freeMsgs[:n-1]
		return m
	}
	e.msgs = append(e.msgs, msg{})
	return int32(len(e.msgs) - 1)
}

func pairKey(src, dst int32) uint64 { return uint64(uint32(src))<<32 | uint64(uint32(dst)) }

// send starts Send op g of rank r.
func (e *Executor) send(g uint32, r int, op *Op) {
	mi := e.newMsg()
	key := pairKey(int32(r), op.Peer)
	ps := e.pairs[key]
	e.msgs[mi] = msg{bytes: op.Bytes, sendOp: g, src: int32(r), dst: op.Peer, tag: op.Tag, seq: ps.sent, next: none, coll: op.Coll}
	ps.sent++
	e.pairs[key] = ps

	st, rs := &e.stats, &e.rstats[r]
	st.P2P++
	st.P2PBytes += op.Bytes
	st.RankSends[r]++
	st.RankRecvs[op.Peer]++
	st.RankBytesSent[r] += op.Bytes
	st.RankBytesRecv[op.Peer] += op.Bytes
	rs.Sends++
	rs.BytesSent += op.Bytes
	if op.Peer == int32(r) {
		st.SelfMessages++
	} else if e.node[r] == e.node[op.Peer] {
		rs.IntraBytes += op.Bytes
	}
	if op.Bytes <= e.opts.EagerThreshold {
		e.msgs[mi].phase = phEager
		e.transmit(mi, int32(r), op.Peer, op.Bytes)
		e.complete(g)
		return
	}
	e.msgs[mi].phase = phRTS
	e.transmit(mi, int32(r), op.Peer, 0)
}

// transmit sends message mi (in its current phase) from rank from to rank
// to: at once to itself, by the intra-node path on one node, else through
// the host.
func (e *Executor) transmit(mi int32, from, to int32, bytes int64) {
	switch {
	case from == to:
		e.arrivals = append(e.arrivals, mi)
	case e.node[from] == e.node[to]:
		d := e.opts.IntraLatency
		if e.opts.IntraBandwidth > 0 {
			d += int64(float64(bytes) / e.opts.IntraBandwidth * 1e12)
		}
		e.stats.IntraMessages++
		e.stats.IntraBytes += bytes
		e.outstanding++
		e.h.Schedule(e.h.Now()+d, intraBit|uint64(mi))
	default:
		e.stats.Messages++
		e.stats.Bytes += bytes
		if e.msgs[mi].coll {
			e.stats.CollMessages++
			e.stats.CollBytes += bytes
		}
		e.rstats[from].NetworkBytes += bytes
		e.outstanding++
		e.h.Send(int(e.node[from]), int(e.node[to]), bytes, uint64(mi))
	}
}

// arrive: message mi has arrived at its phase's destination.
func (e *Executor) arrive(mi int32) {
	m := &e.msgs[mi]
	switch m.phase {
	case phEager, phRTS:
		key := pairKey(m.src, m.dst)
		ps := e.pairs[key]
		if m.seq != ps.taken { // an earlier envelope of the pair is still on its way
			e.held[heldKey{key, m.seq}] = mi
			return
		}
		for {
			e.envelope(mi)
			ps.taken++
			next, ok := e.held[heldKey{key, ps.taken}]
			if !ok {
				break
			}
			delete(e.held, heldKey{key, ps.taken})
			mi = next
		}
		e.pairs[key] = ps
	case phCTS:
		m.phase = phData
		e.transmit(mi, m.src, m.dst, m.bytes)
	case phData:
		send, recv := m.sendOp, m.recvOp
		e.received(mi)
		e.complete(send)
		e.complete(recv)
	}
}

// accepts reports whether receive op accepts message m.
func accepts(op *Op, m *msg) bool {
	return (op.Peer == AnySource || op.Peer == m.src) && (op.Tag == AnyTag || op.Tag == m.tag)
}

// envelope matches the envelope mi at its receiver, or keeps it as
// unexpected.
func (e *Executor) envelope(mi int32) {
	m := &e.msgs[mi]
	d := m.dst
	prev := none
	for p := e.postHead[d]; p != none; p = e.posts[p].next {
		g := e.posts[p].op
		if _, op := e.op(g); accepts(op, m) {
			next := e.posts[p].next
			if prev == none {
				e.postHead[d] = next
			} else {
				e.posts[prev].next = next
			}
			if e.postTail[d] == p {
				e.postTail[d] = prev
			}
			e.freePosts = append(e.freePosts, p)
			m.recvOp = g
			e.matched(mi)
			return
		}
		prev = p
	}
	m.next = none
	if e.unexTail[d] == none {
		e.unexHead[d] = mi
	} else {
		e.msgs[e.unexTail[d]].next = mi
	}
	e.unexTail[d] = mi
}

// matched: envelope mi has its receive.
func (e *Executor) matched(mi int32) {
	m := &e.msgs[mi]
	if m.phase == phEager {
		recv := m.recvOp
		e.received(mi)
		e.complete(recv)
		return
	}
	m.phase = phCTS
	e.transmit(mi, m.dst, m.src, 0)
}

// received counts message mi at its receiver and frees it.
func (e *Executor) received(mi int32) {
	m := &e.msgs[mi]
	rs := &e.rstats[m.dst]
	rs.Recvs++
	rs.BytesReceived += m.bytes
	e.freeMsgs = append(e.freeMsgs, mi)
}

// postRecv starts Recv op g of rank r: it takes the earliest unexpected
// envelope it accepts, or waits posted.
func (e *Executor) postRecv(g uint32, r int, op *Op) {
	prev := none
	for mi := e.unexHead[r]; mi != none; mi = e.msgs[mi].next {
		m := &e.msgs[mi]
		if accepts(op, m) {
			if prev == none {
				e.unexHead[r] = m.next
			} else {
				e.msgs[prev].next = m.next
			}
			if e.unexTail[r] == mi {
				e.unexTail[r] = prev
			}
			m.recvOp = g
			e.matched(mi)
			return
		}
		prev = mi
	}
	var p int32
	if n := len(e.freePosts); n > 0 {
		p = e.freePosts[n-1]
		e.freePosts = e.freePosts[:n-1]
	} else {
		e.posts = append(e.posts, post{})
		p = int32(len(e.posts) - 1)
	}
	e.posts[p] = post{op: g, next: none}
	if e.postTail[r] == none {
		e.postHead[r] = p
	} else {
		e.posts[e.postTail[r]].next = p
	}
	e.postTail[r] = p
}

// deadlock explains a replay with ops left and nothing in flight: it
// names the first rank's first started op that cannot complete (a receive
// no message matches, or a rendezvous send whose receive is never
// posted); every op not started waits, through its dependencies, for such
// an op.
func (e *Executor) deadlock() error {
	ranks := 0
	for r := range e.s.Ranks {
		for g := e.base[r]; g < e.base[r+1]; g++ {
			if e.state[g] != opDone {
				ranks++
				break
			}
		}
	}
	left := fmt.Sprintf("%d ops of %d ranks unfinished", e.remaining, ranks)
	for pass := range 2 {
		for r := range e.s.Ranks {
			for g := e.base[r]; g < e.base[r+1]; g++ {
				i := g - e.base[r]
				op := &e.s.Ranks[r].Ops[i]
				switch {
				case pass == 0 && e.state[g] == opStarted && op.Kind == Recv:
					return e.s.errOp(r, i, "deadlock: %s (recv %db from %s tag %s) is never matched by a message; %s",
						e.s.OpRef(r, i), op.Bytes, wildcard(op.Peer), wildcard(op.Tag), left)
				case pass == 0 && e.state[g] == opStarted && op.Kind == Send:
					return e.s.errOp(r, i, "deadlock: %s (send %db to %d tag %d, rendezvous) waits for a matching receive that is never posted; %s",
						e.s.OpRef(r, i), op.Bytes, op.Peer, op.Tag, left)
				case pass == 1 && e.state[g] == opWaiting:
					return e.s.errOp(r, i, "deadlock: %s (%s) waits for dependencies that never complete; %s", e.s.OpRef(r, i), op.Kind, left)
				}
			}
		}
	}
	return fmt.Errorf("sched: deadlock: %s", left)
}

func wildcard(v int32) string {
	if v < 0 {
		return "any"
	}
	return fmt.Sprint(v)
}
