package schedvef

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/lpictl/lpictl/sim/workload/sched"
	"github.com/lpictl/lpictl/sim/workload/vef"
)

// event is when an op completes, symbolically: dep (none, or the send or
// receipt of provisional message id) plus off ps. from is the op that gave
// the event (for errors).
type event struct {
	dep  vef.Dep
	id   int64
	off  int64
	from uint32
}

// message is a record to write: a Send op, or (marker) the end of compute
// no record carries, at Calc op.
type message struct {
	rank   int32
	op     uint32
	marker bool
	dep    vef.Dep
	parent int64 // provisional ID of the dependency, −1 for none
	time   int64
	depth  int64
}

type converter struct {
	s      *sched.Schedule
	opMsg  [][]int64 // per rank and op: a Send's or a Recv's provisional message, −1 otherwise
	vals   [][]event
	done   [][]bool
	stack  []uint32
	msgs   []message
	sendOf []int64 // provisional message → ID in the output
}

// Write writes s as a VEF trace to w (see the package documentation for
// the mapping and what it refuses). Nothing is written when s cannot be
// expressed; a write error may leave a partial trace (write to a pending
// file and rename, as the CLI does).
func Write(w io.Writer, s *sched.Schedule) error {
	if s == nil || len(s.Ranks) == 0 {
		return errors.New("schedvef: the schedule has no ranks (VEF needs at least one task)")
	}
	if len(s.Ranks) > vef.MaxTasks {
		return fmt.Errorf("schedvef: %d ranks, more than VEF's %d tasks", len(s.Ranks), vef.MaxTasks)
	}
	if err := s.Validate(); err != nil {
		return err
	}
	c := &converter{s: s}
	if err := c.match(); err != nil {
		return err
	}
	if err := c.dependencies(); err != nil {
		return err
	}
	if err := c.order(); err != nil {
		return err
	}
	return c.write(w)
}

// errOp is a one-line error about op i of rank r.
func (c *converter) errOp(r int, i uint32, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	op := &c.s.Ranks[r].Ops[i]
	if op.Line > 0 {
		name := c.s.File
		if r < len(c.s.RankFiles) && c.s.RankFiles[r] != "" {
			name = c.s.RankFiles[r] // the op's line is in its rank's file
		}
		if name == "" {
			name = "schedule"
		}
		return fmt.Errorf("%s:%d: rank %d op %d (%s): %s", name, op.Line, r, i, op.Kind, msg)
	}
	return fmt.Errorf("schedvef: rank %d op %d (%s): %s", r, i, op.Kind, msg)
}

// opName is "op I" or "op I (line L)".
func (c *converter) opName(r int, i uint32) string {
	if l := c.s.Ranks[r].Ops[i].Line; l > 0 {
		return fmt.Sprintf("op %d (line %d)", i, l)
	}
	return fmt.Sprintf("op %d", i)
}

type matchKey struct{ src, dst, tag int32 }

// match numbers the Sends (provisional IDs, rank-major in op order) and
// gives every Recv its Send in MPI order per (source, destination, tag).
func (c *converter) match() error {
	s := c.s
	c.opMsg = make([][]int64, len(s.Ranks))
	queues := map[matchKey][]int64{}
	for r := range s.Ranks {
		ops := s.Ranks[r].Ops
		m := make([]int64, len(ops))
		for i := range ops {
			m[i] = -1
			if ops[i].Kind == sched.Send {
				id := int64(len(c.msgs))
				m[i] = id
				c.msgs = append(c.msgs, message{rank: int32(r), op: uint32(i), parent: -1})
				k := matchKey{int32(r), ops[i].Peer, ops[i].Tag}
				queues[k] = append(queues[k], id)
			}
		}
		c.opMsg[r] = m
	}
	taken := map[matchKey]int{}
	for r := range s.Ranks {
		ops := s.Ranks[r].Ops
		// A source whose receives here all take any tag is matched in
		// send order over all tags (MPI's non-overtaking per pair);
		// mixing any-tag and tagged receives from one source is refused.
		anyTag := map[int32]uint32{} // source → its first any-tag receive
		for i := range ops {
			if op := &ops[i]; op.Kind == sched.Recv && op.Tag == sched.AnyTag && op.Peer != sched.AnySource {
				if _, ok := anyTag[op.Peer]; !ok {
					anyTag[op.Peer] = uint32(i)
				}
			}
		}
		for i := range ops {
			op := &ops[i]
			if op.Kind != sched.Recv {
				continue
			}
			if op.Peer == sched.AnySource {
				return c.errOp(r, uint32(i), "receive from any source: VEF cannot express it (which send matches depends on timing)")
			}
			k := matchKey{op.Peer, int32(r), op.Tag}
			q := queues[k]
			if first, ok := anyTag[op.Peer]; ok {
				if op.Tag != sched.AnyTag {
					return c.errOp(r, uint32(i), "receive with tag %d from rank %d, which %s receives from with any tag: VEF cannot express it (which send matches depends on timing)",
						op.Tag, op.Peer, c.opName(r, first))
				}
				q = c.pairQueue(queues, op.Peer, int32(r))
				queues[k] = q
			}
			n := taken[k]
			if n >= len(q) {
				what := fmt.Sprintf("with tag %d", op.Tag)
				if op.Tag == sched.AnyTag {
					what = "with any tag"
				}
				return c.errOp(r, uint32(i), "no matching send: this is receive %d from rank %d %s, rank %d sends %d such messages to rank %d",
					n+1, op.Peer, what, op.Peer, len(q), r)
			}
			c.opMsg[r][i] = q[n]
			taken[k] = n + 1
		}
	}
	return nil
}

// pairQueue is every send from src to dst, in src's op order (provisional
// IDs are in op order), whatever its tag.
func (c *converter) pairQueue(queues map[matchKey][]int64, src, dst int32) []int64 {
	if q, ok := queues[matchKey{src, dst, sched.AnyTag}]; ok {
		return q
	}
	var q []int64
	for k, ids := range queues {
		if k.src == src && k.dst == dst && k.tag != sched.AnyTag {
			q = append(q, ids...)
		}
	}
	slices.Sort(q)
	return q
}

// dependencies gives every Send its single dependency and adds a marker
// record for each rank's trailing compute.
func (c *converter) dependencies() error {
	s := c.s
	c.vals = make([][]event, len(s.Ranks))
	c.done = make([][]bool, len(s.Ranks))
	for r := range s.Ranks {
		rk := &s.Ranks[r]
		c.vals[r] = make([]event, len(rk.Ops))
		c.done[r] = make([]bool, len(rk.Ops))
		// carried[i]: a Send or Calc waits for op i's completion, so a
		// record carries its compute; an uncarried Calc (the rank's last,
		// or one only receives wait for) gets a marker record.
		carried := make([]bool, len(rk.Ops))
		for i := range rk.Ops {
			if k := rk.Ops[i].Kind; k == sched.Recv {
				continue
			}
			for _, d := range rk.Deps[rk.Ops[i].DepFrom:rk.Ops[i].DepTo] {
				carried[d.Op] = true
			}
		}
		for i := range rk.Ops {
			op := &rk.Ops[i]
			switch {
			case op.Kind == sched.Send:
				ev, err := c.startOf(r, uint32(i))
				if err != nil {
					return err
				}
				m := &c.msgs[c.opMsg[r][i]]
				m.dep, m.time, m.parent = ev.dep, ev.off, ev.id
			case op.Kind == sched.Calc && !carried[i]:
				if err := c.eval(r, uint32(i)); err != nil {
					return err
				}
			}
		}
		// Markers: one per distinct event with uncarried compute after
		// it (the longest), in op order of the Calc that first reaches it.
		first := len(c.msgs)
		for i := range rk.Ops {
			if rk.Ops[i].Kind != sched.Calc || carried[i] {
				continue
			}
			ev := c.vals[r][i]
			if ev.off == 0 {
				continue // ends at the event itself, which VEF counts
			}
			merged := false
			for k := first; k < len(c.msgs); k++ {
				if m := &c.msgs[k]; m.dep == ev.dep && m.parent == ev.id {
					m.time = max(m.time, ev.off)
					merged = true
					break
				}
			}
			if !merged {
				c.msgs = append(c.msgs, message{rank: int32(r), op: uint32(i), marker: true, dep: ev.dep, parent: ev.id, time: ev.off})
			}
		}
		c.vals[r], c.done[r] = nil, nil // a rank's events are only needed by its own ops
	}
	return nil
}

// startOf is when op i of rank r may start: the merge of its dependencies'
// completions, which must all be ops already evaluated or evaluable.
func (c *converter) startOf(r int, i uint32) (event, error) {
	rk := &c.s.Ranks[r]
	op := &rk.Ops[i]
	for _, d := range rk.Deps[op.DepFrom:op.DepTo] {
		if d.Start {
			return event{}, c.errOp(r, i, "starts when %s has started (irequires): VEF has no start dependencies", c.opName(r, d.Op))
		}
		if err := c.eval(r, d.Op); err != nil {
			return event{}, err
		}
	}
	return c.merge(r, i)
}

// merge combines the completions of op i's dependencies (all evaluated).
func (c *converter) merge(r int, i uint32) (event, error) {
	rk := &c.s.Ranks[r]
	op := &rk.Ops[i]
	res := event{dep: vef.DepNone, id: -1}
	have := false
	for _, d := range rk.Deps[op.DepFrom:op.DepTo] {
		if d.Start {
			return event{}, c.errOp(r, i, "starts when %s has started (irequires): VEF has no start dependencies", c.opName(r, d.Op))
		}
		v := c.vals[r][d.Op]
		switch {
		case !have:
			res, have = v, true
		case v.dep == res.dep && v.id == res.id:
			res.off = max(res.off, v.off)
		case v.dep == vef.DepNone && v.off == 0:
			// Time 0 is before every event: nothing to wait for.
		case res.dep == vef.DepNone && res.off == 0:
			res = v
		case v.dep == vef.DepNone || res.dep == vef.DepNone:
			e, t := v, res
			if e.dep == vef.DepNone {
				e, t = res, v
			}
			return event{}, c.errOp(r, i, "waits for both %s and the absolute time %s: VEF records have one dependency",
				c.eventName(r, e), fmtPS(t.off))
		default:
			return event{}, c.errOp(r, i, "waits for two message events, %s and %s (a waitall): VEF records have one dependency",
				c.eventName(r, res), c.eventName(r, v))
		}
	}
	return res, nil
}

// eventName describes the event ev of rank r for errors.
func (c *converter) eventName(r int, ev event) string {
	op := c.s.Ranks[r].Ops[ev.from]
	if op.Kind == sched.Send {
		return fmt.Sprintf("the send of %s to rank %d", c.opName(r, ev.from), op.Peer)
	}
	return fmt.Sprintf("the receive %s from rank %d", c.opName(r, ev.from), op.Peer)
}

// eval computes the completion of op i of rank r and of the ops it needs
// (iterative: chains of compute are long).
func (c *converter) eval(r int, root uint32) error {
	rk := &c.s.Ranks[r]
	vals, done := c.vals[r], c.done[r]
	stack := append(c.stack[:0], root)
	defer func() { c.stack = stack[:0] }()
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		if done[i] {
			stack = stack[:len(stack)-1]
			continue
		}
		op := &rk.Ops[i]
		switch op.Kind {
		case sched.Send:
			vals[i] = event{dep: vef.DepSend, id: c.opMsg[r][i], from: i}
		case sched.Recv:
			vals[i] = event{dep: vef.DepRecv, id: c.opMsg[r][i], from: i}
		default: // Calc: after its dependencies
			pending := false
			for _, d := range rk.Deps[op.DepFrom:op.DepTo] {
				if !d.Start && !done[d.Op] {
					stack = append(stack, d.Op)
					pending = true
				}
			}
			if pending {
				continue // Validate ruled out cycles within a rank
			}
			ev, err := c.merge(r, i)
			if err != nil {
				return err
			}
			ev.off += op.Time
			vals[i] = ev
		}
		done[i] = true
		stack = stack[:len(stack)-1]
	}
	return nil
}

// order numbers the messages in output order: by depth in the dependency
// forest, then provisional ID (rank-major, op order; markers last), so
// every dependency is on an earlier message.
func (c *converter) order() error {
	const unknown, visiting = -1, -2
	for k := range c.msgs {
		c.msgs[k].depth = unknown
	}
	var path []int64
	maxDepth := int64(0)
	for k := range c.msgs {
		path = path[:0]
		m := int64(k)
		for m >= 0 && c.msgs[m].depth < 0 {
			if c.msgs[m].depth == visiting {
				return c.cycle(path, m)
			}
			c.msgs[m].depth = visiting
			path = append(path, m)
			m = c.msgs[m].parent
		}
		d := int64(-1)
		if m >= 0 {
			d = c.msgs[m].depth
		}
		for j := len(path) - 1; j >= 0; j-- {
			d++
			c.msgs[path[j]].depth = d
		}
		maxDepth = max(maxDepth, d)
	}
	// Counting sort by depth, stable in provisional order.
	start := make([]int64, maxDepth+2)
	for k := range c.msgs {
		start[c.msgs[k].depth+1]++
	}
	for d := 1; d < len(start); d++ {
		start[d] += start[d-1]
	}
	c.sendOf = make([]int64, len(c.msgs))
	for k := range c.msgs {
		d := c.msgs[k].depth
		c.sendOf[k] = start[d]
		start[d]++
	}
	return nil
}

// cycle reports the dependency cycle that starts at message m on path.
func (c *converter) cycle(path []int64, m int64) error {
	at := 0
	for path[at] != m {
		at++
	}
	loop := path[at:]
	names := make([]string, 0, min(len(loop), 6))
	for j, k := range loop {
		if j == 5 {
			names = append(names, fmt.Sprintf("… (%d messages)", len(loop)))
			break
		}
		mm := &c.msgs[k]
		names = append(names, fmt.Sprintf("rank %d %s", mm.rank, c.opName(int(mm.rank), mm.op)))
	}
	first := &c.msgs[m]
	return c.errOp(int(first.rank), first.op, "deadlock: the sends wait for each other's messages in a cycle: %s",
		strings.Join(names, " → "))
}

// write streams the header, the world communicator and the records.
func (c *converter) write(w io.Writer) error {
	n := len(c.s.Ranks)
	h := vef.Header{Tasks: n, Messages: int64(len(c.msgs)), Comms: 1, OnlySend: true}
	for k := range c.msgs {
		if c.msgs[k].dep == vef.DepRecv {
			h.OnlySend = false
			break
		}
	}
	world := make([]int32, n)
	for t := range world {
		world[t] = int32(t)
	}
	vw := vef.NewWriter(w)
	if err := vw.WriteHeader(h, [][]int32{world}); err != nil {
		return err
	}
	byID := make([]int64, len(c.msgs)) // output ID → provisional
	for k, id := range c.sendOf {
		byID[id] = int64(k)
	}
	var rec vef.Record
	for id, k := range byID {
		m := &c.msgs[k]
		op := &c.s.Ranks[m.rank].Ops[m.op]
		rec = vef.Record{Kind: vef.Message, ID: int64(id), Src: m.rank, Dst: op.Peer, Bytes: op.Bytes,
			Dep: m.dep, Time: m.time, DepID: -1, Line: int64(op.Line)}
		if m.marker {
			rec.Dst, rec.Bytes = m.rank, 0
		}
		if m.dep != vef.DepNone {
			rec.DepID = c.sendOf[m.parent]
		}
		if err := vw.Write(&rec); err != nil {
			return err
		}
	}
	return vw.Flush()
}

// fmtPS formats ps as nanoseconds, as VEF writes times.
func fmtPS(ps int64) string { return string(vef.AppendTime(nil, ps)) + " ns" }
