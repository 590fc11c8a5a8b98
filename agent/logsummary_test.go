package agent_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/lpictl/lpictl/agent"
	"github.com/lpictl/lpictl/agent/simbackend"
	"github.com/lpictl/lpictl/predictor"
)

// logRecord is one captured log line: level, message, attributes.
type logRecord struct {
	level slog.Level
	msg   string
	attrs map[string]slog.Value
}

// captureHandler keeps every record (at every level).
type captureHandler struct {
	mu    *sync.Mutex
	recs  *[]logRecord
	attrs []slog.Attr
}

func newCapture() *captureHandler {
	return &captureHandler{mu: &sync.Mutex{}, recs: &[]logRecord{}}
}

func (h *captureHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *captureHandler) Handle(_ context.Context, r slog.Record) error {
	rec := logRecord{level: r.Level, msg: r.Message, attrs: map[string]slog.Value{}}
	for _, a := range h.attrs {
		rec.attrs[a.Key] = a.Value
	}
	r.Attrs(func(a slog.Attr) bool { rec.attrs[a.Key] = a.Value.Resolve(); return true })
	h.mu.Lock()
	*h.recs = append(*h.recs, rec)
	h.mu.Unlock()
	return nil
}
func (h *captureHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &captureHandler{mu: h.mu, recs: h.recs, attrs: append(append([]slog.Attr{}, h.attrs...), as...)}
}
func (h *captureHandler) WithGroup(string) slog.Handler { return h }

func (h *captureHandler) records() []logRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]logRecord(nil), *h.recs...)
}

func (r logRecord) uint(t *testing.T, key string) uint64 {
	t.Helper()
	v, ok := r.attrs[key]
	if !ok {
		t.Fatalf("%q line without %s: %v", r.msg, key, r.attrs)
	}
	switch v.Kind() {
	case slog.KindUint64:
		return v.Uint64()
	case slog.KindInt64:
		return uint64(v.Int64())
	}
	t.Fatalf("%q: %s is %v", r.msg, key, v)
	return 0
}

// fakeClock is a wall clock the test moves.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestRepeatedWarningsRateLimited: a port whose counters fail every round
// (one "port error" per round, 1 s of the agent's wall clock apart) is
// warned about at most once per log.repeat_interval (10 s), each line after
// the first saying how many were suppressed; the summary after a minute
// counts every error and every suppressed line.
func TestRepeatedWarningsRateLimited(t *testing.T) {
	be := newFake("p0")
	be.ports["p0"].countersErr = errors.New("counters broken")
	cfg := testConfig(t, agent.Observe, "p0")
	cfg.Log.RepeatInterval = predictor.Duration(10 * time.Second)
	cfg.Log.SummaryInterval = predictor.Duration(time.Minute)
	clk := &fakeClock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	h := newCapture()
	a, err := agent.New(agent.Options{Config: cfg, Backend: be, Logger: slog.New(h), Clock: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := agent.ExportSync(a, ctx); err != nil {
		t.Fatal(err)
	}
	const rounds = 61 // at 0 s … 60 s
	for i := 0; i < rounds; i++ {
		agent.ExportTick(a, ctx)
		clk.Add(time.Second)
	}
	var warns, summaries []logRecord
	for _, r := range h.records() {
		switch r.msg {
		case "port error":
			warns = append(warns, r)
		case "summary":
			summaries = append(summaries, r)
		}
	}
	if len(warns) != 7 {
		t.Fatalf("%d port error lines in 60 s, want 7 (at 0, 10, … 60 s): %+v", len(warns), warns)
	}
	for i, w := range warns {
		if w.level != slog.LevelWarn || w.attrs["device"].String() != "p0" || w.attrs["kind"].String() != "counters" {
			t.Errorf("line %d: %v %q %v", i, w.level, w.msg, w.attrs)
		}
		_, has := w.attrs["suppressed"]
		switch {
		case i == 0 && has:
			t.Errorf("first line says suppressed: %v", w.attrs)
		case i > 0 && w.uint(t, "suppressed") != 9:
			t.Errorf("line %d: suppressed %d, want 9", i, w.uint(t, "suppressed"))
		}
		// count is the port's cumulative error count: one per round.
		if got, want := w.uint(t, "count"), uint64(10*i+1); got != want {
			t.Errorf("line %d: count %d, want %d", i, got, want)
		}
	}
	if len(summaries) != 1 {
		t.Fatalf("%d summaries after 60 s, want 1: %+v", len(summaries), summaries)
	}
	s := summaries[0]
	if s.level != slog.LevelInfo || s.uint(t, "errors") != rounds || s.uint(t, "warnings_suppressed") != 6*9 ||
		s.uint(t, "changes") != 0 || s.uint(t, "ports") != 1 {
		t.Errorf("summary %v", s.attrs)
	}

	// log.repeat_interval 0: no limit.
	be2 := newFake("p0")
	be2.ports["p0"].countersErr = errors.New("counters broken")
	cfg.Log.RepeatInterval = 0
	h2 := newCapture()
	a2, err := agent.New(agent.Options{Config: cfg, Backend: be2, Logger: slog.New(h2), Clock: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	if err := agent.ExportSync(a2, ctx); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		agent.ExportTick(a2, ctx)
		clk.Add(time.Second)
	}
	n := 0
	for _, r := range h2.records() {
		if r.msg == "port error" {
			n++
		}
	}
	if n != 5 {
		t.Errorf("repeat_interval 0: %d port error lines in 5 rounds, want 5", n)
	}
}

// TestLogVolumeSim runs the agent in enforce mode on every port of the
// simulated 20-node Megafly (configs/agent-sim.yaml's network, 100 ports)
// for a few seconds with log.summary_interval 1s and counts the lines by
// level: each timer change is a DEBUG line, INFO has one line per port at
// selection and first change and one summary per interval, and each
// summary's changes are exactly the DEBUG change lines since the last one.
func TestLogVolumeSim(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the simulator for 4 s")
	}
	cfg := agent.Config{Mode: agent.Enforce, Backend: agent.BackendSim, Interval: predictor.Duration(20 * time.Millisecond)}
	cfg.Metrics.Listen = agent.MetricsOff
	cfg.Ports.Names = []string{"node*", "sw*"}
	cfg.Sim.Scenario = "../configs/sim/quick.yaml"
	cfg.Sim.Set = []string{"topology.radix=4"}
	zero, ms := predictor.Duration(0), predictor.Duration(time.Millisecond)
	cfg.Safety.Warmup = &zero
	cfg.Limits.MinChangeInterval = &ms
	cfg.Log.SummaryInterval = predictor.Duration(time.Second)
	cfg = cfg.WithDefaults()
	h := newCapture()
	log := slog.New(h)
	be, err := simbackend.New(simbackend.FromConfig(cfg, log))
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Options{Config: cfg, Backend: be, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	if err := a.Run(ctx, nil); err != nil {
		t.Fatal(err)
	}
	recs := h.records()
	byLevel := map[slog.Level]int{}
	infoMsgs := map[string]int{}
	ports, sets, summaries := 0, 0, 0
	for _, r := range recs {
		byLevel[r.level]++
		if r.level == slog.LevelInfo {
			infoMsgs[r.msg]++
		}
		switch r.msg {
		case "port selected":
			ports++
		case "tx LPI timer set":
			if r.level != slog.LevelDebug {
				t.Fatalf("a timer change at %v: %v", r.level, r.attrs)
			}
			sets++
		case "summary":
			summaries++
			if got := r.uint(t, "changes"); got != uint64(sets) {
				t.Errorf("summary %d: changes %d, want the %d change lines since the last", summaries, got, sets)
			}
			if r.uint(t, "ports") != uint64(ports) || r.uint(t, "enforcing") != uint64(ports) {
				t.Errorf("summary %d: %v, want %d ports enforcing", summaries, r.attrs, ports)
			}
			sets = 0
		}
	}
	t.Logf("%d lines: %d debug, %d info, %d warn, %d error; info by message %v", len(recs), byLevel[slog.LevelDebug],
		byLevel[slog.LevelInfo], byLevel[slog.LevelWarn], byLevel[slog.LevelError], infoMsgs)
	if ports != 100 {
		t.Fatalf("%d ports selected, want the 100 of the 20-node Megafly", ports)
	}
	if summaries < 2 || summaries > 4 {
		t.Errorf("%d summaries in 4 s at 1 s, want 2–4", summaries)
	}
	if byLevel[slog.LevelDebug] < ports {
		t.Errorf("%d debug lines: the agent made almost no changes (%d ports)", byLevel[slog.LevelDebug], ports)
	}
	// INFO: per port its selection, first change (original recorded) and
	// restore at stop, plus the summaries and a few lines at start and stop.
	perPort := infoMsgs["port selected"] + infoMsgs["recorded original EEE settings"] + infoMsgs["restored original EEE settings"]
	if extra := byLevel[slog.LevelInfo] - perPort - summaries; extra > 5 || perPort > 3*ports {
		t.Errorf("%d INFO lines: %d per port, %d summaries, %d others: %v", byLevel[slog.LevelInfo], perPort, summaries, extra, infoMsgs)
	}
	if byLevel[slog.LevelWarn]+byLevel[slog.LevelError] > 5 {
		t.Errorf("%d warnings and errors", byLevel[slog.LevelWarn]+byLevel[slog.LevelError])
	}
}
