package apps

import (
	"io"
	"math/rand/v2"

	"github.com/lpictl/lpictl/sim/workload/vef"
)

// cursor is a task's latest event, what its next record depends on.
type cursor struct {
	dep vef.Dep // DepNone: no event yet
	id  int64
}

// emitter turns per-task programs (compute, send, wait, collective) into
// VEF records with single dependencies: each record depends on its task's
// latest event, after the compute the task did since.
type emitter struct {
	tasks int
	comms [][]int32
	cur   []cursor
	pend  []int64 // compute (ps) before the task's next record
	msg   int64
	g     int64
	buf   []vef.Record
	head  int
	inv   []int32
}

func newEmitter(tasks int, comms [][]int32) *emitter {
	if comms == nil {
		w := make([]int32, tasks)
		for i := range w {
			w[i] = int32(i)
		}
		comms = [][]int32{w}
	}
	return &emitter{tasks: tasks, comms: comms, cur: make([]cursor, tasks), pend: make([]int64, tasks), inv: make([]int32, tasks)}
}

func (e *emitter) compute(t int, ps int64) { e.pend[t] += ps }

// depOf consumes task t's pending compute: the first record of a task is
// released at the absolute time of its compute so far (dependency 0).
func (e *emitter) depOf(t int) (vef.Dep, int64, int64) {
	c, d := e.cur[t], e.pend[t]
	e.pend[t] = 0
	if c.dep == vef.DepNone {
		return vef.DepNone, d, -1
	}
	return c.dep, d, c.id
}

// send emits one message; the sender's next event is this send.
func (e *emitter) send(src, dst int, bytes int64) int64 {
	dep, t, id := e.depOf(src)
	m := e.msg
	e.msg++
	e.buf = append(e.buf, vef.Record{Kind: vef.Message, ID: m, Src: int32(src), Dst: int32(dst), Bytes: bytes, Dep: dep, Time: t, DepID: id})
	e.cur[src] = cursor{vef.DepSend, m}
	return m
}

// swap: every task t with dst[t] ≥ 0 sends bytes to dst[t]; then each task
// waits for the message it receives (or, receiving none, goes on after its
// send). dst must be injective.
func (e *emitter) swap(dst []int32, bytes int64) {
	for i := range e.inv {
		e.inv[i] = -1
	}
	base := e.msg
	ids := 0
	for t, d := range dst {
		if d < 0 {
			continue
		}
		e.send(t, int(d), bytes)
		e.inv[d] = int32(ids)
		ids++
	}
	for t := range dst {
		if k := e.inv[t]; k >= 0 {
			e.cur[t] = cursor{vef.DepRecv, base + int64(k)}
		}
	}
}

// coll emits one collective over communicator c; send/recv give each
// member's sizes by its rank in c.
func (e *emitter) coll(c int, op vef.Op, send, recv func(rank int) int64) {
	g := e.g
	e.g++
	for rank, t := range e.comms[c] {
		dep, d, id := e.depOf(int(t))
		e.buf = append(e.buf, vef.Record{Kind: vef.Collective, ID: g, Comm: int32(c), Op: op, Src: t,
			Bytes: send(rank), Recv: recv(rank), Dep: dep, Time: d, DepID: id})
		e.cur[t] = cursor{vef.DepColl, g}
	}
}

func constant(v int64) func(int) int64 { return func(int) int64 { return v } }

func rootOnly(v int64) func(int) int64 {
	return func(r int) int64 {
		if r == 0 {
			return v
		}
		return 0
	}
}

func nonRoot(v int64) func(int) int64 {
	return func(r int) int64 {
		if r == 0 {
			return 0
		}
		return v
	}
}

// stepper generates one step of a model into the emitter; false when done.
type stepper interface {
	gen(e *emitter, k int) bool
	steps() int
}

// source adapts a stepper to vef.Source.
type source struct {
	e    *emitter
	s    stepper
	k    int
	done bool
}

func newSource(tasks int, s stepper) *source {
	return &source{e: newEmitter(tasks, nil), s: s}
}

func (s *source) Tasks() int        { return s.e.tasks }
func (s *source) Comms() [][]int32  { return s.e.comms }
func (s *source) Progress() float64 { return float64(s.k) / float64(max(1, s.s.steps())) }

func (s *source) Next(r *vef.Record) error {
	for s.e.head == len(s.e.buf) {
		if s.done {
			return io.EOF
		}
		s.e.buf, s.e.head = s.e.buf[:0], 0
		if !s.s.gen(s.e, s.k) {
			s.done = true
		}
		s.k++
	}
	*r = s.e.buf[s.e.head]
	s.e.head++
	return nil
}

// jitter gives per-rank compute times base × (1 + imbalance × u), u
// uniform in [−1, 1], from a seeded PCG stream.
type jitter struct {
	rng       *rand.Rand
	imbalance float64
}

func newJitter(seed uint64, stream uint64, imbalance float64) jitter {
	return jitter{rng: rand.New(rand.NewPCG(seed, stream)), imbalance: imbalance}
}

func (j jitter) of(base int64) int64 {
	if j.imbalance == 0 {
		return base
	}
	f := 1 + j.imbalance*(2*j.rng.Float64()-1)
	return int64(float64(base) * f)
}
