package network

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/eee"
	"github.com/lpictl/lpictl/sim/engine"
	"github.com/lpictl/lpictl/sim/topo"
)

// benchRun builds and runs a network per iteration and reports events/s,
// packets/s (delivered packets per wall second: the figure that does not
// depend on how many events a packet costs), wall time per simulated ms
// and peak RSS (SPEC §4 performance figures).
func benchRun(b *testing.B, tc topo.Config, p Params, tr Traffic) {
	tp, err := topo.Build(tc)
	if err != nil {
		b.Fatal(err)
	}
	var events, packets uint64
	var wall time.Duration
	var sim int64
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		n, err := New(tp, p, &tr, 1)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		if err := n.Run(context.Background(), 0, nil); err != nil {
			b.Fatal(err)
		}
		wall += time.Since(start)
		events += n.eng.Events()
		packets += n.delivered
		sim += n.endTime
	}
	b.ReportMetric(float64(events)/wall.Seconds(), "events/s")
	b.ReportMetric(float64(packets)/wall.Seconds(), "packets/s")
	b.ReportMetric(wall.Seconds()/(float64(sim)/float64(engine.Millisecond)), "wall-s/sim-ms")
	b.ReportMetric(float64(peakRSS()), "peak-rss-B")
}

func perfBoundCorrect(p *Params) {
	p.Predictor = predictor.Config{Kind: predictor.KindPerfBoundCorrect, WakeTime: predictor.Duration(4480 * time.Nanosecond)}
}

// BenchmarkMegafly4160 is acceptance benchmark (a): the paper's Megafly,
// uniform random traffic at 30 % load, PerfBoundCorrect on every port,
// deep sleep; 2 µs of generation (then drained).
func BenchmarkMegafly4160(b *testing.B) {
	for _, q := range []engine.QueueKind{engine.QueueCalendar, engine.QueueHeap} {
		b.Run(string(q), func(b *testing.B) {
			p := table6(eee.DeepSleep, 0)
			perfBoundCorrect(&p)
			p.Queue = q
			benchRun(b, topo.Default(), p, Traffic{Pattern: "uniform", MessageBytes: 9600, Load: 0.3, Arrivals: "poisson", Duration: 20 * us})
		})
	}
}

// BenchmarkFatTree1024 is acceptance benchmark (b): the 1024-host 3-level
// fat tree (rlft radix 16), 100 Gb/s, 9000 B packets, random permutation
// at full load; 5 µs of generation (then drained).
func BenchmarkFatTree1024(b *testing.B) {
	for _, q := range []engine.QueueKind{engine.QueueCalendar, engine.QueueHeap} {
		b.Run(string(q), func(b *testing.B) {
			p := table6(eee.DeepSleep, 0)
			perfBoundCorrect(&p)
			p.RateBps, p.MTU = 100e9, 9000
			p.Queue = q
			benchRun(b, topo.Config{Kind: topo.KindRLFT, Radix: 16, Levels: 3}, p,
				Traffic{Pattern: "permutation", MessageBytes: 9000, Load: 1, Arrivals: "poisson", Duration: 10 * us})
		})
	}
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
			p := table6(eee.DeepSleep, 0)
			perfBoundCorrect(&p)
			var perPort, perCtl float64
			var ports int
			for b.Loop() {
				var m0, m1 runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&m0)
				n, err := New(tp, p, nil, 1)
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				runtime.ReadMemStats(&m1)
				ports = len(n.ports)
				perPort = float64(m1.HeapAlloc-m0.HeapAlloc) / float64(ports)
				if ports < 100000 {
					for i := range n.ports {
						n.ctlFor(int32(i))
					}
					runtime.GC()
					var m2 runtime.MemStats
					runtime.ReadMemStats(&m2)
					perCtl = float64(m2.HeapAlloc-m1.HeapAlloc) / float64(ports)
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
