package network

import "math/bits"

// Two traffic classes on every port, where the routing needs them to be
// deadlock-free. Ethernet's equivalent of a virtual channel is a PFC
// priority: each class has its own input buffer with its own PAUSE
// thresholds (network.pfc_stop, pfc_go), its own output buffer
// (network.queue_size each) and output queue, so that a paused or full
// class never holds the other up. A packet's class on its next link
// (packet.vcNext) is chosen with its output port when it arrives at a
// switch, and taken at the crossbar grant; a NIC sends in class 0.
//
// PAL routing (paper 004 §IV-E: "the proposed PAL routing only requires
// two VCs since dimension-order routing is used across multiple
// dimensions"): a packet travels in class 0 on a minimal hop and on the
// first hop of a detour, in class 1 on the hops after the intermediate of
// its current dimension (the second hop, or the hub's two when the direct
// link was gated meanwhile); the next dimension starts again in class 0.
// Ordered by (dimension, class), every channel dependency goes up, so the
// channel dependency graph is acyclic and PAL cannot deadlock
// (docs/simulator.md "Consolidation: TCEP").
//
// Other routings (Network.cls, HopClasses): the topology's hop class of
// the chosen port (topo.HopClasser): a torus3d with topology.dateline
// (Dally and Seitz's dateline classes, topo.Torus.HopClass) and the
// dragonfly (class 1 on the local hop in the destination's group,
// topo.Dragonfly.HopClass), under minimal routing, ECMP and POWAR alike;
// and ECMP on a HyperX or fbfly of two dimensions (class 1 on the hop
// reaching the destination's switch, topo.HyperX.HopClass)
// (docs/simulator.md "Deadlocks").
//
// Class 0 lives in the port's own fields (port, inPort), class 1 in a
// vcSide per port; the slice exists only with two classes (Network.vc nil
// otherwise), so other runs take none of these paths.

// vcSide is a port's class-1 state.
type vcSide struct {
	inHead, inTail   int32  // class-1 input queue (packet list, −1: empty)
	inBytes          int32  // class-1 input buffer bytes
	outHead, outTail int32  // class-1 output queue
	outBytes         int32  // class-1 output buffer bytes (reserved at grant)
	wait             uint64 // inputs whose class-1 head waits for this output
	inFlags          uint8  // pauseSent, arbPending (class 1)
	outFlags         uint8  // vcPaused, vcLast, vcTx
}

// vcSide.outFlags.
const (
	vcPaused uint8 = 1 << iota // the peer paused class 1
	vcLast                     // the last packet started was class 1 (the classes alternate)
	vcTx                       // the packet being sent is class 1
)

// evPFC's Arg with class 1: pause and resume.
const (
	pfcResume1 = 2
	pfcPause1  = 3
)

func newVC(total int) []vcSide {
	v := make([]vcSide, total)
	for i := range v {
		v[i] = vcSide{inHead: -1, inTail: -1, outHead: -1, outTail: -1}
	}
	return v
}

// vcOutEmpty: port i has no class-1 packet queued for output.
func (n *Network) vcOutEmpty(i int32) bool { return n.vc == nil || n.vc[i].outHead < 0 }

// vcArrive: the first bit of class-1 packet k reaches switch port i (its
// output already routed): the class-1 input buffer, PAUSE, and the queue.
func (n *Network) vcArrive(i, k int32, pk *packet, now, done int64) {
	pi := &n.in[i]
	v := &n.vc[i]
	v.inBytes += pk.size
	if v.inBytes > n.p.QueueBytes {
		n.overflows++
	}
	if v.inFlags&pauseSent == 0 && v.inBytes >= n.p.PFCStop {
		v.inFlags |= pauseSent
		n.pauses++
		n.eng.Schedule(now+n.handshake, evPFC, pi.peer, pfcPause1)
	}
	pk.next = -1
	if v.inHead < 0 {
		v.inHead, v.inTail = k, k
		if v.inFlags&arbPending == 0 {
			v.inFlags |= arbPending
			n.eng.ScheduleAux(max(done, pi.xbarFree), evArb, i, k, outPort(pk.out))
		}
		return
	}
	n.pkts[v.inTail].next = k
	v.inTail = k
}

// vcPFC: port i's peer paused (or resumed) class 1.
func (n *Network) vcPFC(i int32, pause bool, now int64) {
	v := &n.vc[i]
	if pause {
		v.outFlags |= vcPaused
		return
	}
	v.outFlags &^= vcPaused
	n.tryStart(i, now)
}

// vcEnqueueOut puts class-1 packet k into switch port i's class-1 output
// queue at now.
func (n *Network) vcEnqueueOut(i, k int32, now int64) {
	po := &n.ports[i]
	v := &n.vc[i]
	n.pkts[k].next = -1
	if v.outHead < 0 {
		if po.head < 0 {
			if po.flags&txBusy == 0 {
				n.needed(i, now)
			}
			n.hints.clearEmpty(i)
		}
		v.outHead = k
	} else {
		n.pkts[v.outTail].next = k
	}
	v.outTail = k
	n.tryStart(i, now)
}

// vcNext picks the packet switch port i sends next, taking it off its
// queue: the classes alternate when both have a packet and are not
// paused; −1 if neither can send.
func (n *Network) vcNext(i int32) int32 {
	po := &n.ports[i]
	v := &n.vc[i]
	ok0 := po.head >= 0 && po.flags&paused == 0
	ok1 := v.outHead >= 0 && v.outFlags&vcPaused == 0
	var k int32
	switch {
	case ok1 && (!ok0 || v.outFlags&vcLast == 0):
		k = v.outHead
		v.outHead = n.pkts[k].next
		v.outFlags |= vcLast | vcTx
	case ok0:
		k = po.head
		po.head = n.pkts[k].next
		v.outFlags &^= vcLast | vcTx
	default:
		return -1
	}
	if po.head < 0 && v.outHead < 0 {
		n.hints.setEmpty(i)
	}
	return k
}

// vcCanSend: switch port i has a packet of a class that is not paused.
func (n *Network) vcCanSend(i int32) bool {
	po := &n.ports[i]
	v := &n.vc[i]
	return (po.head >= 0 && po.flags&paused == 0) || (v.outHead >= 0 && v.outFlags&vcPaused == 0)
}

// vcOarb arbitrates output port o's crossbar port among the inputs whose
// head of either input queue waits for it (waitMask: class 0's, wait:
// class 1's): oldest head first (round-robin among equals, class 0 before
// class 1), among those whose input crossbar port is free and whose next
// class (vcNext) has room in o's output buffer of that class.
func (n *Network) vcOarb(o int32, now int64) {
	po := &n.ports[o]
	v := &n.vc[o]
	if po.waitMask == 0 && v.wait == 0 {
		return
	}
	if po.xbarFree > now {
		if po.flags&oarbPending == 0 {
			po.flags |= oarbPending
			n.eng.Schedule(po.xbarFree, evOarbBusy, o, 0)
		}
		return
	}
	base := n.swBase[po.sw]
	best, bestC := -1, 0
	var bestAge int64
	retry := int64(-1)
	room := [2]int32{n.p.QueueBytes - po.bytes, n.p.QueueBytes - v.outBytes}
	// c is the class of the input queue; the packet goes on in its
	// vcNext class, whose output buffer must have room.
	for c, mask := range [2]uint64{po.waitMask, v.wait} {
		m := bits.RotateLeft64(mask, -int(po.rr))
		for m != 0 {
			j := (bits.TrailingZeros64(m) + int(po.rr)) & 63
			m &= m - 1
			in := base + int32(j)
			if f := n.in[in].xbarFree; f > now {
				if retry < 0 || f < retry {
					retry = f
				}
				continue
			}
			h := n.in[in].head
			if c == 1 {
				h = n.vc[in].inHead
			}
			pk := &n.pkts[h]
			if pk.size > room[pk.vcNext] {
				continue // txEnd frees space and calls back
			}
			if best < 0 || pk.ready < bestAge {
				best, bestC, bestAge = j, c, pk.ready
			}
		}
	}
	if best < 0 {
		if retry >= 0 && po.flags&oarbPending == 0 {
			po.flags |= oarbPending
			n.eng.Schedule(retry, evOarbBusy, o, 0)
		}
		return
	}
	po.rr = uint8(best + 1)
	in := base + int32(best)
	pi := &n.in[in]
	var k int32
	if bestC == 0 {
		po.waitMask &^= 1 << uint(best)
		k = pi.head
		pk := &n.pkts[k]
		pi.head = pk.next
		pi.bytes -= pk.size
		if pi.flags&pauseSent != 0 && pi.bytes <= n.p.PFCGo {
			pi.flags &^= pauseSent
			n.eng.Schedule(now+n.handshake, evPFC, pi.peer, 0)
		}
	} else {
		v.wait &^= 1 << uint(best)
		vi := &n.vc[in]
		k = vi.inHead
		pk := &n.pkts[k]
		vi.inHead = pk.next
		vi.inBytes -= pk.size
		if vi.inFlags&pauseSent != 0 && vi.inBytes <= n.p.PFCGo {
			vi.inFlags &^= pauseSent
			n.eng.Schedule(now+n.handshake, evPFC, pi.peer, pfcResume1)
		}
	}
	pk := &n.pkts[k]
	x := n.xbar(pk.size)
	pi.xbarFree = now + x
	po.xbarFree = now + x
	pk.vc = pk.vcNext
	if pk.vc == 1 {
		v.outBytes += pk.size
	} else {
		po.bytes += pk.size
	}
	if n.pw != nil {
		n.pw.pending[o]-- // routed here (routePOWAR), now past the crossbar
		if n.pw.pending1 != nil && pk.vc == 1 {
			n.pw.pending1[o]--
		}
	}
	if at := pk.ready + n.p.SwitchLatency; at >= now+x {
		n.eng.Schedule(at, evOutq, o, k)
	} else {
		n.eng.Schedule(now+x, evOutqLate, o, k)
	}
	next := pi.head
	if bestC == 1 {
		next = n.vc[in].inHead
	}
	if next >= 0 {
		h := &n.pkts[next]
		if h.ready > now+x {
			n.eng.ScheduleAux(h.ready, evArbReady, in, next, outPort(h.out))
		} else {
			n.eng.ScheduleAux(now+x, evArbNext, in, next, outPort(h.out))
		}
	} else if bestC == 0 {
		pi.flags &^= arbPending
	} else {
		n.vc[in].inFlags &^= arbPending
	}
	if po.waitMask != 0 || v.wait != 0 {
		po.flags |= oarbPending
		n.eng.Schedule(po.xbarFree, evOarb, o, 0)
	}
}

func vcBit(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}
