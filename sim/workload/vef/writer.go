package vef

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/google/renameio/v2"
)

// Writer writes the canonical text form of a trace: single spaces, "\n"
// line ends, times in nanoseconds with the fraction trimmed (up to three
// decimals), onlySend as TRUE or FALSE.
type Writer struct {
	w   *bufio.Writer
	buf []byte
}

// NewWriter returns a Writer on w. Call WriteHeader once, then Write for
// each record, then Flush.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: bufio.NewWriterSize(w, 1<<16), buf: make([]byte, 0, 256)}
}

// WriteHeader writes the header line and the communicators.
func (w *Writer) WriteHeader(h Header, comms [][]int32) error {
	if len(comms) != h.Comms {
		return fmt.Errorf("vef: header says %d communicators, got %d", h.Comms, len(comms))
	}
	b := append(w.buf[:0], "VEF "...)
	b = strconv.AppendInt(b, int64(h.Tasks), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, h.Messages, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(h.Comms), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, h.CollOps, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, h.CollRecords, 10)
	if h.OnlySend {
		b = append(b, " TRUE\n"...)
	} else {
		b = append(b, " FALSE\n"...)
	}
	if _, err := w.w.Write(b); err != nil {
		return err
	}
	for i, c := range comms {
		b = append(b[:0], 'C')
		b = strconv.AppendInt(b, int64(i), 10)
		for _, t := range c {
			b = append(b, ' ')
			b = strconv.AppendInt(b, int64(t), 10)
		}
		b = append(b, '\n')
		if _, err := w.w.Write(b); err != nil {
			return err
		}
	}
	w.buf = b
	return nil
}

// AppendTime appends ps as nanoseconds with up to three decimals.
func AppendTime(b []byte, ps int64) []byte {
	b = strconv.AppendInt(b, ps/1000, 10)
	if f := ps % 1000; f != 0 {
		b = append(b, '.', byte('0'+f/100))
		if f%100 != 0 {
			b = append(b, byte('0'+f/10%10))
			if f%10 != 0 {
				b = append(b, byte('0'+f%10))
			}
		}
	}
	return b
}

// Write writes one record.
func (w *Writer) Write(r *Record) error {
	b := w.buf[:0]
	if r.Kind == Collective {
		b = append(b, 'G')
		b = strconv.AppendInt(b, r.ID, 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(r.Comm), 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(r.Op), 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(r.Src), 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, r.Bytes, 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, r.Recv, 10)
	} else {
		b = strconv.AppendInt(b, r.ID, 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(r.Src), 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(r.Dst), 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, r.Bytes, 10)
	}
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(r.Dep), 10)
	b = append(b, ' ')
	b = AppendTime(b, r.Time)
	b = append(b, ' ')
	switch r.Dep {
	case DepNone:
		b = append(b, "-1"...)
	case DepColl:
		b = append(b, 'G')
		b = strconv.AppendInt(b, r.DepID, 10)
	default:
		b = strconv.AppendInt(b, r.DepID, 10)
	}
	b = append(b, '\n')
	w.buf = b
	_, err := w.w.Write(b)
	return err
}

// Flush flushes buffered output.
func (w *Writer) Flush() error { return w.w.Flush() }

// WriteAll writes a whole trace: it scans one source for the header and
// copies a second, fresh source of the same stream (open is called twice).
func WriteAll(out io.Writer, open func() (Source, error)) (Header, error) {
	src, err := open()
	if err != nil {
		return Header{}, err
	}
	h, err := Scan(src)
	closeSource(src)
	if err != nil {
		return h, err
	}
	if src, err = open(); err != nil {
		return h, err
	}
	defer closeSource(src)
	w := NewWriter(out)
	if err := w.WriteHeader(h, src.Comms()); err != nil {
		return h, err
	}
	var r Record
	for {
		err := src.Next(&r)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return h, err
		}
		if err := w.Write(&r); err != nil {
			return h, err
		}
	}
	return h, w.Flush()
}

func closeSource(s Source) {
	if c, ok := s.(io.Closer); ok {
		c.Close()
	}
}

// WriteFile writes the trace of open to path atomically (renameio: a
// temporary file in the same folder, renamed into place), so a failed
// export leaves nothing behind.
func WriteFile(path string, open func() (Source, error)) (Header, error) {
	pf, err := renameio.NewPendingFile(path, renameio.WithPermissions(0o644))
	if err != nil {
		return Header{}, fmt.Errorf("writing %s: %w", path, err)
	}
	defer pf.Cleanup()
	h, err := WriteAll(pf, open)
	if err != nil {
		return Header{}, fmt.Errorf("writing %s: %w", path, err)
	}
	if err := pf.CloseAtomicallyReplace(); err != nil {
		return Header{}, fmt.Errorf("writing %s: %w", path, err)
	}
	return h, nil
}
