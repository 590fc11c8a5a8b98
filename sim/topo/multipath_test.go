package topo

import (
	"fmt"
	"slices"
	"testing"
)

// layeredDist returns, for every switch v, the least number of switch
// links from v to switch target over paths that cross at most one global
// link (d0[v]) and over paths that cross none (d1[v]); −1 if unreachable.
// Without global links both are the plain BFS distance. It is a backward
// BFS on the graph of (switch, globals crossed) states, independent of
// the topologies' Route and Distance.
func layeredDist(t Topology, target int) (d0, d1 []int) {
	n := t.Switches()
	dist := make([]int, 2*n) // state v*2+u: at v having crossed u globals
	for i := range dist {
		dist[i] = -1
	}
	dist[2*target], dist[2*target+1] = 0, 0
	queue := []int{2 * target, 2*target + 1}
	for len(queue) > 0 {
		st := queue[0]
		queue = queue[1:]
		w, u := st/2, st%2
		for p := range t.Radix(w) {
			e, ok := t.PortPeer(w, p)
			if !ok || e.Kind != SwitchEnd {
				continue
			}
			v := int(e.ID)
			pred := 2*v + u // a local link keeps the count
			if isGlobal(t, w, p) {
				if u == 0 {
					continue // (v, 0) → (w, 1) is the only way over a global link
				}
				pred = 2 * v
			}
			if dist[pred] < 0 {
				dist[pred] = dist[st] + 1
				queue = append(queue, pred)
			}
		}
	}
	d0, d1 = make([]int, n), make([]int, n)
	for v := range n {
		d0[v], d1[v] = dist[2*v], dist[2*v+1]
	}
	return d0, d1
}

// oraclePorts lists the ports of s whose far end is one hop closer to dst
// by layeredDist (or is dst's NIC).
func oraclePorts(t Topology, s, dst int, d0, d1 []int) []int {
	var ports []int
	for p := range t.Radix(s) {
		e, ok := t.PortPeer(s, p)
		switch {
		case !ok:
		case e.Kind == NodeEnd:
			if int(e.ID) == dst {
				ports = append(ports, p)
			}
		case isGlobal(t, s, p):
			if d1[e.ID] >= 0 && d1[e.ID] == d0[s]-1 {
				ports = append(ports, p)
			}
		default:
			if d0[e.ID] >= 0 && d0[e.ID] == d0[s]-1 {
				ports = append(ports, p)
			}
		}
	}
	return ports
}

// TestMinimalPortsBFS checks MinimalPorts on every (switch, node) pair of
// the small instances against the distance oracle, and that every choice
// keeps Distance (the hop counts the simulator reports) and contains Route.
func TestMinimalPortsBFS(t *testing.T) {
	for _, c := range small() {
		tp := mustBuild(t, c)
		mp, ok := tp.(MultiPath)
		if !ok {
			t.Fatalf("%s does not implement MultiPath", tp.Name())
		}
		t.Run(fmt.Sprintf("%s/%v", tp.Name(), c), func(t *testing.T) {
			buf := make([]int, 0, 64)
			multi := 0
			for dst := range tp.Nodes() {
				target, _ := tp.Attach(dst)
				d0, d1 := layeredDist(tp, target)
				for s := range tp.Switches() {
					got := mp.MinimalPorts(s, dst, buf)
					want := oraclePorts(tp, s, dst, d0, d1)
					sorted := slices.Sorted(slices.Values(got))
					if !slices.Equal(sorted, want) || len(slices.Compact(slices.Clone(sorted))) != len(got) {
						t.Fatalf("MinimalPorts(%d, %d) = %v, oracle %v", s, dst, got, want)
					}
					if !slices.Contains(got, tp.Route(s, dst)) {
						t.Fatalf("MinimalPorts(%d, %d) = %v lacks Route's port %d", s, dst, got, tp.Route(s, dst))
					}
					if tp.Distance(s, dst) != d0[s]+1 {
						t.Fatalf("Distance(%d, %d) = %d, oracle %d", s, dst, tp.Distance(s, dst), d0[s]+1)
					}
					for _, p := range got {
						e, _ := tp.PortPeer(s, p)
						if e.Kind == SwitchEnd && tp.Distance(int(e.ID), dst) != tp.Distance(s, dst)-1 {
							t.Fatalf("port %d of switch %d to node %d: Distance %d after, %d before",
								p, s, dst, tp.Distance(int(e.ID), dst), tp.Distance(s, dst))
						}
					}
					if len(got) > 1 {
						multi++
					}
				}
			}
			t.Logf("%d (switch, node) pairs with several minimal ports", multi)
		})
	}
}

// TestMinimalPortsByHand checks a few sets worked out from the wiring
// rules (docs/topologies.md).
func TestMinimalPortsByHand(t *testing.T) {
	cases := []struct {
		c      Config
		s, dst int
		want   []int
	}{
		// rlft radix 16: leaf 0 to node 1023 (another pod): all 8 up ports.
		{Config{Kind: KindRLFT, Radix: 16}, 0, 1023, []int{8, 9, 10, 11, 12, 13, 14, 15}},
		// leaf 0 to its own node 5: port 5 only.
		{Config{Kind: KindRLFT, Radix: 16}, 0, 5, []int{5}},
		// middle switch 128 (pod 0) to node 8 (leaf 1, pod 0): down port 1.
		{Config{Kind: KindRLFT, Radix: 16}, 128, 8, []int{1}},
		// torus 4×4×4, 1 node per switch: switch 0 to switch (2,1,0) = 6:
		// dimension 0 is at offset 2 = k/2 (both ways), dimension 1 +.
		{Config{Kind: KindTorus3D, Dims: []int{4, 4, 4}, NodesPerSwitch: 1}, 0, 6, []int{1, 2, 3}},
		// hyperx 3×4, 2 nodes: switch 0 (0,0) to node 23 on switch 11 (2,3):
		// ports 2 + 2 − 1 = 3 (dimension 0 to coordinate 2) and 2 + 2 + 3 − 1 = 6.
		{Config{Kind: KindHyperX, Dims: []int{3, 4}, NodesPerSwitch: 2}, 0, 23, []int{3, 6}},
		// megafly default: leaf 0 to node 8 (leaf 1 of group 0): every spine.
		{Default(), 0, 8, []int{8, 9, 10, 11, 12, 13, 14, 15}},
		// megafly default: leaf 0 to node 64 (group 1): the owner spine 0 only.
		{Default(), 0, 64, []int{8}},
	}
	for _, tc := range cases {
		tp := mustBuild(t, tc.c)
		got := tp.(MultiPath).MinimalPorts(tc.s, tc.dst, nil)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: MinimalPorts(%d, %d) = %v, want %v", tp.Name(), tc.s, tc.dst, got, tc.want)
		}
	}
}

// TestMinimalPortsNoAlloc: with a buffer of Radix ports nothing is allocated.
func TestMinimalPortsNoAlloc(t *testing.T) {
	for _, c := range defaults() {
		tp := mustBuild(t, c)
		mp := tp.(MultiPath)
		buf := make([]int, 0, 64)
		sw, dst := benchPairs(tp, 256)
		i := 0
		if a := testing.AllocsPerRun(1000, func() {
			buf = mp.MinimalPorts(sw[i&255], dst[i&255], buf)
			i++
		}); a != 0 {
			t.Errorf("%s: %v allocations per MinimalPorts", tp.Name(), a)
		}
	}
}

// TestFBFlyIsHyperX: a flattened butterfly and the HyperX of the same
// sides are the same network under another name.
func TestFBFlyIsHyperX(t *testing.T) {
	for _, dims := range [][]int{{4, 4}, {3, 5, 2}} {
		f := mustBuild(t, Config{Kind: KindFBFly, Dims: dims, NodesPerSwitch: 2})
		h := mustBuild(t, Config{Kind: KindHyperX, Dims: dims, NodesPerSwitch: 2})
		if f.Name() == h.Name() || !slices.Equal(f.Links(), h.Links()) {
			t.Fatalf("%v: %s and %s differ in links (or share a name)", dims, f.Name(), h.Name())
		}
		for s := range f.Switches() {
			for dst := range f.Nodes() {
				if f.Route(s, dst) != h.Route(s, dst) || f.Distance(s, dst) != h.Distance(s, dst) {
					t.Fatalf("%v: switch %d to node %d routes differently", dims, s, dst)
				}
			}
		}
	}
}

func BenchmarkMinimalPorts(b *testing.B) {
	for _, c := range append(benchTopologies(), Config{Kind: KindRLFT, Radix: 16}, Config{Kind: KindHyperX}) {
		tp := mustBuild(b, c)
		mp := tp.(MultiPath)
		sw, dst := benchPairs(tp, 1<<12)
		b.Run(tp.Name(), func(b *testing.B) {
			b.ReportAllocs()
			buf := make([]int, 0, 64)
			sink := 0
			i := 0
			for b.Loop() {
				j := i & (1<<12 - 1)
				sink += len(mp.MinimalPorts(sw[j], dst[j], buf))
				i++
			}
			_ = sink
		})
	}
}
