package predictor

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkDecision measures one steady-state decision cycle — record the
// ended idle period, then compute the next t_PDT — for every predictor and
// histogram strategy with 16, 256 and 4096 populated bins, with paper 000's
// parameters (bound 1 %, Eq. 1 hop mix, t_w 4.48 µs). How far the bin search
// walks depends on the budget; BenchmarkSearchWorstCase bounds it.
// Target (issue 2): < 1 µs at 256 bins and 0 allocations.
func BenchmarkDecision(b *testing.B) {
	b.Run("fixed", func(b *testing.B) {
		benchCycle(b, Config{Kind: KindFixed, PDT: dur(10 * us)}, 16)
	})
	for _, kind := range []Kind{KindPerfBound, KindPerfBoundCorrect} {
		for _, s := range Strategies {
			for _, bins := range []int{16, 256, 4096} {
				b.Run(fmt.Sprintf("%s/%s/bins=%d", kind, s, bins), func(b *testing.B) {
					cfg := Config{
						Kind:     kind,
						WakeTime: Duration(4480),
						Hops:     map[int]float64{4: 0.7, 6: 0.3},
						Histogram: HistogramConfig{
							Strategy: s, TTL: Duration(time.Hour),
							// Clearing: never reach h_maxN during the run; circular:
							// a ring four times the bins keeps all bins populated.
							MaxRecords: map[Strategy]int{Unbounded: 1, Clearing: maxRecords, Circular: 4 * bins}[s],
						},
					}
					benchCycle(b, cfg, bins)
				})
			}
		}
	}
}

func benchCycle(b *testing.B, cfg Config, bins int) {
	p, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	width := DefaultBinWidth
	gapOf := func(i int) time.Duration { return time.Duration(i%bins)*width + width/2 }
	var now time.Duration
	for i := 0; i < 4*bins; i++ { // populate every bin
		now += gapOf(i)
		p.Observe(IdlePeriod{End: now, Length: gapOf(i)})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g := gapOf(i * 7)
		pdt := p.Predict(now)
		now += g
		p.Observe(IdlePeriod{End: now, Length: g, Missed: g > pdt, PDT: pdt})
	}
	b.StopTimer()
	if pb, ok := p.(interface{ PopulatedBins() int }); ok && pb.PopulatedBins() != bins {
		b.Fatalf("populated bins = %d, want %d", pb.PopulatedBins(), bins)
	}
	if c, ok := p.(*PerfBoundCorrect); ok && c.PerfBound().PopulatedBins() != bins {
		b.Fatalf("populated bins = %d, want %d", c.PerfBound().PopulatedBins(), bins)
	}
}

// BenchmarkSearchWorstCase times the bin search alone with the budget that
// makes it walk furthest: half the records, on equally filled bins.
func BenchmarkSearchWorstCase(b *testing.B) {
	for _, bins := range []int{16, 256, 4096} {
		b.Run(fmt.Sprintf("bins=%d", bins), func(b *testing.B) {
			h := newHistogram(Config{}.WithDefaults().Histogram)
			h.strategy = Unbounded
			for i := 0; i < 4*bins; i++ {
				v := time.Duration(i%bins) * DefaultBinWidth
				h.add(v, 0, v)
			}
			budget := float64(h.n/2) - 0.5
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				h.search(budget)
			}
		})
	}
}
