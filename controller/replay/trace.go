package replay

import (
	"bytes"
	"io"
	"strconv"
	"strings"
)

// TraceHeader is the first content line of a simulator port trace
// (port_trace.csv, written with `output.idle_hist_port`).
const TraceHeader = "start_ps,gap_ps,pdt_ps,outcome,delay_ps,sent"

// MaxHops is the largest hop count a port trace may give (the simulator's
// hop counts are bytes).
const MaxHops = 255

// TraceRow is one idle period of a port trace, as the simulator saw it.
type TraceRow struct {
	Line  int // line in the trace file
	Start PS  // start_ps: the output queue emptied after its last bit
	Gap   PS  // gap_ps: the idle period's length (> 0)
	// PDT is pdt_ps, the t_PDT the simulator armed (a whole number of ns),
	// or Never for a port that never sleeps.
	PDT    PS
	Missed bool // outcome: miss (true) or hit
	Delay  PS   // delay_ps: how long the packet that ended the period waited
	// Sent holds the packets the port sent since its previous idle period
	// ended (since time 0 for the first row), by hop count, ascending and
	// without repeats. The controller saw them before deciding t_PDT.
	Sent []HopCount
}

// End is when the idle period ended (Start + Gap).
func (r *TraceRow) End() PS { return r.Start + r.Gap }

// HopCount is a number of packets that travel Hops hops.
type HopCount struct {
	Hops    int
	Packets uint64
}

// ReadTrace streams the rows of a port trace from r. The first content
// line must be TraceHeader; blank lines and everything after '#' are
// ignored. Each row has six comma-separated fields:
//
//	start_ps  integer ≥ 0
//	gap_ps    integer > 0; start_ps + gap_ps ≤ MaxTime
//	pdt_ps    −1 (never sleeps) or an integer ≥ 0, a multiple of 1000
//	outcome   hit or miss
//	delay_ps  integer ≥ 0
//	sent      HOPS:COUNT pairs separated by single spaces, HOPS in
//	          0..MaxHops strictly ascending, COUNT ≥ 1; empty for none
//
// and a row may not start before the previous one ended (start_ps ≥ the
// previous start_ps + gap_ps). fn is called for each row; row.Sent is
// only valid during the call. An error from fn stops the read and is
// returned as is; a malformed line yields "NAME:LINE: …".
func ReadTrace(r io.Reader, name string, fn func(TraceRow) error) error {
	l := newLines(r, name)
	first, ok := l.next()
	if !ok {
		if err := l.err(); err != nil {
			return err
		}
		return l.errorf("empty port trace: want the header %s", TraceHeader)
	}
	if first != TraceHeader {
		return l.errorf("want the port trace header %s, got %q", TraceHeader, first)
	}
	return readTrace(l, fn)
}

// TraceRoundPrefix starts a comment line of a port trace written by an
// agent in enforce mode: when one of its rounds gave the port its timer
// (after reading its idle periods, the time the write landed), in ns on
// the rows' clock.
const TraceRoundPrefix = "# round: "

// TraceRounds is the round lines of a port trace, in ps, in the order
// written (ascending: an agent's clock does not go back); lines that do
// not parse are left out, as other comments are.
func TraceRounds(raw []byte) []PS {
	var out []PS
	for line := range bytes.Lines(raw) {
		rest, ok := bytes.CutPrefix(line, []byte(TraceRoundPrefix))
		if !ok {
			continue
		}
		ns, err := strconv.ParseInt(string(bytes.TrimSpace(rest)), 10, 64)
		if err != nil || ns < 0 || ns > int64(MaxTime/1000) {
			continue
		}
		if at := PS(ns) * 1000; len(out) == 0 || at >= out[len(out)-1] {
			out = append(out, at)
		}
	}
	return out
}

// ParseTrace reads a whole port trace (see ReadTrace).
func ParseTrace(r io.Reader, name string) ([]TraceRow, error) {
	var rows []TraceRow
	err := ReadTrace(r, name, func(row TraceRow) error {
		row.Sent = append([]HopCount(nil), row.Sent...)
		rows = append(rows, row)
		return nil
	})
	return rows, err
}

// readTrace reads the rows after the header.
func readTrace(l *lines, fn func(TraceRow) error) error {
	var (
		sent     []HopCount
		prevEnd  PS
		prevLine int
	)
	for text, ok := l.next(); ok; text, ok = l.next() {
		row, err := parseRow(l, text, sent[:0])
		if err != nil {
			return err
		}
		if row.Start < prevEnd {
			return l.errorf("start_ps %d is before the end of the previous idle period (%d, line %d): rows must be in order and not overlap",
				row.Start, prevEnd, prevLine)
		}
		prevEnd, prevLine, sent = row.End(), l.n, row.Sent
		if err := fn(row); err != nil {
			return err
		}
	}
	return l.err()
}

func parseRow(l *lines, text string, sent []HopCount) (TraceRow, error) {
	row := TraceRow{Line: l.n}
	f := strings.Split(text, ",")
	if len(f) != 6 {
		return row, l.errorf("want 6 comma-separated fields (%s), got %d", TraceHeader, len(f))
	}
	integer := func(field, s string) (PS, error) {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, l.errorf("%s: want an integer number of picoseconds, got %q", field, s)
		}
		return PS(v), nil
	}
	var err error
	if row.Start, err = integer("start_ps", f[0]); err != nil {
		return row, err
	}
	if row.Start < 0 {
		return row, l.errorf("start_ps: must be ≥ 0, got %d", row.Start)
	}
	if row.Gap, err = integer("gap_ps", f[1]); err != nil {
		return row, err
	}
	if row.Gap <= 0 {
		return row, l.errorf("gap_ps: must be > 0 (back-to-back packets leave no idle period), got %d", row.Gap)
	}
	if _, ok := add(row.Start, row.Gap); !ok {
		return row, l.errorf("start_ps + gap_ps overflows the picosecond clock (at most %d)", MaxTime)
	}
	if row.PDT, err = integer("pdt_ps", f[2]); err != nil {
		return row, err
	}
	if row.PDT != Never && (row.PDT < 0 || row.PDT%1000 != 0) {
		return row, l.errorf("pdt_ps: want -1 (never sleeps) or a whole number of nanoseconds in ps (a multiple of 1000), got %d", row.PDT)
	}
	switch f[3] {
	case "hit":
	case "miss":
		row.Missed = true
	default:
		return row, l.errorf("outcome: want hit or miss, got %q", f[3])
	}
	if row.Delay, err = integer("delay_ps", f[4]); err != nil {
		return row, err
	}
	if row.Delay < 0 {
		return row, l.errorf("delay_ps: must be ≥ 0, got %d", row.Delay)
	}
	if f[5] != "" {
		for _, pair := range strings.Split(f[5], " ") {
			hs, cs, ok := strings.Cut(pair, ":")
			h, herr := strconv.Atoi(hs)
			c, cerr := strconv.ParseUint(cs, 10, 64)
			if !ok || herr != nil || cerr != nil || h < 0 || h > MaxHops || c == 0 {
				return row, l.errorf("sent: want HOPS:COUNT pairs (hops 0..%d, count ≥ 1) separated by single spaces, got %q", MaxHops, pair)
			}
			if len(sent) > 0 && h <= sent[len(sent)-1].Hops {
				return row, l.errorf("sent: hop counts must be ascending without repeats, got %d after %d", h, sent[len(sent)-1].Hops)
			}
			sent = append(sent, HopCount{Hops: h, Packets: c})
		}
	}
	row.Sent = sent
	return row, nil
}
