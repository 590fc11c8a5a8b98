package network

import (
	"math/rand/v2"
	"testing"

	"github.com/lpictl/lpictl/sim/eee"
	"github.com/lpictl/lpictl/sim/topo"
)

// BenchmarkPALDecision: one PAL routing decision (routePAL: the current
// dimension, Table I, the UGAL comparison and, when the direct port's queue
// is above the offset, the per-packet draw of an intermediate among the
// row's routers) at a source switch of the paper's 512-node 2-D flattened
// butterfly (8×8 routers, 8 nodes each), all links on. The queues are set
// so that about half the decisions search for an intermediate. Allocation
// free.
func BenchmarkPALDecision(b *testing.B) {
	tp, err := topo.Build(topo.Config{Kind: topo.KindFBFly, Dims: []int{8, 8}, NodesPerSwitch: 8})
	if err != nil {
		b.Fatal(err)
	}
	n, err := New(tp, palAllOn(table6(eee.AlwaysOn, 0)))
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range n.palQ {
		n.palQ[i] = int32(rng.IntN(8))
	}
	const pairs = 1024
	var sw, dst [pairs]int32
	for i := range pairs {
		sw[i] = int32(rng.IntN(tp.Switches()))
		for {
			dst[i] = int32(rng.IntN(tp.Nodes()))
			if int(dst[i])/8 != int(sw[i]) {
				break
			}
		}
	}
	pk := &packet{size: 9600}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		j := i & (pairs - 1)
		pk.dst, pk.detour, pk.hops = dst[j], false, 2
		n.routePAL(sw[j], pk)
	}
}
