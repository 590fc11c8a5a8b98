package workload

import (
	"slices"

	"github.com/lpictl/lpictl/sim/workload/vef"
)

// Stats counts what a replay did. Times are ps.
type Stats struct {
	// Messages and Bytes went through the host: point-to-point messages
	// between different tasks plus the messages collectives expand into.
	Messages, Bytes int64
	// P2P counts trace messages (including SelfMessages, delivered locally
	// at once), P2PBytes their payload.
	P2P, P2PBytes, SelfMessages int64
	// CollMessages and CollBytes are the collectives' expansion.
	CollMessages, CollBytes int64
	// IntraMessages and IntraBytes went between ranks on the same node,
	// not through the network (IntraNode); Messages and Bytes exclude them.
	IntraMessages, IntraBytes int64
	// Per rank: messages (point-to-point and collective parts) sent and
	// addressed to it, and their bytes, counted when sent.
	RankSends, RankRecvs, RankBytesSent, RankBytesRecv []int64
	// Collectives counts completed operations by vef.Op; Algorithms by
	// Algorithm.
	Collectives [vef.NumOps]int64
	Algorithms  [numAlgorithms]int64
	// RankFinish is when each rank last did something (sent, received,
	// finished a collective part); ExecTime is the latest of them.
	RankFinish []int64
	ExecTime   int64
	// RankBusy is each rank's compute time: the delays of its records
	// after their dependencies, and the time before its first record
	// (merged where they overlap). A rank whose records all have
	// dependency 0 is open-loop traffic (synthetic injection at absolute
	// times): it computes nothing, its waits are not compute.
	RankBusy []int64
	// Node maps rank → node.
	Node []int32
}

// Stats returns a copy of the counters so far (complete once Done).
func (r *Replayer) Stats() Stats {
	s := r.stats
	s.RankFinish = slices.Clone(s.RankFinish)
	s.RankBusy = slices.Clone(s.RankBusy)
	s.RankSends, s.RankRecvs = slices.Clone(s.RankSends), slices.Clone(s.RankRecvs)
	s.RankBytesSent, s.RankBytesRecv = slices.Clone(s.RankBytesSent), slices.Clone(s.RankBytesRecv)
	for t, c := range r.closed {
		if !c { // open-loop: its only "compute" is the wait before its first send
			s.RankBusy[t] -= r.initBusy[t]
		}
	}
	s.Node = slices.Clone(s.Node)
	if !r.done {
		s.ExecTime = slices.Max(append(s.RankFinish, 0))
	}
	return s
}

// NodeBusy sums RankBusy per node for a network of nodes nodes.
func (s *Stats) NodeBusy(nodes int) []int64 {
	b := make([]int64, nodes)
	for r, n := range s.Node {
		if int(n) < nodes {
			b[n] += s.RankBusy[r]
		}
	}
	return b
}

// Utilisation is each node's busy fraction of ExecTime (0 for idle nodes),
// the input of the node power model (docs/model.md §3.3): its ranks' busy
// time over ExecTime × its ranks (a rank is one core, so a node whose
// ranks all compute the whole run is at 1).
func (s *Stats) Utilisation(nodes int) []float64 {
	u := make([]float64, nodes)
	if s.ExecTime <= 0 {
		return u
	}
	ranks := make([]int64, nodes)
	for _, n := range s.Node {
		if int(n) < nodes {
			ranks[n]++
		}
	}
	for n, b := range s.NodeBusy(nodes) {
		if ranks[n] > 0 {
			u[n] = min(1, float64(b)/float64(s.ExecTime*ranks[n]))
		}
	}
	return u
}

// CollectiveOps is the total number of completed collective operations.
func (s *Stats) CollectiveOps() int64 {
	var n int64
	for _, c := range s.Collectives {
		n += c
	}
	return n
}
