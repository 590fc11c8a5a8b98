package hwbackend

import (
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/lpictl/lpictl/agent"
	"github.com/lpictl/lpictl/hwlink/netdev"
)

// TestDeletedOrRenamedLinkEndsPort (issue 11, defect 11): a link event that
// deletes or renames an open port's link makes its next Drain return
// agent.ErrPortGone at once, so that the agent closes or follows it.
func TestDeletedOrRenamedLinkEndsPort(t *testing.T) {
	for _, tc := range []struct {
		ev   netdev.LinkEvent
		gone string // "" = still there
	}{
		{netdev.LinkEvent{Type: netdev.LinkRemoved, Name: "veth0", Index: 5}, "deleted"},
		{netdev.LinkEvent{Type: netdev.LinkRenamed, Name: "lan0", OldName: "veth0", Index: 5}, "renamed to lan0"},
		{netdev.LinkEvent{Type: netdev.LinkRemoved, Name: "veth0", Index: 9}, ""}, // an older link of that name
		{netdev.LinkEvent{Type: netdev.LinkRemoved, Name: "veth1", Index: 6}, ""},
		{netdev.LinkEvent{Type: netdev.LinkCarrierDown, Name: "veth0", Index: 5}, ""},
	} {
		b := &Backend{log: slog.New(slog.DiscardHandler), carrier: map[string]uint64{}, open: map[*port]struct{}{}}
		p := &port{b: b, name: "veth0", index: 5, cancel: func() {}}
		b.open[p] = struct{}{}
		b.handle(tc.ev)
		_, err := p.Drain(make([]agent.Observation, 4))
		switch {
		case tc.gone == "" && err != nil:
			t.Errorf("%+v: %v", tc.ev, err)
		case tc.gone != "" && (!errors.Is(err, agent.ErrPortGone) || !strings.Contains(err.Error(), tc.gone)):
			t.Errorf("%+v: Drain error %v, want ErrPortGone (%s)", tc.ev, err, tc.gone)
		}
		p.Close()
		if len(b.open) != 0 {
			t.Errorf("closed port still registered")
		}
	}
}
