package replay

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/predictor"
)

const (
	us = time.Microsecond
	// psPerUS and psPerNS write expected picosecond values.
	psPerUS PS = 1_000_000
	psPerNS PS = 1000
)

func fixedPort(t testing.TB, pdt time.Duration) *controller.Port {
	t.Helper()
	p, err := controller.NewPort(controller.Config{}, predictor.NewFixed(pdt), 0)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func gap(t *testing.T, r *Replayer, g time.Duration) Step {
	t.Helper()
	st, err := r.Gap(g)
	if err != nil {
		t.Fatalf("Gap(%v): %v", g, err)
	}
	return st
}

func TestReplayTimerModel(t *testing.T) {
	r := New(fixedPort(t, 10*us), Timing{Wake: 4 * us, Sleep: 2 * us})
	want := []Step{
		{Index: 1, Start: 0, Gap: 5 * psPerUS, PDT: 10 * us},                                                                   // hit
		{Index: 2, Start: 5 * psPerUS, Gap: 20 * psPerUS, PDT: 10 * us, Missed: true, Asleep: 8 * psPerUS, Delay: 4 * psPerUS}, // down at 12 µs
		{Index: 3, Start: 29 * psPerUS, Gap: 11 * psPerUS, PDT: 10 * us, Missed: true, Delay: 5 * psPerUS},                     // still going down: 1 µs + t_w
	}
	for i, g := range []time.Duration{5 * us, 20 * us, 11 * us} {
		if got := gap(t, r, g); got != want[i] {
			t.Errorf("gap %d: %+v, want %+v", i, got, want[i])
		}
	}
	res := r.Result()
	if res.IdlePeriods != 3 || res.Hits != 1 || res.Misses != 2 || res.IdleTime != 36*psPerUS ||
		res.Asleep != 8*psPerUS || res.Delay != 9*psPerUS || res.MeanPDT != 10*us || r.Now() != 45*psPerUS {
		t.Errorf("result %+v now %v", res, r.Now())
	}
	if res.Port.Misses != 2 || res.Port.Hits != 1 {
		t.Errorf("port stats %+v", res.Port)
	}
}

// TestReplayGapEqualToPDTIsMiss: docs/model.md §1.1, "an idle period of exactly t_PDT
// is a miss: the timer has expired" (issue item 4; the simulator's rule).
func TestReplayGapEqualToPDTIsMiss(t *testing.T) {
	r := New(fixedPort(t, 10*us), Timing{Wake: 4 * us, Sleep: 2 * us})
	if st := gap(t, r, 10*us-1); st.Missed {
		t.Errorf("gap just under t_PDT: %+v, want a hit", st)
	}
	st := gap(t, r, 10*us)
	// Going down runs 10..12 µs; the packet at 10 µs waits 2 µs + t_w.
	if !st.Missed || st.Delay != 6*psPerUS || st.Asleep != 0 {
		t.Errorf("gap = t_PDT: %+v, want a miss with delay 6µs", st)
	}
	if res := r.Result(); res.Misses != 1 || res.Hits != 1 || res.Port.Misses != 1 {
		t.Errorf("result %+v", res)
	}
	// t_PDT = 0 (plain EEE) with instantaneous going down: every gap misses.
	r = New(fixedPort(t, 0), Timing{Wake: 3 * us})
	if st := gap(t, r, 1); !st.Missed || st.Delay != 3*psPerUS {
		t.Errorf("t_PDT 0, gap 1ns: %+v", st)
	}
}

// TestReplayZeroGapSkipped: a gap of 0 (back-to-back packets) is no idle
// period (docs/model.md §1.1): no decision, nothing observed, not counted, only
// tallied as skipped (issue item 4).
func TestReplayZeroGapSkipped(t *testing.T) {
	port := fixedPort(t, us)
	r := New(port, Timing{Wake: us})
	before := port.Stats(0).Decisions
	st := gap(t, r, 0)
	if !st.Skipped || st.Index != 0 || st.Missed {
		t.Errorf("zero gap: %+v, want skipped", st)
	}
	if got := port.Stats(0); got.Decisions != before || got.IdlePeriods != 0 {
		t.Errorf("zero gap reached the controller: %+v", got)
	}
	gap(t, r, 5*us)
	gap(t, r, 0)
	res := r.Result()
	if res.IdlePeriods != 1 || res.Misses != 1 || res.Hits != 0 || res.ZeroGaps != 2 || res.Port.IdlePeriods != 1 {
		t.Errorf("result %+v", res)
	}
}

// TestReplayClockOverflowRejected: the running time may not wrap (issue
// item 7: three 2562047h gaps printed a negative start time).
func TestReplayClockOverflowRejected(t *testing.T) {
	r := New(fixedPort(t, 10*us), Timing{Wake: us})
	if _, err := r.Gap(2562047 * time.Hour); err == nil || !strings.Contains(err.Error(), "gap 2562047h0m0s is longer than the picosecond clock holds") {
		t.Errorf("a gap beyond the ps clock: %v", err)
	}
	r = New(fixedPort(t, 10*us), Timing{Wake: us})
	big := time.Duration(MaxTime/1000) / 2
	if _, err := r.Gap(big); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Gap(big); err == nil || !strings.Contains(err.Error(), "time overflows") {
		t.Errorf("a running sum beyond the ps clock: %v", err)
	}
	if _, err := New(fixedPort(t, us), Timing{}).Gap(-1); err == nil {
		t.Error("negative gap accepted")
	}
}

// TestReplayHandshakeHandCalculation checks the power-down handshake (issue
// item 10; sim/eee Link.Need) against numbers worked out by hand: fixed
// t_PDT 1 µs, H = 11.28 ns (64 B at 400 Gb/s + 10 ns), t_s 2 µs, t_w
// 4.48 µs. Going down starts at D = 1 µs + 2H = 1022.56 ns and ends at
// 3022.56 ns.
func TestReplayHandshakeHandCalculation(t *testing.T) {
	r := New(fixedPort(t, us), Timing{Wake: 4480 * time.Nanosecond, Sleep: 2 * us, Handshake: 11280})
	want := []Step{
		// gap = t_PDT: miss; waits 3022.56 − 1000 ns, then t_w: 6502.56 ns.
		{Index: 1, Start: 0, Gap: 1000 * psPerNS, PDT: us, Missed: true, Delay: 6_502_560},
		// clock: 1000 + 6502.56 ns; a gap under t_PDT is a hit.
		{Index: 2, Start: 7_502_560, Gap: 999 * psPerNS, PDT: us},
		// 1022 ns: the timer expired, the handshake is still running
		// (before D): waits 3022.56 − 1022 + 4480 = 6480.56 ns.
		{Index: 3, Start: 8_501_560, Gap: 1022 * psPerNS, PDT: us, Missed: true, Delay: 6_480_560},
		// 3023 ns: down since 3022.56 ns, asleep 0.44 ns, pays t_w.
		{Index: 4, Start: 16_004_120, Gap: 3023 * psPerNS, PDT: us, Missed: true, Asleep: 440, Delay: 4_480_000},
		// 10 µs: asleep 10000 − 3022.56 = 6977.44 ns.
		{Index: 5, Start: 23_507_120, Gap: 10_000 * psPerNS, PDT: us, Missed: true, Asleep: 6_977_440, Delay: 4_480_000},
	}
	for i, g := range []time.Duration{1000, 999, 1022, 3023, 10_000} {
		if got := gap(t, r, g); got != want[i] {
			t.Errorf("gap %d (%vns): %+v\nwant %+v", i+1, int64(g), got, want[i])
		}
	}
	res := r.Result()
	if res.Misses != 4 || res.Hits != 1 || res.Delay != 21_943_120 || res.Asleep != 6_977_880 ||
		res.IdleTime != 16_044*psPerNS || r.Now() != 37_987_120 {
		t.Errorf("result %+v now %d", res, r.Now())
	}
	// H = 0 is the model without the handshake: going down at t_PDT.
	r = New(fixedPort(t, us), Timing{Wake: 4480 * time.Nanosecond, Sleep: 2 * us})
	if st := gap(t, r, 1000); st.Delay != 6_480_000 {
		t.Errorf("H = 0: %+v, want delay 2µs + 4.48µs", st)
	}
}

func TestReplayInstantSleep(t *testing.T) {
	// t_s = 0: a miss sleeps gap − t_PDT and pays t_w (the plain model).
	r := New(fixedPort(t, 0), Timing{Wake: 3 * us})
	st := gap(t, r, 7*us)
	if !st.Missed || st.Asleep != 7*psPerUS || st.Delay != 3*psPerUS {
		t.Errorf("%+v", st)
	}
}

// handBuiltPort is the controller of testdata/port_trace.csv.
func handBuiltPort(t *testing.T) *controller.Port {
	t.Helper()
	init := predictor.Duration(5 * us)
	pred, err := predictor.New(predictor.Config{
		Kind: predictor.KindPerfBound, Bound: 1, WakeTime: predictor.Duration(20 * us), InitialPDT: &init,
		Histogram: predictor.HistogramConfig{Strategy: predictor.Unbounded, BinWidth: predictor.Duration(us), MaxValue: predictor.Duration(time.Millisecond),
			Search: predictor.SearchPopulated}, // the reading the trace was built with
	})
	if err != nil {
		t.Fatal(err)
	}
	port, err := controller.NewPort(controller.Config{Ledger: controller.LedgerOff}, pred, 0)
	if err != nil {
		t.Fatal(err)
	}
	return port
}

var handBuiltTiming = Timing{Wake: 20 * us, Sleep: 2 * us, Handshake: 11280}

// TestReplayTraceHandBuilt replays testdata/port_trace.csv, whose decisions
// were worked out by hand (docs/model.md §2.2 with bound 1, t_w 20 µs, 1 µs bins):
//
//	row 1, at 0 after 3 one-hop packets: empty histogram → initial 5 µs;
//	  gap 10 µs ≥ 5 µs: miss. Down at 5 µs + 22.56 ns, low from 7022.56 ns:
//	  asleep 2977.44 ns, delay t_w = 20 µs. Histogram: bin 10 (count 1).
//	row 2, at 31 µs after 4 four-hop packets: l = 3/7·1 + 4/7·1/4 = 4/7,
//	  X = 31 µs, N = 4/7·31/20 = 0.886 → ⌊N⌋ = 0 < 1: the highest bin alone
//	  exceeds N → its upper edge, 11 µs (without the hop counts, l = 1,
//	  N = 1.55 and the answer would be 10.5 µs). Gap 10.9 µs: hit.
//	row 3, at 43 µs + 280 ps (decided at 43 µs) after 1 + 4 packets:
//	  l = 4/12 + 8/12·1/4 = 1/2, N = 1/2·43/20 = 1.075 → 1 < 2 (two
//	  records in bin 10) → 11 µs. Gap 11 µs = t_PDT: miss, in the
//	  handshake: waits 13022.56 − 11000 ns + 20 µs = 22022.56 ns.
func TestReplayTraceHandBuilt(t *testing.T) {
	f, err := os.Open("testdata/port_trace.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := ParseTrace(f, "port_trace.csv")
	if err != nil {
		t.Fatal(err)
	}
	steps, res, err := ReplayTrace(handBuiltPort(t), handBuiltTiming, rows)
	if err != nil {
		t.Fatal(err)
	}
	want := []Step{
		{Index: 1, Start: 0, Gap: 10 * psPerUS, PDT: 5 * us, Missed: true, Asleep: 2_977_440, Delay: 20 * psPerUS},
		{Index: 2, Start: 31 * psPerUS, Gap: 10_900 * psPerNS, PDT: 11 * us},
		{Index: 3, Start: 43_000_280, Gap: 11 * psPerUS, PDT: 11 * us, Missed: true, Delay: 22_022_560},
	}
	if len(steps) != len(want) {
		t.Fatalf("%d steps, want %d", len(steps), len(want))
	}
	for i := range want {
		if steps[i] != want[i] {
			t.Errorf("row %d: %+v\nwant %+v", i+1, steps[i], want[i])
		}
		if steps[i].PDTPS() != rows[i].PDT || steps[i].Missed != rows[i].Missed || steps[i].Delay != rows[i].Delay {
			t.Errorf("row %d differs from the trace: %+v vs %+v", i+1, steps[i], rows[i])
		}
	}
	a := res.Agreement
	if a == nil || a.Decisions != 3 || a.Matching != 3 || a.First != nil {
		t.Errorf("agreement %+v", a)
	}
	if res.IdlePeriods != 3 || res.Misses != 2 || res.Hits != 1 {
		t.Errorf("result %+v", res)
	}

	// Without the hop counts row 2 decides 10.5 µs: the first mismatch.
	noHops := append([]TraceRow(nil), rows...)
	for i := range noHops {
		noHops[i].Sent = nil
	}
	_, res, err = ReplayTrace(handBuiltPort(t), handBuiltTiming, noHops)
	if err != nil {
		t.Fatal(err)
	}
	if m := res.Agreement.First; m == nil || m.Line != rows[1].Line || m.Index != 2 ||
		m.SimPDT != 11*psPerUS || m.PDT != 10_500*psPerNS || m.SimMissed || !m.Missed {
		t.Errorf("first mismatch %+v, want row 2: sim 11µs hit, replay 10.5µs miss", m)
	}
}

func TestReplayRowOrder(t *testing.T) {
	r := New(fixedPort(t, us), Timing{Wake: us})
	if _, err := r.Row(TraceRow{Start: 10, Gap: 5}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Row(TraceRow{Start: 14, Gap: 5}); err == nil || !strings.Contains(err.Error(), "before the end of the previous idle period (15)") {
		t.Errorf("overlap: %v", err)
	}
	if _, err := r.Row(TraceRow{Start: 20, Gap: 0}); err == nil {
		t.Error("zero gap_ps accepted")
	}
	// A port that never sleeps (t_PDT beyond the ps clock) is written -1.
	r = New(fixedPort(t, maxPDT), Timing{Wake: us})
	st, err := r.Row(TraceRow{Start: 0, Gap: MaxTime, PDT: Never})
	if err != nil || st.Missed || st.PDTPS() != Never || r.Result().Agreement.Matching != 1 {
		t.Errorf("never: %+v %v", st, err)
	}
}

func TestReadGaps(t *testing.T) {
	in := "# header\n12.5us\n\n3ms # trailing comment\n  2500  \n1s\n"
	var got []time.Duration
	var lines []int
	err := ReadGaps(strings.NewReader(in), "g.txt", func(line int, d time.Duration) error {
		got = append(got, d)
		lines = append(lines, line)
		return nil
	})
	want := []time.Duration{12500, 3 * time.Millisecond, 2500, time.Second}
	if err != nil || len(got) != len(want) {
		t.Fatalf("got %v, %v", got, err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("gap %d = %v, want %v", i, got[i], want[i])
		}
	}
	if lines[3] != 6 {
		t.Errorf("line numbers %v", lines)
	}
}

func TestReadGapsErrors(t *testing.T) {
	for in, want := range map[string]string{
		"1us\n-5us\n":              "g.txt:2: negative duration",
		"1us\n2us\nfast\n":         `g.txt:3: invalid duration "fast"`,
		strings.Repeat("9", 70000): "g.txt:1: line longer than",
	} {
		err := ReadGaps(strings.NewReader(in), "g.txt", func(int, time.Duration) error { return nil })
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadGaps(%.20q) = %v, want %q", in, err, want)
		}
	}
	stop := errors.New("stop")
	if err := ReadGaps(strings.NewReader("1\n2\n"), "x", func(int, time.Duration) error { return stop }); err != stop {
		t.Errorf("callback error not returned: %v", err)
	}
}

func TestReadDetectsFormat(t *testing.T) {
	gaps, rows := 0, 0
	onGap := func(int, time.Duration) error { gaps++; return nil }
	onRow := func(TraceRow) error { rows++; return nil }
	for _, tc := range []struct {
		in         string
		format     Format
		gaps, rows int
	}{
		{"# c\n\n1us\n2us\n", FormatGaps, 2, 0},
		{"", FormatGaps, 0, 0},
		{"# only a comment\n", FormatGaps, 0, 0},
		{"# c\n" + TraceHeader + "  # the header\n0,5,1000,hit,0,\n", FormatTrace, 0, 1},
		{TraceHeader + "\n", FormatTrace, 0, 0},
	} {
		gaps, rows = 0, 0
		f, err := Read(strings.NewReader(tc.in), "in", onGap, onRow)
		if err != nil || f != tc.format || gaps != tc.gaps || rows != tc.rows {
			t.Errorf("Read(%q) = %v, %v with %d gaps %d rows", tc.in, f, err, gaps, rows)
		}
	}
	// A header further down is no header: the gap file is malformed.
	if _, err := Read(strings.NewReader("1us\n"+TraceHeader+"\n"), "in", onGap, onRow); err == nil ||
		!strings.HasPrefix(err.Error(), "in:2: invalid duration") {
		t.Errorf("late header: %v", err)
	}
}

func TestReadTrace(t *testing.T) {
	in := "# port 3\n" + TraceHeader + "\n" +
		"0,1500,1000,miss,6502560,3:12\n" +
		"\n# a comment\n" +
		"7000000,250,-1,hit,0,\n" +
		"7000250,1,0,miss,4480000,0:1 1:2 255:18446744073709551615\r\n"
	rows, err := ParseTrace(strings.NewReader(in), "t.csv")
	if err != nil {
		t.Fatal(err)
	}
	want := []TraceRow{
		{Line: 3, Start: 0, Gap: 1500, PDT: 1000, Missed: true, Delay: 6502560, Sent: []HopCount{{3, 12}}},
		{Line: 6, Start: 7000000, Gap: 250, PDT: Never},
		{Line: 7, Start: 7000250, Gap: 1, PDT: 0, Missed: true, Delay: 4480000, Sent: []HopCount{{0, 1}, {1, 2}, {255, 1<<64 - 1}}},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(rows), len(want), rows)
	}
	for i := range want {
		g, w := rows[i], want[i]
		same := g.Line == w.Line && g.Start == w.Start && g.Gap == w.Gap && g.PDT == w.PDT &&
			g.Missed == w.Missed && g.Delay == w.Delay && len(g.Sent) == len(w.Sent)
		for j := 0; same && j < len(w.Sent); j++ {
			same = g.Sent[j] == w.Sent[j]
		}
		if !same {
			t.Errorf("row %d: %+v, want %+v", i+1, g, w)
		}
	}
}

func TestReadTraceErrors(t *testing.T) {
	h := TraceHeader + "\n"
	for _, tc := range []struct{ in, want string }{
		{"", "t.csv:0: empty port trace"},
		{"1us\n", `t.csv:1: want the port trace header ` + TraceHeader + `, got "1us"`},
		{h + "0,5,1000,hit,0\n", "t.csv:2: want 6 comma-separated fields"},
		{h + "0,5,1000,hit,0,,\n", "t.csv:2: want 6 comma-separated fields"},
		{h + "x,5,1000,hit,0,\n", `t.csv:2: start_ps: want an integer number of picoseconds, got "x"`},
		{h + "-1,5,1000,hit,0,\n", "t.csv:2: start_ps: must be ≥ 0"},
		{h + "0,0,1000,hit,0,\n", "t.csv:2: gap_ps: must be > 0"},
		{h + "0,1.5,1000,hit,0,\n", "t.csv:2: gap_ps: want an integer"},
		{h + "9223372036854775807,1,1000,hit,0,\n", "t.csv:2: start_ps + gap_ps overflows"},
		{h + "0,5,1500,hit,0,\n", "t.csv:2: pdt_ps: want -1 (never sleeps) or a whole number of nanoseconds"},
		{h + "0,5,-2,hit,0,\n", "t.csv:2: pdt_ps"},
		{h + "0,5,1000,Hit,0,\n", `t.csv:2: outcome: want hit or miss, got "Hit"`},
		{h + "0,5,1000,hit,-1,\n", "t.csv:2: delay_ps: must be ≥ 0"},
		{h + "0,5,1000,hit,0,3\n", `t.csv:2: sent: want HOPS:COUNT pairs`},
		{h + "0,5,1000,hit,0,3:0\n", `t.csv:2: sent: want HOPS:COUNT pairs`},
		{h + "0,5,1000,hit,0,256:1\n", `t.csv:2: sent: want HOPS:COUNT pairs`},
		{h + "0,5,1000,hit,0,1:1  2:1\n", `t.csv:2: sent: want HOPS:COUNT pairs (hops 0..255, count ≥ 1) separated by single spaces, got ""`},
		{h + "0,5,1000,hit,0,2:1 1:1\n", "t.csv:2: sent: hop counts must be ascending without repeats, got 1 after 2"},
		{h + "0,5,1000,hit,0,2:1 2:1\n", "t.csv:2: sent: hop counts must be ascending"},
		{h + "10,5,1000,hit,0,\n\n9,5,1000,hit,0,\n", "t.csv:4: start_ps 9 is before the end of the previous idle period (15, line 2)"},
		{h + "10,5,1000,hit,0,\n14,5,1000,hit,0,\n", "t.csv:3: start_ps 14 is before the end of the previous idle period (15, line 2)"},
		{h + strings.Repeat("9", 70000), "t.csv:2: line longer than"},
	} {
		err := ReadTrace(strings.NewReader(tc.in), "t.csv", func(TraceRow) error { return nil })
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("ReadTrace(%.60q) = %v, want %q", tc.in, err, tc.want)
		}
	}
	// Touching periods are in order.
	if err := ReadTrace(strings.NewReader(h+"10,5,1000,hit,0,\n15,5,1000,hit,0,\n"), "t.csv", func(TraceRow) error { return nil }); err != nil {
		t.Errorf("touching periods: %v", err)
	}
	stop := errors.New("stop")
	if err := ReadTrace(strings.NewReader(h+"0,5,1000,hit,0,\n"), "x", func(TraceRow) error { return stop }); err != stop {
		t.Errorf("callback error not returned: %v", err)
	}
}

func TestPS(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want PS
		str  string
	}{
		{"11.28ns", 11280, "11.28ns"},
		{"11.28", 11280, "11.28ns"},
		{"280ps", 280, "280ps"},
		{"1.5us", 1_500_000, "1.5µs"},
		{"4.48µs", 4_480_000, "4.48µs"},
		{"6.50256μs", 6_502_560, "6.50256µs"},
		{"0", 0, "0s"},
		{" 10ns ", 10_000, "10ns"},
		{"1.0005ns", 1001, "1.001ns"}, // rounded half up
		{"1.0004999ns", 1000, "1ns"},
		{"2ms0.5ps", 2_000_000_001, "2.000000001ms"},
		{"1h0m0.000000000001s", 3_600_000_000_000_001, "1h0m0.000000000001s"},
		{"90.5s", 90_500_000_000_000, "1m30.5s"},
		{".5ns", 500, "500ps"},
		{"9223372036854775807ps", MaxTime, "2562h2m52.036854775807s"},
	} {
		got, err := ParsePS(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParsePS(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
		if s := tc.want.String(); s != tc.str {
			t.Errorf("PS(%d).String() = %q, want %q", tc.want, s, tc.str)
		}
	}
	for _, in := range []string{"", "-1ns", "abc", "1e3", "10 ns", "ns", "1.2.3ns", "1ns2", "9223372036854775808ps", "2562048h", "NaN", "1d", "+"} {
		if v, err := ParsePS(in); err == nil {
			t.Errorf("ParsePS(%q) = %d, want an error", in, v)
		}
	}
	// Whole nanoseconds print as time.Duration does, and convert to
	// seconds as it does (lpictl predict's output stays byte-identical).
	for _, d := range []time.Duration{0, 1, 999, 4480, 12_345_678_901, 2562 * time.Hour, time.Duration(MaxTime / 1000)} {
		p := PS(d) * 1000
		if p.String() != d.String() || p.Seconds() != d.Seconds() || p.D() != d {
			t.Errorf("PS(%v): %q %v %v", d, p.String(), p.Seconds(), p.D())
		}
	}
}

func FuzzReadGaps(f *testing.F) {
	for _, s := range []string{"12.5us\n3ms\n", "# c\n\n2500\n", "-1\n", "1e9\n1s#x\n", "\xff\xfe", "µs\n", "0\n0\n1\n", "2562047h\n2562047h\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		r := New(fixedPort(t, us), Timing{Wake: us, Sleep: us, Handshake: 11280})
		var prev PS
		err := ReadGaps(strings.NewReader(in), "fuzz", func(line int, d time.Duration) error {
			if d < 0 {
				t.Fatalf("negative gap %v accepted", d)
			}
			st, err := r.Gap(d)
			if err != nil {
				return err
			}
			if d == 0 != st.Skipped || r.Now() < prev || st.Start < 0 || (st.Missed != wantMiss(st, 11280) && !st.Skipped) {
				t.Fatalf("line %d: gap %v: step %+v, clock %v after %v", line, d, st, r.Now(), prev)
			}
			prev = r.Now()
			return nil
		})
		if err != nil && (!strings.HasPrefix(err.Error(), "fuzz:") && !strings.Contains(err.Error(), "picosecond clock") || strings.Contains(err.Error(), "\n")) {
			t.Fatalf("error %q does not name the input on one line", err)
		}
	})
}

// wantMiss is the outcome docs/model.md §1.1 gives st with handshake h: a miss iff
// gap ≥ t_PDT, unless the timer would expire beyond the ps clock.
func wantMiss(st Step, h PS) bool {
	pdt := st.PDTPS()
	return pdt != Never && st.Gap >= pdt && pdt < MaxTime-st.Start-4*h
}

// FuzzReadTrace parses random traces and replays what parses: the reader
// names the input on one line, accepts only ordered rows, and the replay
// of its rows never fails or goes back in time.
func FuzzReadTrace(f *testing.F) {
	h := TraceHeader + "\n"
	for _, s := range []string{
		h + "0,1500,1000,miss,6502560,3:12\n7000000,250,-1,hit,0,\n",
		"# c\n" + h + "\n5,5,0,miss,1,0:1 1:2 255:3\n",
		h + "0,5,1000,hit,0,2:1 1:1\n",
		h + "9223372036854775806,1,1000,hit,0,\n",
		h + "10,5,1000,hit,0,\n9,5,1000,hit,0,\n",
		"1us\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		rows, err := ParseTrace(strings.NewReader(in), "fuzz")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz:") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q does not name the input on one line", err)
			}
			return
		}
		var end PS
		packets := uint64(0)
		for _, row := range rows {
			if row.Start < end || row.Gap <= 0 || row.Delay < 0 || (row.PDT != Never && (row.PDT < 0 || row.PDT%1000 != 0)) {
				t.Fatalf("bad row accepted: %+v", row)
			}
			end = row.End()
			for _, hc := range row.Sent {
				packets += min(hc.Packets, 1<<20)
			}
		}
		if packets > 1<<16 {
			return // the replay reports each packet: keep runs short
		}
		r := New(fixedPort(t, us), Timing{Wake: us, Sleep: us, Handshake: 11280})
		for _, row := range rows {
			st, err := r.Row(row)
			if err != nil {
				if !strings.Contains(err.Error(), "time overflows") {
					t.Fatalf("row %+v: %v", row, err)
				}
				return
			}
			if st.Start != row.Start || st.Gap != row.Gap || st.PDT != us || st.Missed != wantMiss(st, 11280) {
				t.Fatalf("row %+v: step %+v", row, st)
			}
		}
		if a := r.Result().Agreement; len(rows) > 0 && (a == nil || a.Decisions != uint64(len(rows)) || a.Matching > a.Decisions) {
			t.Fatalf("agreement %+v for %d rows", a, len(rows))
		}
	})
}

// FuzzParsePS: no panic, no negative value, and String round-trips.
func FuzzParsePS(f *testing.F) {
	for _, s := range []string{"11.28ns", "280ps", "1.5us", "1h2m3.000000000004s", "9223372036854775807ps", "-1", ".5", "1.", "µs", "1e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		v, err := ParsePS(in)
		if err != nil {
			if strings.Contains(err.Error(), "\n") && !strings.Contains(in, "\n") {
				t.Fatalf("error on several lines: %q", err)
			}
			return
		}
		if v < 0 {
			t.Fatalf("ParsePS(%q) = %d < 0", in, v)
		}
		back, err := ParsePS(v.String())
		if err != nil || back != v {
			t.Fatalf("ParsePS(%q) = %d; String %q reads back as %d, %v", in, v, v.String(), back, err)
		}
	})
}

// TestReplayHybridHold: hybrid mode, Fast Wake t_w 1 µs and t_s 2 µs, Deep
// Sleep t_w 4 µs after a hold of 3 µs, t_PDT 10 µs (fixed: the config's
// hold), no handshake. Low from 12 µs after the queue empties.
func TestReplayHybridHold(t *testing.T) {
	r := New(fixedPort(t, 10*us), Timing{Wake: 1 * us, Sleep: 2 * us, DeepWake: 4 * us, Hold: 3 * us})
	want := []Step{
		// 2 µs low < hold: Fast Wake's t_w.
		{Index: 1, Start: 0, Gap: 14 * psPerUS, PDT: 10 * us, Missed: true, Asleep: 2 * psPerUS, Delay: 1 * psPerUS},
		// Exactly the hold (as the simulator: low for ≥ hold): Deep Sleep.
		{Index: 2, Start: 15 * psPerUS, Gap: 15 * psPerUS, PDT: 10 * us, Missed: true, Asleep: 3 * psPerUS, Delay: 4 * psPerUS, Deep: true},
		// Still going down: the rest of t_s and Fast Wake's t_w.
		{Index: 3, Start: 34 * psPerUS, Gap: 11 * psPerUS, PDT: 10 * us, Missed: true, Delay: 2 * psPerUS},
	}
	for i, g := range []time.Duration{14 * us, 15 * us, 11 * us} {
		if got := gap(t, r, g); got != want[i] {
			t.Errorf("gap %d: %+v, want %+v", i, got, want[i])
		}
	}

	// A predictor that chooses holds overrides Timing.Hold: PerfBound in
	// hybrid mode before any idle period answers its initial t_PDT and
	// NeverHold (it has no evidence), so the 20 µs low stay in Fast Wake.
	pred, err := predictor.New(predictor.Config{Kind: predictor.KindPerfBound, WakeTime: predictor.Duration(us),
		InitialPDT: durp(10 * us), Hybrid: predictor.HybridConfig{DeepWakeTime: predictor.Duration(4 * us), FastWakePower: 0.4, DeepSleepPower: 0.1}})
	if err != nil {
		t.Fatal(err)
	}
	port, err := controller.NewPort(controller.Config{Ledger: controller.LedgerOff}, pred, 0)
	if err != nil {
		t.Fatal(err)
	}
	r = New(port, Timing{Wake: 1 * us, Sleep: 2 * us, DeepWake: 4 * us, Hold: 3 * us})
	if st := gap(t, r, 32*us); st.Deep || st.Delay != psPerUS || st.Asleep != 20*psPerUS {
		t.Errorf("NeverHold: %+v, want 20 µs low in Fast Wake, delay 1 µs", st)
	}
}

func durp(d time.Duration) *predictor.Duration { v := predictor.Duration(d); return &v }

// TestReplaySentBatched: a row's sent counts reach the controller as one
// Sent(hops, n) per hop count; the decisions are those of n calls of
// Sent(hops, 1) (what the simulator makes, one per packet), for every
// predictor that counts hops (issue 24 item 12).
func TestReplaySentBatched(t *testing.T) {
	for _, kind := range predictor.Kinds {
		t.Run(string(kind), func(t *testing.T) {
			newPort := func() *controller.Port {
				cfg := predictor.Config{Kind: kind, WakeTime: predictor.Duration(4 * us)}
				if kind == predictor.KindFixed {
					cfg.PDT = durp(2 * us)
				}
				pred, err := predictor.New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				p, err := controller.NewPort(controller.Config{}, pred, 0)
				if err != nil {
					t.Fatal(err)
				}
				return p
			}
			timing := Timing{Wake: 4 * us, Sleep: 2 * us}
			batched, perPacket := newPort(), newPort()
			rb, rp := New(batched, timing), New(perPacket, timing)
			rng := uint64(12345)
			next := func(n uint64) uint64 { // xorshift: a fixed pseudo-random sequence
				rng ^= rng << 13
				rng ^= rng >> 7
				rng ^= rng << 17
				return rng % n
			}
			var start PS
			for i := range 3000 {
				row := TraceRow{Line: i + 2, Start: start, Gap: PS(1+next(40_000)) * psPerNS, PDT: Never}
				for h := 1; h <= 40; h += 1 + int(next(12)) {
					row.Sent = append(row.Sent, HopCount{Hops: h, Packets: 1 + next(200)})
				}
				start = row.End() + PS(next(5000))*psPerNS
				sb, err := rb.Row(row)
				if err != nil {
					t.Fatal(err)
				}
				for _, hc := range row.Sent {
					for range hc.Packets {
						perPacket.Sent(hc.Hops, 1)
					}
				}
				ref := row
				ref.Sent = nil
				sp, err := rp.Row(ref)
				if err != nil {
					t.Fatal(err)
				}
				if sb != sp {
					t.Fatalf("row %d: batched %+v, per packet %+v", i, sb, sp)
				}
			}
		})
	}
}

// TestReplaySentHugeCount: a row sending 2^64−1 packets looped once per
// packet and never ended (10^10 took 54 s); it is now refused at once, and
// 10^9 packets replay in one call.
func TestReplaySentHugeCount(t *testing.T) {
	done := make(chan error, 1)
	go func() {
		r := New(fixedPort(t, 10*us), Timing{Wake: 4 * us})
		if _, err := r.Row(TraceRow{Start: 0, Gap: 5 * psPerUS, PDT: 10 * psPerUS, Sent: []HopCount{{Hops: 2, Packets: 1_000_000_000}}}); err != nil {
			done <- err
			return
		}
		_, err := r.Row(TraceRow{Start: 10 * psPerUS, Gap: 5 * psPerUS, PDT: 10 * psPerUS, Sent: []HopCount{{Hops: 2, Packets: 1<<64 - 1}}})
		if err == nil || !strings.Contains(err.Error(), "more than 9007199254740992") {
			done <- errors.New("want the sent bound's error, got " + errString(err))
			return
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a row with 10^9 packets did not replay within 10 s")
	}
}

func errString(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}

// TestParseGapEdges: "-0.4" was refused but "-0.4ns" accepted as a gap of
// 0; plain nanoseconds above 2^53 were rounded through float64 (issue 24
// item 14).
func TestParseGapEdges(t *testing.T) {
	for _, s := range []string{"-0.4", "-0.4ns", "-0", "-1us", "-0s", " -3"} {
		if d, err := ParseGap(s); err == nil || !strings.Contains(err.Error(), "negative") {
			t.Errorf("ParseGap(%q) = %v, %v; want a negative duration error", s, d, err)
		}
	}
	for s, want := range map[string]time.Duration{
		"9007199254740993":    9007199254740993, // 2^53 + 1
		"9223372036854775807": 1<<63 - 1,
		"+12":                 12,
		"12.5us":              12500,
		"0.4":                 0,
		"7":                   7,
	} {
		if d, err := ParseGap(s); err != nil || d != want {
			t.Errorf("ParseGap(%q) = %v, %v; want %d", s, d, err, want)
		}
	}
	if _, err := ParseGap("9223372036854775808"); err == nil {
		t.Error("2^63 ns accepted")
	}
}

// TestReadBOM: a UTF-8 byte order mark made a port trace read as a gap
// file (its header line did not match); it is stripped.
func TestReadBOM(t *testing.T) {
	in := "\ufeff" + TraceHeader + "\n0,5000,1000,miss,0,\n"
	rows := 0
	f, err := Read(strings.NewReader(in), "t.csv", func(int, time.Duration) error { return errors.New("read as a gap file") },
		func(TraceRow) error { rows++; return nil })
	if err != nil || f != FormatTrace || rows != 1 {
		t.Errorf("format %v, %d rows, %v; want a port trace of 1 row", f, rows, err)
	}
	var gaps []time.Duration
	f, err = Read(strings.NewReader("\ufeff12\n3us\n"), "g.txt", func(_ int, g time.Duration) error { gaps = append(gaps, g); return nil }, nil)
	if err != nil || f != FormatGaps || len(gaps) != 2 || gaps[0] != 12 {
		t.Errorf("gap file with a BOM: %v %v %v", f, gaps, err)
	}
}
