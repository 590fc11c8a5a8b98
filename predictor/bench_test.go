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
	hc, _ := p.(HoldChooser)
	if hc != nil {
		if _, ok := hc.Hold(); !ok {
			hc = nil // not hybrid: the cycle stays what it was
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g := gapOf(i * 7)
		pdt := p.Predict(now)
		now += g
		p.Observe(IdlePeriod{End: now, Length: g, Missed: g > pdt, PDT: pdt})
		if hc != nil {
			hc.Hold()
		}
	}
	b.StopTimer()
	if pb, ok := p.(interface{ PopulatedBins() int }); ok && pb.PopulatedBins() != bins {
		b.Fatalf("populated bins = %d, want %d", pb.PopulatedBins(), bins)
	}
	if c, ok := p.(interface{ PerfBound() *PerfBound }); ok && c.PerfBound().PopulatedBins() != bins {
		b.Fatalf("populated bins = %d, want %d", c.PerfBound().PopulatedBins(), bins)
	}
}

// BenchmarkSearchWorstCase times the bin search alone with the budget that
// makes it walk furthest: half the records, on equally filled bins.
func BenchmarkSearchWorstCase(b *testing.B) {
	for _, bins := range []int{16, 256, 4096} {
		b.Run(fmt.Sprintf("bins=%d", bins), func(b *testing.B) {
			h := newHistogram(Config{}.WithDefaults().Histogram)
			h.strategy = unbounded
			for i := 0; i < 4*bins; i++ {
				v := time.Duration(i%bins) * DefaultBinWidth
				h.add(v, 0, v, nil)
			}
			budget := float64(h.n/2) - 0.5
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				h.search(budget, nil)
			}
		})
	}
}

// BenchmarkDecisionNewKinds is BenchmarkDecision's cycle for the n-gram
// predictor (default direct table, and a hashed one: 8 classes, n = 4) and
// recency-weighted PerfBoundCorrect (decay 0.9, n_R 32), circular
// histograms. The gap stream spans all n-gram classes from 256 bins on
// (gaps up to 25.6 µs; at 16 bins every gap is below t_w, the table always
// confident). Target (issue 14): < 200 ns and 0 allocations.
func BenchmarkDecisionNewKinds(b *testing.B) {
	for _, c := range []struct {
		name string
		kind Kind
		ng   NGramConfig
	}{
		{"ngram", KindNGram, NGramConfig{}},
		{"ngram-hashed", KindNGram, NGramConfig{N: 4, Classes: 8}},
		{"perfboundcorrect-weighted", KindPerfBoundCorrectWeighted, NGramConfig{}},
	} {
		for _, bins := range []int{16, 256, 4096} {
			b.Run(fmt.Sprintf("%s/bins=%d", c.name, bins), func(b *testing.B) {
				cfg := Config{
					Kind:      c.kind,
					WakeTime:  Duration(4480),
					Hops:      map[int]float64{4: 0.7, 6: 0.3},
					NGram:     c.ng,
					Histogram: HistogramConfig{Strategy: Circular, TTL: Duration(time.Hour), MaxRecords: 4 * bins},
				}
				benchCycle(b, cfg, bins)
			})
		}
	}
}

// BenchmarkWeightedCorrectionFactor times the weighted correction factor
// alone after each new outcome, with half the n_R = 32 outcomes misses:
// the O(n_R) walk every decision that follows an idle period pays.
func BenchmarkWeightedCorrectionFactor(b *testing.B) {
	p := newWeighted(Config{Kind: KindPerfBoundCorrectWeighted, WakeTime: Duration(4480)}.WithDefaults())
	ip := func(i int) IdlePeriod {
		return IdlePeriod{End: time.Duration(i) * us, Length: 3 * us, Missed: i%2 == 0, PDT: us}
	}
	for i := range 64 {
		p.Observe(ip(i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.Observe(ip(i))
		p.CorrectionFactor()
	}
}

// BenchmarkDecisionHybrid is BenchmarkDecision's cycle in hybrid mode, with
// eee-400g's Fast Wake (t_w 375 ns, 40 % power) and Deep Sleep (4.48 µs,
// 10 %), the Eq. 1 hop mix and a circular histogram: the decision chooses
// t_PDT and the hold (and the corrected kinds recompute the hold) and the
// cycle reads it. Target (issue 14): < 200 ns at 16 bins and 0 allocations.
func BenchmarkDecisionHybrid(b *testing.B) {
	for _, kind := range []Kind{KindPerfBound, KindPerfBoundCorrect, KindPerfBoundCorrectWeighted} {
		for _, bins := range []int{16, 256} {
			b.Run(fmt.Sprintf("%s/bins=%d", kind, bins), func(b *testing.B) {
				cfg := Config{
					Kind:      kind,
					WakeTime:  Duration(375),
					Hops:      map[int]float64{4: 0.7, 6: 0.3},
					Histogram: HistogramConfig{Strategy: Circular, TTL: Duration(time.Hour), MaxRecords: 4 * bins},
					Hybrid:    HybridConfig{DeepWakeTime: Duration(4480), FastWakePower: 0.4, DeepSleepPower: 0.1},
				}
				benchCycle(b, cfg, bins)
			})
		}
	}
}

// BenchmarkDecisionHybridWorstCase is BenchmarkDecisionHybrid with bound 1
// and one hop: every bin is a candidate, so the walk visits all of them
// (the cycle above stops at the first bin that is not).
func BenchmarkDecisionHybridWorstCase(b *testing.B) {
	for _, kind := range []Kind{KindPerfBound, KindPerfBoundCorrect} {
		for _, bins := range []int{16, 256} {
			b.Run(fmt.Sprintf("%s/bins=%d", kind, bins), func(b *testing.B) {
				cfg := Config{
					Kind:      kind,
					Bound:     1,
					WakeTime:  Duration(375),
					Histogram: HistogramConfig{Strategy: Circular, TTL: Duration(time.Hour), MaxRecords: 4 * bins},
					Hybrid:    HybridConfig{DeepWakeTime: Duration(4480), FastWakePower: 0.4, DeepSleepPower: 0.1},
				}
				benchCycle(b, cfg, bins)
			})
		}
	}
}

// BenchmarkBuildPerfBoundCorrect measures building a PerfBoundCorrect in
// place, as the simulator does at each port's first use: with the
// configuration filled and checked each time (InitPerfBoundCorrect) and
// once (PerfBoundCorrectBuilder).
func BenchmarkBuildPerfBoundCorrect(b *testing.B) {
	cfg := Config{Kind: KindPerfBoundCorrect, WakeTime: Duration(4480)}
	var p PerfBoundCorrect
	b.Run("each", func(b *testing.B) {
		for b.Loop() {
			if err := InitPerfBoundCorrect(&p, cfg); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("builder", func(b *testing.B) {
		bld, err := NewPerfBoundCorrectBuilder(cfg)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			bld.Init(&p)
		}
	})
}
