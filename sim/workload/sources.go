package workload

import (
	"errors"
	"io"
	"sort"

	"github.com/lpictl/lpictl/sim/workload/vef"
)

// idRuns maps a job's local IDs to the merged stream's IDs: the merged
// stream takes consecutive local IDs in runs.
type idRuns struct {
	local, global []int64 // run starts
	next          int64   // next local ID
	lastGlobal    int64
	keep          int64 // local IDs further back than this may be forgotten
}

func (m *idRuns) add(global int64) {
	n := len(m.local)
	if n == 0 || m.lastGlobal+1 != global {
		m.local = append(m.local, m.next)
		m.global = append(m.global, global)
	}
	m.next++
	m.lastGlobal = global
	// Forget runs long gone: dependencies reach back at most keep IDs.
	if n = len(m.local); n > 1024 && m.local[n/2] < m.next-m.keep {
		k := n / 2
		m.local = append(m.local[:0], m.local[k:]...)
		m.global = append(m.global[:0], m.global[k:]...)
	}
}

func (m *idRuns) lookup(local int64) (int64, bool) {
	i := sort.Search(len(m.local), func(i int) bool { return m.local[i] > local }) - 1
	if i < 0 || local >= m.next {
		return 0, false
	}
	return m.global[i] + local - m.local[i], true
}

// multiSource merges the jobs' streams into one: tasks are concatenated,
// C0 is everybody, each job's communicators follow (its C0 is its world),
// and records are taken from the job that is least far through.
//
// A record that depends on a later record of its job (a forward reference,
// docs/model.md §5) gets that record's merged ID in advance: the merge then takes
// records from that job only until the referenced record has come, so the
// job's IDs run on consecutively and the merged ID is the current one plus
// the distance in the job's own numbering.
type multiSource struct {
	jobs   []vef.Source
	off    []int32 // task offset per job
	coff   []int32 // communicator offset per job
	msgs   []idRuns
	gs     []idRuns
	done   []bool
	tasks  int
	comms  [][]int32
	msg, g int64
	// stick ≥ 0: take from this job until its local message stickMsg and
	// G stickG have come.
	stick            int
	stickMsg, stickG int64
}

func newMultiSource(jobs []vef.Source, window int64) *multiSource {
	m := &multiSource{jobs: jobs, msgs: make([]idRuns, len(jobs)), gs: make([]idRuns, len(jobs)), done: make([]bool, len(jobs)),
		stick: -1, stickMsg: -1, stickG: -1}
	for i := range jobs {
		// Collective IDs: keep as many as messages (more than enough for
		// the 16 collectives a dependency may reach back).
		m.msgs[i].keep, m.gs[i].keep = window, window
	}
	for _, j := range jobs {
		m.off = append(m.off, int32(m.tasks))
		m.tasks += j.Tasks()
	}
	world := make([]int32, m.tasks)
	for i := range world {
		world[i] = int32(i)
	}
	m.comms = [][]int32{world}
	for i, j := range jobs {
		m.coff = append(m.coff, int32(len(m.comms)))
		for _, c := range j.Comms() {
			cc := make([]int32, len(c))
			for k, t := range c {
				cc[k] = t + m.off[i]
			}
			m.comms = append(m.comms, cc)
		}
	}
	return m
}

func (m *multiSource) Tasks() int       { return m.tasks }
func (m *multiSource) Comms() [][]int32 { return m.comms }

func progressOf(s vef.Source) float64 {
	if p, ok := s.(vef.Progress); ok {
		return p.Progress()
	}
	return 0
}

func (m *multiSource) Progress() float64 {
	var sum float64
	for i, j := range m.jobs {
		if m.done[i] {
			sum++
		} else {
			sum += progressOf(j)
		}
	}
	return sum / float64(len(m.jobs))
}

func (m *multiSource) Close() error {
	var errs []error
	for _, j := range m.jobs {
		if c, ok := j.(io.Closer); ok {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}

func (m *multiSource) Next(r *vef.Record) error {
	for {
		best := m.stick
		if best < 0 {
			var bp float64
			for i, j := range m.jobs {
				if m.done[i] {
					continue
				}
				if p := progressOf(j); best < 0 || p < bp {
					best, bp = i, p
				}
			}
		}
		if best < 0 {
			return io.EOF
		}
		err := m.jobs[best].Next(r)
		if errors.Is(err, io.EOF) {
			if best == m.stick {
				return errors.New("workload: multi-job merge: a forward dependency of a job never comes")
			}
			m.done[best] = true
			continue
		}
		if err != nil {
			return err
		}
		if err := m.remap(best, r); err != nil {
			return err
		}
		if m.stick == best && m.msgs[best].next > m.stickMsg && m.gs[best].next > m.stickG {
			m.stick, m.stickMsg, m.stickG = -1, -1, -1
		}
		return nil
	}
}

// ahead maps a forward reference to job j's local ID (not given yet) to
// the merged ID it will get, and sticks to job j until it has.
func (m *multiSource) ahead(j int, runs *idRuns, local, global int64, until *int64) int64 {
	m.stick = j
	*until = max(*until, local)
	return global + local - runs.next
}

func (m *multiSource) remap(j int, r *vef.Record) error {
	switch r.Dep {
	case vef.DepSend, vef.DepRecv:
		if r.DepID >= m.msgs[j].next {
			r.DepID = m.ahead(j, &m.msgs[j], r.DepID, m.msg, &m.stickMsg)
			break
		}
		g, ok := m.msgs[j].lookup(r.DepID)
		if !ok {
			return errors.New("workload: multi-job merge lost a message dependency")
		}
		r.DepID = g
	case vef.DepColl:
		if r.DepID >= m.gs[j].next {
			r.DepID = m.ahead(j, &m.gs[j], r.DepID, m.g, &m.stickG)
			break
		}
		g, ok := m.gs[j].lookup(r.DepID)
		if !ok {
			return errors.New("workload: multi-job merge lost a collective dependency")
		}
		r.DepID = g
	}
	r.Src += m.off[j]
	if r.Kind == vef.Message {
		r.Dst += m.off[j]
		r.ID = m.msg
		m.msgs[j].add(m.msg)
		m.msg++
		return nil
	}
	r.Comm += m.coff[j]
	if r.ID == m.gs[j].next { // a new operation
		m.gs[j].add(m.g)
		m.g++
	}
	g, _ := m.gs[j].lookup(r.ID)
	r.ID = g
	return nil
}

// anchor is a task's latest event in a repeated job.
type anchor struct {
	dep vef.Dep
	id  int64
	abs int64 // the absolute (dependency 0) time it stands for
}

// repeatSource runs a job n times back to back. Iteration i > 0 renumbers
// IDs after the previous ones, and turns each dependency-0 record of a task
// into a dependency on that task's latest event (its last event of the
// previous iteration, then its own earlier dependency-0 record) delayed by
// the difference of their absolute times: causality replaces timestamps.
// An open-loop task (every record of its first iteration has dependency
// 0: synthetic injection) stays open-loop: its records keep dependency 0,
// shifted by i × the first iteration's span (its latest absolute time), so
// its waits never become compute.
type repeatSource struct {
	open       func() (vef.Source, error)
	cur        vef.Source
	n, i       int
	msgBase    int64
	gBase      int64
	msgs, gs   int64 // counts in the current iteration
	last, base []anchor
	closed     []bool // per task: a record with a dependency in iteration 0
	span       int64  // latest absolute time of iteration 0
}

func newRepeatSource(open func() (vef.Source, error), n int) (*repeatSource, error) {
	s, err := open()
	if err != nil {
		return nil, err
	}
	t := s.Tasks()
	return &repeatSource{open: open, cur: s, n: n, last: make([]anchor, t), base: make([]anchor, t), closed: make([]bool, t)}, nil
}

func (s *repeatSource) Tasks() int { return s.cur.Tasks() }

// Name is the job's trace file, if it has one (the replayer names it in
// errors).
func (s *repeatSource) Name() string {
	if n, ok := s.cur.(interface{ Name() string }); ok {
		return n.Name()
	}
	return ""
}
func (s *repeatSource) Comms() [][]int32 { return s.cur.Comms() }
func (s *repeatSource) Progress() float64 {
	return (float64(s.i) + progressOf(s.cur)) / float64(s.n)
}

func (s *repeatSource) Close() error {
	if c, ok := s.cur.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

func (s *repeatSource) Next(r *vef.Record) error {
	for {
		err := s.cur.Next(r)
		if errors.Is(err, io.EOF) && s.i+1 < s.n {
			s.Close()
			if s.cur, err = s.open(); err != nil {
				return err
			}
			s.i++
			s.msgBase += s.msgs
			s.gBase += s.gs
			s.msgs, s.gs = 0, 0
			for t := range s.last {
				s.base[t] = anchor{dep: s.last[t].dep, id: s.last[t].id}
			}
			continue
		}
		if err != nil {
			return err
		}
		break
	}
	abs, rewritten := r.Time, false
	if s.i == 0 {
		if r.Dep == vef.DepNone {
			s.span = max(s.span, r.Time)
		} else {
			s.closed[r.Src] = true
		}
	}
	switch r.Dep {
	case vef.DepSend, vef.DepRecv:
		r.DepID += s.msgBase
	case vef.DepColl:
		r.DepID += s.gBase
	case vef.DepNone:
		if s.i > 0 && !s.closed[r.Src] {
			r.Time = abs + int64(s.i)*s.span
		} else if s.i > 0 {
			if a := s.base[r.Src]; a.dep != vef.DepNone {
				r.Dep, r.DepID, r.Time = a.dep, a.id, max(0, abs-a.abs)
				rewritten = true
			}
		}
	}
	if r.Kind == vef.Message {
		r.ID += s.msgBase
		s.msgs = max(s.msgs, r.ID-s.msgBase+1)
		s.last[r.Src] = anchor{dep: vef.DepSend, id: r.ID}
		if r.Dst != r.Src {
			s.last[r.Dst] = anchor{dep: vef.DepRecv, id: r.ID}
		}
	} else {
		r.ID += s.gBase
		s.gs = max(s.gs, r.ID-s.gBase+1)
		s.last[r.Src] = anchor{dep: vef.DepColl, id: r.ID}
	}
	if rewritten {
		// The task's next dependency-0 record chains on this one.
		a := s.last[r.Src]
		if r.Kind == vef.Message {
			a = anchor{dep: vef.DepSend, id: r.ID}
		}
		a.abs = abs
		s.base[r.Src] = a
	}
	return nil
}
