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

func run(t *testing.T, cfg Config, data []byte) []time.Duration {
	p, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	maxV := cfg.Histogram.MaxValue.D()
	var now time.Duration
	var out []time.Duration
	for len(data) >= 4 {
		raw := binary.LittleEndian.Uint32(data)
		data = data[4:]
		gap := time.Duration(raw>>8) << (raw & 7 * 2) // ns to tens of ms
		p.ObserveHops(int(raw&31), uint64(raw&3))
		pdt := p.Predict(now)
		out = append(out, pdt)
		switch cfg.Kind {
		case KindFixed:
			if pdt != cfg.PDT.D() {
				t.Fatalf("fixed answered %v, want %v", pdt, cfg.PDT.D())
			}
		case KindPerfBound:
			if pdt < 0 || pdt > maxV+cfg.Histogram.BinWidth.D() {
				t.Fatalf("perfbound answered %v outside [0, h_maxval + r_bin]", pdt)
			}
		case KindPerfBoundCorrect:
			if pdt < 0 || pdt > maxV {
				t.Fatalf("perfboundcorrect answered %v outside [0, h_maxval]", pdt)
			}
		}
		now += gap
		p.Observe(IdlePeriod{End: now, Length: gap, Missed: gap >= pdt, PDT: pdt}) // SPEC §1.1: gap = t_PDT misses
		if p.StateBytes() < 0 {
			t.Fatal("negative state bytes")
		}
	}
	return out
}
