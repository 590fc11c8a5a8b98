package network

import (
	"errors"
	"fmt"
	"strings"
)

// ErrDeadlock reports packets left in the network when no event remains.
var ErrDeadlock = errors.New("network deadlocked")

// DeadlockError is a run that ended with packets left and no event to move
// them: every port that could forward them is paused (PFC) by a full
// buffer downstream. Cycle holds the paused links that wait for each other
// in a ring (empty if none was found), Paused every paused link with
// packets queued. It matches ErrDeadlock (errors.Is).
type DeadlockError struct {
	At          int64 // ps: the last event
	Undelivered uint64
	Created     uint64
	Cycle       []string
	Paused      []string
}

func (e *DeadlockError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v at %d ps: %d of %d packets undelivered and no event left", ErrDeadlock, e.At, e.Undelivered, e.Created)
	switch {
	case len(e.Cycle) > 0:
		fmt.Fprintf(&b, "; cycle of paused links: %s", strings.Join(e.Cycle, " → "))
	case len(e.Paused) > 0:
		fmt.Fprintf(&b, "; paused links: %s", listed(e.Paused, 8))
	}
	if len(e.Paused) > len(e.Cycle) {
		fmt.Fprintf(&b, " (%d paused links in all)", len(e.Paused))
	}
	return b.String()
}

func (e *DeadlockError) Unwrap() error { return ErrDeadlock }

// listed joins the first k items, and says how many more there are.
func listed(s []string, k int) string {
	if len(s) <= k {
		return strings.Join(s, ", ")
	}
	return fmt.Sprintf("%s, … (%d more)", strings.Join(s[:k], ", "), len(s)-k)
}

// portName names port g as the end of its link: "node N" for a NIC, "sW:pP"
// for port P of switch W.
func (n *Network) portName(g int32) string {
	pt := &n.ports[g]
	if pt.sw < 0 {
		return fmt.Sprintf("node %d", g)
	}
	return fmt.Sprintf("s%d:p%d", pt.sw, pt.local)
}

// linkName names the direction of port g's link from g to its peer, with
// the traffic class when the network has two (vc.go).
func (n *Network) linkName(g int32, class int) string {
	s := n.portName(g) + "→" + n.portName(n.ports[g].peer)
	if n.vc != nil {
		s += fmt.Sprintf(" (class %d)", class)
	}
	return s
}

// blockedOn: port g's class-c output is paused with a packet queued.
func (n *Network) blockedOn(g int32, c int) bool {
	if c == 1 {
		return n.vc != nil && n.vc[g].outHead >= 0 && n.vc[g].outFlags&vcPaused != 0
	}
	po := &n.ports[g]
	return po.head >= 0 && po.flags&paused != 0
}

// deadlock describes a run stuck with packets left: the paused links, and
// a cycle of them found by following, from a paused link, the packet at
// the head of the input it feeds to the output that packet waits for.
func (n *Network) deadlock() *DeadlockError {
	e := &DeadlockError{At: n.eng.Now(), Undelivered: n.created - n.delivered, Created: n.created}
	type hop struct {
		g int32
		c int
	}
	classes := 1
	if n.vc != nil {
		classes = 2
	}
	for g := range n.ports {
		for c := range classes {
			if n.blockedOn(int32(g), c) {
				e.Paused = append(e.Paused, n.linkName(int32(g), c))
			}
		}
	}
	for g := range n.ports {
		for c := range classes {
			if !n.blockedOn(int32(g), c) {
				continue
			}
			seen := map[hop]int{}
			var path []hop
			for h := (hop{int32(g), c}); ; {
				if at, ok := seen[h]; ok {
					for _, x := range path[at:] {
						e.Cycle = append(e.Cycle, n.linkName(x.g, x.c))
					}
					return e
				}
				seen[h] = len(path)
				path = append(path, h)
				next, ok := n.waitsFor(h.g, h.c)
				if !ok {
					break
				}
				h = hop{next.g, next.c}
			}
		}
	}
	return e
}

// waitsFor follows a paused class-c link from port g: the head packet of
// the class-c input at the far end waits for output port o in class c2;
// ok if that output is paused too.
func (n *Network) waitsFor(g int32, c int) (next struct {
	g int32
	c int
}, ok bool) {
	in := n.ports[g].peer
	if in < 0 || n.in[in].sw < 0 {
		return next, false
	}
	h := n.in[in].head
	if c == 1 {
		h = n.vc[in].inHead
	}
	if h < 0 {
		return next, false
	}
	pk := &n.pkts[h]
	next.g, next.c = outPort(pk.out), 0 // an undecided POWAR head: its stand-in
	if n.vc != nil {
		next.c = int(pk.vcNext)
	}
	return next, n.blockedOn(next.g, next.c)
}
