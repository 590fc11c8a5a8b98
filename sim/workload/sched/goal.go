package sched

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// The textual GOAL schedule, as LogGOPSim's txt2bin reads it (the re2c
// scanner in spcl/LogGOPSim, src/LogGOPSim/txt2bin.re; Schedgen2's goal.py
// writes the same form). One statement a line:
//
//	num_ranks N
//	rank R {
//	  [LABEL:] send SIZEb to R [tag T] [cpu C] [nic N]
//	  [LABEL:] recv SIZEb from R|-1 [tag T|-1] [cpu C] [nic N]
//	  [LABEL:] calc N [cpu C]
//	  LABEL requires LABEL
//	  LABEL irequires LABEL
//	}
//
// Comments are // to the end of the line and /* … */. Sizes are bytes with
// the unit "b" (8b, or 8 b). calc is a time in ns: LogGOPSim's clock and its
// L, o, g parameters are ns, and a local operation lasts its "size" on it.
// "-1" is the wildcard of a receive's source and tag. "a requires b": a
// starts once b has completed; "a irequires b": once b has started. Labels
// ([a-zA-Z][a-zA-Z0-9_]*) are per rank block.
//
// Where this reader differs from txt2bin: a dependency may name a label
// defined later in the same block (txt2bin needs it defined before); a
// rank block may appear at most once; a send's tag cannot be -1; cpu and
// nic are read and ignored (one CPU and one NIC per rank); calc's ns are
// kept in ps (×1000).

// MaxGOALRanks bounds num_ranks (the schedule holds every rank).
const MaxGOALRanks = 1 << 21

type tokKind uint8

const (
	tIdent tokKind = iota + 1
	tInt
	tColon
	tLBrace
	tRBrace
)

type token struct {
	kind tokKind
	text string
}

func (t token) String() string { return strconv.Quote(t.text) }

// goalParser reads one GOAL file.
type goalParser struct {
	name string
	line int64
	s    *Schedule

	numRanks  int64 // -1: not given yet
	seen      []bool
	inBlock   bool
	rank      int
	blockLine int64

	// the open block's ops, labels and dependencies (resolved at "}")
	ops    []Op
	labels map[string]uint32
	deps   []goalDep

	inComment bool
	toks      []token
}

type goalDep struct {
	from, to string
	start    bool
	line     int64
}

// ParseGOAL reads a textual GOAL schedule from r; name is the file's name
// for errors ("NAME:LINE: …"). The schedule is validated.
func ParseGOAL(r io.Reader, name string) (*Schedule, error) {
	p := &goalParser{name: name, s: &Schedule{File: name}, numRanks: -1, labels: make(map[string]uint32)}
	br := bufio.NewReaderSize(r, 1<<16)
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, &Error{File: name, Line: p.line + 1, Msg: fmt.Sprintf("line longer than %d KiB: not a GOAL schedule", br.Size()>>10)}
		}
		text := string(line)
		if len(text) > 0 {
			p.line++
			if perr := p.parseLine(text); perr != nil {
				return nil, perr
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: read: %w", name, err)
		}
	}
	if p.inBlock {
		return nil, p.errf("rank %d block opened at line %d is not closed with \"}\"", p.rank, p.blockLine)
	}
	if p.numRanks < 0 {
		return nil, &Error{File: name, Msg: "no \"num_ranks N\" line"}
	}
	if err := p.s.Validate(); err != nil {
		return nil, err
	}
	return p.s, nil
}

func (p *goalParser) errf(format string, args ...any) error {
	return &Error{File: p.name, Line: max(p.line, 1), Msg: fmt.Sprintf(format, args...)}
}

// tokenize splits a line into tokens, dropping comments.
func (p *goalParser) tokenize(text string) error {
	p.toks = p.toks[:0]
	i := 0
	for i < len(text) {
		c := text[i]
		if p.inComment {
			if c == '*' && i+1 < len(text) && text[i+1] == '/' {
				p.inComment = false
				i += 2
				continue
			}
			i++
			continue
		}
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			i++
		case c == '/' && i+1 < len(text) && text[i+1] == '/':
			return nil
		case c == '/' && i+1 < len(text) && text[i+1] == '*':
			p.inComment = true
			i += 2
		case c == ':':
			p.toks = append(p.toks, token{tColon, ":"})
			i++
		case c == '{':
			p.toks = append(p.toks, token{tLBrace, "{"})
			i++
		case c == '}':
			p.toks = append(p.toks, token{tRBrace, "}"})
			i++
		case isLetter(c):
			j := i + 1
			for j < len(text) && (isLetter(text[j]) || isDigit(text[j]) || text[j] == '_') {
				j++
			}
			p.toks = append(p.toks, token{tIdent, text[i:j]})
			i = j
		case isDigit(c) || (c == '-' && i+1 < len(text) && isDigit(text[i+1])):
			j := i + 1
			for j < len(text) && isDigit(text[j]) {
				j++
			}
			p.toks = append(p.toks, token{tInt, text[i:j]})
			i = j
		default:
			return p.errf("unexpected character %q", rune(c))
		}
	}
	return nil
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

// cursor walks the tokens of a line.
type cursor struct {
	p    *goalParser
	toks []token
	i    int
}

func (c *cursor) more() bool { return c.i < len(c.toks) }

// endOfStatement: the line ends here or a "}" follows.
func (c *cursor) endOfStatement() bool { return !c.more() || c.toks[c.i].kind == tRBrace }

func (c *cursor) peek() token { return c.toks[c.i] }

func (c *cursor) next() token {
	t := c.toks[c.i]
	c.i++
	return t
}

// expect reads a token of kind k described as what.
func (c *cursor) expect(k tokKind, what string) (token, error) {
	if !c.more() {
		return token{}, c.p.errf("expected %s, got the end of the line", what)
	}
	t := c.next()
	if t.kind != k {
		return token{}, c.p.errf("expected %s, got %v", what, t)
	}
	return t, nil
}

// keyword reads the identifier kw.
func (c *cursor) keyword(kw string) error {
	if !c.more() {
		return c.p.errf("expected %q, got the end of the line", kw)
	}
	t := c.next()
	if t.kind != tIdent || t.text != kw {
		return c.p.errf("expected %q, got %v", kw, t)
	}
	return nil
}

// integer reads an integer in [lo, hi] described as what.
func (c *cursor) integer(what string, lo, hi int64) (int64, error) {
	t, err := c.expect(tInt, what)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(t.text, 10, 64)
	if err != nil || v < lo || v > hi {
		return 0, c.p.errf("%s %v: out of range [%d, %d]", what, t, lo, hi)
	}
	return v, nil
}

func (p *goalParser) parseLine(text string) error {
	if err := p.tokenize(text); err != nil {
		return err
	}
	c := &cursor{p: p, toks: p.toks}
	for c.more() {
		if err := p.statement(c); err != nil {
			return err
		}
	}
	return nil
}

// statement reads one statement at c.
func (p *goalParser) statement(c *cursor) error {
	t := c.next()
	switch t.kind {
	case tRBrace:
		if !p.inBlock {
			return p.errf("\"}\" outside a rank block")
		}
		return p.closeBlock()
	case tIdent:
	default:
		return p.errf("expected \"num_ranks\", \"rank\", an operation, a label or \"}\", got %v", t)
	}
	switch t.text {
	case "num_ranks":
		if p.inBlock {
			return p.errf("\"num_ranks\" inside the rank %d block", p.rank)
		}
		if p.numRanks >= 0 {
			return p.errf("\"num_ranks\" given twice")
		}
		n, err := c.integer("num_ranks", 1, MaxGOALRanks)
		if err != nil {
			return err
		}
		p.numRanks = n
		p.s.Ranks = make([]Rank, n)
		p.seen = make([]bool, n)
		return nil
	case "rank":
		if p.inBlock {
			return p.errf("\"rank\" inside the rank %d block (missing \"}\"?)", p.rank)
		}
		if p.numRanks < 0 {
			return p.errf("\"rank\" before \"num_ranks\"")
		}
		r, err := c.integer("rank", 0, p.numRanks-1)
		if err != nil {
			return err
		}
		if _, err := c.expect(tLBrace, "\"{\""); err != nil {
			return err
		}
		if p.seen[r] {
			return p.errf("rank %d: a second block", r)
		}
		p.seen[r] = true
		p.inBlock, p.rank, p.blockLine = true, int(r), p.line
		return nil
	case "send", "recv", "calc":
		c.i--
		return p.op(c, "")
	}
	// a label: "LABEL: op" or "LABEL requires|irequires LABEL"
	if !p.inBlock {
		return p.errf("%v outside a rank block", t)
	}
	if !c.more() {
		return p.errf("expected \":\", \"requires\" or \"irequires\" after %v, got the end of the line", t)
	}
	n := c.next()
	switch {
	case n.kind == tColon:
		return p.op(c, t.text)
	case n.kind == tIdent && (n.text == "requires" || n.text == "irequires"):
		to, err := c.expect(tIdent, "a label")
		if err != nil {
			return err
		}
		if !c.endOfStatement() {
			return p.errf("unexpected %v after the dependency", c.peek())
		}
		p.deps = append(p.deps, goalDep{from: t.text, to: to.text, start: n.text == "irequires", line: p.line})
		return nil
	}
	return p.errf("expected \":\", \"requires\" or \"irequires\" after %v, got %v", t, n)
}

// op reads "send|recv|calc …" with its label.
func (p *goalParser) op(c *cursor, label string) error {
	if !p.inBlock {
		return p.errf("operation outside a rank block")
	}
	kw, err := c.expect(tIdent, "\"send\", \"recv\" or \"calc\"")
	if err != nil {
		return err
	}
	op := Op{Line: int32(min(p.line, math.MaxInt32))}
	switch kw.text {
	case "calc":
		op.Kind = Calc
		ns, err := c.integer("calc time (ns)", 0, math.MaxInt64/1000)
		if err != nil {
			return err
		}
		op.Time = ns * 1000
		if err := p.options(c, false); err != nil {
			return err
		}
	case "send", "recv":
		op.Kind, op.Tag = Send, 0
		dir, lo := "to", int64(0)
		if kw.text == "recv" {
			op.Kind, dir, lo = Recv, "from", -1
		}
		if op.Bytes, err = c.integer("size", 0, math.MaxInt64); err != nil {
			return err
		}
		if err := c.keyword("b"); err != nil {
			return err
		}
		if err := c.keyword(dir); err != nil {
			return err
		}
		peer, err := c.integer("rank", lo, math.MaxInt32)
		if err != nil {
			return err
		}
		op.Peer = int32(peer)
		if c.more() && c.peek().kind == tIdent && c.peek().text == "tag" {
			c.next()
			tag, err := c.integer("tag", lo, math.MaxInt32)
			if err != nil {
				return err
			}
			op.Tag = int32(tag)
		}
		if err := p.options(c, true); err != nil {
			return err
		}
	default:
		return p.errf("expected \"send\", \"recv\" or \"calc\", got %v", kw)
	}
	if label != "" {
		if _, dup := p.labels[label]; dup {
			return p.errf("label %q defined twice in rank %d", label, p.rank)
		}
		p.labels[label] = uint32(len(p.ops))
	}
	if len(p.ops) == math.MaxUint32 {
		return p.errf("rank %d: too many operations", p.rank)
	}
	p.ops = append(p.ops, op)
	return nil
}

// options reads the trailing "cpu C" and (for messages) "nic N", then the
// end of the statement.
func (p *goalParser) options(c *cursor, nic bool) error {
	for _, kw := range []string{"cpu", "nic"} {
		if kw == "nic" && !nic {
			break
		}
		if c.more() && c.peek().kind == tIdent && c.peek().text == kw {
			c.next()
			if _, err := c.integer(kw, 0, math.MaxInt32); err != nil {
				return err
			}
		}
	}
	if !c.endOfStatement() {
		return p.errf("unexpected %v at the end of the operation", c.peek())
	}
	return nil
}

// closeBlock resolves the block's dependencies and adds its ops.
func (p *goalParser) closeBlock() error {
	n := len(p.ops)
	count := make([]uint32, n+1)
	type resolved struct{ from, to uint32 }
	res := make([]resolved, len(p.deps))
	for k, d := range p.deps {
		from, ok := p.labels[d.from]
		if !ok {
			return &Error{File: p.name, Line: d.line, Msg: fmt.Sprintf("rank %d: label %q is not defined in the block", p.rank, d.from)}
		}
		to, ok := p.labels[d.to]
		if !ok {
			return &Error{File: p.name, Line: d.line, Msg: fmt.Sprintf("rank %d: label %q is not defined in the block", p.rank, d.to)}
		}
		res[k] = resolved{from, to}
		count[from+1]++
	}
	for i := 1; i <= n; i++ {
		count[i] += count[i-1]
	}
	deps := make([]Dep, len(res))
	fill := make([]uint32, n)
	copy(fill, count[:n])
	for k, d := range res {
		deps[fill[d.from]] = Dep{Op: d.to, Start: p.deps[k].start}
		fill[d.from]++
	}
	rk := &p.s.Ranks[p.rank]
	rk.Ops = append(rk.Ops, p.ops...)
	rk.Deps = deps
	if len(p.labels) > 0 {
		rk.Labels = make(map[uint32]string, len(p.labels))
		for l, i := range p.labels {
			rk.Labels[i] = l
		}
	}
	for i := range rk.Ops {
		rk.Ops[i].DepFrom, rk.Ops[i].DepTo = count[i], count[i+1]
	}
	p.ops = p.ops[:0]
	p.deps = p.deps[:0]
	clear(p.labels)
	p.inBlock = false
	return nil
}

// WriteGOAL writes s as a textual GOAL schedule that ParseGOAL reads back
// to the same operations and dependencies (labels are l0, l1, … per rank;
// NonBlocking and Line are not written: GOAL has no place for them). A
// Calc's time must be a whole number of ns.
func WriteGOAL(w io.Writer, s *Schedule) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	fmt.Fprintf(bw, "num_ranks %d\n", len(s.Ranks))
	for r := range s.Ranks {
		rk := &s.Ranks[r]
		if len(rk.Ops) == 0 {
			continue
		}
		fmt.Fprintf(bw, "\nrank %d {\n", r)
		for i := range rk.Ops {
			op := &rk.Ops[i]
			switch op.Kind {
			case Send:
				fmt.Fprintf(bw, "l%d: send %db to %d tag %d\n", i, op.Bytes, op.Peer, op.Tag)
			case Recv:
				fmt.Fprintf(bw, "l%d: recv %db from %d tag %d\n", i, op.Bytes, op.Peer, op.Tag)
			case Calc:
				if op.Time%1000 != 0 {
					return s.errOp(r, uint32(i), "calc time %d ps is not a whole number of ns (GOAL calc is in ns)", op.Time)
				}
				fmt.Fprintf(bw, "l%d: calc %d\n", i, op.Time/1000)
			default:
				return s.errOp(r, uint32(i), "unknown kind %d", uint8(op.Kind))
			}
		}
		for i := range rk.Ops {
			op := &rk.Ops[i]
			if op.DepFrom > op.DepTo || int(op.DepTo) > len(rk.Deps) {
				return s.errOp(r, uint32(i), "dependencies [%d, %d) outside the rank's %d", op.DepFrom, op.DepTo, len(rk.Deps))
			}
			for _, d := range rk.Deps[op.DepFrom:op.DepTo] {
				verb := "requires"
				if d.Start {
					verb = "irequires"
				}
				fmt.Fprintf(bw, "l%d %s l%d\n", i, verb, d.Op)
			}
		}
		bw.WriteString("}\n")
	}
	return bw.Flush()
}
