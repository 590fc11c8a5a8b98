package scenario

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/lpictl/lpictl/sim/network"
)

// Progress prints "simulated time, events/s, ETA" of a run on one line of
// a terminal.
type Progress struct {
	w      io.Writer
	on     bool
	start  time.Time
	last   time.Time
	target int64 // simulated ps generation lasts (0: unknown)
	shown  bool
}

// NewProgress prints the progress of a run of s to w if on (w is a
// terminal).
func NewProgress(w io.Writer, on bool, s *Scenario) *Progress {
	return &Progress{w: w, on: on, start: time.Now(), target: s.ExpectedEnd()}
}

// Update is Run's progress callback.
func (p *Progress) Update(pr network.Progress) {
	if !p.on {
		return
	}
	now := time.Now()
	if now.Sub(p.last) < 500*time.Millisecond {
		return
	}
	p.last = now
	el := now.Sub(p.start)
	left := "?"
	if d, ok := eta(el, pr.Now, p.target); ok {
		left = d.String()
	}
	fmt.Fprintf(p.w, "\rsimulated %-12v %6.2f M events/s  ETA %-8s", time.Duration(pr.Now/1000), float64(pr.Events)/el.Seconds()/1e6, left)
	p.shown = true
}

// eta is the wall time a run has left, to the second, if it keeps the pace
// it had: elapsed wall time for simulated time now of target (both ps);
// ok is false when the target is unknown or passed.
func eta(elapsed time.Duration, now, target int64) (left time.Duration, ok bool) {
	if target <= 0 || now <= 0 || now >= target {
		return 0, false
	}
	return time.Duration(float64(elapsed) * float64(target-now) / float64(now)).Round(time.Second), true
}

// Done clears the progress line.
func (p *Progress) Done() {
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// IsTerminal reports whether w is a character device (a terminal): the
// progress lines of sim run, sweep run and hil run go only to one.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
