package hwbackend_test

import (
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/lpictl/lpictl/agent"
	"github.com/lpictl/lpictl/hwlink/hwlinktest"
	"github.com/lpictl/lpictl/predictor"
)

// TestAgentFollowsRenamedAndDeletedVeth (issue 11, defect 11): on a veth end
// in a test namespace, with the port rescan at 30 s, the agent follows a
// rename under the new name and closes a deleted port within 2 s, from
// link events.
func TestAgentFollowsRenamedAndDeletedVeth(t *testing.T) {
	pair := hwlinktest.NewPair(t) // skips unless root
	cfg := agent.Config{Mode: agent.Observe, Backend: agent.BackendHW, StateDir: t.TempDir(),
		Interval: predictor.Duration(20 * time.Millisecond)}
	cfg.Metrics.Listen = agent.MetricsOff
	cfg.Ports.Names = []string{pair.NameA, "lpir*"}
	cfg.Ports.RescanInterval = predictor.Duration(30 * time.Second)
	cfg.HW = agent.HWConfig{NetNS: pair.PathA, Observe: "counters"}
	cfg = cfg.WithDefaults()
	a, stop := runAgent(t, cfg)
	defer func() {
		if err := stop(); err != nil {
			t.Errorf("agent: %v", err)
		}
	}()
	if v := gauge(t, a, "lpictl_port_info", pair.NameA); v != 1 {
		t.Fatalf("%s not selected (%v)", pair.NameA, v)
	}
	h, err := netlink.NewHandleAt(pair.NSA)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	l, err := h.LinkByName(pair.NameA)
	if err != nil {
		t.Fatal(err)
	}
	within := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 2 s (the port rescan is 30 s)", what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	const renamed = "lpir0"
	if err := h.LinkSetDown(l); err != nil {
		t.Fatal(err)
	}
	if err := h.LinkSetName(l, renamed); err != nil {
		t.Fatal(err)
	}
	within("rename followed", func() bool {
		return gauge(t, a, "lpictl_port_info", renamed) == 1 && gauge(t, a, "lpictl_port_info", pair.NameA) == -1
	})

	if err := h.LinkDel(l); err != nil {
		t.Fatal(err)
	}
	within("deleted port closed", func() bool { return gauge(t, a, "lpictl_agent_ports", "") == 0 })
	if v := gauge(t, a, "lpictl_errors_total", renamed); v != -1 {
		t.Errorf("deleted port still exported (errors %v)", v)
	}
}
