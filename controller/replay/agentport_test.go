package replay

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/predictor"
)

func TestLedgerAllow(t *testing.T) {
	half, sixteenth := uint64(1)<<31, uint64(1)<<28
	for _, tc := range []struct {
		spent, reserve, rate, start, want uint64
	}{
		{10, 5, half, 100, 130},                      // ⌊30 × ½⌋ = 15
		{0, 30000, sixteenth, 0, 480000},             // 30 µs at l = 1/16
		{1, 0, q32One, 7, 8},                         // l = 1
		{0, 1, 3, 0, 1431655766},                     // rounds the span up: ⌊span × 3 / 2^32⌋ ≥ 1
		{0, 1, 0, 0, math.MaxUint64},                 // no rate: never
		{math.MaxUint64, 1, half, 0, math.MaxUint64}, // S + c overflows
		{1 << 40, 0, 1, 0, math.MaxUint64},           // span beyond 2^63 ns
	} {
		got := LedgerAllow(tc.spent, tc.reserve, tc.rate, tc.start)
		if got != tc.want {
			t.Errorf("LedgerAllow(%d, %d, %d, %d) = %d, want %d", tc.spent, tc.reserve, tc.rate, tc.start, got, tc.want)
		}
		if got != math.MaxUint64 && tc.rate > 0 {
			// The least such time: the budget there covers S + c, one ns
			// earlier it does not.
			budget := func(t uint64) uint64 { return uint64((float64(t-tc.start) * float64(tc.rate)) / float64(q32One)) }
			if budget(got) < tc.spent+tc.reserve || (got > tc.start && budget(got-1) >= tc.spent+tc.reserve) {
				t.Errorf("LedgerAllow(%+v) = %d is not the least time the budget covers S + c", tc, got)
			}
		}
	}
	if RateQ32(0.5) != half || RateQ32(2) != q32One || RateQ32(-1) != 0 || RateQ32(math.NaN()) != 0 {
		t.Error("RateQ32")
	}
}

// fixedAt is the agent's controller for these tests: a fixed t_PDT of
// 100 µs at bound (the ledger's rate), recompute every interval, no
// ledger of its own.
func fixedAt(t *testing.T, bound float64) *controller.Port {
	t.Helper()
	pdt := predictor.Duration(100 * time.Microsecond)
	pred, err := predictor.New(predictor.Config{Kind: predictor.KindFixed, PDT: &pdt, Bound: bound, WakeTime: predictor.Duration(10 * time.Microsecond)})
	if err != nil {
		t.Fatal(err)
	}
	p, err := controller.NewPort(controller.Config{Recompute: controller.OnInterval, Interval: predictor.Duration(time.Millisecond), Ledger: controller.LedgerOff}, pred, 0)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var agentTiming = Timing{Wake: 10 * time.Microsecond, Sleep: 20 * time.Microsecond}

func parseRows(t *testing.T, text string) []TraceRow {
	t.Helper()
	rows, err := ParseTrace(strings.NewReader(TraceHeader+"\n"+text), "hand.csv")
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

type stepWant struct {
	missed        bool
	asleep, delay PS
}

func checkSteps(t *testing.T, steps []Step, want []stepWant) {
	t.Helper()
	if len(steps) != len(want) {
		t.Fatalf("%d steps, want %d", len(steps), len(want))
	}
	for i, w := range want {
		s := steps[i]
		if s.Missed != w.missed || s.Asleep != w.asleep || s.Delay != w.delay {
			t.Errorf("row %d: missed %v asleep %d delay %d, want %+v", i+1, s.Missed, s.Asleep, s.Delay, w)
		}
	}
}

// The port's own ledger, applied per idle period (l = 1/16, c = 30 µs,
// from 0; the port arms each decision at once):
//
//	row 1: gap 50 µs < 100 µs: hit.
//	row 2: the timer expires at 160 µs, but S + c = 30 µs needs the
//	       budget of 480 µs: held until then (t_PDT 420 µs); the packet
//	       comes at 360 µs: a hit the controller alone would have missed.
//	row 3: expires at 460 µs, still before 480 µs: held to 120 µs; the
//	       packet at 560 µs finds it asleep since 500 µs: waits t_w.
//	row 4: gap 30 µs: hit.
func TestReplayAgentPortLedger(t *testing.T) {
	rows := parseRows(t, `0,50000000,100000000,hit,0,
60000000,300000000,100000000,hit,0,
360000000,200000000,100000000,miss,10000000,
570000000,30000000,100000000,hit,0,
`)
	ap := AgentPort{Ledger: &PortLedger{Reserve: 30 * time.Microsecond}}
	steps, res, err := ReplayAgentPort(fixedAt(t, 1.0/16), agentTiming, rows, ap)
	if err != nil {
		t.Fatal(err)
	}
	checkSteps(t, steps, []stepWant{{}, {}, {true, 60e6, 10e6}, {}})
	if res.Misses != 1 || res.Hits != 3 || res.Asleep != 60e6 || res.Delay != 10e6 {
		t.Errorf("result %+v", res)
	}
	if a := res.Agreement; a == nil || a.Decisions != 4 || a.Matching != 4 {
		t.Errorf("agreement %+v", res.Agreement)
	}
	// Without the ledger both long periods are misses, as ReplayTrace has
	// them with no handshake.
	steps, _, err = ReplayAgentPort(fixedAt(t, 1.0/16), agentTiming, rows, AgentPort{})
	if err != nil {
		t.Fatal(err)
	}
	want := []stepWant{{}, {true, 180e6, 10e6}, {true, 80e6, 10e6}, {}}
	checkSteps(t, steps, want)
	plain, _, err := ReplayTrace(fixedAt(t, 1.0/16), agentTiming, rows)
	if err != nil {
		t.Fatal(err)
	}
	checkSteps(t, plain, want)
}

// The agent writes the timer once per round (1 ms from 0), the decision
// of the rows that ended before the round; the port starts at 1 ms:
//
//	row 1 (100 µs, gap 500 µs) and row 2 (700 µs, gap 500 µs) run the
//	initial 1 ms: hits, though the decision (100 µs) would have missed;
//	the round at 1 ms has seen row 1 only and writes 100 µs;
//	row 3 (1.3 ms, gap 500 µs) runs it: a miss, asleep 380 µs.
//
// The ledger is programmed at that first write: with l = 1/16 and c =
// 30 µs from 0, row 3 (expiring at 1.4 ms) is not held.
func TestReplayAgentPortRounds(t *testing.T) {
	rows := parseRows(t, `100000000,500000000,100000000,hit,0,
700000000,500000000,100000000,hit,0,
1300000000,500000000,100000000,miss,10000000,
`)
	for _, led := range []*PortLedger{nil, {Reserve: 30 * time.Microsecond}} {
		ap := AgentPort{Interval: time.Millisecond, Initial: time.Millisecond, Ledger: led}
		steps, res, err := ReplayAgentPort(fixedAt(t, 1.0/16), agentTiming, rows, ap)
		if err != nil {
			t.Fatal(err)
		}
		checkSteps(t, steps, []stepWant{{}, {}, {true, 380e6, 10e6}})
		for i, s := range steps {
			if s.PDT != 100*time.Microsecond {
				t.Errorf("row %d: decision %v, want 100µs", i+1, s.PDT)
			}
		}
		if a := res.Agreement; a == nil || a.Matching != 3 {
			t.Errorf("agreement %+v", res.Agreement)
		}
	}
	// The rounds as the agent's trace recorded them: a write that landed
	// at 0.95 ms is the modelled round's; one that landed at 1.35 ms,
	// after row 3 began, leaves row 3 on the initial 1 ms (a hit: the
	// trace's miss then disagrees).
	for _, c := range []struct {
		at    PS
		want  []stepWant
		match uint64
	}{{950e6, []stepWant{{}, {}, {true, 380e6, 10e6}}, 3}, {1350e6, []stepWant{{}, {}, {}}, 2}} {
		ap := AgentPort{Interval: time.Millisecond, Initial: time.Millisecond, Rounds: []PS{c.at}}
		steps, res, err := ReplayAgentPort(fixedAt(t, 1.0/16), agentTiming, rows, ap)
		if err != nil {
			t.Fatal(err)
		}
		checkSteps(t, steps, c.want)
		if a := res.Agreement; a == nil || a.Matching != c.match {
			t.Errorf("round at %d: agreement %+v, want %d matching", c.at, res.Agreement, c.match)
		}
	}
	// Rows out of order are refused.
	bad := []TraceRow{{Start: 10, Gap: 10}, {Start: 5, Gap: 10}}
	if _, _, err := ReplayAgentPort(fixedAt(t, 0.5), agentTiming, bad, AgentPort{}); err == nil {
		t.Error("overlapping rows accepted")
	}
}

// TestTraceRounds: the round lines of an agent's trace, in ps, among rows
// and other comments; a line that does not parse, or goes back in time,
// is left out; the rows still parse.
func TestTraceRounds(t *testing.T) {
	raw := "# controller: {}\n" + TraceHeader + "\n" +
		"100000000,500000000,100000000,hit,0,\n" +
		TraceRoundPrefix + "1000\n" +
		TraceRoundPrefix + "x\n" +
		"# a comment\n" +
		TraceRoundPrefix + "500\n" +
		TraceRoundPrefix + "-3\n" +
		"700000000,500000000,100000000,hit,0,\n" +
		TraceRoundPrefix + " 2000 \n" +
		TraceRoundPrefix + "2000"
	got := TraceRounds([]byte(raw))
	if want := []PS{1000000, 2000000, 2000000}; !slices.Equal(got, want) {
		t.Errorf("rounds %v, want %v", got, want)
	}
	rows, err := ParseTrace(strings.NewReader(raw), "t.csv")
	if err != nil || len(rows) != 2 {
		t.Errorf("rows %d, %v", len(rows), err)
	}
	if got := TraceRounds(nil); got != nil {
		t.Errorf("no trace: %v", got)
	}
}

// FuzzTraceRounds: any bytes give rounds in order, each a whole number of
// ns within MaxTime, and never a panic.
func FuzzTraceRounds(f *testing.F) {
	f.Add([]byte(TraceRoundPrefix + "1000\n" + TraceRoundPrefix + "999\n" + TraceRoundPrefix + "2000"))
	f.Add([]byte(TraceHeader + "\n1,2,1000,hit,0,\n" + TraceRoundPrefix + "9223372036854775807\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		got := TraceRounds(raw)
		for i, at := range got {
			if at < 0 || at > MaxTime || at%1000 != 0 || i > 0 && at < got[i-1] {
				t.Fatalf("round %d: %d (of %v)", i, at, got)
			}
		}
	})
}
