package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lpictl/lpictl/agent"
	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/controller/replay"
	"github.com/lpictl/lpictl/predictor"
)

// lpictl runs the command line in-process and returns its exit status and output.
func lpictl(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestVersion(t *testing.T) {
	code, out, _ := lpictl(t, "version")
	if code != 0 || !strings.HasPrefix(out, "lpictl dev (commit unknown, go1.") {
		t.Errorf("version: %d %q", code, out)
	}
}

func TestPredictShippedConfigs(t *testing.T) {
	gaps := "../../configs/predict/gaps-demo.txt"
	for _, cfg := range []string{"fixed", "perfbound", "perfboundcorrect"} {
		code, out, errs := lpictl(t, "predict", "--json", "-c", "../../configs/predict/"+cfg+".yaml", gaps)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", cfg, code, errs)
		}
		var s predictSummary
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatalf("%s: %v\n%s", cfg, err, out)
		}
		if s.IdlePeriods != 2907 || s.Hits+s.Misses != s.IdlePeriods || string(s.Predictor) != cfg ||
			s.AsleepShare <= 0 || s.AsleepShare >= 1 || s.WakeTimeS != 4.48e-6 {
			t.Errorf("%s: implausible summary %+v", cfg, s)
		}
	}
}

func TestPredictDeterministicAndTrace(t *testing.T) {
	gaps := writeFile(t, "g.txt", "1us\n20us\n3us\n300us\n2us\n")
	_, a, _ := lpictl(t, "predict", "--json", gaps)
	_, b, _ := lpictl(t, "predict", "--json", gaps)
	if a != b || a == "" {
		t.Errorf("two runs differ:\n%s\n%s", a, b)
	}
	code, out, _ := lpictl(t, "predict", "--trace", "--predictor", "fixed", "--pdt", "10us", gaps)
	if code != 0 || strings.Count(out, " miss ") != 2 || strings.Count(out, " hit ") != 3 {
		t.Errorf("trace: exit %d\n%s", code, out)
	}
}

func TestPredictStdinAndFlagsOverFile(t *testing.T) {
	cfg := writeFile(t, "p.yaml", "predictor:\n  kind: fixed\n  pdt: 1ms\n")
	gaps := writeFile(t, "g.txt", "5us\n")
	_, out, _ := lpictl(t, "predict", "--json", "-c", cfg, "--pdt", "1us", gaps)
	if !strings.Contains(out, `"misses": 1`) {
		t.Errorf("--pdt did not override the file: %s", out)
	}
	_, out, _ = lpictl(t, "predict", "--json", "-c", cfg, "--set", "predictor.pdt=2us", gaps)
	if !strings.Contains(out, `"pdt_max_s": 0.000002`) {
		t.Errorf("--set did not override the file: %s", out)
	}
}

func TestPredictBadInput(t *testing.T) {
	gaps := writeFile(t, "g.txt", "1us\n2us\n")
	badGaps := writeFile(t, "bad.txt", "1us\n-3us\n")
	junkGaps := writeFile(t, "junk.txt", "1us\n\nquick\n")
	unknownKey := writeFile(t, "k.yaml", "predictor:\n  kind: perfbound\n  histogram:\n    bins: 3\n")
	badType := writeFile(t, "t.yaml", "predictor:\n  bound: lots\n")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown predictor", []string{"predict", "--predictor", "oracle", gaps}, `--predictor: unknown predictor "oracle"`},
		{"unknown predictor in file", []string{"predict", "--set", "predictor.kind=oracle", gaps}, `predictor.kind: unknown predictor "oracle"`},
		{"negative duration flag", []string{"predict", "--pdt", "-1us", "--predictor", "fixed", gaps}, `--pdt: negative duration "-1us"`},
		{"unparseable duration flag", []string{"predict", "--wake-time", "soon", gaps}, `--wake-time: invalid duration "soon"`},
		{"negative gap", []string{"predict", badGaps}, "bad.txt:2: negative duration"},
		{"unparseable gap", []string{"predict", junkGaps}, `junk.txt:3: invalid duration "quick"`},
		{"unknown YAML key", []string{"predict", "-c", unknownKey, gaps}, `k.yaml: line 4: unknown key "predictor.histogram.bins"`},
		{"YAML type error", []string{"predict", "-c", badType, gaps}, "t.yaml: line 2: cannot unmarshal"},
		{"missing gap file", []string{"predict", filepath.Join(t.TempDir(), "none.txt")}, "none.txt: no such file"},
		{"missing config", []string{"predict", "-c", "/nonexistent/p.yaml", gaps}, "/nonexistent/p.yaml: no such file"},
		{"no file", []string{"predict"}, "want exactly one FILE"},
		{"unknown flag", []string{"predict", "--bogus", gaps}, "unknown flag: --bogus"},
		{"always-on", []string{"predict", "--mode", "always-on", gaps}, "mode: always-on never sleeps"},
		{"unknown preset", []string{"predict", "--preset", "eee-9000g", gaps}, `unknown power preset "eee-9000g"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := lpictl(t, tc.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", code, errs)
			}
			if !strings.Contains(errs, tc.want) {
				t.Errorf("stderr %q, want it to contain %q", errs, tc.want)
			}
			if n := strings.Count(strings.TrimRight(errs, "\n"), "\n"); n != 0 {
				t.Errorf("error is %d lines, want one: %q", n+1, errs)
			}
			if out != "" {
				t.Errorf("stdout not empty on error: %q", out)
			}
		})
	}
}

// predictJSON runs lpictl predict --json and decodes the summary.
func predictJSON(t *testing.T, args ...string) predictSummary {
	t.Helper()
	code, out, errs := lpictl(t, append([]string{"predict", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("predict %v: exit %d: %s", args, code, errs)
	}
	var s predictSummary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return s
}

// TestPredictGapEqualToPDTIsMiss: a gap of exactly t_PDT was a hit in
// predict and a miss in the simulator; docs/model.md §1.1 makes it a miss (item 4).
func TestPredictGapEqualToPDTIsMiss(t *testing.T) {
	gaps := writeFile(t, "g.txt", "10us\n9.999us\n")
	if s := predictJSON(t, "--predictor", "fixed", "--pdt", "10us", gaps); s.Misses != 1 || s.Hits != 1 {
		t.Errorf("gap = t_PDT: %d hits, %d misses; want the 10us gap a miss", s.Hits, s.Misses)
	}
	// Without the handshake: down 10..12 µs, the packet waits 2 µs + t_w.
	s := predictJSON(t, "--predictor", "fixed", "--pdt", "10us", "--handshake", "0", gaps)
	if s.Misses != 1 || s.Hits != 1 || s.AddedDelayS != 6.48e-6 {
		t.Errorf("gap = t_PDT, no handshake: %+v", s)
	}
}

// TestPredictZeroGapsSkipped: a gap of 0 is no idle period (docs/model.md §1.1): not
// decided, not counted, reported apart (item 4).
func TestPredictZeroGapsSkipped(t *testing.T) {
	gaps := writeFile(t, "g.txt", "0\n5us\n0\n0ns\n1us\n")
	s := predictJSON(t, "--predictor", "fixed", "--pdt", "2us", gaps)
	without := predictJSON(t, "--predictor", "fixed", "--pdt", "2us", writeFile(t, "nz.txt", "5us\n1us\n"))
	if s.IdlePeriods != 2 || s.ZeroGapsSkipped != 3 || s.Hits != 1 || s.Misses != 1 || without.ZeroGapsSkipped != 0 {
		t.Errorf("summary %+v", s)
	}
	s.ZeroGapsSkipped = 0
	if s != without {
		t.Errorf("zero gaps changed the replay:\n%+v\n%+v", s, without)
	}
	code, out, _ := lpictl(t, "predict", "--trace", "--predictor", "fixed", "--pdt", "2us", gaps)
	if code != 0 || !strings.Contains(out, "zero gaps skipped             3") || strings.Count(out, " hit ")+strings.Count(out, " miss ") != 2 {
		t.Errorf("trace: exit %d\n%s", code, out)
	}
	_, out, _ = lpictl(t, "predict", "--predictor", "fixed", "--pdt", "2us", writeFile(t, "n.txt", "5us\n"))
	if strings.Contains(out, "zero gaps") {
		t.Errorf("zero-gap line without zero gaps:\n%s", out)
	}
}

// TestPredictOverflowRejected: gaps whose running sum overflowed were
// accepted and printed a negative start time (item 7).
func TestPredictOverflowRejected(t *testing.T) {
	for in, want := range map[string]string{
		"2562047h\n2562047h\n2562047h\n": "g.txt:1: gap 2562047h0m0s is longer than the picosecond clock holds",
		"1us\n2000h\n2000h\n":            "g.txt:3: time overflows",
	} {
		code, out, errs := lpictl(t, "predict", "--trace", writeFile(t, "g.txt", in))
		if code != 2 || out != "" || !strings.Contains(errs, want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2, nothing, %q", in, code, out, errs, want)
		}
	}
}

// TestPredictNoStdoutOnError: --trace printed the decisions before the bad
// line, then exited 2 (item 8). Output is now written only after the whole
// input has replayed.
func TestPredictNoStdoutOnError(t *testing.T) {
	for name, in := range map[string]string{
		"NaN after a gap":   "100\nNaN\n",
		"negative late":     "1us\n2us\n3us\n-1us\n",
		"bad trace row":     "start_ps,gap_ps,pdt_ps,outcome,delay_ps,sent\n0,5000,1000,miss,0,\n4000,5,1000,hit,0,\n",
		"out of order rows": "start_ps,gap_ps,pdt_ps,outcome,delay_ps,sent\n10000,5000,1000,miss,0,\n0,5,1000,hit,0,\n",
	} {
		for _, extra := range [][]string{{"--trace"}, {"--trace", "--json"}, nil} {
			args := append(append([]string{"predict"}, extra...), writeFile(t, "in.txt", in))
			code, out, errs := lpictl(t, args...)
			if code != 2 || out != "" || !strings.Contains(errs, "in.txt:") {
				t.Errorf("%s %v: exit %d, stdout %q, stderr %q", name, extra, code, out, errs)
			}
		}
	}
}

// TestPredictSilentAcceptance: flags and inputs that used to be accepted and
// ignored or replaced are errors (item 9).
func TestPredictSilentAcceptance(t *testing.T) {
	gaps := writeFile(t, "g.txt", "1us\n20us\n")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"--pdt without fixed", []string{"--pdt", "5us"}, "--pdt: only used by predictor fixed; the predictor is perfboundcorrect"},
		{"--pdt with perfbound from a file", []string{"--set", "predictor.kind=perfbound", "--pdt", "5us"}, "--pdt: only used by predictor fixed; the predictor is perfbound"},
		{"--history with perfbound", []string{"--predictor", "perfbound", "--history", "8"}, "--history: only used by predictors perfboundcorrect, perfboundcorrect-weighted; the predictor is perfbound"},
		{"--bound with fixed", []string{"--predictor", "fixed", "--pdt", "1us", "--bound", "0.05"}, "--bound: only used by predictors perfbound, perfboundcorrect, perfboundcorrect-weighted, ngram; the predictor is fixed"},
		{"--initial-pdt with fixed", []string{"--set", "predictor.kind=fixed", "--set", "predictor.pdt=1us", "--initial-pdt", "1us"}, "--initial-pdt: only used by predictors perfbound"},
		{"--bound 0", []string{"--bound", "0"}, "--bound: must be in (0, 1], got 0"},
		{"--bound 2", []string{"--bound", "2"}, "--bound: must be in (0, 1], got 2"},
		{"--max-records 0", []string{"--max-records", "0"}, "--max-records: must be ≥ 1, got 0"},
		{"--history 0", []string{"--history", "0"}, "--history: must be ≥ 1, got 0"},
		{"--ttl 0", []string{"--ttl", "0"}, "--ttl: must be > 0"},
		{"--bin-width 0", []string{"--bin-width", "0s"}, "--bin-width: must be > 0"},
		{"--max-value 0", []string{"--max-value", "0"}, "--max-value: must be > 0"},
		{"--wake-time 0", []string{"--wake-time", "0"}, "--wake-time: must be > 0"},
		{"empty --strategy", []string{"--strategy", ""}, "--strategy: empty value"},
		{"empty --preset", []string{"--preset", " "}, "--preset: empty value"},
		{"initial_pdt above max_value", []string{"--initial-pdt", "20ms"}, "predictor.initial_pdt: 20ms is above histogram.max_value (10ms)"},
		{"initial_pdt above max_value by --set", []string{"--set", "predictor.histogram.max_value=5us"}, "predictor.initial_pdt: 10µs is above histogram.max_value (5µs)"},
		{"empty gap file", []string{writeFile(t, "e.txt", "# nothing\n\n")}, "e.txt: no idle periods to replay: the gap file has no gaps"},
		{"only zero gaps", []string{writeFile(t, "z.txt", "0\n0\n")}, "z.txt: no idle periods to replay: all 2 gaps are 0"},
		{"empty port trace", []string{writeFile(t, "t.csv", "start_ps,gap_ps,pdt_ps,outcome,delay_ps,sent\n")}, "t.csv: no idle periods to replay: the port trace has no rows"},
		{"t_w too long", []string{"--wake-time", "2h"}, "predictor.wake_time (--wake-time): t_w must be ≤ 1h0m0s, got 2h0m0s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"predict"}, tc.args...)
			if !strings.HasSuffix(args[len(args)-1], ".txt") && !strings.HasSuffix(args[len(args)-1], ".csv") {
				args = append(args, gaps)
			}
			code, out, errs := lpictl(t, args...)
			if code != 2 || out != "" || !strings.Contains(errs, tc.want) || strings.Count(errs, "\n") != 1 {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2, nothing, %q", code, out, errs, tc.want)
			}
		})
	}
	// Config keys of other kinds are ignored (documented), so a file can
	// switch kinds: fixed.yaml's pdt with --predictor perfbound is fine.
	if s := predictJSON(t, "-c", "../../configs/predict/fixed.yaml", "--predictor", "perfbound", gaps); s.Predictor != "perfbound" {
		t.Errorf("kind switch: %+v", s)
	}
	if s := predictJSON(t, "--initial-pdt", "10ms", gaps); s.PDTMaxS != 0.01 {
		t.Errorf("initial_pdt = max_value: %+v", s)
	}
}

// TestPredictHandshake: predict models the simulator's power-down handshake
// 2H (item 10), by default the simulator's H for the preset's link rate.
func TestPredictHandshake(t *testing.T) {
	gaps := writeFile(t, "g.txt", "1us\n")
	fixed := []string{"--predictor", "fixed", "--pdt", "1us"}
	// 400 Gb/s: H = 64 B × 8 / 400 Gb/s + 10 ns = 11.28 ns; the packet at
	// t_PDT waits 2H + t_s + t_w = 22.56 ns + 2 µs + 4.48 µs.
	s := predictJSON(t, append(fixed, gaps)...)
	if s.HandshakeS != 11.28e-9 || s.Misses != 1 || s.AddedDelayS != 6.50256e-6 {
		t.Errorf("default at 400G: %+v", s)
	}
	// 100 Gb/s: 5.12 ns + 10 ns.
	if s := predictJSON(t, append(fixed, "--preset", "eee-100g", gaps)...); s.HandshakeS != 15.12e-9 {
		t.Errorf("default at 100G: handshake %v", s.HandshakeS)
	}
	if s := predictJSON(t, append(fixed, "--handshake", "0", gaps)...); s.HandshakeS != 0 || s.AddedDelayS != 6.48e-6 {
		t.Errorf("--handshake 0: %+v", s)
	}
	cfg := writeFile(t, "p.yaml", "handshake: 100ns\npredictor:\n  kind: fixed\n  pdt: 1us\n")
	if s := predictJSON(t, "-c", cfg, gaps); s.HandshakeS != 1e-7 || s.AddedDelayS != 6.68e-6 {
		t.Errorf("handshake key: %+v", s)
	}
	if s := predictJSON(t, "-c", cfg, "--handshake", "1.5ns", gaps); s.HandshakeS != 1.5e-9 {
		t.Errorf("--handshake over the key: %+v", s)
	}
	code, out, _ := lpictl(t, append([]string{"predict", "--trace"}, append(fixed, gaps)...)...)
	if code != 0 || !strings.Contains(out, "6.50256µs") || !strings.Contains(out, "(t_w 4.48µs, t_s 2µs, handshake 11.28ns)") {
		t.Errorf("trace: exit %d\n%s", code, out)
	}
	for _, tc := range []struct{ args []string }{
		{[]string{"--handshake", "-1ns"}},
		{[]string{"--handshake", "fast"}},
		{[]string{"--handshake", "2h"}},
		{[]string{"--set", "handshake=soon"}},
	} {
		code, out, errs := lpictl(t, append(append([]string{"predict"}, tc.args...), gaps)...)
		if code != 2 || out != "" || !strings.Contains(errs, "handshake") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", tc.args, code, out, errs)
		}
	}
}

// handBuiltTrace is the hand-built trace of controller/replay (its
// decisions are worked out in TestReplayTraceHandBuilt) and the predict
// configuration it was built for.
const handBuiltTrace = "../../controller/replay/testdata/port_trace.csv"

var handBuiltArgs = []string{"--predictor", "perfbound", "--bound", "1", "--strategy", "unbounded",
	"--bin-width", "1us", "--max-value", "1ms", "--initial-pdt", "5us", "--wake-time", "20us", "--sleep-time", "2us",
	"--set", "controller.ledger=off", "--set", "predictor.histogram.search=populated"} // as the trace was built

// TestPredictPortTrace: predict reads a simulator port trace, replays it
// with its start times and hop counts, and reports the agreement with the
// simulator's decisions (item 10).
func TestPredictPortTrace(t *testing.T) {
	s := predictJSON(t, append(handBuiltArgs, handBuiltTrace)...)
	if a := s.Agreement; a == nil || a.Decisions != 3 || a.Matching != 3 || a.FirstMismatch != nil ||
		s.IdlePeriods != 3 || s.Misses != 2 || s.HandshakeS != 11.28e-9 {
		t.Errorf("summary %+v agreement %+v", s, s.Agreement)
	}
	code, out, errs := lpictl(t, append(append([]string{"predict", "--trace"}, handBuiltArgs...), handBuiltTrace)...)
	if code != 0 || !strings.Contains(out, "sim t_PDT") || strings.Count(out, " yes") != 3 ||
		!strings.Contains(out, "simulator agreement           3 of 3 decisions") || strings.Contains(out, "first mismatch") {
		t.Errorf("trace: exit %d %s\n%s", code, errs, out)
	}

	// A trace decided otherwise: the second row's simulator answer is
	// changed to 10.5 µs, a miss.
	data, err := os.ReadFile(handBuiltTrace)
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(data), "31000000,10900000,11000000,hit,0,", "31000000,10900000,10500000,miss,20000000,", 1)
	file := writeFile(t, "trace.csv", bad)
	s = predictJSON(t, append(handBuiltArgs, file)...)
	m := s.Agreement.FirstMismatch
	if s.Agreement.Matching != 2 || m == nil || *m != (replay.SummaryMismatch{Line: 7, IdlePeriod: 2, SimPDTPS: 10_500_000, ReplayPDTPS: 11_000_000, SimOutcome: "miss", ReplayOutcome: "hit"}) {
		t.Errorf("mismatch: %+v %+v", s.Agreement, m)
	}
	_, out, _ = lpictl(t, append(append([]string{"predict"}, handBuiltArgs...), file)...)
	if !strings.Contains(out, "simulator agreement           2 of 3 decisions") ||
		!strings.Contains(out, "first mismatch                line 7") ||
		!strings.Contains(out, "(idle period 2: sim t_PDT 10.5µs miss, replay 11µs hit)") {
		t.Errorf("text summary:\n%s", out)
	}
	// A gap file has no agreement section.
	if s := predictJSON(t, writeFile(t, "g.txt", "1us\n")); s.Agreement != nil {
		t.Errorf("agreement for a gap file: %+v", s.Agreement)
	}
}

// TestPredictAgentTraceUsesItsController: a port trace written by the
// agent names its controller (predictor, settings and the time it was
// built); predict replays through that controller, reproducing every
// decision, unless the command line chooses a predictor.
func TestPredictAgentTraceUsesItsController(t *testing.T) {
	// The agent recomputes at most once per interval, counted from when it
	// built the controller.
	spec := agent.PortSpec{
		Predictor: predictor.Config{Kind: predictor.KindPerfBoundCorrect, Bound: 0.05,
			WakeTime: predictor.Duration(4480 * time.Nanosecond)},
		Controller: controller.Config{Recompute: controller.OnInterval, Interval: predictor.Duration(time.Millisecond)},
	}
	ti := agent.TraceInfo{Device: "veth0", Backend: "hw", Mode: "enforce", Opened: 59500 * time.Microsecond, Spec: spec}
	// Rows every 20 µs from 60 ms with gaps of 1–15 µs; their t_PDT are
	// what the agent's controller (built at 59.5 ms) decides.
	var rows []replay.TraceRow
	start := replay.PS(60e9)
	for i := 0; i < 200; i++ {
		gap := replay.PS((1 + (i*7)%15) * 1e6)
		rows = append(rows, replay.TraceRow{Line: i + 5, Start: start, Gap: gap, Sent: []replay.HopCount{{Hops: 3, Packets: 2}}})
		start += gap + 20e6
	}
	ctl, err := ti.NewController()
	if err != nil {
		t.Fatal(err)
	}
	steps, _, err := replay.ReplayTrace(ctl, replay.Timing{Wake: 4480 * time.Nanosecond, Sleep: 2 * time.Microsecond}, rows)
	if err != nil {
		t.Fatal(err)
	}
	head, _ := json.Marshal(ti)
	var b strings.Builder
	b.WriteString("# lpictl agent port trace of veth0\n# controller: " + string(head) + "\n" + replay.TraceHeader + "\n")
	for i, r := range rows {
		outcome := "hit"
		if steps[i].Missed {
			outcome = "miss"
		}
		fmt.Fprintf(&b, "%d,%d,%d,%s,%d,3:2\n", r.Start, r.Gap, steps[i].PDTPS(), outcome, steps[i].Delay)
	}
	file := writeFile(t, "veth0.port_trace.csv", b.String())
	s := predictJSON(t, "--handshake", "0", file)
	if a := s.Agreement; a == nil || a.Matching != 200 || s.Predictor != predictor.KindPerfBoundCorrect {
		t.Errorf("with the trace's controller: %+v, predictor %s; want 200 of 200", s.Agreement, s.Predictor)
	}
	// Chosen on the command line (built at time 0, recomputing on every
	// idle period) the controller decides otherwise.
	if s := predictJSON(t, "--handshake", "0", "--predictor", "perfboundcorrect", "--bound", "0.05", file); s.Agreement == nil || s.Agreement.Matching == 200 {
		t.Errorf("with a time-0 controller: %+v; want disagreement", s.Agreement)
	}
}

// TestPredictWhatIf: gaps 1, 3, 10, 0 and 50 µs on eee-400g deep sleep
// (t_s 2 µs, t_w 4.48 µs, 24 W awake, 2.4 W asleep). A gap file has no
// busy time: the periods are [0,1] [1,4] [4,14] [14,64] µs (the 0 is
// skipped); always-on energy 24 W × 64 µs = 1536 µJ.
func TestPredictWhatIf(t *testing.T) {
	gaps := writeFile(t, "gaps.txt", "# tiny\n1us\n3us\n10us\n0\n50us\n")
	code, out, errs := lpictl(t, "predict", "--what-if", "--json", "--mode", "deep-sleep",
		"--predictor", "fixed", "--pdt", "3us", "--driver-default", "1ms", gaps)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var raw map[string]any
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"preset", "handshake_s", "input", "idle_periods", "zero_gaps_skipped", "elapsed_s", "idle_time_s", "idle_share", "results"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	rows := raw["results"].([]any)
	for _, k := range []string{"policy", "kind", "mode", "pdt_mean_s", "idle_periods", "absorbed", "hits", "misses", "wakeups",
		"low_power_s", "low_power_share", "energy_j", "always_on_energy_j", "saved_j", "saved_w", "saved_pct",
		"added_delay_s", "added_delay_per_idle_period_s"} {
		if _, ok := rows[0].(map[string]any)[k]; !ok {
			t.Errorf("JSON results lack %q (even for always-on)", k)
		}
	}
	var s whatIfSummary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	if s.Preset != "eee-400g" || s.Input != "gaps" || s.IdlePeriods != 4 || s.ZeroGaps != 1 || s.ElapsedS != 64e-6 || s.IdleShare != 1 {
		t.Errorf("summary %+v", s)
	}
	type want struct {
		policy                            string
		hits, misses, absorbed, wakeups   uint64
		lowUs, delayUs, savedUJ, pdtMeanS float64
	}
	for i, w := range []want{
		{policy: "always-on", hits: 4},
		// eee: [0,1] misses (down 0–2, waits 1 + 4.48, ready at 6.48);
		// [1,4] ends while waking: absorbed, waits 6.48 − 4 = 2.48; [4,14]
		// runs from 6.48: asleep 8.48–14 = 5.52; [14,64] from 18.48: asleep
		// 20.48–64 = 43.52; each waits 4.48. Saved 21.6 W × 49.04 µs.
		{policy: "eee", misses: 3, absorbed: 1, wakeups: 3, lowUs: 49.04, delayUs: 5.48 + 2.48 + 2*4.48, savedUJ: 21.6 * 49.04},
		// fixed 10 µs: 1 and 3 hit; 10 = t_PDT misses (down 14–16, waits
		// 2 + 4.48, ready 20.48); [14,64] from 20.48: down 30.48–32.48,
		// asleep until 64 = 31.52, waits 4.48.
		{policy: "fixed-10µs", hits: 2, misses: 2, wakeups: 2, lowUs: 31.52, delayUs: 6.48 + 4.48, savedUJ: 21.6 * 31.52, pdtMeanS: 10e-6},
		// predictor (fixed 3 µs): 1 hits; 3 misses (down 4–6, waits 6.48,
		// ready 10.48); [4,14] from 10.48 (3.52 µs ≥ 3): down 13.48–15.48,
		// waits 15.48 − 14 + 4.48 = 5.96, ready 19.96; [14,64] from 19.96:
		// asleep 24.96–64 = 39.04, waits 4.48.
		{policy: "predictor", hits: 1, misses: 3, wakeups: 3, lowUs: 39.04, delayUs: 6.48 + 5.96 + 4.48, savedUJ: 21.6 * 39.04, pdtMeanS: 3e-6},
		// driver-default 1 ms: all hit.
		{policy: "driver-default", hits: 4, pdtMeanS: 1e-3},
	} {
		r := s.Results[i]
		near := func(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 }
		if r.Policy != w.policy || r.Mode != "deep-sleep" || r.Hits != w.hits || r.Misses != w.misses || r.Absorbed != w.absorbed ||
			r.WakeUps != w.wakeups || r.IdlePeriods != w.hits+w.misses ||
			!near(r.LowPowerS*1e6, w.lowUs) || !near(r.AddedDelayS*1e6, w.delayUs) || !near(r.SavedJ*1e6, w.savedUJ) ||
			!near(r.AlwaysOnEnergyJ*1e6, 1536) || !near(r.SavedPct, 100*w.savedUJ/1536) || !near(r.SavedW, w.savedUJ/64) ||
			!near(r.LowPowerShare, w.lowUs/64) || !near(r.AddedDelayPerIdleS*1e6, w.delayUs/4) || !near(r.PDTMeanS, w.pdtMeanS) {
			t.Errorf("row %d: %+v, want %+v", i, r, w)
		}
	}

	// The text table has a row per policy × mode (both modes by default),
	// and the optimum's per mode.
	code, out, errs = lpictl(t, "predict", "--what-if", gaps)
	if code != 0 || strings.Count(out, "fast-wake") != 5 || strings.Count(out, "deep-sleep") != 5 ||
		!strings.Contains(out, "4 idle periods (gaps), idle 64µs of 64µs (100.0 %), 1 zero gaps skipped") {
		t.Errorf("text: exit %d %s\n%s", code, errs, out)
	}

	for _, c := range []struct{ args, want string }{
		{"--what-if --trace", "--trace: not used by --what-if"},
		{"--what-if --sleep-time 1us", "--sleep-time: not used by --what-if"},
		{"--driver-default 1ms", "--driver-default: only used with --what-if"},
		{"--what-if --driver-default 0", "--driver-default"},
		{"--what-if --mode hybrid", "modes[0]"},
		{"--what-if --handshake 1.5ns", "whole nanoseconds"},
	} {
		code, out, errs := lpictl(t, append(append([]string{"predict"}, strings.Fields(c.args)...), gaps)...)
		if code != 2 || out != "" || !strings.Contains(errs, c.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 2 naming %q", c.args, code, out, errs, c.want)
		}
	}
}

// TestPredictWhatIfPortTrace: a port trace gives each period's start, so
// busy time counts: periods [10,11] [21,24] [34,44] [54,104] µs, elapsed
// 104 µs, idle 64 µs. Fixed 10 µs, deep sleep: 1 and 3 hit; 10 misses
// (down 44–46, waits 6.48); 50 misses (asleep 66–104 = 38 µs, waits 4.48).
func TestPredictWhatIfPortTrace(t *testing.T) {
	trace := writeFile(t, "port_trace.csv", "start_ps,gap_ps,pdt_ps,outcome,delay_ps,sent\n"+
		"10000000,1000000,10000000,hit,0,\n21000000,3000000,10000000,hit,0,\n"+
		"34000000,10000000,10000000,miss,6480000,\n54000000,50000000,10000000,miss,4480000,\n")
	code, out, errs := lpictl(t, "predict", "--what-if", "--json", "--mode", "deep-sleep", trace)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var s whatIfSummary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	if s.Input != "port-trace" || s.IdlePeriods != 4 || s.ElapsedS != 104e-6 || s.IdleTimeS != 64e-6 {
		t.Errorf("summary %+v", s)
	}
	r := s.Results[2]
	near := func(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 }
	if r.Policy != "fixed-10µs" || r.Hits != 2 || r.Misses != 2 || !near(r.LowPowerS*1e6, 38) ||
		!near(r.AddedDelayS*1e6, 10.96) || !near(r.SavedJ*1e6, 21.6*38) || !near(r.AlwaysOnEnergyJ*1e6, 24*104) {
		t.Errorf("fixed 10 µs: %+v", r)
	}
}
