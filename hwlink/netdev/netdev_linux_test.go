package netdev

import (
	"context"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/hwlinktest"
	"github.com/lpictl/lpictl/hwlink/observe"
)

func TestDiscoverVeth(t *testing.T) {
	p := hwlinktest.NewPair(t)
	ports, err := Discover(context.Background(), DiscoverOptions{NetNS: hwlink.NetNS(p.PathA)})
	if err != nil {
		t.Fatal(err)
	}
	if len(ports) != 1 {
		t.Fatalf("want exactly the veth end, got %+v", ports)
	}
	pi := ports[0]
	if pi.Name != p.NameA || pi.Index != p.IndexA || pi.Kind != "veth" || pi.Driver.Driver != "veth" ||
		!pi.Carrier || pi.Speed != 10_000_000_000 || pi.Switchdev || pi.EEE != nil {
		t.Errorf("port %+v", pi)
	}
	if pi.Actuation.CanSetTimer || pi.EEEStatus != "not supported (EOPNOTSUPP)" {
		t.Errorf("actuation %+v, EEE %q", pi.Actuation, pi.EEEStatus)
	}
	if pi.Observation.Method != observe.MethodEBPF && pi.Observation.Method != observe.MethodCounters {
		t.Errorf("observation %+v", pi.Observation)
	}
	all, err := Discover(context.Background(), DiscoverOptions{NetNS: hwlink.NetNS(p.PathA), All: true})
	if err != nil || len(all) != 1 {
		t.Errorf("All: %d ports, %v (loopback must never be listed)", len(all), err)
	}
}

func TestLinkEvents(t *testing.T) {
	p := hwlinktest.NewPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	evs, err := SubscribeLinks(ctx, SubscribeOptions{NetNS: hwlink.NetNS(p.PathA)})
	if err != nil {
		t.Fatal(err)
	}
	next := func(want LinkEventType) LinkEvent {
		t.Helper()
		for {
			select {
			case ev, ok := <-evs:
				if !ok {
					t.Fatalf("channel closed waiting for %s", want)
				}
				if ev.Type == want {
					return ev
				}
			case <-ctx.Done():
				t.Fatalf("timeout waiting for %s", want)
			}
		}
	}
	ev := next(LinkAdded)
	for ev.Name != p.NameA {
		ev = next(LinkAdded)
	}
	if !ev.Existing || !ev.Carrier {
		t.Errorf("existing veth: %+v", ev)
	}
	h, err := netlink.NewHandleAt(p.NSA)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	lk, err := h.LinkByName(p.NameA)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.LinkSetDown(lk); err != nil {
		t.Fatal(err)
	}
	if ev := next(LinkCarrierDown); ev.Index != p.IndexA {
		t.Errorf("carrier down %+v", ev)
	}
	newName := p.NameA + "r"
	if err := h.LinkSetName(lk, newName); err != nil {
		t.Fatal(err)
	}
	if ev := next(LinkRenamed); ev.OldName != p.NameA || ev.Name != newName {
		t.Errorf("rename %+v", ev)
	}
	if err := h.LinkSetUp(lk); err != nil {
		t.Fatal(err)
	}
	next(LinkCarrierUp)
	// A new port: another veth pair, both ends in A.
	extra := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "lpix0"}, PeerName: "lpix1"}
	if err := h.LinkAdd(extra); err != nil {
		t.Fatal(err)
	}
	ev = next(LinkAdded)
	if ev.Name != "lpix0" && ev.Name != "lpix1" || ev.Existing {
		t.Errorf("new link %+v", ev)
	}
	if err := h.LinkDel(extra); err != nil {
		t.Fatal(err)
	}
	next(LinkRemoved)
	cancel()
	for range evs {
	}
}
