package replay

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lpictl/lpictl/predictor"
)

// optimumInput is the hand-computed case of optimal_test: t_w 4 µs,
// t_s 2 µs, no handshake, bound 5 %, low power at 10 % of awake.
func optimumInput(t *testing.T) OptimumInput {
	t.Helper()
	p := predictor.Config{Bound: 0.05, WakeTime: predictor.Duration(4 * us)}
	bound, hop, err := OptimumBudget(p)
	if err != nil {
		t.Fatal(err)
	}
	return OptimumInput{Timing: Timing{Wake: 4 * us, Sleep: 2 * us}, LowPower: 0.1, Mode: "deep-sleep",
		Bound: bound, StaticHop: hop, Predictor: p}
}

const compareGaps = "100us\n50us\n3us\n2us\n20us\n"

func TestOptimalSummary(t *testing.T) {
	in := optimumInput(t)
	s, err := Optimal(strings.NewReader(compareGaps), "gaps", in)
	if err != nil {
		t.Fatal(err)
	}
	if s.Predictor != OptimalKind || s.IdlePeriods != 5 || s.Misses == 0 || s.Hits+s.Misses != 5 || !s.Exact {
		t.Errorf("summary %+v", s)
	}
	if s.AddedDelayS > s.BudgetS || s.OfBudget > 1 {
		t.Errorf("delay %v over the budget %v (%v of it)", s.AddedDelayS, s.BudgetS, s.OfBudget)
	}
	var b bytes.Buffer
	if err := s.WriteText(&b); err != nil || !strings.Contains(b.String(), "(offline optimum, deep-sleep;") {
		t.Errorf("text %q, %v", b.String(), err)
	}
	if _, err := Optimal(strings.NewReader("0\n"), "zeros", in); err == nil || !strings.Contains(err.Error(), "zeros: no idle periods") {
		t.Errorf("no idle periods: %v", err)
	}
}

func TestCompare(t *testing.T) {
	in := optimumInput(t)
	c, err := Compare(strings.NewReader(compareGaps), "gaps", in)
	if err != nil {
		t.Fatal(err)
	}
	kinds := CompareKinds(in.Predictor)
	if len(c.Rows) != len(kinds)+1 || c.Rows[len(kinds)].Predictor != OptimalKind {
		t.Fatalf("rows %+v, want %d kinds and the optimum last", c.Rows, len(kinds))
	}
	for _, k := range kinds {
		if k == predictor.KindFixed {
			t.Errorf("fixed replayed without a t_PDT")
		}
	}
	for _, r := range c.Rows {
		if r.IdlePeriods != 5 || r.OfOptimum == nil || *r.OfOptimum > 1+1e-9 && r.OfBudget <= 1 {
			t.Errorf("row %+v", r)
		}
	}
	var b bytes.Buffer
	if err := c.WriteText(&b); err != nil || !strings.HasPrefix(b.String(), "gaps (gap file): 5 idle periods") {
		t.Errorf("text %q, %v", b.String(), err)
	}
	if _, _, err := OptimumBudget(predictor.Config{Bound: 2}); err == nil {
		t.Error("bound 2 accepted")
	}
}
