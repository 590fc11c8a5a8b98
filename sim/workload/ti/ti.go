package ti

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/lpictl/lpictl/sim/workload/sched"
)

// Options configure a conversion.
type Options struct {
	// FlopRate is the speed in flops/s that turns compute amounts (and the
	// comp_size of reductions) into time, e.g. the platform's host speed.
	// Required, > 0.
	FlopRate float64
	// Ranks is the number of ranks (MPI_COMM_WORLD's size). 0: from the
	// trace (the index's entries, or 1 + the largest rank of a one-file
	// trace). Set, it must agree with an index file.
	Ranks int
}

// MaxRanks bounds the number of ranks of a trace.
const MaxRanks = 1 << 20

// CollTagBase is the first tag of collective messages: collective number c
// of a run (0, 1, …, counted per rank) uses tag CollTagBase + c mod 2^30.
// User tags must be below it.
const CollTagBase = 1 << 30

// maxLine bounds one trace line (vector collectives list one count per rank).
const maxLine = 64 << 20

// Wildcards as SMPI 3.32 records them: MPI_ANY_SOURCE goes through a rank
// translation that yields MPI_UNDEFINED (-333); MPI_ANY_SOURCE (-555) and
// MPI_ANY_TAG (-444) are SMPI's own values.
const (
	smpiUndefined = -333
	smpiAnySource = -555
	smpiAnyTag    = -444
)

// verb is a TI action.
type verb uint8

const (
	vInit verb = iota
	vFinalize
	vCompute
	vSleep
	vSend
	vIsend
	vRecv
	vIrecv
	vSendRecv
	vWait
	vWaitall
	vTest
	vBarrier
	vBcast
	vReduce
	vAllreduce
	vAlltoall
	vAlltoallv
	vGather
	vGatherv
	vScatter
	vScatterv
	vAllgather
	vAllgatherv
	vReducescatter
	vScan
	vExscan
	vCommSize
	vCommSplit
	vCommDup
	vLocation
)

// verbs maps action names (as SMPI 3.32 writes and replays them) to verbs.
var verbs = map[string]verb{
	"init": vInit, "finalize": vFinalize, "compute": vCompute, "sleep": vSleep,
	"send": vSend, "isend": vIsend, "recv": vRecv, "irecv": vIrecv, "sendRecv": vSendRecv,
	"wait": vWait, "waitall": vWaitall, "test": vTest,
	"barrier": vBarrier, "bcast": vBcast, "reduce": vReduce, "allreduce": vAllreduce,
	"alltoall": vAlltoall, "alltoallv": vAlltoallv, "gather": vGather, "gatherv": vGatherv,
	"scatter": vScatter, "scatterv": vScatterv, "allgather": vAllgather, "allgatherv": vAllgatherv,
	"reducescatter": vReducescatter, "scan": vScan, "exscan": vExscan,
	"comm_size": vCommSize, "comm_split": vCommSplit, "comm_dup": vCommDup, "location": vLocation,
}

// verbNames is the inverse of verbs, for messages.
var verbNames = func() []string {
	n := make([]string, len(verbs))
	for k, v := range verbs {
		n[v] = k
	}
	return n
}()

func (v verb) String() string { return verbNames[v] }

// action is one parsed trace line: its numeric arguments are
// rankTrace.nums[off : off+n].
type action struct {
	verb verb
	line int32
	off  uint32
	n    uint32
}

// rankTrace is one rank's actions, in trace order, kept when the number
// of ranks is known only at the end of a one-file trace.
type rankTrace struct {
	acts []action
	nums []float64
}

// lineError is a one-line "FILE:LINE: msg" error.
func lineError(file string, line int, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", file, line, fmt.Sprintf(format, args...))
}

// lineReader reads a TI file line by line as SMPI's replay does: fields
// split at blanks and tabs, empty lines and lines starting with '#'
// skipped.
type lineReader struct {
	sc   *bufio.Scanner
	file string
	line int
}

func newLineReader(r io.Reader, file string) *lineReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	return &lineReader{sc: sc, file: file}
}

// next returns the next non-empty, non-comment line's fields, or nil at the end.
func (lr *lineReader) next() ([]string, error) {
	for lr.sc.Scan() {
		lr.line++
		f := strings.Fields(lr.sc.Text())
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		return f, nil
	}
	if err := lr.sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", lr.file, lr.line+1, err)
	}
	return nil, nil
}

// parseRank reads a line's rank field.
func parseRank(lr *lineReader, s string) (int, error) {
	r, err := strconv.Atoi(s)
	if err != nil || r < 0 || r >= MaxRanks {
		return 0, lineError(lr.file, lr.line, "rank %q: want an integer in [0, %d)", s, MaxRanks)
	}
	return r, nil
}

// parseAction parses fields (a line after its rank) into its verb and its
// numeric arguments, appended to buf[:0]; skip reports a line without
// effect on the schedule (location).
func parseAction(lr *lineReader, fields []string, buf []float64) (v verb, args []float64, skip bool, err error) {
	if len(fields) < 2 {
		return 0, nil, false, lineError(lr.file, lr.line, "missing action after rank %s", fields[0])
	}
	v, ok := verbs[fields[1]]
	if !ok {
		return 0, nil, false, lineError(lr.file, lr.line, "unsupported action %q", fields[1])
	}
	words := fields[2:]
	if v == vLocation { // "location FILE LINE": call site of the next action
		if len(words) != 2 {
			return 0, nil, false, lineError(lr.file, lr.line, "location: %d arguments, want 2 (file line)", len(words))
		}
		return v, nil, true, nil
	}
	args = buf[:0]
	for i, w := range words {
		x, err := strconv.ParseFloat(w, 64)
		if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
			return 0, nil, false, lineError(lr.file, lr.line, "%s: argument %d %q: not a finite number", v, i+1, w)
		}
		args = append(args, x)
	}
	return v, args, false, nil
}

// lineNo is a line number as kept in ops.
func lineNo(line int) int32 { return int32(min(line, math.MaxInt32)) }

// checkOptions validates opts.
func checkOptions(opts Options) error {
	if !(opts.FlopRate > 0) || math.IsInf(opts.FlopRate, 0) {
		return fmt.Errorf("ti: Options.FlopRate %g: want a finite rate > 0 flops/s", opts.FlopRate)
	}
	if opts.Ranks < 0 || opts.Ranks > MaxRanks {
		return fmt.Errorf("ti: Options.Ranks %d: want 0 (from the trace) or 1 to %d", opts.Ranks, MaxRanks)
	}
	return nil
}

// Read converts a trace holding the actions of all ranks, interleaved
// (SMPI's tracing/smpi/format/ti-one-file form, or the replay's shared
// trace), read from r; name names it in errors. With Options.Ranks set it
// converts as it reads; with 0 the number of ranks is known at the end
// only, so it keeps the parsed actions (numbers, not text) until then.
func Read(r io.Reader, name string, opts Options) (*sched.Schedule, error) {
	if err := checkOptions(opts); err != nil {
		return nil, err
	}
	lr := newLineReader(r, name)
	var c *converter
	if opts.Ranks > 0 {
		c = newConverter(name, opts.Ranks, opts)
	}
	var ranks []*rankTrace // opts.Ranks == 0
	var buf []float64
	for {
		f, err := lr.next()
		if err != nil {
			return nil, err
		}
		if f == nil {
			break
		}
		rk, err := parseRank(lr, f[0])
		if err != nil {
			return nil, err
		}
		if opts.Ranks > 0 && rk >= opts.Ranks {
			return nil, lineError(name, lr.line, "rank %d: Options.Ranks is %d", rk, opts.Ranks)
		}
		v, args, skip, err := parseAction(lr, f, buf)
		if err != nil {
			return nil, err
		}
		buf = args
		if skip {
			continue
		}
		if c != nil {
			if err := c.rank(rk, name).do(v, lineNo(lr.line), args); err != nil {
				return nil, err
			}
			continue
		}
		for len(ranks) <= rk {
			ranks = append(ranks, &rankTrace{})
		}
		t := ranks[rk]
		if uint64(len(t.nums))+uint64(len(args)) > math.MaxUint32 {
			return nil, lineError(name, lr.line, "more than 2^32 numbers in rank %d's actions", rk)
		}
		t.acts = append(t.acts, action{verb: v, line: lineNo(lr.line), off: uint32(len(t.nums)), n: uint32(len(args))})
		t.nums = append(t.nums, args...)
	}
	if c == nil {
		if len(ranks) == 0 {
			return nil, fmt.Errorf("%s: no actions", name)
		}
		c = newConverter(name, len(ranks), opts)
		for rk, t := range ranks {
			rc := c.rank(rk, name)
			for i := range t.acts {
				a := &t.acts[i]
				if err := rc.do(a.verb, a.line, t.nums[a.off:a.off+a.n]); err != nil {
					return nil, err
				}
			}
			ranks[rk] = nil
		}
	}
	if err := c.finish(); err != nil {
		return nil, err
	}
	return c.s, nil
}

// ReadIndex converts the trace whose index file (tracing/filename) is at
// path: one rank's file per non-empty line, in rank order, relative to the
// index's directory. An index of one line names a shared file holding all
// ranks (ti-one-file), read as Read does.
func ReadIndex(path string, opts Options) (*sched.Schedule, error) {
	if err := checkOptions(opts); err != nil {
		return nil, err
	}
	files, lines, err := readIndex(path)
	if err != nil {
		return nil, err
	}
	if len(files) == 1 {
		f, err := os.Open(files[0])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, lines[0], err)
		}
		defer f.Close()
		return Read(f, files[0], opts)
	}
	n := len(files)
	if n > MaxRanks {
		return nil, fmt.Errorf("%s: %d rank files, more than %d", path, n, MaxRanks)
	}
	if opts.Ranks > 0 && opts.Ranks != n {
		return nil, fmt.Errorf("%s: %d rank files, Options.Ranks is %d", path, n, opts.Ranks)
	}
	c := newConverter(path, n, opts)
	c.s.RankFiles = files // an op's Line is in its rank's file
	for rk, name := range files {
		if err := c.readRankFile(name, rk); err != nil {
			return nil, fmt.Errorf("%s:%d: rank %d: %w", path, lines[rk], rk, err)
		}
	}
	if err := c.finish(); err != nil {
		return nil, err
	}
	return c.s, nil
}

// readIndex returns the index's files (resolved) and their line numbers.
func readIndex(path string) (files []string, lines []int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("ti: %w", err)
	}
	defer f.Close()
	dir := filepath.Dir(path)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" {
			continue
		}
		if !filepath.IsAbs(s) {
			s = filepath.Join(dir, s)
		}
		files = append(files, s)
		lines = append(lines, line)
		if len(files) > MaxRanks {
			return nil, nil, fmt.Errorf("%s:%d: more than %d rank files", path, line, MaxRanks)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("%s:%d: %w", path, line+1, err)
	}
	if len(files) == 0 {
		return nil, nil, fmt.Errorf("%s: no rank files listed", path)
	}
	return files, lines, nil
}

// readRankFile converts rank rk's file as it reads it; every line must be rank rk's.
func (c *converter) readRankFile(name string, rk int) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	lr := newLineReader(f, name)
	rc := c.rank(rk, name)
	var buf []float64
	for {
		fl, err := lr.next()
		if err != nil {
			return err
		}
		if fl == nil {
			return nil
		}
		r, err := parseRank(lr, fl[0])
		if err != nil {
			return err
		}
		if r != rk {
			return lineError(name, lr.line, "rank %d in the file of rank %d", r, rk)
		}
		v, args, skip, err := parseAction(lr, fl, buf)
		if err != nil {
			return err
		}
		buf = args
		if skip {
			continue
		}
		if err := rc.do(v, lineNo(lr.line), args); err != nil {
			return err
		}
	}
}

// datatypeSizes is SMPI 3.32's datatype encoding (src/smpi/mpi/smpi_datatype.cpp,
// CREATE_MPI_DATATYPE: the code is the datatype's id) with the sizes of
// their C types on LP64 Linux (x86-64, aarch64). 55 and 56 are MPI_UB and
// MPI_LB (size 0).
var datatypeSizes = [...]int64{
	0: 8, 1: 4, 2: 1, 3: 2, 4: 8, 5: 4, 6: 1, 7: 8, 8: 1, 9: 1, // DOUBLE INT CHAR SHORT LONG FLOAT BYTE LONG_LONG SIGNED_CHAR UNSIGNED_CHAR
	10: 2, 11: 4, 12: 8, 13: 8, 14: 16, 15: 4, 16: 1, // UNSIGNED_SHORT UNSIGNED UNSIGNED_LONG UNSIGNED_LONG_LONG LONG_DOUBLE WCHAR C_BOOL
	17: 1, 18: 2, 19: 4, 20: 8, 21: 1, 22: 2, 23: 4, 24: 8, // INT8..64_T UINT8..64_T
	25: 8, 26: 16, 27: 32, 28: 8, 29: 8, // C_FLOAT_COMPLEX C_DOUBLE_COMPLEX C_LONG_DOUBLE_COMPLEX AINT OFFSET
	30: 8, 31: 16, 32: 16, 33: 8, 34: 8, 35: 8, 36: 16, 37: 16, // FLOAT_INT LONG_INT DOUBLE_INT SHORT_INT 2INT 2FLOAT 2DOUBLE 2LONG
	38: 4, 39: 4, 40: 8, 41: 16, 42: 8, 43: 16, 44: 16, // REAL REAL4 REAL8 REAL16 COMPLEX8 COMPLEX16 COMPLEX32 (SMPI: double_double)
	45: 4, 46: 2, 47: 4, 48: 8, 49: 16, // INTEGER1 (SMPI: int) INTEGER2 INTEGER4 INTEGER8 INTEGER16
	50: 32, 51: 1, 52: 8, 53: 16, 54: 32, // LONG_DOUBLE_INT CXX_BOOL CXX_FLOAT/DOUBLE/LONG_DOUBLE_COMPLEX
	55: 0, 56: 0, 57: 1, 58: 8, 59: 8, // UB LB PACKED PTR COUNT
}

// Default datatypes of SMPI's replay: MPI_BYTE, or MPI_DOUBLE after an
// "init" with an argument.
const (
	codeDouble = 0
	codeByte   = 6
)

var errDerived = errors.New("datatype -1 is a derived datatype (SMPI records MPI_DATATYPE_NULL's code): its size is not in the trace")

// datatypeSize returns the size of the datatype with code x.
func datatypeSize(x float64) (int64, error) {
	if x == -1 {
		return 0, errDerived
	}
	if x != math.Trunc(x) || x < 0 || x >= float64(len(datatypeSizes)) {
		return 0, fmt.Errorf("unknown datatype code %v", x)
	}
	return datatypeSizes[int(x)], nil
}

// collSig is what every rank must agree on about one collective.
type collSig struct {
	verb  verb
	root  int32
	bytes int64 // per-rank payload where all ranks state it (bcast, reduce, allreduce, scan, exscan); else -1
	rank  int32 // the first rank that reached it
	line  int32
	file  string
}

// converter turns the ranks' actions into one schedule.
type converter struct {
	s     *sched.Schedule
	n     int
	opts  Options
	colls []collSig // collective i as the first rank to reach it saw it
	count []int     // collectives reached per rank
	ranks []*rankConv
}

func newConverter(name string, n int, opts Options) *converter {
	return &converter{
		s:     &sched.Schedule{File: name, Ranks: make([]sched.Rank, n)},
		n:     n,
		opts:  opts,
		count: make([]int, n),
		ranks: make([]*rankConv, n),
	}
}

// reqKey keys outstanding isends and irecvs as SMPI's replay does
// (RequestStorage): (sender, receiver, tag) as written in the trace.
type reqKey struct{ src, dst, tag int64 }

// rankConv converts one rank's actions.
type rankConv struct {
	c     *converter
	file  string // where the current action was read
	r     int
	verb  verb                // the current action
	line  int32               // its line
	front []uint32            // ops the next op requires (completed)
	prev  int64               // the last op posted, -1: none
	reqs  map[reqKey][]uint32 // outstanding requests per key, oldest first
	nreq  int
	deflt float64 // default datatype code
	deps  []sched.Dep
}

func (rc *rankConv) errorf(format string, args ...any) error {
	return fmt.Errorf("%s:%d: "+format, append([]any{rc.file, rc.line}, args...)...)
}

// depsNow are the dependencies of an op posted now: completion of the
// front, and the start of the previous op when it is not in the front (so
// that operations start in program order, as MPI's matching needs).
func (rc *rankConv) depsNow() []sched.Dep {
	d := rc.deps[:0]
	inFront := false
	for _, f := range rc.front {
		d = append(d, sched.Dep{Op: f})
		if int64(f) == rc.prev {
			inFront = true
		}
	}
	if rc.prev >= 0 && !inFront {
		d = append(d, sched.Dep{Op: uint32(rc.prev), Start: true})
	}
	rc.deps = d
	return d
}

// step posts ops concurrently after the front; they become the front.
func (rc *rankConv) step(ops ...sched.Op) {
	d := rc.depsNow() // a copy: the front's array can be reused
	front := rc.front[:0]
	for _, op := range ops {
		op.Line = rc.line
		front = append(front, rc.c.s.Add(rc.r, op, d...))
	}
	rc.front = front
	rc.prev = int64(front[len(front)-1])
}

// post posts a non-blocking op after the front and records its request.
func (rc *rankConv) post(op sched.Op, src, dst, tag int64) {
	op.Line = rc.line
	op.NonBlocking = true
	i := rc.c.s.Add(rc.r, op, rc.depsNow()...)
	rc.prev = int64(i)
	if rc.reqs == nil {
		rc.reqs = make(map[reqKey][]uint32)
	}
	k := reqKey{src, dst, tag}
	rc.reqs[k] = append(rc.reqs[k], i)
	rc.nreq++
}

// complete makes the next op require ops too.
func (rc *rankConv) complete(ops ...uint32) {
	rc.front = append(rc.front[:len(rc.front):len(rc.front)], ops...)
}

// pop removes and returns the oldest (newest: the newest) request of key k.
func (rc *rankConv) pop(k reqKey, newest bool) uint32 {
	q := rc.reqs[k]
	var op uint32
	if newest {
		op, q = q[len(q)-1], q[:len(q)-1]
	} else {
		op, q = q[0], q[1:]
	}
	if len(q) == 0 {
		delete(rc.reqs, k)
	} else {
		rc.reqs[k] = q
	}
	rc.nreq--
	return op
}

// calc posts a computation of the given seconds (nothing when it rounds to 0 ps).
func (rc *rankConv) calc(seconds float64, what string) error {
	ps := math.Round(seconds * 1e12)
	if !(ps >= 0) || ps > math.MaxInt64/2 {
		return rc.errorf("%s %g: want a time in [0, %g] s", what, seconds, float64(math.MaxInt64/2)/1e12)
	}
	if ps > 0 {
		rc.step(sched.Op{Kind: sched.Calc, Time: int64(ps)})
	}
	return nil
}

// nargs checks the number of arguments; want names them.
func (rc *rankConv) nargs(args []float64, lo, hi int, want string) error {
	if len(args) >= lo && len(args) <= hi {
		return nil
	}
	if want != "" {
		want = " (" + want + ")"
	}
	if lo == hi {
		return rc.errorf("%s: %d arguments, want %d%s", rc.verb, len(args), lo, want)
	}
	return rc.errorf("%s: %d arguments, want %d to %d%s", rc.verb, len(args), lo, hi, want)
}

// integer returns args[i] as an integer in [lo, hi].
func (rc *rankConv) integer(args []float64, i int, what string, lo, hi int64) (int64, error) {
	x := args[i]
	if x != math.Trunc(x) || x < float64(lo) || x > float64(hi) {
		return 0, rc.errorf("%s: %s %v: want an integer in [%d, %d]", rc.verb, what, x, lo, hi)
	}
	return int64(x), nil
}

// maxCount bounds counts so that count × datatype size fits an int64.
const maxCount = 1 << 53

// count returns args[i] as an element count.
func (rc *rankConv) count(args []float64, i int) (int64, error) {
	x := args[i]
	if x != math.Trunc(x) || x < 0 || x > maxCount {
		return 0, rc.errorf("%s: bad count %v: want an integer in [0, 2^53]", rc.verb, x)
	}
	return int64(x), nil
}

// dtype returns the size of the datatype at args[i], or of the default datatype when absent.
func (rc *rankConv) dtype(args []float64, i int) (int64, error) {
	code := rc.deflt
	if i < len(args) {
		code = args[i]
	}
	sz, err := datatypeSize(code)
	if err != nil {
		return 0, rc.errorf("%s: %w", rc.verb, err)
	}
	return sz, nil
}

// peer returns args[i] as a rank of the run; any reports MPI_ANY_SOURCE.
func (rc *rankConv) peer(args []float64, i int, wildcard bool) (int32, error) {
	x := args[i]
	if wildcard && (x == smpiUndefined || x == smpiAnySource) {
		return sched.AnySource, nil
	}
	if x != math.Trunc(x) || x < 0 || x >= float64(rc.c.n) {
		return 0, rc.errorf("%s: rank %v: want an integer in [0, %d)", rc.verb, x, rc.c.n)
	}
	return int32(x), nil
}

// tag returns args[i] as a user tag; wildcard allows MPI_ANY_TAG.
func (rc *rankConv) tag(args []float64, i int, wildcard bool) (int32, error) {
	x := args[i]
	if wildcard && x == smpiAnyTag {
		return sched.AnyTag, nil
	}
	if x != math.Trunc(x) || x < 0 || x >= CollTagBase {
		return 0, rc.errorf("%s: tag %v: want an integer in [0, 2^30) (tags from 2^30 are the collectives')", rc.verb, x)
	}
	return int32(x), nil
}

// rank returns rank r's converter, reading from file.
func (c *converter) rank(r int, file string) *rankConv {
	rc := c.ranks[r]
	if rc == nil {
		rc = &rankConv{c: c, r: r, prev: -1, deflt: codeByte}
		c.ranks[r] = rc
	}
	rc.file = file
	return rc
}

// do converts the next action of the rank, read at line.
func (rc *rankConv) do(v verb, line int32, args []float64) error {
	rc.verb, rc.line = v, line
	return rc.action(args)
}

// action converts one action.
func (rc *rankConv) action(args []float64) error {
	switch v := rc.verb; v {
	case vInit:
		if err := rc.nargs(args, 0, 1, "[any: default datatype MPI_DOUBLE]"); err != nil {
			return err
		}
		if len(args) == 1 {
			rc.deflt = codeDouble
		}
	case vFinalize:
		return rc.nargs(args, 0, 0, "")
	case vCompute, vSleep:
		want := "flops"
		if v == vSleep {
			want = "seconds"
		}
		if err := rc.nargs(args, 1, 1, want); err != nil {
			return err
		}
		if args[0] < 0 {
			return rc.errorf("%s %v: negative", v, args[0])
		}
		if v == vCompute {
			return rc.calc(args[0]/rc.c.opts.FlopRate, "compute")
		}
		return rc.calc(args[0], "sleep")
	case vSend, vIsend, vRecv, vIrecv:
		return rc.p2p(v, args)
	case vSendRecv:
		return rc.sendRecv(args)
	case vWait, vTest:
		return rc.wait(v, args)
	case vWaitall:
		if err := rc.nargs(args, 0, 1, "[count]"); err != nil {
			return err
		}
		all := make([]uint32, 0, rc.nreq)
		for _, q := range rc.reqs {
			all = append(all, q...)
		}
		slices.Sort(all) // program order
		rc.complete(all...)
		clear(rc.reqs)
		rc.nreq = 0
	case vCommSize:
		if err := rc.nargs(args, 1, 1, "size"); err != nil {
			return err
		}
		if args[0] != float64(rc.c.n) {
			return rc.errorf("comm_size %v: the run has %d ranks; collectives on sub-communicators are not supported (TI traces do not name the communicator of a collective)", args[0], rc.c.n)
		}
	case vCommSplit, vCommDup: // SMPI's replay ignores them too (collectives always run on MPI_COMM_WORLD)
	default:
		return rc.collective(v, args)
	}
	return nil
}

// p2p converts send, isend, recv and irecv: "dst|src tag count [datatype]",
// or the older "dst|src count" (tag 0, default datatype).
func (rc *rankConv) p2p(v verb, args []float64) error {
	if err := rc.nargs(args, 2, 4, "peer tag count [datatype], or peer count"); err != nil {
		return err
	}
	recv := v == vRecv || v == vIrecv
	peer, err := rc.peer(args, 0, recv)
	if err != nil {
		return err
	}
	var tag int32
	ci, di := 2, 3
	if len(args) == 2 {
		ci, di = 1, 2
	} else if tag, err = rc.tag(args, 1, recv); err != nil {
		return err
	}
	cnt, err := rc.count(args, ci)
	if err != nil {
		return err
	}
	sz, err := rc.dtype(args, di)
	if err != nil {
		return err
	}
	op := sched.Op{Kind: sched.Send, Peer: peer, Tag: tag, Bytes: cnt * sz}
	if recv {
		op.Kind = sched.Recv
	}
	switch v {
	case vSend, vRecv:
		rc.step(op)
	case vIsend:
		rc.post(op, int64(rc.r), int64(args[0]), int64(tagKey(args, ci)))
	case vIrecv:
		rc.post(op, int64(args[0]), int64(rc.r), int64(tagKey(args, ci)))
	}
	return nil
}

// tagKey is the tag as written (0 in the old form), for matching waits.
func tagKey(args []float64, ci int) float64 {
	if ci == 1 {
		return 0
	}
	return args[1]
}

// sendRecv converts "sendRecv sendcount dst recvcount src [sendtype [recvtype]]":
// a send and a receive posted together. The trace keeps no tags; SMPI's
// replay uses tag 0 for both: the send has tag 0, the receive takes any tag.
func (rc *rankConv) sendRecv(args []float64) error {
	if err := rc.nargs(args, 4, 6, "sendcount dst recvcount src [sendtype [recvtype]]"); err != nil {
		return err
	}
	sc, err := rc.count(args, 0)
	if err != nil {
		return err
	}
	dst, err := rc.peer(args, 1, false)
	if err != nil {
		return err
	}
	rcnt, err := rc.count(args, 2)
	if err != nil {
		return err
	}
	src, err := rc.peer(args, 3, true)
	if err != nil {
		return err
	}
	ssz, err := rc.dtype(args, 4)
	if err != nil {
		return err
	}
	rsz, err := rc.dtype(args, 5)
	if err != nil {
		return err
	}
	rc.step(sched.Op{Kind: sched.Send, Peer: dst, Tag: 0, Bytes: sc * ssz},
		sched.Op{Kind: sched.Recv, Peer: src, Tag: sched.AnyTag, Bytes: rcnt * rsz})
	return nil
}

// wait converts "wait src dst tag" (the oldest outstanding request with that
// key, as SMPI's RequestStorage::pop; none: nothing, as SMPI assumes a test
// completed it), the older "wait" (the newest request, SMPI ≤ 3.14), and
// "test src dst tag" (nothing: whether a test succeeds depends on timing;
// the request stays outstanding for a later wait or waitall).
func (rc *rankConv) wait(v verb, args []float64) error {
	if len(args) != 0 && len(args) != 3 {
		return rc.errorf("%s: %d arguments, want 3 (src dst tag) or none", v, len(args))
	}
	if v == vTest {
		return nil
	}
	if rc.nreq == 0 {
		return rc.errorf("wait without an outstanding isend or irecv")
	}
	if len(args) == 0 {
		var newest reqKey
		found := false
		for k, q := range rc.reqs {
			if !found || q[len(q)-1] > rc.reqs[newest][len(rc.reqs[newest])-1] {
				newest, found = k, true
			}
		}
		rc.complete(rc.pop(newest, true))
		return nil
	}
	if k := (reqKey{int64(args[0]), int64(args[1]), int64(args[2])}); len(rc.reqs[k]) > 0 {
		rc.complete(rc.pop(k, false))
	}
	return nil
}

// finish checks that every rank reached every collective, and counts
// them in the schedule (Collectives by verb, CollRecords: one line per
// rank each).
func (c *converter) finish() error {
	for r, k := range c.count {
		if k < len(c.colls) {
			g := &c.colls[k]
			return fmt.Errorf("%s: rank %d ends after %d collectives; rank %d has %s at %s:%d",
				c.s.File, r, k, g.rank, g.verb, g.file, g.line)
		}
	}
	if len(c.colls) > 0 {
		c.s.Collectives = make(map[string]int64)
		for _, g := range c.colls {
			c.s.Collectives[g.verb.String()]++
		}
		c.s.CollRecords = int64(len(c.colls)) * int64(c.n)
	}
	return nil
}
