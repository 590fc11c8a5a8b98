package predictor

import (
	"encoding/binary"
	"testing"
	"time"
)

// FuzzPredictors replays random gap streams through every predictor and
// histogram strategy: no panic, t_PDT within its bounds, and the same
// decisions for the same input.
func FuzzPredictors(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, uint8(0), uint16(3))
	f.Add([]byte{255, 255, 255, 255, 0, 0, 0, 0, 1, 0, 0, 0}, uint8(1), uint16(1))
	f.Add(make([]byte, 64), uint8(2), uint16(250))
	f.Fuzz(func(t *testing.T, data []byte, sel uint8, records uint16) {
		kinds := []Kind{KindFixed, KindPerfBound, KindPerfBoundCorrect}
		cfg := Config{
			Kind:     kinds[int(sel)%len(kinds)],
			PDT:      dur(time.Duration(sel) * 100 * time.Nanosecond),
			WakeTime: Duration(4480),
			Histogram: HistogramConfig{
				Strategy:   Strategies[int(sel/3)%len(Strategies)],
				MaxRecords: int(records%1000) + 1,
				TTL:        Duration(time.Duration(records+1) * us),
			},
			History: int(sel%40) + 1,
		}.WithDefaults()
		a, b := run(t, cfg, data), run(t, cfg, data)
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("decision %d differs between identical runs: %v vs %v", i, a[i], b[i])
			}
		}
	})
}

// decision is one Predict's answer and, for a HoldChooser, its hold.
type decision struct {
	pdt, hold time.Duration
	ok        bool
}

// run replays data through a predictor built from cfg and returns its
// decisions, checking each: t_PDT within the kind's bounds, and the hold
// ≥ 0 and reported exactly when cfg is hybrid and the kind chooses holds.
func run(t *testing.T, cfg Config, data []byte) []decision {
	p, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	maxV := cfg.Histogram.MaxValue.D()
	hc, chooses := p.(HoldChooser)
	if want := cfg.Kind != KindFixed && cfg.Kind != KindNGram; chooses != want {
		t.Fatalf("%s: HoldChooser %v, want %v", cfg.Kind, chooses, want)
	}
	var now time.Duration
	var out []decision
	for len(data) >= 4 {
		raw := binary.LittleEndian.Uint32(data)
		data = data[4:]
		gap := time.Duration(raw>>8) << (raw & 7 * 2) // ns to tens of ms
		p.ObserveHops(int(raw&31), uint64(raw&3))
		pdt := p.Predict(now)
		d := decision{pdt: pdt}
		if chooses {
			d.hold, d.ok = hc.Hold()
			switch {
			case d.ok != cfg.Hybrid.Enabled():
				t.Fatalf("%s: Hold ok = %v with hybrid %+v", cfg.Kind, d.ok, cfg.Hybrid)
			case d.hold < 0 || !d.ok && d.hold != 0:
				t.Fatalf("%s: hold %v (ok %v)", cfg.Kind, d.hold, d.ok)
			}
		}
		out = append(out, d)
		switch cfg.Kind {
		case KindFixed:
			if pdt != cfg.PDT.D() {
				t.Fatalf("fixed answered %v, want %v", pdt, cfg.PDT.D())
			}
		case KindPerfBound:
			if pdt < 0 || pdt > maxV+cfg.Histogram.BinWidth.D() {
				t.Fatalf("perfbound answered %v outside [0, h_maxval + r_bin]", pdt)
			}
		case KindPerfBoundCorrect, KindPerfBoundCorrectWeighted:
			if pdt < 0 || pdt > maxV {
				t.Fatalf("%s answered %v outside [0, h_maxval]", cfg.Kind, pdt)
			}
		case KindNGram:
			if pdt < 0 || pdt > maxV+cfg.Histogram.BinWidth.D() {
				t.Fatalf("ngram answered %v outside [0, h_maxval + r_bin]", pdt)
			}
			g := p.(*NGram)
			if c, ok := g.Predicted(); ok && pdt != 0 && pdt != maxV || ok && (pdt == 0) != (c >= g.LongFrom()) {
				t.Fatalf("ngram predicted class %d (long from %d) and answered %v", c, g.LongFrom(), pdt)
			}
		}
		now += gap
		p.Observe(IdlePeriod{End: now, Length: gap, Missed: gap >= pdt, PDT: pdt}) // docs/model.md §1.1: gap = t_PDT misses
		if p.StateBytes() < 0 {
			t.Fatal("negative state bytes")
		}
	}
	return out
}

// FuzzNGram replays random gap streams through n-gram predictors of random
// shape (context length, classes, table size — direct and hashed —,
// thresholds): no panic, t_PDT 0, h_maxval (stay awake) or PerfBound's
// answer within [0, h_maxval + r_bin], and the same decisions twice.
func FuzzNGram(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, uint8(2), uint8(3), uint16(256), uint8(3))
	f.Add([]byte{255, 255, 255, 255, 0, 0, 0, 0, 1, 0, 0, 0, 9, 9, 9, 9}, uint8(4), uint8(8), uint16(1), uint8(1))
	f.Add(make([]byte, 64), uint8(15), uint8(16), uint16(65535), uint8(255))
	f.Fuzz(func(t *testing.T, data []byte, n, classes uint8, table uint16, minCount uint8) {
		cfg := Config{
			Kind:     KindNGram,
			WakeTime: Duration(4480),
			NGram: NGramConfig{
				N:          int(n%maxNGramN) + 1,
				Classes:    int(classes%(maxNGramClasses-1)) + 2,
				TableSize:  int(table) + 1,
				MinCount:   int(minCount) + 1,
				Confidence: float64(minCount%10+1) / 10,
			},
			Histogram: HistogramConfig{Strategy: Strategies[int(n)%len(Strategies)], MaxRecords: int(table%1000) + 1},
		}.WithDefaults()
		if cfg.NGram.MinCount > maxNGramMinCount {
			cfg.NGram.MinCount = maxNGramMinCount
		}
		a, b := run(t, cfg, data), run(t, cfg, data)
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("decision %d differs between identical runs: %v vs %v", i, a[i], b[i])
			}
		}
	})
}

// FuzzPerfBoundCorrectWeighted replays random gap streams with random
// decay and history: no panic, t_PDT within [0, h_maxval], the same
// decisions twice, and with decay 1 the decisions of PerfBoundCorrect.
func FuzzPerfBoundCorrectWeighted(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, uint16(900), uint8(31))
	f.Add([]byte{255, 255, 255, 255, 0, 0, 0, 0, 1, 0, 0, 0}, uint16(1000), uint8(0))
	f.Add(make([]byte, 64), uint16(1), uint8(200))
	f.Fuzz(func(t *testing.T, data []byte, decay uint16, history uint8) {
		cfg := Config{
			Kind:      KindPerfBoundCorrectWeighted,
			WakeTime:  Duration(4480),
			Decay:     float64(decay%1000+1) / 1000, // (0, 1]
			History:   int(history) + 1,
			Histogram: HistogramConfig{Strategy: Strategies[int(history)%len(Strategies)]},
		}.WithDefaults()
		a, b := run(t, cfg, data), run(t, cfg, data)
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("decision %d differs between identical runs: %v vs %v", i, a[i], b[i])
			}
		}
		if cfg.Decay == 1 {
			cfg.Kind = KindPerfBoundCorrect
			c := run(t, cfg, data)
			for i := range a {
				if a[i] != c[i] {
					t.Fatalf("decay 1: decision %d is %v, perfboundcorrect's %v", i, a[i], c[i])
				}
			}
		}
	})
}

// FuzzHybrid replays random gap streams through every kind with random
// hybrid configurations (wake times, power fractions, including Δ = 0,
// equal powers and a "deep" state that draws more): no panic, t_PDT ≥ 0
// within the kind's bounds, hold ≥ 0 and reported by exactly the hold
// choosers, and the same decisions and holds twice. With equal powers,
// PerfBound's t_PDT is plain PerfBound's.
func FuzzHybrid(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, uint8(1), uint16(4105), uint8(40), uint8(10), uint16(250))
	f.Add([]byte{255, 255, 255, 255, 0, 0, 0, 0, 1, 0, 0, 0}, uint8(2), uint16(0), uint8(99), uint8(0), uint16(3))
	f.Add(make([]byte, 64), uint8(4), uint16(65535), uint8(0), uint8(99), uint16(999))
	f.Add([]byte{9, 200, 3, 1, 77, 1, 0, 0, 13, 50, 2, 0, 200, 13, 0, 0}, uint8(7), uint16(300), uint8(50), uint8(50), uint16(20))
	f.Fuzz(func(t *testing.T, data []byte, sel uint8, extra uint16, powF, powD uint8, records uint16) {
		fast := time.Duration(sel%8)*500 + 1
		cfg := Config{
			Kind:     Kinds[int(sel)%len(Kinds)],
			PDT:      dur(time.Duration(sel) * 100 * time.Nanosecond),
			WakeTime: Duration(fast),
			Histogram: HistogramConfig{
				Strategy:   Strategies[int(sel/5)%len(Strategies)],
				MaxRecords: int(records%1000) + 1,
				TTL:        Duration(time.Duration(records+1) * us),
			},
			History: int(records%40) + 1,
			Hybrid: HybridConfig{
				DeepWakeTime:   Duration(fast + time.Duration(extra)*3),
				FastWakePower:  float64(powF%100) / 100,
				DeepSleepPower: float64(powD%100) / 100,
			},
		}.WithDefaults()
		a, b := run(t, cfg, data), run(t, cfg, data)
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("decision %d differs between identical runs: %+v vs %+v", i, a[i], b[i])
			}
		}
		if cfg.Kind == KindPerfBound && cfg.Hybrid.FastWakePower == cfg.Hybrid.DeepSleepPower {
			cfg.Hybrid = HybridConfig{}
			c := run(t, cfg, data)
			for i := range a {
				if a[i].pdt != c[i].pdt {
					t.Fatalf("equal powers: decision %d is %v, plain PerfBound's %v", i, a[i].pdt, c[i].pdt)
				}
			}
		}
	})
}
