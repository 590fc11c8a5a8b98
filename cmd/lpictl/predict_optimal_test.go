package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/lpictl/lpictl/controller/replay"
)

func TestPredictOptimal(t *testing.T) {
	// t_w 4 µs, t_s 2 µs, no handshake, bound 5 %: as replay's hand-computed
	// case, two sleeps in the 100 and 50 µs gaps.
	gaps := writeFile(t, "g.txt", "1us\n5us\n0\n100us\n50us\n3us\n")
	args := []string{"predict", "--predictor", "optimal", "--wake-time", "4us", "--sleep-time", "2us", "--handshake", "0", "--bound", "0.05"}
	code, out, errs := lpictl(t, append(args, "--json", gaps)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var s replay.OptimalSummary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	if s.Predictor != "optimal" || s.IdlePeriods != 5 || s.ZeroGapsSkipped != 1 || s.Misses != 2 || s.Hits != 3 ||
		math.Abs(s.AsleepTimeS-146e-6) > 1e-15 || math.Abs(s.AddedDelayS-8e-6) > 1e-15 || s.UsefulPeriods != 4 ||
		s.Rate != 0.05 || !s.Exact || s.DeepMisses != nil {
		t.Errorf("%+v", s)
	}
	code, out, _ = lpictl(t, append(args, gaps)...)
	for _, want := range []string{"optimal", "hits / misses", "3 / 2", "time asleep", "146µs of 159µs idle", "delay budget", "8.368421µs"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	// Hybrid: deep_misses and deep sleep time are reported.
	code, out, errs = lpictl(t, "predict", "--predictor", "optimal", "--mode", "hybrid", "--json", "../../configs/predict/gaps-demo.txt")
	if code != 0 {
		t.Fatalf("hybrid: exit %d: %s", code, errs)
	}
	s = replay.OptimalSummary{}
	if err := json.Unmarshal([]byte(out), &s); err != nil || s.DeepMisses == nil || s.DeepSleepTimeS == nil || s.OfBudget > 1 || s.SavingS <= 0 {
		t.Errorf("hybrid: %v %+v", err, s)
	}
}

func compareJSON(t *testing.T, args ...string) []replay.CompareRow {
	t.Helper()
	code, out, errs := lpictl(t, append([]string{"predict", "--compare", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rows []replay.CompareRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return rows
}

func TestPredictCompare(t *testing.T) {
	gaps := "../../configs/predict/gaps-demo.txt"
	rows := compareJSON(t, gaps)
	names := make([]string, len(rows))
	for i, r := range rows {
		names[i] = r.Predictor
	}
	if got := strings.Join(names, ","); got != "perfbound,perfboundcorrect,ngram,perfboundcorrect-weighted,nextgap,optimal" {
		t.Errorf("rows %s (fixed only with --pdt, optimal last)", got)
	}
	opt := rows[len(rows)-1]
	if opt.OfOptimum == nil || *opt.OfOptimum != 1 || opt.OfBudget > 1 || opt.IdlePeriods != 2907 || opt.Held != nil {
		t.Errorf("optimal row %+v", opt)
	}
	// Each predictor's row is its own replay's; the adaptive ones run
	// under the ledger (controller.ledger: auto) and report held periods.
	for _, r := range rows[:len(rows)-1] {
		if r.Held == nil || r.OfBudget > 1 {
			t.Errorf("%s: held %v, of budget %v: want the ledger's count and at most the budget", r.Predictor, r.Held, r.OfBudget)
		}
		s := predictJSON(t, "--predictor", r.Predictor, gaps)
		if s.Misses != r.Misses || s.AsleepTimeS != r.AsleepS || s.AddedDelayS != r.AddedDelayS {
			t.Errorf("%s: compare %+v, replay %+v", r.Predictor, r, s)
		}
		// Within its budget, no predictor sleeps more than the optimum.
		if r.OfBudget <= opt.OfBudget && *r.OfOptimum > 1 {
			t.Errorf("%s sleeps more than the optimum within the budget: %+v", r.Predictor, r)
		}
	}
	// Same flags for all: --pdt adds fixed first; --bound changes the optimum.
	rows = compareJSON(t, "--pdt", "10us", "--bound", "0.05", "--history", "16", gaps)
	if rows[0].Predictor != "fixed" || len(rows) != 7 || rows[6].AsleepS <= opt.AsleepS {
		t.Errorf("--pdt/--bound: %+v", rows)
	}
	// Without the ledger: no held column; fixed (with --pdt) has none under auto.
	for _, r := range compareJSON(t, "--set", "controller.ledger=off", gaps) {
		if r.Held != nil {
			t.Errorf("ledger off: %s held %v", r.Predictor, *r.Held)
		}
	}
	_, text, _ := lpictl(t, "predict", "--compare", "--set", "controller.ledger=off", gaps)
	if strings.Contains(text, "held") {
		t.Errorf("held column without a ledger:\n%s", text)
	}
	// Deterministic.
	_, a, _ := lpictl(t, "predict", "--compare", "--mode", "hybrid", gaps)
	_, b, _ := lpictl(t, "predict", "--compare", "--mode", "hybrid", gaps)
	if a != b || !strings.Contains(a, "of optimum (energy)") || !strings.Contains(a, "deep)") {
		t.Errorf("hybrid text:\n%s\n%s", a, b)
	}
}

func TestPredictComparePortTrace(t *testing.T) {
	trace := writeFile(t, "port_trace.csv", "start_ps,gap_ps,pdt_ps,outcome,delay_ps,sent\n"+
		"0,50000000,1000,miss,0,2:4\n60000000,300000,1000,hit,0,1:1\n70000000,80000000,1000,miss,0,\n")
	rows := compareJSON(t, "--bound", "0.1", trace)
	opt := rows[len(rows)-1]
	// Hop factor (4/2 + 1)/5 = 0.6: l = 0.06 over the span 150 µs, a
	// budget of 9 µs: two deep-sleep wake-ups (4.48 µs).
	if opt.Misses != 2 || math.Abs(opt.ElapsedS-150e-6) > 1e-15 || math.Abs(opt.BudgetS-9e-6) > 1e-15 {
		t.Errorf("optimal row %+v", opt)
	}
	for _, r := range rows {
		if r.ElapsedS != opt.ElapsedS {
			t.Errorf("%s: T %v, want the trace's span", r.Predictor, r.ElapsedS)
		}
	}
}

func TestPredictWhatIfOptimalRow(t *testing.T) {
	code, out, errs := lpictl(t, "predict", "--what-if", "--json", "../../configs/predict/gaps-demo.txt")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var s whatIfSummary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	n := len(s.Results)
	if n < 2 || s.Results[n-2].Policy != "optimal" || s.Results[n-1].Policy != "optimal" ||
		s.Results[n-2].Mode != "fast-wake" || s.Results[n-1].Mode != "deep-sleep" {
		t.Fatalf("results %+v", s.Results)
	}
	for _, r := range s.Results[n-2:] {
		if r.AddedDelayS > 0.01*s.ElapsedS*(1+1e-12) || r.SavedPct <= 0 || r.Misses != r.WakeUps {
			t.Errorf("optimal row %+v (elapsed %v)", r, s.ElapsedS)
		}
	}
}

func TestPredictOptimalBadInput(t *testing.T) {
	gaps := writeFile(t, "g.txt", "1us\n2us\n")
	bad := writeFile(t, "bad.txt", "1us\n\nsoon\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--predictor", "optimal", "--pdt", "1us", gaps}, "--pdt: not used by the offline optimum"},
		{[]string{"--predictor", "optimal", "--trace", gaps}, "--trace: not used by --predictor optimal"},
		{[]string{"--compare", "--predictor", "perfbound", gaps}, "--predictor: not used by --compare"},
		{[]string{"--compare", "--what-if", gaps}, "--what-if: not used with --compare"},
		{[]string{"--compare", bad}, `bad.txt:3: invalid duration "soon"`},
		{[]string{"--predictor", "optimal", bad}, `bad.txt:3: invalid duration "soon"`},
		{[]string{"--predictor", "optimul", gaps}, "or optimal (the offline optimum)"},
		{[]string{"--compare", writeFile(t, "z.txt", "0\n")}, "no idle periods"},
	} {
		code, out, errs := lpictl(t, append([]string{"predict"}, tc.args...)...)
		if code != 2 || !strings.Contains(errs, tc.want) || out != "" || strings.Count(strings.TrimRight(errs, "\n"), "\n") != 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.args, code, out, errs, tc.want)
		}
	}
}
