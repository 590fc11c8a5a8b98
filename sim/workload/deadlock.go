package workload

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lpictl/lpictl/sim/workload/vef"
)

// deadlock explains a replay that cannot go on: nothing is in flight (no
// message, no timer), yet records are left, so each of them waits for
// another record. In order:
//   - a cycle among the records read (bad input, docs/model.md §5 dependencies
//     that can never all be met, often only through a collective's
//     algorithm: a member cannot finish before the others have entered):
//     "FILE:LINE: circular dependency: …" naming the record of the cycle
//     that comes first in the file, and the whole cycle;
//   - a record that cannot be read because the window is full of records
//     that wait for records after it (raise workload.window);
//   - records waiting for records the stream never gives (a generated
//     source; vef.Reader reports these itself).
func (r *Replayer) deadlock() error {
	if err := r.cycle(); err != nil {
		return err
	}
	if r.stalled && r.have {
		if r.rec.Kind == vef.Message {
			s := &r.ring[r.rec.ID&r.mask]
			return r.errAt(r.rec.Line, fmt.Sprintf("replay deadlock: message %d cannot be read while message %d%s is unfinished; raise workload.window (now %d)",
				r.rec.ID, s.id, lineOf(s.line), len(r.ring)))
		}
		return r.errAt(r.rec.Line, fmt.Sprintf("replay deadlock: collective G%d cannot be read while %d collective members are unfinished; raise the member window",
			r.rec.ID, r.members))
	}
	if r.eof && len(r.fwdMsg)+len(r.fwdColl) > 0 {
		return fmt.Errorf("workload: replay deadlock: records wait for records the stream never gives (%d messages, %d collectives)", len(r.fwdMsg), len(r.fwdColl))
	}
	return fmt.Errorf("workload: replay deadlock: %d records can never be released", r.pending)
}

// errAt is a *vef.Error at line of the trace when the source is a file,
// else a plain error.
func (r *Replayer) errAt(line int64, msg string) error {
	if r.file != "" && line > 0 {
		return &vef.Error{File: r.file, Line: line, Msg: msg}
	}
	return fmt.Errorf("workload: %s", msg)
}

func lineOf(line int64) string {
	if line <= 0 {
		return ""
	}
	return fmt.Sprintf(" (line %d)", line)
}

// waiting lists the records read but not released or not finished, in a
// fixed order: messages by ID, then collective members by G and rank.
func (r *Replayer) waiting() []int64 {
	var ids []int64
	for i := range r.ring {
		if s := &r.ring[i]; s.id >= 0 && s.state == slotPending {
			ids = append(ids, s.id)
		}
	}
	slices.Sort(ids)
	refs := make([]int64, 0, len(ids))
	for _, id := range ids {
		refs = append(refs, msgRef(id))
	}
	gs := make([]int64, 0, len(r.ops))
	for g := range r.ops {
		gs = append(gs, g)
	}
	slices.Sort(gs)
	for _, g := range gs {
		idx := r.ops[g]
		for mi := range r.slab[idx].members {
			if st := r.slab[idx].members[mi].state; st == memRead || st == memEntered {
				refs = append(refs, memberRef(idx, int32(mi)))
			}
		}
	}
	return refs
}

// waitsFor is the record that record ref waits for, and how it waits
// ("the receipt of"), if that record has been read and is not finished.
func (r *Replayer) waitsFor(ref int64) (int64, string, bool) {
	if ref&1 == 0 {
		s := &r.ring[(ref>>1)&r.mask]
		if s.state != slotPending {
			return 0, "", false
		}
		return r.depTarget(s.dep, s.depID, s.src)
	}
	si, mi := splitMember(ref)
	op := r.slab[si]
	m := &op.members[mi]
	switch {
	case m.state == memRead:
		return r.depTarget(m.dep, m.depID, m.task)
	case m.state != memEntered || !op.ready:
		return 0, "", false
	}
	// Entered and stuck in step m.step: a member that must send to it in
	// that step has not (it has not entered, or is stuck in an earlier
	// step). Nothing is in flight, so what was sent has arrived.
	pl, s := &op.plan, m.step
	for mj := int32(0); mj < pl.p; mj++ {
		if mj == mi {
			continue
		}
		for i, c := int32(0), pl.sendCount(mj, s); i < c; i++ {
			if d, _ := pl.send(mj, s, i); d != mi {
				continue
			}
			o := &op.members[mj]
			if o.state == memRead || (o.state == memEntered && o.step < s) {
				return memberRef(si, mj), "a message from", true
			}
		}
	}
	return 0, "", false
}

func (r *Replayer) depTarget(dep vef.Dep, depID int64, task int32) (int64, string, bool) {
	switch dep {
	case vef.DepSend, vef.DepRecv:
		if depID >= r.nextMsg {
			return 0, "", false
		}
		s := &r.ring[depID&r.mask]
		if s.id != depID || s.state != slotPending {
			return 0, "", false
		}
		if dep == vef.DepSend {
			return msgRef(depID), "the send of", true
		}
		return msgRef(depID), "the receipt of", true
	case vef.DepColl:
		idx, ok := r.ops[depID]
		if !ok {
			return 0, "", false
		}
		mi, in := r.memberIndex(r.slab[idx].comm, task)
		if !in {
			return 0, "", false
		}
		if st := r.slab[idx].members[mi].state; st == memRead || st == memEntered {
			return memberRef(idx, mi), "the end of", true
		}
	}
	return 0, "", false
}

// name and line of a waiting record.
func (r *Replayer) describe(ref int64) (string, int64) {
	if ref&1 == 0 {
		s := &r.ring[(ref>>1)&r.mask]
		return fmt.Sprintf("message %d%s", s.id, lineOf(s.line)), s.line
	}
	si, mi := splitMember(ref)
	op := r.slab[si]
	m := &op.members[mi]
	return fmt.Sprintf("task %d in G%d%s", m.task, op.g, lineOf(m.line)), m.line
}

// cycle follows every waiting record to what it waits for (each waits for
// one record, so this is a walk in a functional graph, linear overall)
// and reports the first cycle found.
func (r *Replayer) cycle() error {
	const onPath, explored = 1, 2
	color := map[int64]uint8{}
	for _, start := range r.waiting() {
		if color[start] != 0 {
			continue
		}
		var path []int64
		var hows []string
		for ref := start; ; {
			switch color[ref] {
			case onPath:
				k := slices.Index(path, ref)
				return r.cycleError(path[k:], hows[k:])
			case explored:
			default:
				color[ref] = onPath
				path = append(path, ref)
				to, how, ok := r.waitsFor(ref)
				if ok {
					hows = append(hows, how)
					ref = to
					continue
				}
			}
			break
		}
		for _, p := range path {
			color[p] = explored
		}
	}
	return nil
}

// cycleError names the cycle from its record that comes first in the
// file: "FILE:LINE: circular dependency: A waits for the receipt of B,
// which waits for … A".
func (r *Replayer) cycleError(path []int64, hows []string) error {
	first, line := 0, int64(0)
	for i, ref := range path {
		if _, l := r.describe(ref); l > 0 && (line == 0 || l < line) {
			first, line = i, l
		}
	}
	n := len(path)
	var b strings.Builder
	b.WriteString("circular dependency: ")
	name, _ := r.describe(path[first])
	b.WriteString(name)
	const shown = 8
	for k := 0; k < n; k++ {
		if k == shown && n > shown+1 {
			fmt.Fprintf(&b, ", … (%d records in the cycle)", n)
			break
		}
		i := (first + k) % n
		to, _ := r.describe(path[(i+1)%n])
		if k > 0 {
			b.WriteString(", which")
		}
		fmt.Fprintf(&b, " waits for %s %s", hows[i], to)
	}
	return r.errAt(line, b.String())
}
