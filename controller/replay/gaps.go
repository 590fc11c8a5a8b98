package replay

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/lpictl/lpictl/predictor"
)

// maxLine bounds an input line's length (a gap or a trace row is a few
// dozen characters; a longer line is surely not a replay input).
const maxLine = 64 << 10

// Format is what a replay input holds.
type Format int

// Replay input formats.
const (
	// FormatGaps is a gap file: one idle period length per line.
	FormatGaps Format = iota
	// FormatTrace is a simulator port trace (port_trace.csv, TraceHeader).
	FormatTrace
)

func (f Format) String() string {
	if f == FormatTrace {
		return "port trace"
	}
	return "gap file"
}

// bom is the UTF-8 byte order mark some editors write at the start of a
// file; it is no content.
const bom = "\ufeff"

// StripBOM returns b without a leading UTF-8 byte order mark.
func StripBOM(b []byte) []byte { return bytes.TrimPrefix(b, []byte(bom)) }

// lines reads an input's content lines: everything after '#' is a
// comment, surrounding white space is dropped and blank lines are skipped.
type lines struct {
	sc   *bufio.Scanner
	name string
	n    int // number of the line last read
}

func newLines(r io.Reader, name string) *lines {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	return &lines{sc: sc, name: name}
}

// next returns the next content line, or false at the end or on a read
// error (see err).
func (l *lines) next() (string, bool) {
	for l.sc.Scan() {
		l.n++
		text := l.sc.Text()
		if l.n == 1 {
			text = strings.TrimPrefix(text, bom) // an editor's UTF-8 byte order mark
		}
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		if text = strings.TrimSpace(text); text != "" {
			return text, true
		}
	}
	return "", false
}

// errorf returns "NAME:LINE: …" for the line last read.
func (l *lines) errorf(format string, args ...any) error {
	return fmt.Errorf("%s:%d: "+format, append([]any{l.name, l.n}, args...)...)
}

func (l *lines) err() error {
	if err := l.sc.Err(); err != nil {
		if err == bufio.ErrTooLong {
			return fmt.Errorf("%s:%d: line longer than %d bytes", l.name, l.n+1, maxLine)
		}
		return fmt.Errorf("%s: %w", l.name, err)
	}
	return nil
}

// ReadGaps streams idle periods from r: one per line, as "12.5us", "3ms",
// "1s" or plain nanoseconds; blank lines and everything after '#' are
// ignored. fn is called for each gap with its line number; an error from
// fn stops the read and is returned as is. A malformed line yields
// "NAME:LINE: …". A gap of 0 is passed on: it is Replayer.Gap that skips
// it (docs/model.md §1.1).
func ReadGaps(r io.Reader, name string, fn func(line int, gap time.Duration) error) error {
	l := newLines(r, name)
	return readGaps(l, "", false, fn)
}

// readGaps reads l's gaps, starting with first if has.
func readGaps(l *lines, first string, has bool, fn func(line int, gap time.Duration) error) error {
	text, ok := first, has
	if !ok {
		text, ok = l.next()
	}
	for ; ok; text, ok = l.next() {
		d, err := ParseGap(text)
		if err != nil {
			return l.errorf("%w", err)
		}
		if err := fn(l.n, d); err != nil {
			return err
		}
	}
	return l.err()
}

// ParseGap reads one idle period of a gap file: a duration with its unit
// ("12.5us", "3ms", "1s") or a plain number of nanoseconds. Anything with
// a minus sign is refused as negative ("-0.4" and "-0.4ns" alike, though
// the latter rounds to 0), and a plain integer is read exactly (not
// through float64, which rounds above 2^53 ns).
func ParseGap(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "-") {
		return 0, fmt.Errorf("negative duration %q", s)
	}
	if digits := strings.TrimPrefix(s, "+"); digits != "" && strings.Trim(digits, "0123456789") == "" {
		v, err := strconv.ParseInt(digits, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("gap %q out of range (at most %d ns)", s, int64(math.MaxInt64))
		}
		return time.Duration(v), nil
	}
	return predictor.ParseDuration(s)
}

// Read reads a replay input of either format: a port trace if its first
// content line is TraceHeader (see ReadTrace), a gap file otherwise (see
// ReadGaps). It calls gap for each gap of a gap file or row for each row
// of a port trace, and returns the format it found (FormatGaps for an input
// without content).
func Read(r io.Reader, name string, gap func(line int, gap time.Duration) error, row func(TraceRow) error) (Format, error) {
	l := newLines(r, name)
	first, ok := l.next()
	if ok && first == TraceHeader {
		return FormatTrace, readTrace(l, row)
	}
	if !ok {
		return FormatGaps, l.err()
	}
	return FormatGaps, readGaps(l, first, true, gap)
}
