package controller

import (
	"testing"
	"time"

	"github.com/lpictl/lpictl/predictor"
)

// BenchmarkPortCycle is one idle period at a port as the simulator drives
// it: the queue empties (Decide), a packet is sent (Sent), the idle period
// ends (IdleEnded). ns/op is the controller's cost per idle period.
func BenchmarkPortCycle(b *testing.B) {
	for _, kind := range predictor.Kinds {
		b.Run(string(kind), func(b *testing.B) {
			cfg := predictor.Config{Kind: kind, WakeTime: pd(4480), Hops: map[int]float64{4: 0.7, 6: 0.3}}
			if kind == predictor.KindFixed {
				cfg.PDT = new(predictor.Duration)
			}
			pred, err := predictor.New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			p, err := NewPort(Config{Register: Register{WidthBits: 32, Resolution: pd(time.Nanosecond)}}, pred, 0)
			if err != nil {
				b.Fatal(err)
			}
			var now time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				gap := time.Duration(i%997) * 137 * time.Nanosecond
				pdt := p.Decide(now)
				p.Sent(4+i%3, 1)
				now += gap
				p.IdleEnded(predictor.IdlePeriod{End: now, Length: gap, Missed: gap > pdt, PDT: pdt})
			}
			b.ReportMetric(float64(p.Stats(now).StateBytes), "state-bytes")
		})
	}
}
