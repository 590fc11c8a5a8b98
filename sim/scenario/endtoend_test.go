package scenario

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ringVEF writes a ring chain of n tasks on the first n nodes: task i
// sends 64 B to i+1 once it has received from i−1 and computed gap ns.
func ringVEF(t *testing.T, dir string, n int, gap int) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "VEF %d %d 1 0 0 FALSE\nC0", n, n)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, " %d", i)
	}
	b.WriteString("\n0 0 1 64 0 0 -1\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "%d %d %d 64 2 %d %d\n", i, i, (i+1)%n, gap, i-1)
	}
	path := filepath.Join(dir, "ring.vef")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func runRing(t *testing.T, vef string, sets ...string) (Report, []byte) {
	t.Helper()
	base := []string{
		"topology.kind=megafly", "topology.radix=8", "workload.kind=vef", "workload.file=" + vef,
		"workload.mapping=linear", "power.mode=deep-sleep", "predictor.kind=perfboundcorrect", "predictor.bound=0.01",
	}
	s, err := Parse([]byte("name: ring\n"), "ring.yaml", append(base, sets...))
	if err != nil {
		t.Fatal(err)
	}
	o, err := Run(context.Background(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := o.WriteJSON(&b, false); err != nil {
		t.Fatal(err)
	}
	return o.Report, b.Bytes()
}

// TestEndToEndBound: on ring chains, whose critical path crosses every
// link, per-port budgets overshoot the 1 % bound many times over; the
// end-to-end gate keeps the execution-time overhead within the bound
// plus one wake-up cycle (the guarantee docs/predictors.md states), and
// still sleeps where the budget allows it.
func TestEndToEndBound(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		gap   int // ns of compute between a receive and the next send
		tasks int
		saves bool // the budget allows some sleep
	}{
		{"tight", 1000, 200, false},
		{"slack", 200000, 60, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vef := ringVEF(t, dir, tc.tasks, tc.gap)
			on, _ := runRing(t, vef, "power.mode=always-on")
			ds, _ := runRing(t, vef, "controller.ledger=off") // the papers' per-port bound
			e2e, j1 := runRing(t, vef, "power.end_to_end.enabled=true")
			_, j2 := runRing(t, vef, "power.end_to_end.enabled=true")
			if !bytes.Equal(j1, j2) {
				t.Fatal("two end-to-end runs differ")
			}
			over := func(r Report) float64 { return r.ExecTimeS/on.ExecTimeS - 1 }
			g := e2e.EndToEnd
			if g == nil {
				t.Fatal("no end_to_end in the report")
			}
			// The gate's own account: stall ≤ budget + headroom.
			if g.StallS > g.BudgetS+g.HeadroomS {
				t.Errorf("stall %g s > budget %g s + headroom %g s", g.StallS, g.BudgetS, g.HeadroomS)
			}
			// The slowdown is at most the stall (no contention here).
			if d := e2e.ExecTimeS - on.ExecTimeS; d > g.StallS+1e-15 {
				t.Errorf("slowdown %g s > stall %g s", d, g.StallS)
			}
			limit := 0.01 + g.HeadroomS/on.ExecTimeS
			if over(e2e) > limit {
				t.Errorf("end-to-end overhead %.4f %% > %.4f %%", 100*over(e2e), 100*limit)
			}
			if over(ds) < 2*0.01 {
				t.Errorf("per-port overhead %.4f %%: the chain should break the per-port bound", 100*over(ds))
			}
			saved := e2e.LinkStateFraction.DeepSleep
			// While the gate is closed no link sleeps: on the slack ring
			// each stall (6.5 µs) closes it for about stall/rate = 650 µs,
			// three hops, so about a fifth of the time is spent asleep.
			if tc.saves && (saved < 0.1 || e2e.EnergyJ.Links >= on.EnergyJ.Links) {
				t.Errorf("deep sleep share %.3f, link energy %g J against %g J always on: the slack ring should save", saved, e2e.EnergyJ.Links, on.EnergyJ.Links)
			}
			t.Logf("%s: always-on %.6g s; per-port %+.3f %%; end-to-end %+.3f %% (limit %.3f %%), deep sleep %.3f, stall %.3g s, closures %d",
				tc.name, on.ExecTimeS, 100*over(ds), 100*over(e2e), 100*limit, saved, g.StallS, g.Closures)
		})
	}
}

func TestEndToEndConfigErrors(t *testing.T) {
	for _, c := range []struct{ set, want string }{
		{"power.end_to_end.bound=1.5", "power.end_to_end.bound"},
		{"power.end_to_end.headroom=0s", "power.end_to_end.headroom"},
	} {
		s, err := Parse([]byte("name: x\n"), "x.yaml", []string{"power.end_to_end.enabled=true", c.set, "workload.duration=10us", "topology.kind=megafly", "topology.radix=4"})
		if err == nil {
			_, err = Run(context.Background(), s, nil)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %s", c.set, err, c.want)
		}
	}
}
