package agent

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/renameio/v2"

	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/controller/replay"
)

// TraceSuffix ends the name of a port trace in trace_dir:
// <trace_dir>/<port>.port_trace.csv.
const TraceSuffix = ".port_trace.csv"

// traceInfoPrefix starts the comment line that describes the controller a
// trace was made with (TraceInfo, as JSON).
const traceInfoPrefix = "# controller: "

// TraceInfo is what a port trace's header says about the controller that
// decided it: with it, controller/replay reproduces the agent's decisions.
// NewController builds that controller; ReplayTrace of the trace's rows
// through it gives, row by row, the t_PDT of the pdt_ps column.
type TraceInfo struct {
	Device  string `json:"device"`
	Backend string `json:"backend"`
	Mode    Mode   `json:"mode"`
	// Opened is when the controller was built, on the backend's clock (ns):
	// replay must build its controller at the same time.
	Opened time.Duration `json:"opened_ns"`
	// Spec is the port's effective predictor and controller configuration.
	Spec PortSpec `json:"spec"`
}

// PortTraceFile is the trace file of port name in dir.
func PortTraceFile(dir, name string) string { return filepath.Join(dir, name+TraceSuffix) }

// NewController returns a controller as the agent built it for the trace:
// the same predictor and controller configuration, started at Opened.
func (ti TraceInfo) NewController() (*controller.Port, error) {
	ctl, _, err := newController(ti.Spec, ti.Opened)
	return ctl, err
}

// ReadTraceInfo reads the header comment of a port trace written by the
// agent (the first "# controller:" line before the column header).
func ReadTraceInfo(r io.Reader) (TraceInfo, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, traceInfoPrefix); ok {
			var ti TraceInfo
			dec := json.NewDecoder(strings.NewReader(rest))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&ti); err != nil {
				return TraceInfo{}, fmt.Errorf("port trace header: %w", err)
			}
			return ti, nil
		}
		if strings.TrimSpace(line) == replay.TraceHeader {
			break
		}
	}
	if err := sc.Err(); err != nil {
		return TraceInfo{}, err
	}
	return TraceInfo{}, errors.New("port trace: no \"# controller:\" header line (not written by lpictl agent?)")
}

// portTrace streams one port's trace rows to a temporary file in the trace
// directory; finish renames it into place (renameio), abort removes it.
// Memory is bounded: rows are written as they come through a buffer.
type portTrace struct {
	path string
	f    *renameio.PendingFile
	w    *bufio.Writer
	err  error // first write error: the trace is then abandoned
	buf  []byte

	// Hop counts given to the controller since the previous row, by hop
	// count (replay.MaxHops at most, as the trace grammar takes).
	hops    [replay.MaxHops + 1]uint64
	hopsAny bool
	prevEnd time.Duration
	rows    uint64
	skipped uint64
}

// newPortTrace opens the temporary file of port name in dir.
func newPortTrace(dir, name string) (*portTrace, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return nil, fmt.Errorf("trace_dir: port name %q cannot name a file", name)
	}
	path := PortTraceFile(dir, name)
	f, err := renameio.NewPendingFile(path, renameio.WithTempDir(dir), renameio.WithPermissions(0o644))
	if err != nil {
		return nil, fmt.Errorf("trace_dir: %w", err)
	}
	t := &portTrace{path: path, f: f, w: bufio.NewWriterSize(f, 64<<10), buf: make([]byte, 0, 256)}
	return t, nil
}

// start writes the header of a controller (at the top, and again when the
// port's controller is rebuilt: the rows after it come from the new one).
func (t *portTrace) start(ti TraceInfo, restart bool) {
	b, err := json.Marshal(ti)
	if err != nil {
		t.fail(err)
		return
	}
	if restart {
		t.comment("controller restarted (configuration changed): the rows below are decided by a new controller; replay them from here with this header")
	} else {
		t.comment(fmt.Sprintf("lpictl agent port trace of %s (backend %s, mode %s): one row per idle period the controller consumed", ti.Device, ti.Backend, ti.Mode))
		t.comment("pdt_ps: the controller's t_PDT for the period (Decide at its start); outcome and delay_ps: the port's (as the agent counted it)")
	}
	t.line(traceInfoPrefix + string(b))
	if !restart {
		t.line(replay.TraceHeader)
	}
}

func (t *portTrace) comment(s string) { t.line("# " + s) }

// round records when a round gave the port its timer (ns on the rows'
// clock), as a comment line the trace grammar skips (replay.TraceRounds
// reads it).
func (t *portTrace) round(at time.Duration) {
	t.line(replay.TraceRoundPrefix + strconv.FormatInt(int64(at), 10))
}

func (t *portTrace) line(s string) {
	if t.err != nil {
		return
	}
	if _, err := t.w.WriteString(s + "\n"); err != nil {
		t.fail(err)
	}
}

func (t *portTrace) fail(err error) {
	if t.err == nil {
		t.err = err
	}
}

// sent records hop counts given to the controller.
func (t *portTrace) sent(hops int, packets uint64) {
	if packets == 0 {
		return
	}
	h := min(max(hops, 0), replay.MaxHops) // the predictor clamps alike
	t.hops[h] += packets
	t.hopsAny = true
}

// row writes one idle period: it started at start (ns on the backend's
// clock), lasted gap, the controller decided pdt for it, the port missed
// (or not) and its packet waited delay. A row the trace grammar cannot
// hold (it overlaps the previous one) is written as a comment and counted
// in skipped.
func (t *portTrace) row(start, gap, pdt time.Duration, missed bool, delay time.Duration) {
	if t.err != nil {
		return
	}
	b := t.buf[:0]
	bad := start < 0 || gap <= 0 || start < t.prevEnd || start > time.Duration(replay.MaxTime/1000)-gap
	if bad {
		b = append(b, "# not replayable (overlaps the previous row or out of range): "...)
		t.skipped++
	}
	b = strconv.AppendInt(b, int64(start)*1000, 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(gap)*1000, 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(replay.Step{PDT: pdt}.PDTPS()), 10)
	if missed {
		b = append(b, ",miss,"...)
	} else {
		b = append(b, ",hit,"...)
	}
	b = strconv.AppendInt(b, int64(max(delay, 0))*1000, 10)
	b = append(b, ',')
	if t.hopsAny {
		first := true
		for h, n := range t.hops {
			if n == 0 {
				continue
			}
			if !first {
				b = append(b, ' ')
			}
			first = false
			b = strconv.AppendInt(b, int64(h), 10)
			b = append(b, ':')
			b = strconv.AppendUint(b, n, 10)
			t.hops[h] = 0
		}
		t.hopsAny = false
	}
	b = append(b, '\n')
	t.buf = b
	if _, err := t.w.Write(b); err != nil {
		t.fail(err)
		return
	}
	if !bad {
		t.prevEnd = start + gap
		t.rows++
	}
}

// finish flushes and renames the trace into place.
func (t *portTrace) finish() error {
	if t.err == nil {
		t.err = t.w.Flush()
	}
	if t.err != nil {
		_ = t.f.Cleanup()
		return fmt.Errorf("trace %s: %w", t.path, t.err)
	}
	if err := t.f.CloseAtomicallyReplace(); err != nil {
		_ = t.f.Cleanup()
		return fmt.Errorf("trace %s: %w", t.path, err)
	}
	return nil
}

// checkTraceDir reports whether dir can hold port traces.
func checkTraceDir(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("trace_dir: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("trace_dir: %s is not a directory", dir)
	}
	return nil
}
