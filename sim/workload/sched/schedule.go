package sched

import (
	"fmt"
	"strings"
)

// Kind is an operation's kind.
type Kind uint8

// The operation kinds.
const (
	Send Kind = iota // send Bytes to rank Peer with Tag
	Recv             // receive Bytes from rank Peer (AnySource: any) with Tag (AnyTag: any)
	Calc             // compute for Time ps
)

// Wildcards of a Recv.
const (
	AnySource int32 = -1
	AnyTag    int32 = -1
)

// String is the kind's name in GOAL.
func (k Kind) String() string {
	switch k {
	case Send:
		return "send"
	case Recv:
		return "recv"
	case Calc:
		return "calc"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Op is one operation of a rank.
type Op struct {
	Kind  Kind
	Peer  int32
	Tag   int32
	Bytes int64
	Time  int64 // Calc: ps
	// Deps are this op's dependencies: Rank.Deps[DepFrom:DepTo].
	DepFrom, DepTo uint32
	Line           int32 // line in Schedule.File where the op was read (0: none), for errors
	// NonBlocking marks a Send/Recv whose start does not wait for completion by itself (isend/irecv); informative:
	// the executor only follows the dependencies.
	NonBlocking bool
	// Coll marks a step of a collective's expansion (TI's collectives):
	// its messages count in Stats.CollMessages and CollBytes, not as the
	// program's point-to-point ones.
	Coll bool
}

// Dep is a dependency on another op of the same rank.
type Dep struct {
	Op    uint32 // index in Rank.Ops
	Start bool   // irequires: the other op must have started; else (requires) completed
}

// Rank is one rank's operations.
type Rank struct {
	Ops  []Op
	Deps []Dep
	// Labels names ops by the labels of the file they were read from
	// (GOAL), for errors; nil when it has none.
	Labels map[uint32]string
}

// Schedule is an MPI program as per-rank operations.
type Schedule struct {
	File  string // where it was read from (errors: FILE:LINE)
	Ranks []Rank
	// RankFiles, when set, is the file each rank's ops were read from
	// (one per rank, as SimGrid's TI traces): errors about an op name its
	// rank's file with the op's line, not File.
	RankFiles []string
	// Collectives counts the collective operations the schedule's Coll
	// ops expand, by name (e.g. "allreduce": 2); nil for none.
	Collectives map[string]int64
	// CollRecords is the number of trace records (a rank's line) of those
	// collectives.
	CollRecords int64
}

// Add appends op to rank r with deps and returns its index (a builder for readers and tests).
// Ranks up to r are created as needed; op.DepFrom and op.DepTo are set from deps.
func (s *Schedule) Add(r int, op Op, deps ...Dep) uint32 {
	for len(s.Ranks) <= r {
		s.Ranks = append(s.Ranks, Rank{})
	}
	rk := &s.Ranks[r]
	op.DepFrom = uint32(len(rk.Deps))
	rk.Deps = append(rk.Deps, deps...)
	op.DepTo = uint32(len(rk.Deps))
	rk.Ops = append(rk.Ops, op)
	return uint32(len(rk.Ops) - 1)
}

// OpDeps returns the dependencies of op i of rank r.
func (s *Schedule) OpDeps(r int, i uint32) []Dep {
	rk := &s.Ranks[r]
	op := &rk.Ops[i]
	return rk.Deps[op.DepFrom:op.DepTo]
}

// NumOps is the number of operations of all ranks.
func (s *Schedule) NumOps() int {
	n := 0
	for i := range s.Ranks {
		n += len(s.Ranks[i].Ops)
	}
	return n
}

// Error is a one-line error about a schedule or its file: "FILE:LINE: msg"
// when Line is set, else "FILE: msg", or "sched: msg" without a file. The CLI treats it as bad input.
type Error struct {
	File string
	Line int64
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		name := e.File
		if name == "" {
			name = "schedule"
		}
		return fmt.Sprintf("%s:%d: %s", name, e.Line, e.Msg)
	}
	if e.File != "" {
		return e.File + ": " + e.Msg
	}
	return "sched: " + e.Msg
}

// errOp is a one-line error about op i of rank r: "FILE:LINE: rank R: msg"
// when the op has a line, else "sched: rank R op I: msg".
func (s *Schedule) errOp(r int, i uint32, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	file := s.File
	if r < len(s.RankFiles) && s.RankFiles[r] != "" {
		file = s.RankFiles[r]
	}
	if int(i) < len(s.Ranks[r].Ops) {
		if line := s.Ranks[r].Ops[i].Line; line > 0 {
			return &Error{File: file, Line: int64(line), Msg: fmt.Sprintf("rank %d: %s", r, msg)}
		}
	}
	return &Error{File: file, Msg: fmt.Sprintf("rank %d op %d: %s", r, i, msg)}
}

// Validate checks peers in range, sizes ≥ 0, deps on existing ops of the same rank, and no dependency cycle
// (iterative, no recursion: ranks have millions of ops). Errors "FILE:LINE: …" when Line is set, else "rank R op I: …".
func (s *Schedule) Validate() error {
	n := int32(len(s.Ranks))
	for r := range s.Ranks {
		rk := &s.Ranks[r]
		if uint64(len(rk.Ops)) > 1<<32-1 {
			return fmt.Errorf("sched: rank %d: %d operations, more than 2^32-1", r, len(rk.Ops))
		}
		for i := range rk.Ops {
			op := &rk.Ops[i]
			u := uint32(i)
			switch op.Kind {
			case Send:
				if op.Peer < 0 || op.Peer >= n {
					return s.errOp(r, u, "send to rank %d: out of range [0, %d)", op.Peer, n)
				}
				if op.Tag < 0 {
					return s.errOp(r, u, "send tag %d: negative", op.Tag)
				}
				if op.Bytes < 0 {
					return s.errOp(r, u, "send size %d: negative", op.Bytes)
				}
			case Recv:
				if op.Peer < AnySource || op.Peer >= n {
					return s.errOp(r, u, "recv from rank %d: out of range [0, %d)", op.Peer, n)
				}
				if op.Tag < AnyTag {
					return s.errOp(r, u, "recv tag %d: negative", op.Tag)
				}
				if op.Bytes < 0 {
					return s.errOp(r, u, "recv size %d: negative", op.Bytes)
				}
			case Calc:
				if op.Time < 0 {
					return s.errOp(r, u, "calc time %d: negative", op.Time)
				}
			default:
				return s.errOp(r, u, "unknown kind %d", uint8(op.Kind))
			}
			if op.DepFrom > op.DepTo || int(op.DepTo) > len(rk.Deps) {
				return s.errOp(r, u, "dependencies [%d, %d) outside the rank's %d", op.DepFrom, op.DepTo, len(rk.Deps))
			}
			for _, d := range rk.Deps[op.DepFrom:op.DepTo] {
				if int(d.Op) >= len(rk.Ops) {
					return s.errOp(r, u, "dependency on op %d: the rank has %d ops", d.Op, len(rk.Ops))
				}
				if d.Op == u {
					return s.errOp(r, u, "depends on itself")
				}
			}
		}
		if err := s.acyclic(r); err != nil {
			return err
		}
	}
	return nil
}

// acyclic checks that rank r's dependency graph has no cycle: Kahn's
// algorithm (iterative), then, if ops are left, a walk along unfinished
// dependencies to name one cycle.
func (s *Schedule) acyclic(r int) error {
	rk := &s.Ranks[r]
	n := len(rk.Ops)
	if n == 0 {
		return nil
	}
	// indeg[i]: unresolved deps of op i; succ lists in CSR form.
	indeg := make([]uint32, n)
	cnt := make([]uint32, n+1)
	for i := range rk.Ops {
		op := &rk.Ops[i]
		indeg[i] = op.DepTo - op.DepFrom
		for _, d := range rk.Deps[op.DepFrom:op.DepTo] {
			cnt[d.Op+1]++
		}
	}
	for i := 1; i <= n; i++ {
		cnt[i] += cnt[i-1]
	}
	succ := make([]uint32, cnt[n])
	fill := make([]uint32, n)
	copy(fill, cnt[:n])
	for i := range rk.Ops {
		op := &rk.Ops[i]
		for _, d := range rk.Deps[op.DepFrom:op.DepTo] {
			succ[fill[d.Op]] = uint32(i)
			fill[d.Op]++
		}
	}
	queue := fill[:0] // reuse
	for i := range n {
		if indeg[i] == 0 {
			queue = append(queue, uint32(i))
		}
	}
	done := 0
	for len(queue) > 0 {
		i := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		done++
		for _, j := range succ[cnt[i]:cnt[i+1]] {
			indeg[j]--
			if indeg[j] == 0 {
				queue = append(queue, j)
			}
		}
	}
	if done == n {
		return nil
	}
	// Every op left has a dependency that is left too: walk from the first
	// one until an op repeats; the repeated part is a cycle.
	first := uint32(0)
	for indeg[first] == 0 {
		first++
	}
	seen := make([]int32, n) // position in path + 1; 0: not on it
	var path []uint32
	cur := first
	for {
		if at := seen[cur]; at > 0 {
			path = path[at-1:]
			break
		}
		path = append(path, cur)
		seen[cur] = int32(len(path))
		op := &rk.Ops[cur]
		for _, d := range rk.Deps[op.DepFrom:op.DepTo] {
			if indeg[d.Op] > 0 {
				cur = d.Op
				break
			}
		}
	}
	// Name the cycle from its op that comes first.
	lo := 0
	for k := range path {
		if path[k] < path[lo] {
			lo = k
		}
	}
	// At most maxCycleShown ops of a long cycle are named.
	const maxCycleShown = 8
	var desc strings.Builder
	for k := range min(len(path), maxCycleShown) {
		if k > 0 {
			desc.WriteString(" requires ")
		}
		desc.WriteString(s.opName(r, path[(lo+k)%len(path)]))
	}
	if len(path) > maxCycleShown {
		fmt.Fprintf(&desc, " requires … (%d ops in the cycle)", len(path))
	} else {
		desc.WriteString(" requires " + s.opName(r, path[lo]))
	}
	return s.errOp(r, path[lo], "dependency cycle: %s", desc.String())
}

// opName names op i of rank r for messages: "op LABEL (line L)" with
// the file's label, else "op I (line L)" (I counts the rank's ops from 0).
func (s *Schedule) opName(r int, i uint32) string {
	if line := s.Ranks[r].Ops[i].Line; line > 0 {
		return fmt.Sprintf("%s (line %d)", s.OpRef(r, i), line)
	}
	return s.OpRef(r, i)
}

// OpRef names op i of rank r as its file did: "op LABEL" (GOAL's label)
// or, for an op without one, "op I" (I counts the rank's ops from 0).
func (s *Schedule) OpRef(r int, i uint32) string {
	if l, ok := s.Ranks[r].Labels[i]; ok {
		return "op " + l
	}
	return fmt.Sprintf("op %d", i)
}
