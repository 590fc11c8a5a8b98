package network

import (
	"errors"
	"fmt"

	"github.com/lpictl/lpictl/sim/engine"
	"github.com/lpictl/lpictl/sim/workload"
)

// The network as a workload.Host: MPI-like workloads (VEF traces, the
// application models, synthetic patterns; package sim/workload) run on the
// packet model. It implements:
//
//   - docs/model.md §3: a message is segmented into MTU packets as the built-in
//     generator does, entering the source NIC's queue after the NIC
//     latency; a 0-byte message travels as one packet of control_bytes
//     (64 B, the minimum Ethernet frame);
//   - docs/model.md §5's causality: the replayer is told of a message when its last
//     packet's last bit is in at the destination, and timers are engine
//     events, so a slower network (contention, sleeping links) stretches
//     the run;
//   - docs/model.md §4: the execution time is the replayer's (when the last rank
//     finishes) and docs/model.md §3.3's node power uses each node's compute
//     utilisation from the replay.
//
// Nothing is allocated per message in steady state: message records live
// in a pooled slice addressed by index (packet.msg), timer tags ride in
// the event's Obj and Arg.

// wmsg is a workload message in flight.
type wmsg struct {
	tag      uint64
	created  int64
	bytes    int64 // as sent on the wire (a 0-byte message: control_bytes)
	src, dst int32
	left     int32 // packets not yet delivered
}

// workloadState is the network's side of a replay.
type workloadState struct {
	rep workload.Driver
	pf  workload.Prefetcher // rep, if it is one
	// msgs holds the message records, record k in
	// msgs[k>>msgShift][k&(msgChunk-1)]: chunks that never move, so that
	// a parallel run's partitions keep reading and counting the packets
	// of records while the replayer adds others (parallel.go).
	msgs  []*[msgChunk]wmsg
	nMsgs int32 // records made
	free  []int32
	util  []float64      // per node compute utilisation, set by finish
	stats workload.Stats // the driver's, set by finish
}

const (
	msgShift = 10
	msgChunk = 1 << msgShift
)

// msg is message record k.
func (w *workloadState) msg(k int32) *wmsg { return &w.msgs[k>>msgShift][k&(msgChunk-1)] }

// ErrWorkloadStalled reports a replay that ended with records left and no
// event to release them (a bug in the host or the replayer, not the input).
var ErrWorkloadStalled = errors.New("workload: replay stopped before the end with no event left")

// AttachWorkload makes r (a VEF Replayer or a schedule's executor) drive
// the network: Run starts it at time 0 and the results take its execution
// time and node utilisation.
func (n *Network) AttachWorkload(r workload.Driver) error {
	if n.wl.rep != nil {
		return errors.New("network: workload already attached")
	}
	n.wl.rep = r
	n.wl.pf, _ = r.(workload.Prefetcher)
	return nil
}

// Workload returns the attached driver (nil if none).
func (n *Network) Workload() workload.Driver { return n.wl.rep }

// Now implements workload.Host: the current simulated time (ps).
func (n *Network) Now() int64 { return n.eng.Now() }

// Send implements workload.Host: a message of bytes from node src to node
// dst, created now; Replayer.Delivered(tag) is called when its last packet
// is complete at dst.
func (n *Network) Send(src, dst int, bytes int64, tag uint64) {
	if bytes <= 0 {
		bytes = int64(n.p.ControlBytes)
	}
	var k int32
	if m := len(n.wl.free); m > 0 {
		k = n.wl.free[m-1]
		n.wl.free = n.wl.free[:m-1]
	} else {
		k = n.wl.nMsgs
		n.wl.nMsgs++
		if int(k>>msgShift) == len(n.wl.msgs) {
			n.wl.msgs = append(n.wl.msgs, new([msgChunk]wmsg))
		}
	}
	now := n.eng.Now()
	mtu := int64(n.p.MTU)
	*n.wl.msg(k) = wmsg{tag: tag, created: now, bytes: bytes, src: int32(src), dst: int32(dst), left: int32((bytes + mtu - 1) / mtu)}
	n.eng.Schedule(now+n.p.NICLatency, evWSend, int32(src), k)
}

// Schedule implements workload.Host: Replayer.Timer(tag) at time at.
func (n *Network) Schedule(at int64, tag uint64) {
	at = max(at, n.eng.Now())
	n.eng.Schedule(at, evWTimer, int32(uint32(tag>>32)), int32(uint32(tag)))
}

// workloadEvent runs the workload's events.
func (n *Network) workloadEvent(e engine.Event) {
	switch e.Kind {
	case evWSend:
		m := n.wl.msg(e.Arg)
		n.sendMessage(e.At, m.created, m.src, m.dst, m.bytes, e.Arg, packTag(m.tag))
	case evWDeliver:
		tag := n.wl.msg(e.Arg).tag
		n.wl.free = append(n.wl.free, e.Arg)
		n.wl.rep.Delivered(tag)
	case evWTimer:
		n.wl.rep.Timer(uint64(uint32(e.Obj))<<32 | uint64(uint32(e.Arg)))
	}
}

// packetIn: a packet of workload message k (its tag packed in tag) is
// complete at its destination at done; after the last one the replayer
// hears of the message.
func (n *Network) packetIn(k int32, done int64, tag int32) {
	m := n.wl.msg(k)
	m.left--
	if m.left == 0 {
		n.eng.ScheduleAux(done, evWDeliver, 0, k, tag)
	}
}

// packTag keeps what a delivery event carries of its message's driver tag
// (in Aux), for workload.Prefetcher.PrefetchDelivered: the tag's top bit
// and its low 31 bits. unpackTag gives them back as a tag, the bits between
// them 0: enough to prefetch by, and nothing else reads it.
func packTag(tag uint64) int32 { return int32(uint32(tag)&(1<<31-1) | uint32(tag>>63)<<31) }

func unpackTag(p int32) uint64 { return uint64(uint32(p)&(1<<31-1)) | uint64(uint32(p)>>31)<<63 }

// startWorkload starts the attached replayer (at time 0, from Run).
func (n *Network) startWorkload() {
	if n.wl.rep != nil {
		n.wl.rep.Start(n)
	}
}

// workloadFailed reports whether the replay has failed (Run stops early).
func (n *Network) workloadFailed() bool {
	return n.wl.rep != nil && n.wl.rep.Err() != nil
}

// workloadErr is the replay's outcome once the events have run out.
func (n *Network) workloadErr() error {
	r := n.wl.rep
	if r == nil {
		return nil
	}
	if err := r.Err(); err != nil {
		return err
	}
	if !r.Done() {
		return fmt.Errorf("%w at %d ps", ErrWorkloadStalled, n.eng.Now())
	}
	return nil
}

// workloadEnd is the run's end with a workload: when the last rank
// finished (docs/model.md §4), never before the last delivery. It also takes the
// nodes' compute utilisation for the energy model (docs/model.md §3.3).
func (n *Network) workloadEnd() int64 {
	st := n.wl.rep.Stats()
	n.wl.stats = st
	n.wl.util = st.Utilisation(n.t.Nodes())
	return max(st.ExecTime, n.lastDelivery)
}

// nodeEnergy is the nodes' energy over secs (docs/model.md §3.3): P_min + (P_max −
// P_min) × utilisation per node, the utilisation being the workload's
// per-node compute fraction, or Power.NodeUtilisation for every node.
func (n *Network) nodeEnergy(secs float64) (joules, meanUtil float64) {
	pw := n.p.Power
	nodes := n.t.Nodes()
	if n.wl.util == nil {
		return float64(nodes) * (pw.NodeMinW + (pw.NodeMaxW-pw.NodeMinW)*pw.NodeUtilisation) * secs, pw.NodeUtilisation
	}
	var w, sum float64
	for _, u := range n.wl.util {
		w += pw.NodeMinW + (pw.NodeMaxW-pw.NodeMinW)*u
		sum += u
	}
	return w * secs, sum / float64(max(1, nodes))
}
