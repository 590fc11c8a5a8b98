package predictor

import (
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func newNextGapT(t testing.TB, c Config) *NextGap {
	t.Helper()
	c.Kind = KindNextGap
	p, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	return p.(*NextGap)
}

// feedNG observes gaps back to back, deciding before each: a gap that
// outlasts t_PDT is a miss that costs t_w (4.48 µs).
func feedNG(p *NextGap, now time.Duration, gaps ...time.Duration) time.Duration {
	for _, g := range gaps {
		pdt := p.Predict(now)
		ip := IdlePeriod{Length: g, PDT: pdt, Missed: g >= pdt}
		if ip.Missed {
			ip.Delay = 4480
		}
		now += g
		ip.End = now
		p.Observe(ip)
		now += ip.Delay
	}
	return now
}

// TestNextGapPeriodic: on "3 × 20 µs then 2 ms" the context of three
// classes tells the third 20 µs gap from the others: once learnt, the
// predictor sleeps at once before the 2 ms gap and, at a bound of 0.2 %
// (4.1 µs of delay a cycle, less than one wake-up of 4.48 µs), not
// before the 20 µs ones.
func TestNextGapPeriodic(t *testing.T) {
	p := newNextGapT(t, Config{WakeTime: Duration(4480), SleepTime: Duration(2 * us), Bound: 0.002})
	pattern := []time.Duration{20 * us, 20 * us, 20 * us, 2 * time.Millisecond}
	var now time.Duration
	for range 50 {
		now = feedNG(p, now, pattern...)
	}
	for i, g := range pattern {
		pdt := p.Predict(now)
		long := i == len(pattern)-1
		if long && pdt != 0 {
			t.Errorf("before the 2 ms gap: t_PDT %v, want 0", pdt)
		}
		if !long && pdt <= g {
			t.Errorf("before 20 µs gap %d: t_PDT %v, want > the gap", i, pdt)
		}
		if pg, ok := p.Predicted(); !ok || (long && pg != g) {
			t.Errorf("gap %d: predicted %v (ok %v)", i, pg, ok)
		}
		now = feedNG(p, now, g)
	}
}

// TestNextGapHeld: a held port sleeps late in a gap predicted long only
// while the rest of it still clears the cut-off; else it stays awake until
// the gap outlasts every gap it has seen.
func TestNextGapHeld(t *testing.T) {
	p := newNextGapT(t, Config{WakeTime: Duration(4480), SleepTime: Duration(2 * us), Bound: 0.01})
	pattern := []time.Duration{20 * us, 20 * us, 20 * us, 2 * time.Millisecond}
	var now time.Duration
	for range 50 {
		now = feedNG(p, now, pattern...)
	}
	now = feedNG(p, now, pattern[:3]...)
	if pdt := p.Predict(now); pdt != 0 {
		t.Fatalf("t_PDT %v before the long gap, want 0", pdt)
	}
	if got := p.Held(now, 10*us); got != 10*us {
		t.Errorf("Held(10µs) = %v, want 10µs (the rest of 2 ms clears the cut-off)", got)
	}
	// Too late for a sleep worth its wake-up: stay awake through every gap
	// seen (2 ms), sleeping only in one that outlasts them all.
	if got := p.Held(now, 1999*us); got <= 2*time.Millisecond || got >= NeverHold {
		t.Errorf("Held(1999µs) = %v, want just above 2 ms (the histogram's top edge)", got)
	}
}

// TestNextGapThresholdOnIndependentGaps: on i.i.d. bimodal gaps no
// context is trusted for a long gap; the answer is a threshold above the
// short mode.
func TestNextGapThresholdOnIndependentGaps(t *testing.T) {
	p := newNextGapT(t, Config{WakeTime: Duration(4480), SleepTime: Duration(2 * us), Bound: 0.01})
	r := rand.New(rand.NewPCG(1, 2))
	var now time.Duration
	zeros := 0
	for range 5000 {
		g := time.Duration(200 + r.IntN(1800))
		if r.IntN(10) == 0 {
			g = time.Duration(100e3 + r.IntN(400e3))
		}
		pdt := p.Predict(now)
		if pdt == 0 {
			zeros++
		}
		now += g
		p.Observe(IdlePeriod{End: now, Length: g})
	}
	if zeros > 50 {
		t.Errorf("%d answers of 0 on independent gaps, want few", zeros)
	}
	if pdt := p.Predict(now); pdt < 2*us || pdt > 100*us {
		t.Errorf("threshold %v, want between the modes (2 µs … 100 µs)", pdt)
	}
}

// TestNextGapHybridHold: in hybrid mode a gap predicted far above the
// cut-off deepens at once (hold 0), a threshold deepens later.
func TestNextGapHybridHold(t *testing.T) {
	p := newNextGapT(t, Config{WakeTime: Duration(375), SleepTime: Duration(200), Bound: 0.01,
		Hybrid: HybridConfig{DeepWakeTime: Duration(4480), FastWakePower: 0.4, DeepSleepPower: 0.1}})
	if _, ok := p.Hold(); !ok {
		t.Fatal("Hold not ok in hybrid mode")
	}
	pattern := []time.Duration{20 * us, 20 * us, 20 * us, 2 * time.Millisecond}
	var now time.Duration
	for range 50 {
		now = feedNG(p, now, pattern...)
	}
	now = feedNG(p, now, pattern[:3]...)
	if pdt := p.Predict(now); pdt != 0 {
		t.Fatalf("t_PDT %v before the long gap, want 0", pdt)
	}
	if h, _ := p.Hold(); h != 0 {
		t.Errorf("hold %v before a 2 ms gap, want 0 (Deep Sleep at once)", h)
	}
	plain := newNextGapT(t, Config{WakeTime: Duration(375), Bound: 0.01})
	if _, ok := plain.Hold(); ok {
		t.Error("Hold ok without hybrid mode")
	}
}

// TestNextGapAllocsAndDeterminism is a property test over random gap
// streams: Observe, Predict, Held and Hold allocate nothing, and two
// predictors fed the same stream decide the same.
func TestNextGapAllocsAndDeterminism(t *testing.T) {
	for seed := range uint64(8) {
		r := rand.New(rand.NewPCG(seed, 7))
		cfg := Config{WakeTime: Duration(375 + r.IntN(5000)), Bound: []float64{0.01, 0.002, 0.5}[seed%3]}
		if seed%2 == 1 {
			cfg.Hybrid = HybridConfig{DeepWakeTime: cfg.WakeTime * 10, FastWakePower: 0.4, DeepSleepPower: 0.1}
		}
		a, b := newNextGapT(t, cfg), newNextGapT(t, cfg)
		var now time.Duration
		step := func() {
			g := time.Duration(r.ExpFloat64() * float64([]time.Duration{us, 20 * us, time.Millisecond}[r.IntN(3)]))
			pa, pb := a.Predict(now), b.Predict(now)
			ha, hb := a.Held(now, g/2), b.Held(now, g/2)
			hda, _ := a.Hold()
			hdb, _ := b.Hold()
			if pa != pb || ha != hb || hda != hdb {
				t.Fatalf("seed %d: decisions differ: %v/%v, held %v/%v, hold %v/%v", seed, pa, pb, ha, hb, hda, hdb)
			}
			if pa < 0 || ha < 0 || hda < 0 {
				t.Fatalf("seed %d: negative answer %v, held %v, hold %v", seed, pa, ha, hda)
			}
			now += g
			ip := IdlePeriod{End: now, Length: g, Missed: g >= pa, PDT: pa}
			if ip.Missed {
				ip.Delay = cfg.WakeTime.D()
			}
			a.Observe(ip)
			b.Observe(ip)
		}
		for range 2000 {
			step()
		}
		if n := testing.AllocsPerRun(200, step); n != 0 {
			t.Errorf("seed %d: %v allocations per decision, want 0", seed, n)
		}
	}
}

func TestNextGapConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		g    NextGapConfig
		want string
	}{
		{NextGapConfig{N: 16}, "predictor.nextgap.n: must be in 1..15, got 16"},
		{NextGapConfig{TableSize: 1 << 17}, "predictor.nextgap.table_size"},
		{NextGapConfig{Confidence: 1}, "predictor.nextgap.confidence: must be in (0, 1), got 1"},
		{NextGapConfig{Window: 1}, "predictor.nextgap.window: must be in 2.."},
		{NextGapConfig{BreakEven: -1}, "predictor.nextgap.break_even: must be ≥ 0"},
	} {
		_, err := New(Config{Kind: KindNextGap, WakeTime: Duration(4480), NextGap: tc.g})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.g, err, tc.want)
		}
	}
	if k, err := ParseKind("NextGap"); err != nil || k != KindNextGap {
		t.Errorf("ParseKind: %v, %v", k, err)
	}
}

// TestNextGapBins: the log-scale bins are contiguous, four per octave,
// and every gap falls in the bin whose edges hold it.
func TestNextGapBins(t *testing.T) {
	for b := 0; b < gapBins; b++ {
		if binEdge(b+1) <= binEdge(b) {
			t.Fatalf("bin %d: edges %v, %v not ascending", b, binEdge(b), binEdge(b+1))
		}
		if gapBin(binEdge(b)) != b || (b+1 < gapBins && gapBin(binEdge(b+1)-1) != b) {
			t.Fatalf("bin %d [%v, %v): gapBin of its edges is %d, %d", b, binEdge(b), binEdge(b+1), gapBin(binEdge(b)), gapBin(binEdge(b+1)-1))
		}
	}
	if gapBin(time.Hour) != gapBins-1 || gapBin(-1) != 0 {
		t.Error("out-of-range gaps not clamped")
	}
}

// FuzzNextGap replays random gap streams, outcomes and waits through
// nextgap in each mode: no panic, answers ≥ 0, the hold reported exactly
// in hybrid mode, and the same decisions for the same input.
func FuzzNextGap(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, uint8(0), uint16(3))
	f.Add([]byte{255, 255, 255, 255, 0, 0, 0, 0, 1, 0, 0, 0}, uint8(1), uint16(2))
	f.Add(make([]byte, 64), uint8(2), uint16(250))
	f.Fuzz(func(t *testing.T, data []byte, sel uint8, window uint16) {
		cfg := Config{
			Kind:     KindNextGap,
			WakeTime: Duration(375 + int(sel)*40),
			Bound:    []float64{0.01, 0.002, 1}[int(sel)%3],
			NextGap: NextGapConfig{
				N: int(sel)%maxNextGapN + 1, TableSize: int(window)%300 + 1,
				Window: int(window)%2000 + 2, Confidence: 0.5 + float64(sel%5)/10,
			},
		}
		if sel&8 != 0 {
			cfg.Hybrid = HybridConfig{DeepWakeTime: cfg.WakeTime * 12, FastWakePower: 0.4, DeepSleepPower: float64(sel%7) / 10}
		}
		runOnce := func() []decision {
			p := newNextGapT(t, cfg)
			var now time.Duration
			var out []decision
			for d := data; len(d) >= 4; d = d[4:] {
				raw := binary.LittleEndian.Uint32(d)
				gap := time.Duration(raw>>8) << (raw & 7 * 2)
				p.ObserveHops(int(raw&31), uint64(raw&3))
				pdt := p.Predict(now)
				held := p.Held(now, gap/time.Duration(raw&3+1))
				hold, ok := p.Hold()
				if pdt < 0 || held < 0 || hold < 0 || ok != cfg.Hybrid.Enabled() || (!ok && hold != 0) {
					t.Fatalf("t_PDT %v, held %v, hold %v (ok %v)", pdt, held, hold, ok)
				}
				out = append(out, decision{pdt: pdt, hold: hold, ok: ok}, decision{pdt: held})
				now += gap
				missed := raw&64 != 0
				p.Observe(IdlePeriod{End: now, Length: gap, Missed: missed, PDT: pdt, Delay: time.Duration(raw&16) * 100})
			}
			if p.StateBytes() <= 0 {
				t.Fatalf("StateBytes %d", p.StateBytes())
			}
			return out
		}
		a, b := runOnce(), runOnce()
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("decision %d differs between identical runs: %v vs %v", i, a[i], b[i])
			}
		}
	})
}

// TestNextGapSleepsInASilence is the LAMMPS demo's start-up on every port
// (configs/sim/demo.yaml): a 10.48 µs train, trusted but not worth a
// wake-up, then a 100 ms silence. Staying awake for the train must not
// mean staying awake through the silence: the answer is a threshold just
// above the longest gap seen, not histogram.max_value (which held every
// link of the demo awake for 10 ms and cost 0.3 kJ of its 1.4 kJ), and a
// port the ledger holds does the same.
func TestNextGapSleepsInASilence(t *testing.T) {
	p := newNextGapT(t, Config{WakeTime: Duration(4480), SleepTime: Duration(2 * us), Bound: 0.01,
		Histogram: HistogramConfig{MaxValue: Duration(10 * time.Millisecond)}})
	var now time.Duration
	for range 112 {
		now = feedNG(p, now, 10485*time.Nanosecond)
	}
	pdt := p.Predict(now)
	if pdt <= 10485*time.Nanosecond || pdt > 40*us {
		t.Errorf("t_PDT %v after the train, want just above its 10.5 µs gaps (≤ 40 µs)", pdt)
	}
	if got := p.Held(now, 5*us); got != pdt {
		t.Errorf("Held(5µs) = %v, want the same threshold %v", got, pdt)
	}
	if got := p.Held(now, 100*us); got != 100*us {
		t.Errorf("Held(100µs) = %v, want 100µs (every gap seen is shorter)", got)
	}
}
