package topo

import (
	"math/rand/v2"
	"runtime"
	"testing"
)

// benchPairs returns random (switch, node) pairs, sources on node-bearing
// switches as in a simulation.
func benchPairs(tp Topology, n int) (sw, dst []int) {
	rng := rand.New(rand.NewPCG(7, 7))
	sw, dst = make([]int, n), make([]int, n)
	for i := range n {
		sw[i], _ = tp.Attach(rng.IntN(tp.Nodes()))
		dst[i] = rng.IntN(tp.Nodes())
	}
	return sw, dst
}

func benchTopologies() []Config {
	return []Config{Default(), {Kind: KindTorus3D}, {Kind: KindRLFT}, {Kind: KindDragonfly}, {Kind: KindFBFly}}
}

func BenchmarkRoute(b *testing.B) {
	for _, c := range benchTopologies() {
		tp := mustBuild(b, c)
		sw, dst := benchPairs(tp, 1<<12)
		b.Run(tp.Name(), func(b *testing.B) {
			b.ReportAllocs()
			sink := 0
			i := 0
			for b.Loop() {
				j := i & (1<<12 - 1)
				sink += tp.Route(sw[j], dst[j])
				i++
			}
			_ = sink
		})
	}
}

func BenchmarkDistance(b *testing.B) {
	for _, c := range benchTopologies() {
		tp := mustBuild(b, c)
		sw, dst := benchPairs(tp, 1<<12)
		b.Run(tp.Name(), func(b *testing.B) {
			b.ReportAllocs()
			sink := 0
			i := 0
			for b.Loop() {
				j := i & (1<<12 - 1)
				sink += tp.Distance(sw[j], dst[j])
				i++
			}
			_ = sink
		})
	}
}

// BenchmarkPortPeer is the other per-hop lookup a simulator makes.
func BenchmarkPortPeer(b *testing.B) {
	tp := mustBuild(b, Default())
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		s := i % tp.Switches()
		_, _ = tp.PortPeer(s, i%tp.Radix(s))
		i++
	}
}

// BenchmarkBuild reports the build time and the live heap a built
// topology holds (live-B), and the same for its Links() slice.
func BenchmarkBuild(b *testing.B) {
	for _, c := range []Config{Default(), {Kind: KindMegafly, Radix: 36}} {
		b.Run(mustBuild(b, c).Name(), func(b *testing.B) {
			b.ReportAllocs()
			var tp Topology
			for b.Loop() {
				tp, _ = Build(c)
			}
			b.ReportMetric(float64(liveBytes(func() any { t, _ := Build(c); return t })), "live-B")
			b.ReportMetric(float64(liveBytes(func() any { return tp.Links() })), "links-B")
		})
	}
}

// liveBytes is the heap that stays allocated while f's result is alive.
func liveBytes(f func() any) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v := f()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(v)
	if after.HeapAlloc < before.HeapAlloc {
		return 0
	}
	return after.HeapAlloc - before.HeapAlloc
}

func BenchmarkDescribe(b *testing.B) {
	for _, c := range []Config{Default(), {Kind: KindTorus3D}} {
		tp := mustBuild(b, c)
		b.Run(tp.Name(), func(b *testing.B) {
			for b.Loop() {
				Describe(tp)
			}
		})
	}
}
