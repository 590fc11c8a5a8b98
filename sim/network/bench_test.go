package network

import (
	"runtime"
	"testing"
	"time"

	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/eee"
	"github.com/lpictl/lpictl/sim/engine"
	"github.com/lpictl/lpictl/sim/internal/hugepage"
	"github.com/lpictl/lpictl/sim/tcep"
	"github.com/lpictl/lpictl/sim/topo"
)

// deepSleepPBC is Table 6 in deep sleep with PerfBoundCorrect on every
// port: the acceptance benchmarks' and the memory tests' parameters.
func deepSleepPBC() Params {
	p := table6(eee.DeepSleep, 0)
	perfBoundCorrect(&p)
	return p
}

func perfBoundCorrect(p *Params) {
	p.Predictor = predictor.Config{Kind: predictor.KindPerfBoundCorrect, WakeTime: predictor.Duration(4480 * time.Nanosecond)}
}

// BenchmarkMegafly4160 is acceptance benchmark (a): the paper's Megafly,
// uniform random traffic at 30 % load (workload kind synthetic, 9600 B
// messages), PerfBoundCorrect on every port, deep sleep; 20 µs of
// generation (then drained).
func BenchmarkMegafly4160(b *testing.B) {
	for _, c := range []struct {
		name    string
		q       engine.QueueKind
		d       time.Duration
		e2e     bool // the end-to-end bound's gate (1 %)
		threads int  // engine.threads (parallel.go)
		// pred replaces PerfBoundCorrect: Fixed is built apart
		// (model.go, newApart), PerfBound in a ctlSlot.
		pred predictor.Kind
	}{
		{"heap", engine.QueueHeap, 20 * time.Microsecond, false, 0, ""},
		{"calendar", engine.QueueCalendar, 20 * time.Microsecond, false, 0, ""},
		// Five times longer: start-up (controllers built on first use,
		// pools and lanes growing) weighs less; closer to the
		// steady-state rate.
		{"heap-100us", engine.QueueHeap, 100 * time.Microsecond, false, 0, ""},
		// The same on two goroutines: a parallel run (parallel.go).
		{"heap-100us-2threads", engine.QueueHeap, 100 * time.Microsecond, false, 2, ""},
		// The same with the gate: its cost per stall and per lazy walk.
		{"heap-e2e", engine.QueueHeap, 20 * time.Microsecond, true, 0, ""},
		// The papers' baselines: a fixed 10 µs and PerfBound.
		{"heap-fixed", engine.QueueHeap, 20 * time.Microsecond, false, 0, predictor.KindFixed},
		{"heap-perfbound", engine.QueueHeap, 20 * time.Microsecond, false, 0, predictor.KindPerfBound},
	} {
		b.Run(c.name, func(b *testing.B) {
			p := deepSleepPBC()
			if c.pred != "" {
				pdt := predictor.Duration(10 * time.Microsecond)
				p.Predictor.Kind, p.Predictor.PDT = c.pred, &pdt
			}
			p.Queue = c.q
			if c.e2e {
				p.EndToEnd.Bound = 0.01
			}
			p.Threads = c.threads
			benchReplay(b, topo.Default(), p, synthetic("uniform", 9600, 0.3, c.d))
		})
	}
}

// BenchmarkFatTree1024 is acceptance benchmark (b): the 1024-host 3-level
// fat tree (rlft radix 16), 100 Gb/s, 9000 B packets, random permutation
// at full load (workload kind synthetic); 10 µs of generation (then
// drained). heap-ecmp is the heap run with ECMP routing (routing.go).
func BenchmarkFatTree1024(b *testing.B) {
	for _, c := range []struct {
		name string
		q    engine.QueueKind
		r    Routing
	}{
		{"heap", engine.QueueHeap, RoutingMinimal},
		{"calendar", engine.QueueCalendar, RoutingMinimal},
		{"heap-ecmp", engine.QueueHeap, RoutingECMP},
		{"heap-powar", engine.QueueHeap, RoutingPOWAR},
		{"heap-2threads", engine.QueueHeap, RoutingMinimal},
	} {
		b.Run(c.name, func(b *testing.B) {
			p := deepSleepPBC()
			p.RateBps, p.MTU = 100e9, 9000
			p.Queue = c.q
			p.Routing = c.r
			p.POWAR = DefaultPOWAR()
			if c.name == "heap-2threads" {
				p.Threads = 2
			}
			benchReplay(b, topo.Config{Kind: topo.KindRLFT, Radix: 16, Levels: 3}, p, synthetic("permutation", 9000, 1, 10*time.Microsecond))
		})
	}
}

// BenchmarkRoutingDecision is the cost of one output-port choice on the
// 1024-host fat tree: the topology's Route (minimal) against ECMP's
// MinimalPorts and hash (routeECMP) and POWAR's MinimalPorts, checking
// cycle, busy and awake tests and Algorithm 1 (routePOWAR, deep sleep,
// t_PDT 1 µs, a decision every 10 ns of simulated time; the port's
// pending count is undone after each so that ports stay free), over
// random (leaf, node) pairs.
func BenchmarkRoutingDecision(b *testing.B) {
	tp, err := topo.Build(topo.Config{Kind: topo.KindRLFT, Radix: 16, Levels: 3})
	if err != nil {
		b.Fatal(err)
	}
	sw, dst := make([]int32, 1<<12), make([]int32, 1<<12)
	for i := range sw {
		s, _ := tp.Attach((i * 7919) % tp.Nodes())
		sw[i], dst[i] = int32(s), int32((i*104729+13)%tp.Nodes())
	}
	for _, c := range []struct {
		name string
		r    Routing
		set  func(*POWAR)
	}{
		{"minimal", RoutingMinimal, nil},
		{"ecmp", RoutingECMP, nil},
		{"powar", RoutingPOWAR, func(*POWAR) {}},
		{"powar-queue", RoutingPOWAR, func(c *POWAR) { c.Queue = true }},
		{"powar-first-on", RoutingPOWAR, func(c *POWAR) { c.FirstOn = true }},
		{"powar-round-robin", RoutingPOWAR, func(c *POWAR) { c.RoundRobin = true }},
	} {
		b.Run(c.name, func(b *testing.B) {
			p := table6(eee.AlwaysOn, 0)
			if c.set != nil {
				p = table6(eee.DeepSleep, time.Microsecond)
				p.POWAR = DefaultPOWAR()
				c.set(&p.POWAR)
			}
			p.Routing = c.r
			n, err := New(tp, p)
			if err != nil {
				b.Fatal(err)
			}
			loopRoutingDecisions(b, n, sw, dst, 0)
		})
	}
}

// loopRoutingDecisions times one routing decision per iteration, at switch
// sw[j] for node dst[j] (j cycling over the tables, whose length is a
// power of two): the topology's Route without ECMP or POWAR, routeECMP,
// or routePOWAR with a decision every 10 ns of simulated time and the
// port's pending count undone so that ports stay free. hops is the
// packet's links still to cross.
func loopRoutingDecisions(b *testing.B, n *Network, sw, dst []int32, hops uint8) {
	b.ReportAllocs()
	var sink int32
	i := 0
	for b.Loop() {
		j := i & (len(sw) - 1)
		pk := packet{msg: int32(i), dst: dst[j], size: 9600, hops: hops}
		switch {
		case n.pw != nil && n.pw.wait:
			// The decision is made when the packet requests the crossbar
			// (decidePOWAR), with nothing pending anywhere.
			now := int64(i) * 10 * ns
			g := n.routePOWAR(sw[j], &pk, now)
			if g < 0 {
				c := n.ecmp.mp.MinimalPorts(int(sw[j]), int(pk.dst), n.ecmp.cand)
				p, _ := n.selectPOWAR(sw[j], c, now, pk.size, true)
				g = n.swBase[sw[j]] + int32(p)
			}
			sink += g
		case n.pw != nil:
			g := n.routePOWAR(sw[j], &pk, int64(i)*10*ns)
			n.pw.pending[g]--
			sink += g
		case n.ecmp.mp != nil:
			sink += n.routeECMP(sw[j], &pk)
		default:
			sink += n.swBase[sw[j]] + int32(n.t.Route(int(sw[j]), int(pk.dst)))
		}
		i++
	}
	_ = sink
}

// BenchmarkIdlePortMemory reports the heap bytes per port of a built,
// idle network (controllers are built on first use), for the Megafly-4160
// and a 105 300-node Megafly (radix 36: 325 groups × 18 leaves × 18 nodes),
// and the extra bytes of a port once its PerfBoundCorrect controller exists.
func BenchmarkIdlePortMemory(b *testing.B) {
	for _, c := range []struct {
		name string
		cfg  topo.Config
	}{{"megafly-4160", topo.Default()}, {"megafly-105300", topo.Config{Kind: topo.KindMegafly, Radix: 36}}} {
		b.Run(c.name, func(b *testing.B) {
			tp, err := topo.Build(c.cfg)
			if err != nil {
				b.Fatal(err)
			}
			p := deepSleepPBC()
			var perPort, perCtl float64
			var ports int
			for b.Loop() {
				// The heap's growth, less what hugepage.Make allocated
				// around its arrays and never writes (address space only).
				var m0, m1 runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&m0)
				u0 := hugepage.Unused()
				n, err := New(tp, p)
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				runtime.ReadMemStats(&m1)
				u1 := hugepage.Unused()
				ports = len(n.ports)
				perPort = float64(int64(m1.HeapAlloc-m0.HeapAlloc)-(u1-u0)) / float64(ports)
				if ports < 100000 {
					for i := range n.ports {
						n.ctlFor(int32(i))
					}
					runtime.GC()
					var m2 runtime.MemStats
					runtime.ReadMemStats(&m2)
					perCtl = float64(int64(m2.HeapAlloc-m1.HeapAlloc)-(hugepage.Unused()-u1)) / float64(ports)
				}
				runtime.KeepAlive(n)
			}
			b.ReportMetric(perPort, "B/port")
			if perCtl > 0 {
				b.ReportMetric(perCtl, "B/controller")
			}
			b.ReportMetric(float64(ports), "ports")
		})
	}
}

// BenchmarkFBFly512TCEP is the TCEP case: the paper's 512-node 2-D
// flattened butterfly (8×8 routers, 8 nodes each), uniform random traffic
// at 30 % load (9600 B messages), PerfBoundCorrect and deep sleep on every
// port; 20 µs of generation (then drained), without and with
// power.consolidation: tcep (PAL routing, the paper's epochs).
func BenchmarkFBFly512TCEP(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "minimal"
		if on {
			name = "tcep"
		}
		b.Run(name, func(b *testing.B) {
			p := deepSleepPBC()
			p.TCEP = TCEP{Enabled: on, Config: tcep.DefaultConfig()}
			benchReplay(b, topo.Config{Kind: topo.KindFBFly}, p, synthetic("uniform", 9600, 0.3, 20*time.Microsecond))
		})
	}
}
