package network

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/lpictl/lpictl/sim/eee"
	"github.com/lpictl/lpictl/sim/topo"
)

// TestDragonflyClassesNoDeadlock: saturating tornado traffic (load 1,
// 9600 B, 30 µs) on a dragonfly of 9 groups of 4 routers with 2 nodes and
// 2 global links each, always on. With the dragonfly's hop classes (class
// 1 on the local hop in the destination's group, topo.Dragonfly.HopClass)
// every packet arrives and the run is byte-identical twice, with minimal
// routing and with ECMP (the same single path); with the classes taken
// away (one class, as before they existed) the same traffic closes a
// cycle of paused links through the groups.
func TestDragonflyClassesNoDeadlock(t *testing.T) {
	tp, err := topo.Build(topo.Config{Kind: topo.KindDragonfly, Routers: 4, NodesPerSwitch: 2, GlobalLinks: 2})
	if err != nil {
		t.Fatal(err)
	}
	wl := synthetic("tornado", 9600, 1, 30*time.Microsecond)
	p := table6(eee.AlwaysOn, 0)
	one := build(t, tp, p)
	if one.vc == nil || one.cls == nil {
		t.Fatal("dragonfly without its two classes")
	}
	one.vc, one.cls = nil, nil
	attachConfig(t, one, wl, 1)
	if err := one.Run(context.Background(), 0, nil); !errors.Is(err, ErrDeadlock) {
		t.Errorf("one class: %v, want a deadlock", err)
	} else {
		t.Logf("one class: %v", err)
	}
	res := func(p Params) (Result, []uint64) {
		n := build(t, tp, p)
		attachConfig(t, n, wl, 1)
		r := run(t, n)
		var sent []uint64
		n.Ports(func(r *PortRow) { sent = append(sent, r.Sent) })
		return r, sent
	}
	a, sa := res(p)
	b, sb := res(p)
	if !reflect.DeepEqual(a, b) || !reflect.DeepEqual(sa, sb) {
		t.Fatalf("two runs differ:\n%+v\n%+v", a, b)
	}
	if a.Packets == 0 || a.Dropped != 0 {
		t.Fatalf("%d packets, %d dropped", a.Packets, a.Dropped)
	}
	ecmp := p
	ecmp.Routing = RoutingECMP
	if e, _ := res(ecmp); e.Packets != a.Packets || e.ExecTimeS != a.ExecTimeS {
		t.Errorf("ECMP: %d packets in %v s, minimal %d in %v s", e.Packets, e.ExecTimeS, a.Packets, a.ExecTimeS)
	}
	t.Logf("two classes: %d packets, exec %.1f µs, %d PFC pauses", a.Packets, a.ExecTimeS*1e6, a.PFCPauses)
}

// TestHyperXECMPClassesNoDeadlock: saturating uniform traffic (load 1,
// 9600 B, 30 µs) on a 4×4 HyperX with 4 nodes per switch under ECMP,
// always on. With one class ECMP's two dimension orders close a cycle of
// paused links; with the HyperX's ECMP classes (class 1 on the hop that
// reaches the destination's switch, topo.HyperX.HopClass) every packet
// arrives and the run is byte-identical twice. Minimal routing (dimension
// order) keeps one class.
func TestHyperXECMPClassesNoDeadlock(t *testing.T) {
	tp, err := topo.Build(topo.Config{Kind: topo.KindHyperX, Dims: []int{4, 4}, NodesPerSwitch: 4})
	if err != nil {
		t.Fatal(err)
	}
	wl := synthetic("uniform", 9600, 1, 30*time.Microsecond)
	p := table6(eee.AlwaysOn, 0)
	if n := build(t, tp, p); n.vc != nil {
		t.Error("minimal routing on a HyperX with two classes")
	}
	p.Routing = RoutingECMP
	one := build(t, tp, p)
	if one.vc == nil || one.cls == nil {
		t.Fatal("ECMP on a 2-D HyperX without its two classes")
	}
	one.vc, one.cls = nil, nil
	attachConfig(t, one, wl, 1)
	if err := one.Run(context.Background(), 0, nil); !errors.Is(err, ErrDeadlock) {
		t.Errorf("one class: %v, want a deadlock", err)
	} else {
		t.Logf("one class: %v", err)
	}
	res := func() (Result, []uint64) {
		n := build(t, tp, p)
		attachConfig(t, n, wl, 1)
		r := run(t, n)
		var sent []uint64
		n.Ports(func(r *PortRow) { sent = append(sent, r.Sent) })
		return r, sent
	}
	a, sa := res()
	b, sb := res()
	if !reflect.DeepEqual(a, b) || !reflect.DeepEqual(sa, sb) {
		t.Fatalf("two runs differ:\n%+v\n%+v", a, b)
	}
	if a.Packets == 0 || a.Dropped != 0 {
		t.Fatalf("%d packets, %d dropped", a.Packets, a.Dropped)
	}
	t.Logf("two classes: %d packets, exec %.1f µs, %d PFC pauses", a.Packets, a.ExecTimeS*1e6, a.PFCPauses)
}
