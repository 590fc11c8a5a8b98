package netdev

import (
	"context"
	"fmt"
	"time"

	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/eeectl"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// LinkEventType says what happened to a link.
type LinkEventType string

const (
	LinkAdded       LinkEventType = "added" // new port (or existing at subscription)
	LinkRemoved     LinkEventType = "removed"
	LinkCarrierUp   LinkEventType = "carrier-up"
	LinkCarrierDown LinkEventType = "carrier-down"
	LinkRenamed     LinkEventType = "renamed"
	// LinkEEEChanged: the port's EEE settings changed (ETHTOOL_MSG_EEE_NTF;
	// only with SubscribeOptions.EEE). LinkEvent.EEE holds the new state.
	LinkEEEChanged LinkEventType = "eee-changed"
)

// LinkEvent is one change of a link.
type LinkEvent struct {
	Type    LinkEventType
	Index   int
	Name    string
	OldName string // for LinkRenamed
	Carrier bool
	// Existing: the link was there when the subscription started.
	Existing bool
	Time     time.Time
	// EEE is the port's EEE state after a LinkEEEChanged event.
	EEE *eeectl.EEEState
}

// SubscribeOptions configure SubscribeLinks.
type SubscribeOptions struct {
	NetNS hwlink.NetNS
	// OnError receives errors from the netlink socket (optional).
	OnError func(error)
	// EEE also reports EEE changes (LinkEEEChanged), from ethtool
	// netlink's monitor group as in eeectl.SubscribeEEE.
	EEE bool
}

// SubscribeLinks reports link changes in opts.NetNS until ctx ends, then
// closes the channel. Existing links come first, as LinkAdded with
// Existing set. A rename is LinkRenamed (index stays); carrier changes
// follow IFF_LOWER_UP.
func SubscribeLinks(ctx context.Context, opts SubscribeOptions) (<-chan LinkEvent, error) {
	nsh, err := opts.NetNS.Open()
	if err != nil {
		return nil, err
	}
	// Which links exist is decided by a snapshot taken before subscribing,
	// not by message type: a link's asynchronous notification (e.g. a
	// carrier change) can overtake its entry in the initial dump.
	existing := make(map[int]bool)
	h, err := netlink.NewHandleAt(nsh)
	if err != nil {
		nsh.Close()
		return nil, fmt.Errorf("list links: %w", hwlink.ClassifyErrno(err))
	}
	current, err := h.LinkList()
	h.Close()
	if err != nil {
		nsh.Close()
		return nil, fmt.Errorf("list links: %w", hwlink.ClassifyErrno(err))
	}
	for _, l := range current {
		existing[l.Attrs().Index] = true
	}
	var eeeEvents <-chan eeectl.EEEEvent
	eeeCtx, eeeCancel := context.WithCancel(ctx)
	if opts.EEE {
		eeeEvents, err = eeectl.SubscribeEEE(eeeCtx, eeectl.EEESubscribeOptions{NetNS: opts.NetNS, OnError: opts.OnError})
		if err != nil {
			eeeCancel()
			nsh.Close()
			return nil, err
		}
	}
	updates := make(chan netlink.LinkUpdate, 64)
	done := make(chan struct{})
	lso := netlink.LinkSubscribeOptions{Namespace: &nsh, ListExisting: true, ErrorCallback: opts.OnError}
	err = netlink.LinkSubscribeWithOptions(updates, done, lso)
	nsh.Close()
	if err != nil {
		eeeCancel()
		close(done)
		return nil, fmt.Errorf("subscribe to link events: %w", hwlink.ClassifyErrno(err))
	}
	out := make(chan LinkEvent, 64)
	go func() {
		defer close(out)
		defer close(done)
		defer eeeCancel()
		type known struct {
			name    string
			carrier bool
		}
		links := make(map[int]known)
		send := func(ev LinkEvent) bool {
			select {
			case out <- ev:
				return true
			case <-ctx.Done():
				return false
			}
		}
		for {
			var u netlink.LinkUpdate
			var ok bool
			select {
			case <-ctx.Done():
				return
			case u, ok = <-updates:
				if !ok {
					return
				}
			case ev, ok := <-eeeEvents:
				if !ok {
					eeeEvents = nil
					continue
				}
				st := ev.State
				if !send(LinkEvent{Type: LinkEEEChanged, Index: ev.Index, Name: ev.Name, Carrier: links[ev.Index].carrier, EEE: &st, Time: ev.Time}) {
					return
				}
				continue
			}
			if u.Link == nil {
				continue
			}
			a := u.Attrs()
			idx := int(u.Index)
			carrier := u.Flags&unix.IFF_LOWER_UP != 0
			now := time.Now()
			prev, seen := links[idx]
			switch u.Header.Type {
			case unix.RTM_DELLINK:
				delete(links, idx)
				if !send(LinkEvent{Type: LinkRemoved, Index: idx, Name: a.Name, Time: now}) {
					return
				}
				continue
			case unix.RTM_NEWLINK:
			default:
				continue
			}
			links[idx] = known{name: a.Name, carrier: carrier}
			var evs []LinkEvent
			switch {
			case !seen:
				evs = append(evs, LinkEvent{Type: LinkAdded, Index: idx, Name: a.Name, Carrier: carrier, Existing: existing[idx], Time: now})
			default:
				if prev.name != a.Name {
					evs = append(evs, LinkEvent{Type: LinkRenamed, Index: idx, Name: a.Name, OldName: prev.name, Carrier: carrier, Time: now})
				}
				if prev.carrier != carrier {
					t := LinkCarrierDown
					if carrier {
						t = LinkCarrierUp
					}
					evs = append(evs, LinkEvent{Type: t, Index: idx, Name: a.Name, Carrier: carrier, Time: now})
				}
			}
			for _, ev := range evs {
				if !send(ev) {
					return
				}
			}
		}
	}()
	return out, nil
}
