package network

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lpictl/lpictl/sim/eee"
	"github.com/lpictl/lpictl/sim/topo"
)

// TestDeadlockReported: dimension-order routing on a 3D torus of rings of
// 6 switches without a dateline (which the scenario refuses) under a
// saturating all-to-all pattern fills a ring of paused links: Run returns a
// *DeadlockError (matching ErrDeadlock) that names a cycle of paused
// links, each waiting for the next, and the results cover the run up to
// the last event, marked interrupted (issue 25, defect 5: the error used
// to be the replay's "stopped before the end with no event left").
func TestDeadlockReported(t *testing.T) {
	tp, err := topo.Build(topo.Config{Kind: topo.KindTorus3D, Dims: []int{6, 6, 1}, NodesPerSwitch: 2})
	if err != nil {
		t.Fatal(err)
	}
	n := build(t, tp, table6(eee.AlwaysOn, 0))
	attachConfig(t, n, synthetic("uniform", 9600, 1, 200*time.Microsecond), 5)
	err = n.Run(t.Context(), 0, nil)
	var d *DeadlockError
	if !errors.As(err, &d) || !errors.Is(err, ErrDeadlock) {
		t.Fatalf("Run: %v, want a *DeadlockError", err)
	}
	if len(d.Cycle) < 2 || len(d.Paused) < len(d.Cycle) || d.Undelivered == 0 {
		t.Fatalf("deadlock %+v", d)
	}
	for _, l := range d.Cycle {
		if !strings.Contains(l, "→") || !strings.HasPrefix(l, "s") {
			t.Errorf("link %q: want sW:pP→sW:pP", l)
		}
	}
	if !n.Interrupted() || !n.Deadlocked() {
		t.Errorf("interrupted %v, deadlocked %v", n.Interrupted(), n.Deadlocked())
	}
	if r := n.Result(); r.ExecTimeS <= 0 || r.Packets == 0 {
		t.Errorf("result %+v", r)
	}
	t.Log(err)
}
