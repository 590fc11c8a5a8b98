package workload

import (
	"testing"

	"github.com/lpictl/lpictl/sim/workload/apps"
)

func runIdeal(t testing.TB, w *Workload) Stats {
	t.Helper()
	r, err := w.NewReplayer()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := NewIdealHost().Run(r); err != nil {
		t.Fatal(err)
	}
	return r.Stats()
}

func TestModelsRun(t *testing.T) {
	for _, kind := range apps.Kinds() {
		t.Run(kind, func(t *testing.T) {
			cfg := Config{Kind: kind, Ranks: 24, Steps: 3}
			if kind == apps.KindSynthetic {
				cfg.Steps = 0
				cfg.Duration = 20000
			}
			w, err := Build(cfg, 64, 1)
			if err != nil {
				t.Fatal(err)
			}
			s, err := w.Summarize()
			if err != nil {
				t.Fatal(err)
			}
			st := runIdeal(t, w)
			t.Logf("%s: summary %+v; msgs %d bytes %d exec %d colls %v", kind, s, st.Messages, st.Bytes, st.ExecTime, st.Collectives)
			if st.ExecTime < s.MaxCompute {
				t.Errorf("exec %d < compute %d", st.ExecTime, s.MaxCompute)
			}
		})
	}
}
