package apps

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/lpictl/lpictl/sim/workload/vef"
)

func TestGrid3(t *testing.T) {
	for n, want := range map[int][3]int{64: {4, 4, 4}, 24: {4, 3, 2}, 4160: {20, 16, 13}, 7: {7, 1, 1}} {
		if got := grid3(n); got != want {
			t.Errorf("grid3(%d) = %v, want %v", n, got, want)
		}
	}
}

func TestSyntheticPatterns(t *testing.T) {
	dests := func(pattern string) map[int32]map[int32]bool {
		src, err := New(Spec{Kind: KindSynthetic, Ranks: 8, Duration: 20000, Seed: 3, Params: Params{Synthetic: &Synthetic{Pattern: pattern}}})
		if err != nil {
			t.Fatal(err)
		}
		d := map[int32]map[int32]bool{}
		var r vef.Record
		last := int64(-1)
		for {
			err := src.Next(&r)
			if errors.Is(err, io.EOF) {
				return d
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Time < last || r.Dep != vef.DepNone || r.Src == r.Dst {
				t.Fatalf("record %+v after time %d", r, last)
			}
			last = r.Time
			if d[r.Src] == nil {
				d[r.Src] = map[int32]bool{}
			}
			d[r.Src][r.Dst] = true
		}
	}
	tornado := dests("tornado")
	for s, ds := range tornado {
		if len(ds) != 1 || !ds[(s+3)%8] {
			t.Errorf("tornado %d → %v", s, ds)
		}
	}
	bitrev := dests("bitreverse")
	if !bitrev[1][4] || !bitrev[3][6] || bitrev[0] != nil || bitrev[5] != nil {
		t.Errorf("bitreverse %v", bitrev)
	}
	perm := dests("permutation")
	seen := map[int32]bool{}
	for _, ds := range perm {
		if len(ds) != 1 {
			t.Errorf("permutation %v", perm)
		}
		for d := range ds {
			seen[d] = true
		}
	}
	if len(seen) != len(perm) {
		t.Errorf("permutation is not injective: %v", perm)
	}
	hot := dests("hotspot")
	for s, ds := range hot {
		if s != 0 && !ds[0] {
			t.Errorf("hotspot: %d never sends to rank 0", s)
		}
	}
}

// TestModelsScale: every model generates at the paper's 4160 ranks.
func TestModelsScale(t *testing.T) {
	for _, k := range Kinds() {
		s := Spec{Kind: k, Ranks: 4160, Steps: 1, Duration: 0}
		if k == KindSynthetic {
			s.Steps, s.Duration = 0, 1000
		}
		if k == KindMLWF { // 4 negotiation cycles (the default 5 s step has 1000)
			s.StepTime = 20 * time.Millisecond
		}
		src, err := New(s)
		if err != nil {
			t.Fatal(k, err)
		}
		h, err := vef.Scan(src)
		if err != nil {
			t.Fatal(k, err)
		}
		if h.Messages+h.CollRecords == 0 {
			t.Errorf("%s: empty", k)
		}
	}
}
