package replay

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"strings"
	"unicode/utf8"
)

// spoolMemory is how much a Spool keeps in memory before it moves to a
// temporary file.
const spoolMemory = 1 << 20

// Spool collects output so that nothing is printed unless the whole
// input was read without error: up to spoolMemory bytes in
// memory, the rest in a temporary file (os.TempDir), so that a long
// --trace costs disk, not memory. Close removes the file.
type Spool struct {
	mem  bytes.Buffer
	file *os.File
	bw   *bufio.Writer
}

func (s *Spool) Write(p []byte) (int, error) {
	if s.file == nil && s.mem.Len()+len(p) <= spoolMemory {
		return s.mem.Write(p)
	}
	if s.file == nil {
		f, err := os.CreateTemp("", "lpictl-output-*")
		if err != nil {
			return 0, err
		}
		// Unlinked at once: the open file is ours alone and goes away
		// with the process, whatever happens.
		_ = os.Remove(f.Name())
		s.file, s.bw = f, bufio.NewWriterSize(f, 64<<10)
		if _, err := s.mem.WriteTo(s.bw); err != nil {
			return 0, err
		}
	}
	return s.bw.Write(p)
}

// WriteTo copies everything written so far to w.
func (s *Spool) WriteTo(w io.Writer) (int64, error) {
	if s.file == nil {
		return s.mem.WriteTo(w)
	}
	if err := s.bw.Flush(); err != nil {
		return 0, err
	}
	if _, err := s.file.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	return io.Copy(w, s.file)
}

// Close releases the temporary file, if any.
func (s *Spool) Close() error {
	if s.file == nil {
		return nil
	}
	f := s.file
	s.file, s.bw = nil, nil
	s.mem.Reset()
	return f.Close()
}

// TraceTable is a table of right-aligned columns, as a text/tabwriter
// with AlignRight and padding 2 writes cells terminated by tabs, for any
// number of rows: the rows go to a Spool as they come, with each column's
// widest cell noted, and are aligned as WriteTo copies them (the
// tabwriter keeps every cell in memory until it flushes). It is lpictl
// predict's --trace table: ReplayInput's row callback is its Row.
type TraceTable struct {
	rows   Spool
	widths []int
	err    error
}

// Row adds a row of cells (no cell may hold a tab or a newline).
func (t *TraceTable) Row(cells ...string) {
	if t.err != nil {
		return
	}
	for i, c := range cells {
		if i == len(t.widths) {
			t.widths = append(t.widths, 0)
		}
		t.widths[i] = max(t.widths[i], utf8.RuneCountInString(c))
	}
	_, t.err = io.WriteString(&t.rows, strings.Join(cells, "\t")+"\n")
}

// WriteTo writes the aligned rows to w and releases the Spool.
func (t *TraceTable) WriteTo(w io.Writer) (int64, error) {
	defer t.rows.Close()
	if t.err != nil {
		return 0, t.err
	}
	pr, pw := io.Pipe()
	go func() {
		_, err := t.rows.WriteTo(pw)
		pw.CloseWithError(err)
	}()
	defer pr.Close()
	sc := bufio.NewScanner(pr)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	bw := bufio.NewWriter(w)
	var n int64
	for sc.Scan() {
		for i, c := range strings.Split(sc.Text(), "\t") {
			pad := t.widths[i] + 2 - utf8.RuneCountInString(c)
			k, _ := bw.WriteString(strings.Repeat(" ", pad) + c)
			n += int64(k)
		}
		k, _ := bw.WriteString("\n")
		n += int64(k)
	}
	if err := sc.Err(); err != nil {
		return n, err
	}
	return n, bw.Flush()
}

// Close releases the Spool without writing (WriteTo releases it too).
func (t *TraceTable) Close() error { return t.rows.Close() }
