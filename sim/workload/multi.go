package workload

import (
	"errors"
	"slices"
)

// A multi-job workload with ti or goal jobs runs several drivers at once on
// one host: the Replayer of the merged stream of its VEF-like jobs (if
// any) and one executor per program job, each on its own ranks' nodes.

// partSpec is one driver of such a workload.
type partSpec struct {
	ranks  []int   // the workload rank of each of the part's ranks
	prog   Program // nil: the merged stream of the VEF-like jobs (Workload.open)
	repeat int     // a program job's runs, back to back
}

// newMultiDriver builds the drivers of w.parts behind one multiDriver.
func (w *Workload) newMultiDriver() (Driver, error) {
	m := &multiDriver{}
	for _, ps := range w.parts {
		nodes := make([]int, len(ps.ranks))
		for i, r := range ps.ranks {
			nodes[i] = w.Nodes[r]
		}
		var d Driver
		if ps.prog == nil {
			src, err := w.open()
			if err != nil {
				m.Close()
				return nil, err
			}
			r, err := NewReplayer(src, nodes, w.opts)
			if err != nil {
				closeSource(src)
				m.Close()
				return nil, err
			}
			d = r
			if w.shared {
				d = WithIntraNode(r, w.intra.Latency, w.intra.Bandwidth)
			}
		} else {
			prog := ps.prog
			lat, bw := w.intra.Latency, w.intra.Bandwidth
			rd, err := newRepeatDriver(func() (Driver, error) { return prog.NewDriver(nodes, lat, bw) }, ps.repeat)
			if err != nil {
				m.Close()
				return nil, err
			}
			d = rd
		}
		m.parts = append(m.parts, muxPart{d: d, ranks: ps.ranks})
	}
	m.ranks = w.Ranks
	m.node = make([]int32, w.Ranks)
	for r, n := range w.Nodes {
		m.node[r] = int32(n)
	}
	return m, nil
}

// multiDriver runs its parts on one host. Each part sees a host of its own
// (subHost); the tags it gives are kept in slots, and the host sees the
// slot's index, so the parts' tag spaces never meet.
type multiDriver struct {
	h     Host
	parts []muxPart
	slots []muxSlot
	free  []uint32
	ranks int
	node  []int32
}

type muxPart struct {
	d     Driver
	ranks []int
	sub   subHost
}

type muxSlot struct {
	part int
	tag  uint64
}

// subHost is part i's view of the host.
type subHost struct {
	m *multiDriver
	i int
}

func (s *subHost) Now() int64 { return s.m.h.Now() }

func (s *subHost) Send(src, dst int, bytes int64, tag uint64) {
	s.m.h.Send(src, dst, bytes, s.m.slot(s.i, tag))
}

func (s *subHost) Schedule(at int64, tag uint64) { s.m.h.Schedule(at, s.m.slot(s.i, tag)) }

// slot keeps part i's tag until its event comes back.
func (m *multiDriver) slot(i int, tag uint64) uint64 {
	var k uint32
	if n := len(m.free); n > 0 {
		k = m.free[n-1]
		m.free = m.free[:n-1]
	} else {
		k = uint32(len(m.slots))
		m.slots = append(m.slots, muxSlot{})
	}
	m.slots[k] = muxSlot{part: i, tag: tag}
	return uint64(k)
}

// take returns and frees slot tag.
func (m *multiDriver) take(tag uint64) muxSlot {
	s := m.slots[tag]
	m.free = append(m.free, uint32(tag))
	return s
}

// Start implements Driver.
func (m *multiDriver) Start(h Host) {
	m.h = h
	for i := range m.parts {
		p := &m.parts[i]
		p.sub = subHost{m: m, i: i}
		p.d.Start(&p.sub)
	}
}

// Delivered implements Driver.
func (m *multiDriver) Delivered(tag uint64) {
	s := m.take(tag)
	m.parts[s.part].d.Delivered(s.tag)
}

// Timer implements Driver.
func (m *multiDriver) Timer(tag uint64) {
	s := m.take(tag)
	m.parts[s.part].d.Timer(s.tag)
}

// Done implements Driver: every part is done, or one failed.
func (m *multiDriver) Done() bool {
	if m.Err() != nil {
		return true
	}
	for _, p := range m.parts {
		if !p.d.Done() {
			return false
		}
	}
	return true
}

// Err implements Driver: the first part's failure.
func (m *multiDriver) Err() error {
	for _, p := range m.parts {
		if err := p.d.Err(); err != nil {
			return err
		}
	}
	return nil
}

// Close implements Driver.
func (m *multiDriver) Close() error {
	var errs []error
	for _, p := range m.parts {
		errs = append(errs, p.d.Close())
	}
	return errors.Join(errs...)
}

// Stats implements Driver: the parts' counters summed, their per-rank
// figures at the workload's ranks.
func (m *multiDriver) Stats() Stats {
	n := m.ranks
	s := Stats{RankFinish: make([]int64, n), RankBusy: make([]int64, n), Node: slices.Clone(m.node),
		RankSends: make([]int64, n), RankRecvs: make([]int64, n), RankBytesSent: make([]int64, n), RankBytesRecv: make([]int64, n)}
	for _, p := range m.parts {
		addStats(&s, p.d.Stats(), p.ranks)
	}
	return s
}

// addStats adds a part's counters to s, its rank i being s's rank at[i].
func addStats(s *Stats, t Stats, at []int) {
	s.Messages += t.Messages
	s.Bytes += t.Bytes
	s.P2P += t.P2P
	s.P2PBytes += t.P2PBytes
	s.SelfMessages += t.SelfMessages
	s.CollMessages += t.CollMessages
	s.CollBytes += t.CollBytes
	s.IntraMessages += t.IntraMessages
	s.IntraBytes += t.IntraBytes
	for i := range s.Collectives {
		s.Collectives[i] += t.Collectives[i]
	}
	for i := range s.Algorithms {
		s.Algorithms[i] += t.Algorithms[i]
	}
	s.ExecTime = max(s.ExecTime, t.ExecTime)
	add := func(dst, src []int64) {
		for i, v := range src {
			if i < len(at) {
				dst[at[i]] += v
			}
		}
	}
	for i, v := range t.RankFinish {
		if i < len(at) {
			s.RankFinish[at[i]] = max(s.RankFinish[at[i]], v)
		}
	}
	add(s.RankBusy, t.RankBusy)
	add(s.RankSends, t.RankSends)
	add(s.RankRecvs, t.RankRecvs)
	add(s.RankBytesSent, t.RankBytesSent)
	add(s.RankBytesRecv, t.RankBytesRecv)
}

// repeatDriver runs a program n times back to back: a fresh driver starts
// when the previous one is done.
type repeatDriver struct {
	newDriver func() (Driver, error)
	left      int // runs still to start after the current one
	cur       Driver
	h         Host
	acc       Stats // the finished runs
	ranks     []int // identity, for addStats
	err       error
}

func newRepeatDriver(newDriver func() (Driver, error), n int) (Driver, error) {
	d, err := newDriver()
	if err != nil || n <= 1 {
		return d, err
	}
	return &repeatDriver{newDriver: newDriver, left: n - 1, cur: d}, nil
}

// Start implements Driver.
func (r *repeatDriver) Start(h Host) {
	r.h = h
	r.cur.Start(h)
	r.next()
}

// next starts the following run once the current one is done. A finished
// run has nothing in flight: its last operation completed.
func (r *repeatDriver) next() {
	for r.left > 0 && r.cur.Done() && r.cur.Err() == nil {
		st := r.cur.Stats()
		if r.ranks == nil {
			n := len(st.RankFinish)
			r.acc = Stats{RankFinish: make([]int64, n), RankBusy: make([]int64, n), Node: st.Node,
				RankSends: make([]int64, n), RankRecvs: make([]int64, n), RankBytesSent: make([]int64, n), RankBytesRecv: make([]int64, n)}
			r.ranks = identityNodes(n)
		}
		addStats(&r.acc, st, r.ranks)
		if err := r.cur.Close(); err != nil {
			r.err = err
			return
		}
		d, err := r.newDriver()
		if err != nil {
			r.err = err
			return
		}
		r.left--
		r.cur = d
		d.Start(r.h)
	}
}

// Delivered implements Driver.
func (r *repeatDriver) Delivered(tag uint64) {
	r.cur.Delivered(tag)
	r.next()
}

// Timer implements Driver.
func (r *repeatDriver) Timer(tag uint64) {
	r.cur.Timer(tag)
	r.next()
}

// Done implements Driver.
func (r *repeatDriver) Done() bool { return r.err != nil || (r.left == 0 && r.cur.Done()) }

// Err implements Driver.
func (r *repeatDriver) Err() error {
	if r.err != nil {
		return r.err
	}
	return r.cur.Err()
}

// Close implements Driver.
func (r *repeatDriver) Close() error { return r.cur.Close() }

// Stats implements Driver: the finished runs and the current one.
func (r *repeatDriver) Stats() Stats {
	st := r.cur.Stats()
	if r.ranks == nil {
		return st
	}
	s := r.acc
	s.RankFinish, s.RankBusy = slices.Clone(s.RankFinish), slices.Clone(s.RankBusy)
	s.RankSends, s.RankRecvs = slices.Clone(s.RankSends), slices.Clone(s.RankRecvs)
	s.RankBytesSent, s.RankBytesRecv = slices.Clone(s.RankBytesSent), slices.Clone(s.RankBytesRecv)
	addStats(&s, st, r.ranks)
	return s
}
