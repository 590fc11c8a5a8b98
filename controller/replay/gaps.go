package replay

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/lpictl/lpictl/predictor"
)

// maxLine bounds a gap file's line length (a gap is a few characters; a
// longer line is surely not a gap file).
const maxLine = 64 << 10

// ReadGaps streams idle periods from r: one per line, as "12.5us", "3ms",
// "1s" or plain nanoseconds; blank lines and everything after '#' are
// ignored. fn is called for each gap with its line number; an error from
// fn stops the read and is returned as is. A malformed line yields
// "NAME:LINE: …".
func ReadGaps(r io.Reader, name string, fn func(line int, gap time.Duration) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		text = strings.TrimSpace(text)
		if text == "" {
			continue
		}
		d, err := predictor.ParseDuration(text)
		if err != nil {
			return fmt.Errorf("%s:%d: %w", name, line, err)
		}
		if err := fn(line, d); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if err == bufio.ErrTooLong {
			return fmt.Errorf("%s:%d: line longer than %d bytes", name, line+1, maxLine)
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
