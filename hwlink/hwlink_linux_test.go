package hwlink

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/lpictl/lpictl/hwlink/hwlinktest"
)

func TestDiscoverVeth(t *testing.T) {
	p := hwlinktest.NewPair(t)
	ports, err := Discover(context.Background(), DiscoverOptions{NetNS: NetNS(p.PathA)})
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
	if pi.Observation.Method != MethodEBPF && pi.Observation.Method != MethodCounters {
		t.Errorf("observation %+v", pi.Observation)
	}
	all, err := Discover(context.Background(), DiscoverOptions{NetNS: NetNS(p.PathA), All: true})
	if err != nil || len(all) != 1 {
		t.Errorf("All: %d ports, %v (loopback must never be listed)", len(all), err)
	}
}

func TestLinkEvents(t *testing.T) {
	p := hwlinktest.NewPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	evs, err := SubscribeLinks(ctx, SubscribeOptions{NetNS: NetNS(p.PathA)})
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

// TestCounterObserverVeth is the fallback path on a real interface:
// packets every 20 ms, counters polled every 5 ms.
func TestCounterObserverVeth(t *testing.T) {
	p := hwlinktest.NewPair(t)
	o, err := NewCounterObserver(CounterConfig{Interface: p.NameB, NetNS: NetNS(p.PathB), Interval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = o.Run(ctx, func(err error) { t.Error(err) })
	}()
	hwlinktest.SendUDP(t, p.NSB, p.AddrB, p.NSA, p.AddrA, hwlinktest.Traffic{Count: 15, Interval: 20 * time.Millisecond, Payload: 64})
	cancel()
	wg.Wait()
	var st GapStats
	if err := o.ReadStats(Egress, &st); err != nil {
		t.Fatal(err)
	}
	buf := make([]GapSample, 64)
	n, _ := o.DrainGaps(buf)
	// 15 packets give 14 gaps; a poll delayed by load can merge two of
	// them, so ask for half, and for most of them to be the right length.
	if st.Packets < 12 || n < 7 {
		t.Fatalf("stats %+v, %d samples", st, n)
	}
	good := 0
	for _, s := range buf[:n] {
		// Idle polls between packets 20 ms apart, 5 ms polls: 2–4 intervals.
		if s.Length >= 10*time.Millisecond && s.Length <= 20*time.Millisecond {
			good++
		}
	}
	if good*10 < n*7 {
		t.Errorf("only %d of %d counter gaps in [10, 20] ms: %v", good, n, buf[:n])
	}
}
