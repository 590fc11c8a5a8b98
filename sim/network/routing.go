package network

import (
	"fmt"
	"math/bits"

	"github.com/lpictl/lpictl/sim/topo"
)

// Routing selects how a switch picks a packet's output port.
type Routing uint8

// Routing kinds (scenario key routing.kind).
const (
	// RoutingMinimal is the topology's deterministic minimal routing
	// (topo.Topology.Route): the default.
	RoutingMinimal Routing = iota
	// RoutingECMP hashes each flow onto one of the equal-cost minimal
	// paths, as htsim's ecmp_host does: at every switch the output port is
	// one of topo.MultiPath's MinimalPorts, chosen by a hash of the flow
	// and the switch, so all packets of a flow take the same path. A flow
	// is a workload message (its record, unique among the messages in
	// flight), or for traffic without a workload (Inject) a (source,
	// destination) pair.
	RoutingECMP
)

// String returns the scenario name of the kind.
func (r Routing) String() string {
	switch r {
	case RoutingMinimal:
		return "minimal"
	case RoutingECMP:
		return "ecmp"
	}
	return fmt.Sprintf("routing(%d)", uint8(r))
}

// ParseRouting parses a scenario's routing.kind; "" is minimal.
func ParseRouting(s string) (Routing, error) {
	switch s {
	case "", "minimal":
		return RoutingMinimal, nil
	case "ecmp":
		return RoutingECMP, nil
	}
	return 0, fmt.Errorf("unknown routing %q (want minimal or ecmp)", s)
}

// ecmp is the network's ECMP state: the topology's multipath view and a
// buffer for the candidate ports (nothing is allocated per decision).
type ecmp struct {
	mp   topo.MultiPath
	cand []int
}

func newECMP(t topo.Topology) (ecmp, error) {
	mp, ok := t.(topo.MultiPath)
	if !ok {
		return ecmp{}, fmt.Errorf("routing.kind: ecmp needs a topology that lists its minimal paths; %s does not", t.Name())
	}
	r := 0
	for s := range t.Switches() {
		r = max(r, t.Radix(s))
	}
	return ecmp{mp: mp, cand: make([]int, 0, r)}, nil
}

// mix64 is the SplitMix64 finaliser (Steele, Lea and Flood, OOPSLA 2014):
// a bijection of 64-bit words whose output bits each depend on every
// input bit.
func mix64(x uint64) uint64 {
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// flowKey identifies a packet's flow: its workload message record, or for
// other traffic (msg = −1 − src, see sendMessage) its source and
// destination, in a disjoint range of keys.
func flowKey(msg, dst int32) uint64 {
	if msg >= 0 {
		return uint64(msg)
	}
	return 1<<63 | uint64(uint32(-1-msg))<<32 | uint64(uint32(dst))
}

// ecmpPick returns the index among n candidate ports of flow key at
// switch sw: a hash of both, reduced to [0, n) by a multiply-high.
func ecmpPick(key uint64, sw int32, n int) int {
	h := mix64(mix64(key) ^ uint64(uint32(sw)))
	hi, _ := bits.Mul64(h, uint64(n))
	return int(hi)
}

// routeECMP returns packet pk's output port (global index) at switch sw.
func (n *Network) routeECMP(sw int32, pk *packet) int32 {
	c := n.ecmp.mp.MinimalPorts(int(sw), int(pk.dst), n.ecmp.cand)
	p := c[0]
	if len(c) > 1 {
		p = c[ecmpPick(flowKey(pk.msg, pk.dst), sw, len(c))]
	}
	return n.swBase[sw] + int32(p)
}
