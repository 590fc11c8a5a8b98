package vef

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
)

// DefaultWindow is the default replay window in messages: a dependency may
// reach back at most this many message IDs, or forward fewer than this many
// (docs/model.md §5 reading: dependencies refer to nearby records; the bound keeps
// replay memory fixed).
const DefaultWindow = 1 << 18

// CollectiveHistory is how many of its own most recent collectives a task's
// collective (3) dependency may refer to.
const CollectiveHistory = 16

// MaxTasks bounds a trace's task count (the simulator's largest network).
const MaxTasks = 1 << 22

// Error is a bad-trace error: "FILE:LINE: message".
type Error struct {
	File string
	Line int64
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// ReaderOptions tunes validation.
type ReaderOptions struct {
	// Window bounds how far (in message IDs) a dependency may reach: back
	// at most Window messages, forward fewer than Window; 0 means
	// DefaultWindow.
	Window int64
}

// fwdRef is a dependency on a record that comes later in the file (a
// forward reference), kept until that record is read.
type fwdRef struct {
	line int64 // the referencing record's line
	at   int64 // messages read before the referencing record
	task int32 // the referencing record's task
	dep  Dep
}

// collRef names a forward reference to task's record in collective g, in
// the order the references were made (Reader.fwdQ).
type collRef struct {
	g    int64
	task int32
	line int64
}

type pendingOp struct {
	comm  int32
	op    Op
	n     int32
	roots int32
	line  int64
	seen  []uint64
}

// Reader streams and validates a VEF trace. It implements Source.
type Reader struct {
	name   string
	br     *bufio.Reader
	closer io.Closer
	size   int64 // bytes, 0 if unknown
	pos    int64 // bytes consumed
	line   int64
	hdr    Header
	comms  [][]int32
	pos2   []map[int32]int32 // task → rank per communicator
	window int64

	msgs, gops, grecs int64
	pending           map[int64]*pendingOp
	gring             []int64 // per task, the last CollectiveHistory G numbers it joined
	gnext             []uint8
	dsts              []int32 // receiver of message v at v % dstCap, for the last dstCap messages
	dstCap            int64   // min(window, header's messages): grown to as messages come
	long              []byte
	fields            [][]byte
	eof               bool

	// Forward references (lazy resolution): dependencies on records later
	// in the file wait here until the record is read, then are checked
	// (a receive dependency's task must receive the message; a collective
	// dependency's task must take part). Their memory is bounded like the
	// replay's: a reference must be resolved within the window. A trace
	// whose dependencies all point backwards never adds to these.
	fwdMsg   map[int64][]fwdRef         // message ID → references to it
	fwdColl  map[int64]map[int32]fwdRef // G → task → first reference to its record
	fwdQ     []collRef                  // fwdColl's references in the order made
	fwdQHead int
}

// Open opens a trace file.
func Open(path string, opts ReaderOptions) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := NewReader(f, path, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	if st, err := f.Stat(); err == nil {
		r.size = st.Size()
	}
	r.closer = f
	return r, nil
}

// NewReader reads the header and communicators from in; name is used in
// errors.
func NewReader(in io.Reader, name string, opts ReaderOptions) (*Reader, error) {
	r := &Reader{name: name, br: bufio.NewReaderSize(in, 1<<16), window: opts.Window, pending: map[int64]*pendingOp{},
		fwdMsg: map[int64][]fwdRef{}, fwdColl: map[int64]map[int32]fwdRef{}}
	if r.window <= 0 {
		r.window = DefaultWindow
	}
	if err := r.readHeader(); err != nil {
		return nil, err
	}
	return r, nil
}

// Close closes the underlying file, if Open opened it.
func (r *Reader) Close() error {
	if r.closer != nil {
		return r.closer.Close()
	}
	return nil
}

// Header returns the header as read.
func (r *Reader) Header() Header { return r.hdr }

// Name is the file name errors carry (the replayer names it too when it
// finds a dependency cycle).
func (r *Reader) Name() string { return r.name }

// Tasks implements Source.
func (r *Reader) Tasks() int { return r.hdr.Tasks }

// Comms implements Source.
func (r *Reader) Comms() [][]int32 { return r.comms }

// Progress implements Progress (by bytes read).
func (r *Reader) Progress() float64 {
	if r.size <= 0 {
		return 0
	}
	return float64(r.pos) / float64(r.size)
}

func (r *Reader) errf(format string, args ...any) error {
	return r.errAt(r.line, format, args...)
}

// errAt reports an error at another line (a header count, a reference
// resolved later).
func (r *Reader) errAt(line int64, format string, args ...any) error {
	return &Error{File: r.name, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// nextLine returns the next non-blank line split into fields; io.EOF at the end.
func (r *Reader) nextLine() error {
	for {
		b, err := r.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			r.long = append(r.long[:0], b...)
			for errors.Is(err, bufio.ErrBufferFull) {
				b, err = r.br.ReadSlice('\n')
				r.long = append(r.long, b...)
			}
			b = r.long
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("%s: %w", r.name, err)
		}
		if len(b) == 0 && err != nil {
			return io.EOF
		}
		r.pos += int64(len(b))
		r.line++
		r.fields = splitFields(r.fields[:0], b)
		if len(r.fields) > 0 {
			return nil
		}
		if err != nil {
			return io.EOF
		}
	}
}

func splitFields(dst [][]byte, b []byte) [][]byte {
	i := 0
	for i < len(b) {
		for i < len(b) && isSpace(b[i]) {
			i++
		}
		j := i
		for j < len(b) && !isSpace(b[j]) {
			j++
		}
		if j > i {
			dst = append(dst, b[i:j])
		}
		i = j
	}
	return dst
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// parseInt parses a decimal integer without allocating.
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	neg := false
	if b[0] == '-' {
		neg, b = true, b[1:]
		if len(b) == 0 {
			return 0, false
		}
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
		if v < 0 {
			return 0, false
		}
	}
	if neg {
		v = -v
	}
	return v, true
}

// parseTime reads nanoseconds with up to three decimals, returning picoseconds.
func parseTime(b []byte) (int64, bool) {
	whole, frac, hasFrac := bytes.Cut(b, []byte{'.'})
	w, ok := parseInt(whole)
	if !ok || w < 0 || (len(whole) > 0 && whole[0] == '-') {
		return 0, false
	}
	if w > math.MaxInt64/1000-1 {
		return 0, false
	}
	ps := w * 1000
	if hasFrac {
		if len(frac) == 0 || len(frac) > 3 {
			return 0, false
		}
		mult := int64(100)
		for _, c := range frac {
			if c < '0' || c > '9' {
				return 0, false
			}
			ps += int64(c-'0') * mult
			mult /= 10
		}
	}
	return ps, true
}

func (r *Reader) num(i int, what string, lo, hi int64) (int64, error) {
	v, ok := parseInt(r.fields[i])
	if !ok {
		return 0, r.errf("malformed %s %q", what, r.fields[i])
	}
	if v < lo || v > hi {
		if hi == math.MaxInt64 {
			return 0, r.errf("%s %d out of range (want ≥ %d)", what, v, lo)
		}
		return 0, r.errf("%s %d out of range [%d, %d]", what, v, lo, hi)
	}
	return v, nil
}

func (r *Reader) readHeader() error {
	if err := r.nextLine(); err != nil {
		if errors.Is(err, io.EOF) {
			r.line = 1
			return r.errf("empty trace: want a header line \"VEF <tasks> <messages> <comms> <collective ops> <collective records> <onlySend>\"")
		}
		return err
	}
	f := r.fields
	if string(f[0]) != "VEF" {
		return r.errf("want header \"VEF <tasks> <messages> <comms> <collective ops> <collective records> <onlySend>\", got %q", f[0])
	}
	if len(f) != 7 {
		return r.errf("header has %d fields, want 7 (VEF tasks messages comms collective-ops collective-records onlySend)", len(f))
	}
	tasks, err := r.num(1, "task count", 1, MaxTasks)
	if err != nil {
		return err
	}
	if r.hdr.Messages, err = r.num(2, "message count", 0, math.MaxInt64); err != nil {
		return err
	}
	comms, err := r.num(3, "communicator count", 1, 1<<20)
	if err != nil {
		return err
	}
	if r.hdr.CollOps, err = r.num(4, "collective operation count", 0, math.MaxInt64); err != nil {
		return err
	}
	if r.hdr.CollRecords, err = r.num(5, "collective record count", 0, math.MaxInt64); err != nil {
		return err
	}
	switch string(f[6]) {
	case "TRUE", "true", "1":
		r.hdr.OnlySend = true
	case "FALSE", "false", "0":
	default:
		return r.errf("malformed onlySend flag %q (want TRUE or FALSE)", f[6])
	}
	r.hdr.Tasks, r.hdr.Comms = int(tasks), int(comms)
	r.gring = make([]int64, r.hdr.Tasks*CollectiveHistory)
	for i := range r.gring {
		r.gring[i] = -1
	}
	r.gnext = make([]uint8, r.hdr.Tasks)
	r.dstCap = max(1, min(r.window, r.hdr.Messages))
	for c := 0; c < r.hdr.Comms; c++ {
		if err := r.nextLine(); err != nil {
			if errors.Is(err, io.EOF) {
				return r.errAt(1, "header says %d communicators, the trace ends after %d", r.hdr.Comms, c)
			}
			return err
		}
		want := "C" + strconv.Itoa(c)
		if string(r.fields[0]) != want {
			return r.errf("want communicator %s, got %q", want, r.fields[0])
		}
		if len(r.fields) < 2 {
			return r.errf("communicator %s has no tasks", want)
		}
		members := make([]int32, 0, len(r.fields)-1)
		pos := make(map[int32]int32, len(r.fields)-1)
		for i := 1; i < len(r.fields); i++ {
			t, err := r.num(i, "task", 0, tasks-1)
			if err != nil {
				return err
			}
			if _, dup := pos[int32(t)]; dup {
				return r.errf("communicator %s lists task %d twice", want, t)
			}
			pos[int32(t)] = int32(len(members))
			members = append(members, int32(t))
		}
		if c == 0 && len(members) != r.hdr.Tasks {
			return r.errf("C0 must be the world: it lists %d tasks, the header says %d", len(members), r.hdr.Tasks)
		}
		r.comms = append(r.comms, members)
		r.pos2 = append(r.pos2, pos)
	}
	return nil
}

// Next implements Source: it returns the next record, validated.
func (r *Reader) Next(rec *Record) error {
	if r.eof {
		return io.EOF
	}
	if err := r.nextLine(); err != nil {
		if errors.Is(err, io.EOF) {
			r.eof = true
			return r.finish()
		}
		return err
	}
	*rec = Record{Line: r.line}
	if r.fields[0][0] == 'G' {
		return r.collective(rec)
	}
	return r.message(rec)
}

// finish checks the end of the trace: references to records that never
// came (at the referencing line), the header's counts (at line 1, the
// header), and incomplete collectives (at their first record).
func (r *Reader) finish() error {
	if err := r.dangling(); err != nil {
		return err
	}
	if r.msgs != r.hdr.Messages {
		return r.errAt(1, "header says %d point-to-point messages, the trace has %d", r.hdr.Messages, r.msgs)
	}
	if r.grecs != r.hdr.CollRecords {
		return r.errAt(1, "header says %d collective records, the trace has %d", r.hdr.CollRecords, r.grecs)
	}
	if r.gops != r.hdr.CollOps {
		return r.errAt(1, "header says %d collective operations, the trace has %d", r.hdr.CollOps, r.gops)
	}
	if len(r.pending) > 0 {
		first := int64(-1)
		for g := range r.pending {
			if first < 0 || g < first {
				first = g
			}
		}
		p := r.pending[first]
		return r.errAt(p.line, "collective G%d on C%d has %d of its %d records", first, p.comm, p.n, len(r.comms[p.comm]))
	}
	return io.EOF
}

// dangling reports the first (by line) forward reference still waiting at
// the end of the trace: its record never came.
func (r *Reader) dangling() error {
	var best fwdRef
	var what string
	for v, refs := range r.fwdMsg {
		for _, f := range refs {
			if best.line == 0 || f.line < best.line {
				best, what = f, fmt.Sprintf("message %d", v)
			}
		}
	}
	for g, refs := range r.fwdColl {
		for t, f := range refs {
			if best.line == 0 || f.line < best.line {
				best, what = f, fmt.Sprintf("task %d's record in collective G%d", t, g)
			}
		}
	}
	if best.line == 0 {
		return nil
	}
	return r.errAt(best.line, "dangling dependency: %s never comes in the trace", what)
}

// dep parses the dep, time and iddep fields starting at field i of rec
// (whose Kind, ID and Src are set). A dependency on an earlier record is
// checked at once; one on a later record (a forward reference, which
// docs/model.md §5 allows) is kept and checked when that record is read (resolve,
// resolveColl), or reported as dangling at the end.
func (r *Reader) dep(rec *Record, i int) error {
	d, ok := parseInt(r.fields[i])
	if !ok {
		return r.errf("malformed dependency kind %q", r.fields[i])
	}
	if d < 0 || d > 3 {
		return r.errf("unknown dependency kind %d (want 0 absolute, 1 send, 2 receive, 3 collective)", d)
	}
	rec.Dep = Dep(d)
	t, ok := parseTime(r.fields[i+1])
	if !ok {
		return r.errf("malformed time %q (want nanoseconds ≥ 0, at most 3 decimals)", r.fields[i+1])
	}
	rec.Time = t
	id := r.fields[i+2]
	switch rec.Dep {
	case DepNone:
		v, ok := parseInt(id)
		if !ok || v != -1 {
			return r.errf("independent record (dependency 0) wants iddep -1, got %q", id)
		}
		rec.DepID = -1
	case DepSend, DepRecv:
		v, ok := parseInt(id)
		if !ok {
			return r.errf("malformed message iddep %q", id)
		}
		if v < 0 || v >= r.hdr.Messages {
			return r.errf("dangling dependency: message %d does not exist", v)
		}
		rec.DepID = v
		if rec.Kind == Message && v == rec.ID {
			return r.errf("cyclic dependency: message %d depends on itself", v)
		}
		if v >= r.msgs {
			// Forward: the replay holds this record until message v is
			// read, so v must come within the window.
			if v-r.msgs >= r.window {
				return r.errf("dependency on message %d reaches %d messages ahead, beyond the replay window of %d (raise workload.window)", v, v-r.msgs, r.window)
			}
			r.fwdMsg[v] = append(r.fwdMsg[v], fwdRef{line: r.line, at: r.msgs, task: rec.Src, dep: rec.Dep})
			return nil
		}
		if r.msgs-v > r.window {
			return r.errf("dependency on message %d reaches back %d messages, beyond the replay window of %d (raise workload.window)", v, r.msgs-v, r.window)
		}
		if rec.Dep == DepRecv {
			if dst := r.dsts[v%r.dstCap]; dst != rec.Src {
				return r.errf("task %d depends on the receipt of message %d, which task %d receives (a task can only wait for its own receives)", rec.Src, v, dst)
			}
		}
	case DepColl:
		if len(id) < 2 || id[0] != 'G' {
			return r.errf("collective dependency wants iddep G<id>, got %q", id)
		}
		v, ok := parseInt(id[1:])
		if !ok || v < 0 {
			return r.errf("malformed collective iddep %q", id)
		}
		rec.DepID = v
		if rec.Kind == Collective && v == rec.ID {
			return r.errf("cyclic dependency: G%d depends on itself", v)
		}
		if v >= r.hdr.CollOps {
			return r.errf("dangling dependency: collective G%d does not exist", v)
		}
		if r.joined(rec.Src, v) {
			return nil
		}
		p := r.pending[v]
		if v < r.gops && p == nil {
			return r.errf("task %d depends on collective G%d but has no record in it (not a member, or more than %d of its collectives back)", rec.Src, v, CollectiveHistory)
		}
		// Forward: task's record in G v comes later (the operation has
		// not started, or has started without it).
		if p != nil {
			if _, member := r.pos2[p.comm][rec.Src]; !member {
				return r.errf("task %d depends on collective G%d, which it is not part of (G%d is on C%d)", rec.Src, v, v, p.comm)
			}
		}
		refs := r.fwdColl[v]
		if refs == nil {
			refs = map[int32]fwdRef{}
			r.fwdColl[v] = refs
		}
		if _, dup := refs[rec.Src]; !dup {
			refs[rec.Src] = fwdRef{line: r.line, at: r.msgs, task: rec.Src, dep: DepColl}
			r.trimFwdQ()
			r.fwdQ = append(r.fwdQ, collRef{g: v, task: rec.Src, line: r.line})
		}
	}
	return nil
}

// trimFwdQ drops the resolved references at the head of fwdQ, so that it
// holds about as many entries as fwdColl.
func (r *Reader) trimFwdQ() {
	for r.fwdQHead < len(r.fwdQ) {
		q := r.fwdQ[r.fwdQHead]
		if f, waiting := r.fwdColl[q.g][q.task]; waiting && f.line == q.line {
			break
		}
		r.fwdQHead++
	}
	if r.fwdQHead == len(r.fwdQ) {
		r.fwdQ, r.fwdQHead = r.fwdQ[:0], 0
	} else if r.fwdQHead >= 1024 && 2*r.fwdQHead >= len(r.fwdQ) {
		r.fwdQ = append(r.fwdQ[:0], r.fwdQ[r.fwdQHead:]...)
		r.fwdQHead = 0
	}
}

// resolve checks the forward references to message id (just read, from
// src to dst), and that the oldest forward reference to a collective
// record has not waited beyond the window.
func (r *Reader) resolve(id int64, dst int32) error {
	if len(r.fwdQ) > 0 {
		r.trimFwdQ()
		if r.fwdQHead < len(r.fwdQ) {
			q := r.fwdQ[r.fwdQHead]
			if f := r.fwdColl[q.g][q.task]; id-f.at >= r.window {
				return r.errAt(f.line, "dependency on collective G%d: task %d's record in it does not come within the replay window of %d messages (raise workload.window)", q.g, q.task, r.window)
			}
		}
	}
	if len(r.fwdMsg) == 0 {
		return nil
	}
	refs, ok := r.fwdMsg[id]
	if !ok {
		return nil
	}
	delete(r.fwdMsg, id)
	for _, f := range refs {
		if f.dep == DepRecv && f.task != dst {
			return r.errAt(f.line, "task %d depends on the receipt of message %d, which task %d receives (a task can only wait for its own receives)", f.task, id, dst)
		}
	}
	return nil
}

// resolveColl: task's record in G g has been read; first is whether it
// is the operation's first record (its communicator is now known).
func (r *Reader) resolveColl(g int64, task int32, comm int64, first bool) error {
	refs := r.fwdColl[g]
	if refs == nil {
		return nil
	}
	if first {
		var bad fwdRef
		for t, f := range refs {
			if _, member := r.pos2[comm][t]; !member && (bad.line == 0 || f.line < bad.line) {
				bad = f
			}
		}
		if bad.line != 0 {
			return r.errAt(bad.line, "task %d depends on collective G%d, which it is not part of (G%d is on C%d)", bad.task, g, g, comm)
		}
	}
	delete(refs, task)
	if len(refs) == 0 {
		delete(r.fwdColl, g)
	}
	return nil
}

func (r *Reader) joined(task int32, g int64) bool {
	ring := r.gring[int(task)*CollectiveHistory : int(task+1)*CollectiveHistory]
	for _, x := range ring {
		if x == g {
			return true
		}
	}
	return false
}

func (r *Reader) message(rec *Record) error {
	if len(r.fields) != 7 {
		return r.errf("point-to-point record has %d fields, want 7 (id src dst bytes dep time iddep)", len(r.fields))
	}
	id, ok := parseInt(r.fields[0])
	if !ok {
		return r.errf("malformed message id %q", r.fields[0])
	}
	if id != r.msgs {
		return r.errf("message id %d out of order (IDs are dense from 0; want %d)", id, r.msgs)
	}
	if id >= r.hdr.Messages {
		return r.errf("more point-to-point messages than the header's %d", r.hdr.Messages)
	}
	tasks := int64(r.hdr.Tasks) - 1
	src, err := r.num(1, "source task", 0, tasks)
	if err != nil {
		return err
	}
	dst, err := r.num(2, "destination task", 0, tasks)
	if err != nil {
		return err
	}
	b, err := r.num(3, "size", 0, math.MaxInt64)
	if err != nil {
		return err
	}
	rec.Kind, rec.ID, rec.Src, rec.Dst, rec.Bytes = Message, id, int32(src), int32(dst), b
	if err := r.dep(rec, 4); err != nil {
		return err
	}
	if err := r.resolve(id, int32(dst)); err != nil {
		return err
	}
	if int64(len(r.dsts)) < r.dstCap {
		r.dsts = append(r.dsts, int32(dst)) // id == len(r.dsts)
	} else {
		r.dsts[id%r.dstCap] = int32(dst)
	}
	r.msgs++
	return nil
}

func (r *Reader) collective(rec *Record) error {
	if len(r.fields) != 9 {
		return r.errf("collective record has %d fields, want 9 (G<id> comm op task send recv dep time iddep)", len(r.fields))
	}
	g, ok := parseInt(r.fields[0][1:])
	if !ok || g < 0 {
		return r.errf("malformed collective id %q", r.fields[0])
	}
	if g > r.gops {
		return r.errf("collective G%d out of order (G numbers are dense in order of first appearance; the next new one is G%d)", g, r.gops)
	}
	if g == r.gops && g >= r.hdr.CollOps {
		return r.errf("more collective operations than the header's %d", r.hdr.CollOps)
	}
	if r.grecs >= r.hdr.CollRecords {
		return r.errf("more collective records than the header's %d", r.hdr.CollRecords)
	}
	comm, err := r.num(1, "communicator", 0, int64(len(r.comms))-1)
	if err != nil {
		return err
	}
	op, ok := parseInt(r.fields[2])
	if !ok {
		return r.errf("malformed collective op %q", r.fields[2])
	}
	if op < 0 || op >= int64(NumOps) {
		return r.errf("unknown collective op %d (want 0 bcast … 7 alltoall)", op)
	}
	task, err := r.num(3, "task", 0, int64(r.hdr.Tasks)-1)
	if err != nil {
		return err
	}
	send, err := r.num(4, "send size", 0, math.MaxInt64)
	if err != nil {
		return err
	}
	recv, err := r.num(5, "receive size", 0, math.MaxInt64)
	if err != nil {
		return err
	}
	rank, member := r.pos2[comm][int32(task)]
	if !member {
		return r.errf("task %d is not in communicator C%d", task, comm)
	}
	rec.Kind, rec.ID, rec.Comm, rec.Op, rec.Src, rec.Bytes, rec.Recv = Collective, g, int32(comm), Op(op), int32(task), send, recv
	if err := r.dep(rec, 6); err != nil {
		return err
	}
	p := r.pending[g]
	if g < r.gops && p == nil {
		return r.errf("collective G%d already has all its records", g)
	}
	if p == nil {
		size := len(r.comms[comm])
		p = &pendingOp{comm: int32(comm), op: Op(op), line: r.line, seen: make([]uint64, (size+63)/64)}
		r.pending[g] = p
		r.gops++
	} else if p.comm != int32(comm) || p.op != Op(op) {
		return r.errf("collective G%d was %s on C%d, this record says %s on C%d", g, p.op, p.comm, Op(op), comm)
	}
	if p.seen[rank/64]&(1<<(rank%64)) != 0 {
		return r.errf("task %d appears twice in collective G%d", task, g)
	}
	if err := r.checkSizes(p, rec); err != nil {
		return err
	}
	if err := r.resolveColl(g, int32(task), comm, p.n == 0); err != nil {
		return err
	}
	p.seen[rank/64] |= 1 << (rank % 64)
	p.n++
	r.grecs++
	k := r.gnext[task]
	r.gring[int(task)*CollectiveHistory+int(k)] = g
	r.gnext[task] = uint8((int(k) + 1) % CollectiveHistory)
	if int(p.n) == len(r.comms[comm]) {
		delete(r.pending, g)
	}
	return nil
}

func (r *Reader) checkSizes(p *pendingOp, rec *Record) error {
	root := false
	switch rec.Op {
	case Bcast, Scatter:
		root = rec.Bytes > 0
		if rec.Op == Bcast && rec.Bytes > 0 && rec.Recv > 0 {
			return r.errf("bcast G%d: task %d both sends and receives (the root sends X and receives 0, others send 0 and receive X)", rec.ID, rec.Src)
		}
	case Reduce, Gather:
		root = rec.Recv > 0
		if rec.Op == Reduce && rec.Bytes > 0 && rec.Recv > 0 {
			return r.errf("reduce G%d: task %d both sends and receives (the root sends 0 and receives X, others send X and receive 0)", rec.ID, rec.Src)
		}
	case Allreduce:
		if rec.Bytes != rec.Recv {
			return r.errf("allreduce G%d: send size %d ≠ receive size %d", rec.ID, rec.Bytes, rec.Recv)
		}
	case Alltoall:
		if rec.Recv != 0 && rec.Recv != 1 {
			return r.errf("alltoall G%d: receive field %d (want 0, or 1 for vectorial)", rec.ID, rec.Recv)
		}
	}
	if root {
		p.roots++
		if p.roots > 1 {
			return r.errf("%s G%d has more than one root (task %d is the second)", rec.Op, rec.ID, rec.Src)
		}
	}
	return nil
}
