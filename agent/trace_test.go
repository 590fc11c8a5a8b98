package agent_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lpictl/lpictl/agent"
	"github.com/lpictl/lpictl/controller/replay"
	"github.com/lpictl/lpictl/predictor"
)

// scriptBackend is one port whose clock the test sets: each round it
// reports the idle periods that ended by then, generated from a seeded
// stream, and the hop counts of the packets sent meanwhile. The port runs
// the t_PDT last applied (SetPDT), from the next idle period on, as a
// real port does, so its outcomes lag the agent's decisions.
type scriptBackend struct {
	now     time.Duration
	rng     *rand.Rand
	free    time.Duration // the port's last departure
	timer   time.Duration // tx LPI timer in force
	known   bool          // the port reports its outcomes (MissedKnown)
	sets    int
	hopsOut uint64 // hop counts given to the agent
	wake    time.Duration
	pending time.Duration // the next gap (−1: draw one)
}

func (b *scriptBackend) Name() string                                          { return "script" }
func (b *scriptBackend) Now() time.Duration                                    { return b.now }
func (b *scriptBackend) Step(context.Context) error                            { return nil }
func (b *scriptBackend) Persistent() bool                                      { return false }
func (b *scriptBackend) Close() error                                          { return nil }
func (b *scriptBackend) Restore(context.Context, string, agent.Settings) error { return nil }
func (b *scriptBackend) Ports(context.Context) ([]agent.PortInfo, error) {
	return []agent.PortInfo{{Name: "eth0", Driver: "script", CanSet: true,
		Register: agent.Register{Unit: time.Microsecond, Max: time.Second}}}, nil
}
func (b *scriptBackend) Open(context.Context, agent.PortInfo) (agent.Port, error) {
	return scriptPort{b}, nil
}

type scriptPort struct{ b *scriptBackend }

// Drain reports the idle periods that ended before now: 80 % of 5–300 µs,
// 20 % of 0.5–4 ms, some back to back (no period: skipped by the agent).
func (p scriptPort) Drain(dst []agent.Observation) (int, error) {
	b := p.b
	n := 0
	for n < len(dst) {
		if b.pending < 0 {
			b.pending = time.Duration(5000 + b.rng.IntN(295_000))
			switch r := b.rng.IntN(20); {
			case r < 4:
				b.pending = time.Duration(500_000 + b.rng.IntN(3_500_000))
			case r == 4:
				b.pending = 0
			}
		}
		gap := b.pending
		end := b.free + gap
		if end > b.now {
			return n, nil
		}
		b.pending = -1
		missed := gap >= b.timer
		delay := time.Duration(0)
		if missed {
			delay = b.wake
		}
		dst[n] = agent.Observation{End: end, Length: gap}
		if b.known {
			dst[n].Missed, dst[n].MissedKnown, dst[n].PDT, dst[n].Delay = missed, true, b.timer, delay
		}
		b.free = end + delay + time.Duration(b.rng.IntN(3))*time.Microsecond // a burst's transmission
		n++
	}
	return n, nil
}

func (p scriptPort) Hops(f func(int, uint64)) {
	for range p.b.rng.IntN(3) {
		h, c := 1+p.b.rng.IntN(6), uint64(1+p.b.rng.IntN(40))
		f(h, c)
		p.b.hopsOut += c
	}
}

func (p scriptPort) EEE(context.Context) (agent.EEEState, error) {
	return agent.EEEState{Enabled: true, Active: true, TxLPIEnabled: true, TxLPITimer: p.b.timer}, nil
}

func (p scriptPort) SetPDT(_ context.Context, d time.Duration) (agent.ApplyResult, error) {
	p.b.timer = d
	p.b.sets++
	return agent.ApplyResult{Applied: d}, nil
}

func (p scriptPort) Restore(context.Context, agent.Settings) error { return nil }
func (p scriptPort) Counters(context.Context) (agent.PortCounters, error) {
	return agent.PortCounters{}, nil
}
func (p scriptPort) Close() error { return nil }

// TestPortTraceReplays runs the agent's loop round by round on a scripted
// port and checks its trace: the header's controller, replayed through
// controller/replay over the rows, decides exactly the trace's t_PDT on
// every row; outcomes are the port's (enforce: they differ from the
// replay's only where the port still ran an older t_PDT) or the decision's
// (observe: identical to the replay's); the sent column carries every hop
// count the controller was given before the last row; zero-length gaps
// are no rows.
func TestPortTraceReplays(t *testing.T) {
	for _, tc := range []struct {
		name  string
		mode  agent.Mode
		known bool
	}{
		{"enforce-port-outcomes", agent.Enforce, true},
		{"enforce-estimated", agent.Enforce, false},
		{"observe", agent.Observe, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := testConfig(t, tc.mode, "eth0")
			cfg.TraceDir = dir
			cfg.Predictor = predictor.Config{Kind: predictor.KindPerfBoundCorrect, WakeTime: agentDur(20 * time.Microsecond),
				Histogram: predictor.HistogramConfig{BinWidth: agentDur(time.Microsecond), TTL: agentDur(200 * time.Millisecond)}}.WithDefaults()
			zero := 0.0
			cfg.Limits.Hysteresis = &zero
			cfg.Interval = agentDur(10 * time.Millisecond)
			// The delay ledger's reserve: every miss of the replay's model
			// (Timing{Wake}) costs t_w, so charging an unmeasured miss the
			// same keeps the agent's ledger and the replay's in step.
			mc := agentDur(20 * time.Microsecond)
			cfg.Limits.MissCost = &mc
			be := &scriptBackend{now: 1_000_000_000, rng: rand.New(rand.NewPCG(1, 2)), free: 999_000_000,
				timer: 250 * time.Microsecond, known: tc.known, wake: 20 * time.Microsecond, pending: -1}
			a, err := agent.New(agent.Options{Config: cfg, Backend: be, Logger: testLogger(t)})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if err := agent.ExportSync(a, ctx); err != nil {
				t.Fatal(err)
			}
			for range 200 {
				be.now += 10 * time.Millisecond
				agent.ExportTick(a, ctx)
			}
			// The delay budget: the controller's ledger (enforcement
			// interval in enforce mode, observe otherwise) with the
			// configured reserve; in enforce mode the port was held awake
			// (its timer at the register's maximum) while in deficit.
			who := map[agent.Mode]string{agent.Enforce: "interval", agent.Observe: "observe"}[tc.mode]
			bl := map[string]string{"device": "eth0", "enforcement": who}
			budget := metric(t, a.Registry(), "lpictl_port_budget_seconds", bl)
			spent := metric(t, a.Registry(), "lpictl_port_budget_spent_seconds", bl)
			reserve := metric(t, a.Registry(), "lpictl_port_budget_reserve_seconds", bl)
			holds := metric(t, a.Registry(), "lpictl_port_budget_hold_intervals_total", bl)
			held := metric(t, a.Registry(), "lpictl_port_budget_held_total", bl)
			ratio := metric(t, a.Registry(), "lpictl_port_budget_ratio", bl)
			t.Logf("budget %.6gs, spent %.6gs (ratio %.3g), reserve %gs, %v periods decided in deficit, %v intervals held",
				budget, spent, ratio, reserve, held, holds)
			if budget <= 0 || spent <= 0 || reserve != 20e-6 || held == 0 {
				t.Errorf("budget %v, spent %v, reserve %v, held %v: the ledger did not run", budget, spent, reserve, held)
			}
			if (tc.mode == agent.Enforce) != (holds > 0) {
				t.Errorf("%s: %v intervals held", tc.mode, holds)
			}
			idle := metric(t, a.Registry(), "lpictl_idle_periods_total", dev("eth0"))
			misses := metric(t, a.Registry(), "lpictl_idle_misses_total", dev("eth0"))
			if err := agent.ExportShutdown(a); err != nil {
				t.Fatal(err)
			}
			path := agent.PortTraceFile(dir, "eth0")
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			info, err := agent.ReadTraceInfo(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if info.Device != "eth0" || info.Opened != 1_000_000_000 || info.Mode != tc.mode || info.Backend != "script" {
				t.Errorf("header %+v", info)
			}
			rows, err := replay.ParseTrace(bytes.NewReader(data), path)
			if err != nil {
				t.Fatal(err)
			}
			// Enforce mode: one round line per tick, at the backend's
			// time of the write (the script's clock stands still within
			// a tick); observe mode writes nothing.
			rounds := replay.TraceRounds(data)
			if tc.mode == agent.Enforce {
				if len(rounds) != 200 || rounds[0] != replay.PS(1_010_000_000)*1000 || rounds[199] != replay.PS(3_000_000_000)*1000 {
					t.Errorf("%d round lines, first %v, last %v: want 200 from 1.01 s to 3 s", len(rounds), rounds[0:min(1, len(rounds))], rounds[max(len(rounds)-1, 0):])
				}
			} else if len(rounds) != 0 {
				t.Errorf("observe: %d round lines", len(rounds))
			}
			var rowMisses, hops uint64
			for _, r := range rows {
				if r.Missed {
					rowMisses++
				}
				for _, h := range r.Sent {
					hops += h.Packets
				}
			}
			if float64(len(rows)) != idle || float64(rowMisses) != misses || len(rows) < 1000 {
				t.Errorf("%d rows (%d misses); the agent counted %v (%v misses)", len(rows), rowMisses, idle, misses)
			}
			if hops == 0 || hops > be.hopsOut {
				t.Errorf("%d hop counts in the trace, %d given", hops, be.hopsOut)
			}
			ctl, err := info.NewController()
			if err != nil {
				t.Fatal(err)
			}
			steps, res, err := replay.ReplayTrace(ctl, replay.Timing{Wake: be.wake}, rows)
			if err != nil {
				t.Fatal(err)
			}
			changes, outcomeDiffs := 0, 0
			for i, s := range steps {
				if s.PDTPS() != rows[i].PDT {
					t.Fatalf("row %d: replay t_PDT %v, trace %v", i+1, s.PDTPS(), rows[i].PDT)
				}
				if i > 0 && rows[i].PDT != rows[i-1].PDT {
					changes++
				}
				if s.Missed != rows[i].Missed {
					outcomeDiffs++
				}
			}
			t.Logf("%d rows, %d decision changes, %d port outcomes differ from the decision's (application lag); %d sets",
				len(rows), changes, outcomeDiffs, be.sets)
			if changes < 5 {
				t.Errorf("only %d decision changes: the test does not exercise the replay", changes)
			}
			if tc.mode == agent.Observe && (res.Agreement.Matching != uint64(len(rows)) || be.sets != 0) {
				t.Errorf("observe: %d of %d outcomes agree, %d sets", res.Agreement.Matching, len(rows), be.sets)
			}
			if tc.mode == agent.Enforce && outcomeDiffs == 0 {
				t.Error("enforce: no outcome ever lagged the decision; the scripted port does not run the applied timer")
			}
			if strings.Count(string(data), "# controller: ") != 1 {
				t.Error("more than one controller header")
			}
		})
	}
}

// TestPortTraceRestart: a reload that changes the port's predictor marks
// the trace, and each controller header can be read.
func TestPortTraceRestart(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(t, agent.Observe, "eth0")
	cfg.TraceDir = dir
	next := cfg
	pdt := agentDur(40 * time.Microsecond)
	next.Predictor.PDT = &pdt
	be := &scriptBackend{now: 1e9, rng: rand.New(rand.NewPCG(3, 4)), free: 1e9, timer: time.Millisecond, pending: -1}
	a, err := agent.New(agent.Options{Config: cfg, Backend: be, Reload: func() (agent.Config, error) { return next, nil }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	hup := make(chan struct{}, 1)
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- a.Run(cctx, hup) }()
	waitFor(t, "ready", a.Ready)
	hup <- struct{}{}
	time.Sleep(50 * time.Millisecond)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(agent.PortTraceFile(dir, "eth0"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "# controller: "); n != 2 || !strings.Contains(string(data), "controller restarted") {
		t.Errorf("%d controller headers:\n%s", n, data)
	}
	if _, err := replay.ParseTrace(bytes.NewReader(data), "trace"); err != nil {
		t.Error(err)
	}
}

func FuzzReadTraceInfo(f *testing.F) {
	f.Add([]byte("# controller: {\"device\":\"eth0\",\"opened_ns\":5,\"spec\":{}}\n" + replay.TraceHeader + "\n"))
	f.Add([]byte(replay.TraceHeader + "\n# controller: {}\n"))
	f.Add([]byte("# controller: {\"device\":1}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		info, err := agent.ReadTraceInfo(bytes.NewReader(b))
		if err != nil {
			return
		}
		// Whatever it read builds a controller or says why not.
		if c, err := info.NewController(); err == nil && c == nil {
			t.Fatal("nil controller without an error")
		}
	})
}
