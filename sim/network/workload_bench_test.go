package network

import (
	"context"
	"testing"
	"time"

	"github.com/lpictl/lpictl/sim/engine"
	"github.com/lpictl/lpictl/sim/topo"
	"github.com/lpictl/lpictl/sim/workload"
)

// benchReplay builds a network per iteration, replays cfg through it and
// reports events/s, packets/s (delivered packets per wall second: the
// figure that does not depend on how many events a packet costs), wall
// time per simulated ms and peak RSS (docs/model.md §4 performance figures).
func benchReplay(b *testing.B, tc topo.Config, p Params, cfg workload.Config) {
	tp, err := topo.Build(tc)
	if err != nil {
		b.Fatal(err)
	}
	w, err := workload.Build(cfg, tp.Nodes(), 1)
	if err != nil {
		b.Fatal(err)
	}
	var events, packets uint64
	var wall, cpu time.Duration
	var sim int64
	var mem Memory
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		n, err := New(tp, p)
		if err != nil {
			b.Fatal(err)
		}
		r, err := w.NewReplayer()
		if err != nil {
			b.Fatal(err)
		}
		if err := n.AttachWorkload(r); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start, cpu0 := time.Now(), processCPU()
		if err := n.Run(context.Background(), 0, nil); err != nil {
			b.Fatal(err)
		}
		wall += time.Since(start)
		cpu += processCPU() - cpu0
		events += n.eng.Events()
		packets += n.delivered
		sim += n.endTime
		mem = n.Memory()
		r.Close()
	}
	b.ReportMetric(float64(events)/wall.Seconds(), "events/s")
	b.ReportMetric(float64(packets)/wall.Seconds(), "packets/s")
	b.ReportMetric(wall.Seconds()/(float64(sim)/float64(engine.Millisecond)), "wall-s/sim-ms")
	b.ReportMetric(float64(peakRSS()), "peak-rss-B")
	// The model's own bytes (Network.Memory), and its controllers'.
	b.ReportMetric(float64(mem.Total), "model-B")
	b.ReportMetric(float64(mem.Controllers), "ctl-B")
	if cpu > 0 {
		// On a shared machine the process's CPU time is steadier than wall
		// time (it leaves out the time other jobs hold the core).
		b.ReportMetric(float64(events)/cpu.Seconds(), "events/cpu-s")
	}
}
