package netdev

import (
	"context"
	"fmt"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/eeectl"
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
	existing, err := existingLinks(nsh)
	if err != nil {
		nsh.Close()
		return nil, err
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
	w := &linkWatcher{ctx: ctx, out: out, existing: existing, links: make(map[int]knownLink)}
	go func() {
		defer close(out)
		defer close(done)
		defer eeeCancel()
		w.run(updates, eeeEvents)
	}()
	return out, nil
}

// existingLinks is the set of links in ns, by index. Which links exist is
// decided by this snapshot, taken before subscribing, not by message type:
// a link's asynchronous notification (e.g. a carrier change) can overtake
// its entry in the initial dump.
func existingLinks(ns netns.NsHandle) (map[int]bool, error) {
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return nil, fmt.Errorf("list links: %w", hwlink.ClassifyErrno(err))
	}
	current, err := h.LinkList()
	h.Close()
	if err != nil {
		return nil, fmt.Errorf("list links: %w", hwlink.ClassifyErrno(err))
	}
	existing := make(map[int]bool, len(current))
	for _, l := range current {
		existing[l.Attrs().Index] = true
	}
	return existing, nil
}

// knownLink is what a subscription last saw of a link.
type knownLink struct {
	name    string
	carrier bool
}

// linkWatcher turns rtnetlink updates (and EEE notifications) into
// LinkEvents on out until ctx ends.
type linkWatcher struct {
	ctx      context.Context
	out      chan<- LinkEvent
	existing map[int]bool
	links    map[int]knownLink
}

// send delivers ev; false once ctx has ended.
func (w *linkWatcher) send(ev LinkEvent) bool {
	select {
	case w.out <- ev:
		return true
	case <-w.ctx.Done():
		return false
	}
}

func (w *linkWatcher) run(updates <-chan netlink.LinkUpdate, eeeEvents <-chan eeectl.EEEEvent) {
	for {
		select {
		case <-w.ctx.Done():
			return
		case u, ok := <-updates:
			if !ok || !w.update(u) {
				return
			}
		case ev, ok := <-eeeEvents:
			if !ok {
				eeeEvents = nil
				continue
			}
			st := ev.State
			if !w.send(LinkEvent{Type: LinkEEEChanged, Index: ev.Index, Name: ev.Name, Carrier: w.links[ev.Index].carrier, EEE: &st, Time: ev.Time}) {
				return
			}
		}
	}
}

// update reports what one rtnetlink message changed; false once ctx has
// ended.
func (w *linkWatcher) update(u netlink.LinkUpdate) bool {
	if u.Link == nil {
		return true
	}
	a := u.Attrs()
	idx := int(u.Index)
	carrier := u.Flags&unix.IFF_LOWER_UP != 0
	now := time.Now()
	prev, seen := w.links[idx]
	switch u.Header.Type {
	case unix.RTM_DELLINK:
		delete(w.links, idx)
		return w.send(LinkEvent{Type: LinkRemoved, Index: idx, Name: a.Name, Time: now})
	case unix.RTM_NEWLINK:
	default:
		return true
	}
	w.links[idx] = knownLink{name: a.Name, carrier: carrier}
	var evs []LinkEvent
	switch {
	case !seen:
		evs = append(evs, LinkEvent{Type: LinkAdded, Index: idx, Name: a.Name, Carrier: carrier, Existing: w.existing[idx], Time: now})
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
		if !w.send(ev) {
			return false
		}
	}
	return true
}
