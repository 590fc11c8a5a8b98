package network

import (
	"slices"

	"github.com/lpictl/lpictl/sim/tcep"
)

// Control messages as packets (power.consolidation.control_packets,
// docs/simulator.md "Consolidation"): TCEP's activation and deactivation
// requests and their answers are 64-byte packets (network.control_bytes)
// from switch to switch of a subnetwork. A deactivation request and its
// answer cross the link itself (it is active); an activation request and
// its answer cross the root star, via the hub (the link is off). Each
// goes to the head of its output queue (the paper's control VC: it
// passes the data waiting there), is serialised at the link rate, wakes
// a sleeping link like any packet, and waits while the port is
// PFC-paused. It acts when its last bit is in (at an intermediate, it is
// sent on then). Answers are made once every request of the subnetwork's
// batch is in; each ACK takes effect where it arrives. A subnetwork with
// a batch still in flight skips the next epochs' rules of that kind.
// Indirect requests, shadow reactivation notices and link-state
// broadcasts stay counted delays.

// Kinds of control message.
const (
	ctlDeReq = iota
	ctlDeAns
	ctlAcReq
	ctlAcAns
)

// ctlMsg is a control message in flight: its subnetwork, kind, the
// request it carries (and for an answer whether it is an ACK), the member
// it is going to next (at) and its destination (to), and its packet.
type ctlMsg struct {
	si, at, to, k int32
	kind          uint8
	ack           bool
	q             tcep.Request
}

// ctlSend sends a control message of subnetwork si from member from to
// member to, via member via (−1: the direct link).
func (n *Network) ctlSend(si int, kind uint8, q tcep.Request, ack bool, from, via, to int, now int64) {
	tc := n.tc
	var id int32
	if l := len(tc.msgFree); l > 0 {
		id = tc.msgFree[l-1]
		tc.msgFree = tc.msgFree[:l-1]
	} else {
		tc.msgs = append(tc.msgs, ctlMsg{})
		id = int32(len(tc.msgs) - 1)
	}
	k := n.alloc()
	hops, next := uint8(1), to
	if via >= 0 {
		hops, next = 2, via
	}
	n.pkts[k] = packet{created: now, msg: -1, dst: -1 - id, size: int32(n.p.ControlBytes), hops: hops}
	tc.msgs[id] = ctlMsg{si: int32(si), at: int32(next), to: int32(to), k: k, kind: kind, ack: ack, q: q}
	g, _ := tc.portsOf(si, from, next)
	n.ctlEnqueue(g, k, now)
}

// ctlEnqueue puts control packet k at the head of switch port g's output
// queue.
func (n *Network) ctlEnqueue(g, k int32, now int64) {
	po := &n.ports[g]
	po.bytes += n.pkts[k].size
	n.pkts[k].next = po.head
	if po.head < 0 {
		if po.flags&txBusy == 0 {
			n.needed(g, now)
		}
		po.tail = k
		n.hints.clearEmpty(g)
	}
	po.head = k
	n.tryStart(g, now)
}

// ctlArrive: the first bit of control packet k has reached switch input
// port i; it acts when its last bit is in.
func (n *Network) ctlArrive(k int32, now int64) {
	id := -1 - n.pkts[k].dst
	n.tcepSchedule(now+n.ser(n.pkts[k].size), tcepCtl, 0, id)
}

// ctlDone: control message id is in at its next member.
func (n *Network) ctlDone(id int32, now int64) {
	tc := n.tc
	m := tc.msgs[id]
	si := int(m.si)
	if m.at != m.to {
		tc.msgs[id].at = m.to
		g, _ := tc.portsOf(si, int(m.at), int(m.to))
		n.ctlEnqueue(g, m.k, now)
		return
	}
	n.free = append(n.free, m.k)
	tc.msgFree = append(tc.msgFree, id)
	sub := tc.subs[si]
	switch m.kind {
	case ctlDeReq:
		if tc.deWait[si]--; tc.deWait[si] > 0 {
			return
		}
		all := tc.deReqs[si]
		acked := sub.RespondDeactivation(all, tc.deUse[si], tc.cfg.Hwm)
		for _, q := range all {
			n.ctlSend(si, ctlDeAns, q, slices.Contains(acked, q), q.To, -1, q.From, now)
		}
		tc.deReqs[si] = all[:0]
	case ctlDeAns:
		if !m.ack {
			return
		}
		tc.one[0] = m.q
		sub.CompleteDeactivation(tc.one[:])
		if sub.State(m.q.From, m.q.To) == tcep.Shadow {
			n.tcepSchedule(now+tc.cfg.DeactivationEpoch, tcepExpire, int32(si), int32(m.q.From*sub.K+m.q.To))
		}
		n.tcepSync(si, now)
	case ctlAcReq:
		if tc.acWait[si]--; tc.acWait[si] > 0 {
			return
		}
		all := append(tc.acSent[si][:0], tc.acReqs[si]...)
		tc.acSent[si] = all
		acked := sub.RespondActivation(tc.acReqs[si])
		for _, q := range all {
			n.ctlSend(si, ctlAcAns, q, slices.Contains(acked, q), q.To, 0, q.From, now)
		}
		tc.acReqs[si] = tc.acReqs[si][:0]
	case ctlAcAns:
		if !m.ack {
			return
		}
		tc.one[0] = m.q
		sub.BeginActivation(tc.one[:])
		if sub.State(m.q.From, m.q.To) == tcep.Waking {
			ga, gb := tc.portsOf(si, m.q.From, m.q.To)
			n.tcepSchedule(n.linkOn(ga, gb, now), tcepAwake, int32(si), int32(m.q.From*sub.K+m.q.To))
		}
		n.tcepSync(si, now)
	}
}

// ctlSendBatches sends subnetwork si's new activation and deactivation
// requests (an activation request via the hub: both ends of an inactive
// link are other routers).
func (n *Network) ctlSendBatches(si int, ac, de bool, now int64) {
	tc := n.tc
	if ac {
		for _, q := range tc.acReqs[si] {
			n.ctlSend(si, ctlAcReq, q, false, q.From, 0, q.To, now)
		}
		tc.acWait[si] = len(tc.acReqs[si])
	}
	if de {
		for _, q := range tc.deReqs[si] {
			n.ctlSend(si, ctlDeReq, q, false, q.From, -1, q.To, now)
		}
		tc.deWait[si] = len(tc.deReqs[si])
	}
}
