package scenario

import (
	"testing"

	"github.com/lpictl/lpictl/sim/internal/graph"
	"github.com/lpictl/lpictl/sim/network"
	"github.com/lpictl/lpictl/sim/topo"
)

// TestRefusalsMatchDependencyCycles checks the deadlock refusals
// (deadlockFree) against the channel dependency graph of the routing
// itself on small instances of each topology: a channel is a switch's
// output port to another switch in one traffic class (the hop's class
// from network.HopClasses, the network's own, where the routing carries
// classes: a torus with a dateline, the dragonfly, ECMP on a HyperX of
// two dimensions; class 0 otherwise),
// and a route adds a dependency from each channel to the next (minimal
// routing: the topology's Route; ECMP: every minimal port at every
// switch, topo.MultiPath), over the routes packets take from the nodes'
// switches. Build refuses a configuration if and only if its graph has a
// cycle; the rows without dateline or classes check that one class would
// not do.
func TestRefusalsMatchDependencyCycles(t *testing.T) {
	for _, tc := range []struct {
		name string
		sets []string
	}{
		{"torus-4-minimal", []string{"topology={kind: torus3d, dims: [4, 4, 4], nodes_per_switch: 1}"}},
		{"torus-3-minimal", []string{"topology={kind: torus3d, dims: [3, 3, 3], nodes_per_switch: 1}"}},
		{"torus-3-ecmp", []string{"topology={kind: torus3d, dims: [3, 3, 3], nodes_per_switch: 1}", "routing.kind=ecmp"}},
		{"torus-4-dateline-minimal", []string{"topology={kind: torus3d, dims: [4, 4, 4], nodes_per_switch: 1, dateline: true}"}},
		{"torus-4-dateline-ecmp", []string{"topology={kind: torus3d, dims: [4, 4, 4], nodes_per_switch: 1, dateline: true}", "routing.kind=ecmp"}},
		{"torus-5-dateline-trunk2-minimal", []string{"topology={kind: torus3d, dims: [5, 3, 2], nodes_per_switch: 2, trunk: 2, dateline: true}"}},
		{"torus-5-dateline-trunk3-ecmp", []string{"topology={kind: torus3d, dims: [5, 3, 2], nodes_per_switch: 2, trunk: 3, dateline: true}", "routing.kind=ecmp"}},
		{"torus-6-trunk2-minimal", []string{"topology={kind: torus3d, dims: [6, 2, 2], nodes_per_switch: 2, trunk: 2}"}},
		{"hyperx-minimal", []string{"topology={kind: hyperx, dims: [3, 4, 3], nodes_per_switch: 1}"}},
		{"hyperx-ecmp", []string{"topology={kind: hyperx, dims: [3, 4, 3], nodes_per_switch: 1}", "routing.kind=ecmp"}},
		{"fbfly-1d-ecmp", []string{"topology={kind: fbfly, dims: [8], nodes_per_switch: 2}", "routing.kind=ecmp"}},
		{"hyperx-2d-ecmp", []string{"topology={kind: hyperx, dims: [3, 4], nodes_per_switch: 1}", "routing.kind=ecmp"}},
		{"hyperx-3x1x4-ecmp", []string{"topology={kind: hyperx, dims: [3, 1, 4], nodes_per_switch: 1}", "routing.kind=ecmp"}},
		{"fbfly-2d-ecmp", []string{"topology={kind: fbfly, dims: [4, 4], nodes_per_switch: 2}", "routing.kind=ecmp"}},
		{"megafly-minimal", nil},
		{"megafly-ecmp", []string{"routing.kind=ecmp"}},
		{"rlft-ecmp", []string{"topology={kind: rlft, radix: 8, levels: 3}", "routing.kind=ecmp"}},
		{"dragonfly-minimal", []string{"topology={kind: dragonfly, routers: 4, nodes_per_switch: 2, global_links: 2}"}},
		{"dragonfly-ecmp", []string{"topology={kind: dragonfly, routers: 3, nodes_per_switch: 1, global_links: 1}", "routing.kind=ecmp"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse([]byte(small), "small.yaml", tc.sets)
			if err != nil {
				t.Fatal(err)
			}
			_, buildErr := s.Build()
			tp, err := topo.Build(s.Topology)
			if err != nil {
				t.Fatal(err)
			}
			rk, _ := network.ParseRouting(s.Routing.Kind)
			hc := network.HopClasses(tp, rk)
			cyclic := dependencyCycle(t, tp, rk == network.RoutingECMP, hc)
			if cyclic != (buildErr != nil) {
				t.Fatalf("dependency cycle %v, Build error %v", cyclic, buildErr)
			}
			if hc != nil {
				// The classes are what breaks the cycles: one class
				// alone has them.
				if !dependencyCycle(t, tp, rk == network.RoutingECMP, nil) {
					t.Errorf("%s: acyclic with one class too; the classes are not needed", tp.Name())
				}
			}
		})
	}
}

// dependencyCycle builds the channel dependency graph of tp's minimal
// routing (every minimal port with ecmp), each hop in its class from hc
// (class 0 if nil), and reports whether it has a cycle.
func dependencyCycle(t *testing.T, tp topo.Topology, ecmp bool, hc topo.HopClasser) bool {
	type ch struct{ s, p, c int32 }
	edges := map[ch]map[ch]bool{}
	var mp topo.MultiPath
	if ecmp {
		var ok bool
		if mp, ok = tp.(topo.MultiPath); !ok {
			t.Fatalf("%s lists no minimal paths", tp.Name())
		}
	}
	var buf []int
	outs := func(s, d int) []int {
		if ecmp {
			buf = mp.MinimalPorts(s, d, buf[:0])
			return buf
		}
		return []int{tp.Route(s, d)}
	}
	// Routes start at a node's switch: from each, follow every channel a
	// packet for d can take (a route from elsewhere, say a Megafly spine,
	// is never taken and adds no dependency).
	var starts []int
	seen := map[int]bool{}
	for v := range tp.Nodes() {
		if s, _ := tp.Attach(v); !seen[s] {
			seen[s] = true
			starts = append(starts, s)
		}
	}
	next := func(s, d int) []ch {
		var out []ch
		for _, p := range outs(s, d) {
			if peer, ok := tp.PortPeer(s, p); ok && peer.Kind == topo.SwitchEnd {
				c := 0
				if hc != nil {
					c = hc.HopClass(s, d, p)
				}
				out = append(out, ch{int32(s), int32(p), int32(c)})
			}
		}
		return out
	}
	for d := range tp.Nodes() {
		reached := map[ch]bool{}
		var queue []ch
		for _, s := range starts {
			for _, c := range next(s, d) {
				if !reached[c] {
					reached[c] = true
					queue = append(queue, c)
				}
			}
		}
		for len(queue) > 0 {
			c := queue[0]
			queue = queue[1:]
			peer, _ := tp.PortPeer(int(c.s), int(c.p))
			for _, n := range next(int(peer.ID), d) {
				if edges[c] == nil {
					edges[c] = map[ch]bool{}
				}
				edges[c][n] = true
				if !reached[n] {
					reached[n] = true
					queue = append(queue, n)
				}
			}
		}
	}
	return graph.HasCycle(edges)
}
