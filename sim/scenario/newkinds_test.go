package scenario

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
)

// TestNewPredictorKinds runs the shipped quick scenario, shortened, with the
// n-gram and recency-weighted predictors: each runs, reports its kind and
// some idle periods, and gives byte-identical JSON twice. With decay 1 the
// weighted predictor is PerfBoundCorrect, so the run's results are
// PerfBoundCorrect's but for the predictor's name.
func TestNewPredictorKinds(t *testing.T) {
	run := func(sets ...string) Report {
		t.Helper()
		var reports [2][]byte
		var r Report
		for i := range reports {
			s, err := Load("../../configs/sim/quick.yaml", append([]string{"workload.duration=100us"}, sets...))
			if err != nil {
				t.Fatal(err)
			}
			o, err := Run(context.Background(), s, nil)
			if err != nil {
				t.Fatalf("%v: %v", sets, err)
			}
			var b bytes.Buffer
			if err := o.WriteJSON(&b, false); err != nil {
				t.Fatal(err)
			}
			reports[i], r = b.Bytes(), o.Report
		}
		if !bytes.Equal(reports[0], reports[1]) {
			t.Errorf("%v: two runs differ:\n%s\n%s", sets, reports[0], reports[1])
		}
		return r
	}
	for _, tc := range []struct {
		kind string
		sets []string
	}{
		{"ngram", []string{"predictor.kind=ngram"}},
		{"ngram", []string{"predictor.kind=ngram", "predictor.ngram.n=1", "predictor.ngram.classes=5", "predictor.ngram.table_size=2"}},
		{"perfboundcorrect-weighted", []string{"predictor.kind=perfboundcorrect-weighted", "predictor.decay=0.5"}},
	} {
		r := run(tc.sets...)
		if r.Predictor != tc.kind || r.Hits+r.Misses == 0 || r.Packets == 0 {
			t.Errorf("%v: predictor %q, hits %d, misses %d, packets %d", tc.sets, r.Predictor, r.Hits, r.Misses, r.Packets)
		}
	}
	w := run("predictor.kind=perfboundcorrect-weighted", "predictor.decay=1")
	p := run("predictor.kind=perfboundcorrect")
	w.Predictor = p.Predictor
	a, _ := json.Marshal(w)
	b, _ := json.Marshal(p)
	if !bytes.Equal(a, b) {
		t.Errorf("decay 1 differs from perfboundcorrect:\n%s\n%s", a, b)
	}
}
