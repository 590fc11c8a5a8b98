package agent_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lpictl/lpictl/agent"
)

// TestPlan: the dry-run plan gives each port's first write or why it is
// left alone, warns of patterns that match nothing and changes nothing.
func TestPlan(t *testing.T) {
	be := newFake("eth0", "eth1", "eth2")
	be.add("igc0", false)
	be.ports["eth1"].eee.TxLPITimer = 21 * time.Microsecond
	be.ports["eth2"].eee.TxLPIEnabled = false
	cfg := testConfig(t, agent.Enforce, "eth*", "igc0", "nomatch")
	h := 0.1
	cfg.Limits.Hysteresis = &h
	plan, warnings, err := agent.Plan(context.Background(), cfg, be, agent.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]agent.PlanPort{}
	for _, p := range plan {
		got[p.Name] = p
	}
	if p := got["eth0"]; !p.Write || p.FirstNS != int64(20*time.Microsecond) || p.First != "20µs" || p.Actuation != "fake" {
		t.Errorf("eth0: %+v", p)
	}
	if p := got["eth1"]; p.Write || p.First != "none: within hysteresis of the timer in force" {
		t.Errorf("eth1: %+v", p)
	}
	if p := got["eth2"]; p.Write || !strings.Contains(p.Reason, "tx LPI is off") {
		t.Errorf("eth2: %+v", p)
	}
	if p := got["igc0"]; p.Write || p.Actuation != "none" || !strings.Contains(p.Reason, "fake driver refuses") {
		t.Errorf("igc0: %+v", p)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], `"nomatch" matches no port`) {
		t.Errorf("warnings %q", warnings)
	}
	for _, name := range []string{"eth0", "eth1", "eth2", "igc0"} {
		if p := be.port(name); p.sets != 0 || p.open {
			t.Errorf("%s changed or left open: %+v", name, p)
		}
	}

	cfg.Mode = agent.Observe
	plan, _, err = agent.Plan(context.Background(), cfg, be, agent.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range plan {
		if p.Write || !strings.Contains(p.Reason, "observe mode") && p.CanSet {
			t.Errorf("observe: %+v", p)
		}
	}
}
