package netdev

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/eeectl"
	"github.com/lpictl/lpictl/hwlink/hwlinktest"
)

// TestSubscribeEEEVeth checks that the subscription to ethtool netlink's
// monitor group works in a fresh namespace and ends with its context. The
// change itself cannot be produced here: veth has no EEE operations.
func TestSubscribeEEEVeth(t *testing.T) {
	p := hwlinktest.NewPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sctx, scancel := context.WithCancel(ctx)
	evs, err := eeectl.SubscribeEEE(sctx, eeectl.EEESubscribeOptions{NetNS: hwlink.NetNS(p.PathA)})
	if err != nil {
		t.Fatalf("subscribe (join ethtool monitor group): %v", err)
	}
	links, err := SubscribeLinks(sctx, SubscribeOptions{NetNS: hwlink.NetNS(p.PathA), EEE: true})
	if err != nil {
		t.Fatalf("link events with EEE: %v", err)
	}
	select {
	case ev := <-links:
		if ev.Type != LinkAdded || !ev.Existing {
			t.Errorf("first link event %+v", ev)
		}
	case <-ctx.Done():
		t.Fatal("no link event")
	}

	be, err := eeectl.NewEthtoolBackend(eeectl.BackendOptions{NetNS: hwlink.NetNS(p.PathA)})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	timer := 100 * time.Microsecond
	setErr := be.SetEEE(ctx, p.NameA, eeectl.EEESet{TxLPITimer: &timer})
	if setErr == nil {
		select {
		case ev := <-evs:
			if ev.Name != p.NameA || ev.Index != p.IndexA {
				t.Errorf("EEE event %+v", ev)
			}
		case <-time.After(2 * time.Second):
			t.Error("EEE changed but no ETHTOOL_MSG_EEE_NTF")
		}
	}
	scancel()
	for range evs { // the channel closes once the context ends
	}
	for range links {
	}
	if setErr != nil {
		if !errors.Is(setErr, hwlink.ErrNotSupported) {
			t.Fatalf("set EEE on veth: %v", setErr)
		}
		t.Skipf("subscription works; the change part needs a port with EEE: veth has no EEE operations (%v), so no ETHTOOL_MSG_EEE_NTF can be triggered here (decoding is tested on golden bytes)", setErr)
	}
}
