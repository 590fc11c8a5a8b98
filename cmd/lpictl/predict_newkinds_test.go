package main

import (
	"reflect"
	"strings"
	"testing"
)

// TestPredictNewKinds replays the shipped gap file through the n-gram and
// recency-weighted predictors, chosen by flag, by key and by their example
// configs: exit 0, the kind reported, a plausible summary, and the same
// output twice.
func TestPredictNewKinds(t *testing.T) {
	gaps := "../../configs/predict/gaps-demo.txt"
	for _, tc := range []struct {
		kind string
		args []string
	}{
		{"ngram", []string{"--predictor", "ngram"}},
		{"ngram", []string{"--predictor", "NGram", "--set", "predictor.ngram.n=3", "--set", "predictor.ngram.confidence=0.75"}},
		{"ngram", []string{"-c", "../../configs/predict/ngram.yaml"}},
		{"perfboundcorrect-weighted", []string{"--predictor", "perfboundcorrect-weighted"}},
		{"perfboundcorrect-weighted", []string{"--set", "predictor.kind=perfboundcorrect-weighted", "--set", "predictor.decay=0.5"}},
		{"perfboundcorrect-weighted", []string{"-c", "../../configs/predict/perfboundcorrect-weighted.yaml"}},
		// The histogram flags reach the PerfBound inside both.
		{"ngram", []string{"--predictor", "ngram", "--bound", "0.02", "--strategy", "circular"}},
		{"perfboundcorrect-weighted", []string{"--predictor", "perfboundcorrect-weighted", "--history", "16", "--bin-width", "200ns"}},
	} {
		args := append(append([]string{}, tc.args...), gaps)
		s := predictJSON(t, args...)
		if string(s.Predictor) != tc.kind || s.IdlePeriods != 2907 || s.Hits+s.Misses != s.IdlePeriods ||
			s.AsleepShare < 0 || s.AsleepShare >= 1 || s.Decisions == 0 || s.StateBytes <= 0 ||
			s.PDTMinS < 0 || s.PDTMaxS > 10e-3+100e-9 {
			t.Errorf("%v: implausible summary %+v", tc.args, s)
		}
		_, a, _ := lpictl(t, append([]string{"predict", "--json"}, args...)...)
		_, b, _ := lpictl(t, append([]string{"predict", "--json"}, args...)...)
		if a != b {
			t.Errorf("%v: two runs differ", tc.args)
		}
	}
	// decay 1 is PerfBoundCorrect: the same replay, but for the kind's name.
	w := predictJSON(t, "--set", "predictor.kind=perfboundcorrect-weighted", "--set", "predictor.decay=1", gaps)
	p := predictJSON(t, "--predictor", "perfboundcorrect", gaps)
	w.Predictor = p.Predictor
	if !reflect.DeepEqual(w, p) {
		t.Errorf("decay 1:\n%+v\nperfboundcorrect:\n%+v", w, p)
	}
}

// TestPredictNewKindsBadKeys: a bad value of a new key exits 2 with one
// line naming the key, and nothing on stdout.
func TestPredictNewKindsBadKeys(t *testing.T) {
	gaps := writeFile(t, "g.txt", "1us\n20us\n3us\n")
	bad := writeFile(t, "b.yaml", "predictor:\n  kind: ngram\n  ngram:\n    window: 3\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--predictor", "ngram", "--set", "predictor.ngram.n=0.5"}, "predictor.ngram.n"},
		{[]string{"--predictor", "ngram", "--set", "predictor.ngram.n=99"}, "predictor.ngram.n: must be in 1..15, got 99"},
		{[]string{"--predictor", "ngram", "--set", "predictor.ngram.classes=1"}, "predictor.ngram.classes: must be in 2..16, got 1"},
		{[]string{"--predictor", "ngram", "--set", "predictor.ngram.table_size=100000"}, "predictor.ngram.table_size"},
		{[]string{"--predictor", "ngram", "--set", "predictor.ngram.confidence=2"}, "predictor.ngram.confidence: must be in (0, 1], got 2"},
		{[]string{"--predictor", "ngram", "--set", "predictor.ngram.min_count=300"}, "predictor.ngram.min_count"},
		{[]string{"--predictor", "ngram", "--set", "predictor.ngram.break_even=1us"}, "predictor.ngram.break_even: 1µs must be above wake_time (4.48µs)"},
		{[]string{"-c", bad}, `b.yaml: line 4: unknown key "predictor.ngram.window"`},
		{[]string{"--predictor", "perfboundcorrect-weighted", "--set", "predictor.decay=1.5"}, "predictor.decay: must be in (0, 1]"},
		{[]string{"--predictor", "perfboundcorrect-weighted", "--set", "predictor.decay=-0.1"}, "predictor.decay"},
	} {
		code, out, errs := lpictl(t, append(append([]string{"predict"}, tc.args...), gaps)...)
		if code != 2 || !strings.Contains(errs, tc.want) || strings.Count(strings.TrimRight(errs, "\n"), "\n") != 0 || out != "" {
			t.Errorf("%v: exit %d, stderr %q (want exit 2, one line containing %q, no stdout)", tc.args, code, errs, tc.want)
		}
	}
}
