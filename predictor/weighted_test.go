package predictor

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestWeightedBookkeeping replays TestPerfBoundCorrectBookkeeping's
// sequence with decay 0.5. The register is written oldest first; the
// newest outcome weighs 1, the one before 0.5, then 0.25, 0.125.
func TestWeightedBookkeeping(t *testing.T) {
	cfg := pbConfig(Unbounded, 1)
	cfg.Kind = KindPerfBoundCorrectWeighted
	cfg.History = 4
	cfg.WakeTime = Duration(3 * us)
	cfg.Decay = 0.5
	pr, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := pr.(*PerfBoundCorrectWeighted)
	hit := func(end time.Duration) IdlePeriod { return IdlePeriod{End: end, Length: 5 * us, PDT: 10 * us} }
	miss := func(end, length, pdt time.Duration) IdlePeriod {
		return IdlePeriod{End: end, Length: length, Missed: true, PDT: pdt}
	}
	p273 := math.Pow(2, 7.0/3) // 2^(7/3)
	steps := []struct {
		ip      IdlePeriod
		cf      float64
		comment string
	}{
		{hit(5 * us), 0, "H: no miss"},
		{miss(30*us, 20*us, 10*us), 1 / 1.5 * 2,
			"H M2: rate 1/(0.5+1); gm 2 (PerfBoundCorrect: 1/2 × 2)"},
		{miss(200*us, 80*us, 10*us), 1.5 / 1.75 * p273,
			"H M2 M8: rate (0.5+1)/1.75; gm exp((0.5 ln2 + 3 ln2)/1.5) = 2^(7/3)"},
		{hit(210 * us), 0.75 / 1.875 * p273,
			"H M2 M8 H: rate (0.25+0.5)/1.875; gm exp((0.25 ln2 + 0.5·3 ln2)/0.75) = 2^(7/3)"},
		{hit(220 * us), 0.375 / 1.875 * p273,
			"M2 M8 H H: rate (0.125+0.25)/1.875; same gm"},
		{hit(230 * us), 0.125 / 1.875 * 8,
			"M8 H H H: rate 0.125/1.875 = 1/15; gm 8"},
		{miss(240*us, 9*us, 0), 1 / 1.875 * 3,
			"H H H M3: rate 8/15 (the miss is the newest); ratio against t_w: 3"},
		{miss(250*us, 1*us, 0), 1.5 / 1.875 * math.Cbrt(3),
			"H H M3 M1: rate 0.8; gm exp(0.5 ln3 / 1.5) = 3^(1/3) (ratio < 1 counts as 1)"},
	}
	for i, s := range steps {
		p.Observe(s.ip)
		if cf := p.CorrectionFactor(); math.Abs(cf-s.cf) > 1e-12 {
			t.Errorf("step %d (%s): cf = %v, want %v", i+1, s.comment, cf, s.cf)
		}
		tpb := p.PerfBound().Predict(300 * us)
		want := min(time.Duration(math.Round(float64(tpb)*(1+s.cf))), 100*us)
		if got := p.Predict(300 * us); got != want {
			t.Errorf("step %d: t_PDT %v, want %v (t_PB %v)", i+1, got, want, tpb)
		}
	}
	if count, misses := p.Outcomes(); count != 4 || misses != 2 {
		t.Errorf("register %d/%d, want 4/2", count, misses)
	}
	if p.Decay() != 0.5 || p.Kind() != KindPerfBoundCorrectWeighted || p.StateBytes() != 5*4+1+4*4 {
		t.Errorf("decay %v kind %v state %d (want 5 bins (1, 5, 9, 20, 80 µs) × 4 + 1 + 16)", p.Decay(), p.Kind(), p.StateBytes())
	}
}

// TestWeightedRecencyShortensAfterOldMisses: with the misses old, a
// weighted register corrects less than PerfBoundCorrect; with them new,
// more (the same misses, the same rate unweighted).
func TestWeightedRecencyShortensAfterOldMisses(t *testing.T) {
	build := func(kind Kind) Predictor {
		cfg := pbConfig(Unbounded, 1)
		cfg.Kind, cfg.History, cfg.Decay = kind, 8, 0.7
		p, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	m := IdlePeriod{Length: 40 * us, Missed: true, PDT: 10 * us}
	h := IdlePeriod{Length: 2 * us, PDT: 10 * us}
	for _, c := range []struct {
		name    string
		seq     []IdlePeriod
		greater bool // weighted > unweighted
	}{
		{"old misses", []IdlePeriod{m, m, h, h, h, h, h, h}, false},
		{"new misses", []IdlePeriod{h, h, h, h, h, h, m, m}, true},
	} {
		w, u := build(KindPerfBoundCorrectWeighted), build(KindPerfBoundCorrect)
		var now time.Duration
		for _, ip := range c.seq {
			now += ip.Length
			ip.End = now
			w.Observe(ip)
			u.Observe(ip)
		}
		cw, cu := w.(*PerfBoundCorrectWeighted).CorrectionFactor(), u.(*PerfBoundCorrect).CorrectionFactor()
		if (cw > cu) != c.greater || math.Abs(cu-1) > 1e-12 {
			t.Errorf("%s: weighted cf %v, unweighted %v", c.name, cw, cu)
		}
	}
}

// TestWeightedDecayOneIsPerfBoundCorrect: decay 1 gives PerfBoundCorrect's
// decisions bit for bit, on long random streams through every histogram
// strategy, with registers stored inline (n_R ≤ 32) and apart, hop reports
// and decisions at irregular times.
func TestWeightedDecayOneIsPerfBoundCorrect(t *testing.T) {
	for _, history := range []int{1, 7, 32, 100} {
		for _, s := range Strategies {
			cfg := Config{
				Kind: KindPerfBoundCorrect, WakeTime: Duration(4480), History: history,
				Hops:      map[int]float64{4: 0.7, 6: 0.3},
				Histogram: HistogramConfig{Strategy: s, MaxRecords: 300, TTL: Duration(5 * time.Millisecond), MaxValue: Duration(time.Millisecond)},
			}
			pbc, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Kind, cfg.Decay = KindPerfBoundCorrectWeighted, 1
			w, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(uint64(history), 7))
			var now time.Duration
			for i := range 20000 {
				a, b := pbc.Predict(now), w.Predict(now)
				if a != b {
					t.Fatalf("n_R %d %s step %d: perfboundcorrect %v, weighted %v", history, s, i, a, b)
				}
				// Gaps from ns to ms, log-uniform; a few zero-t_PDT misses.
				gap := time.Duration(math.Exp(rng.Float64() * math.Log(2e6)))
				pdt := a
				if rng.IntN(20) == 0 {
					pdt = 0
				}
				now += gap
				ip := IdlePeriod{End: now, Length: gap, Missed: gap >= pdt, PDT: pdt}
				pbc.Observe(ip)
				w.Observe(ip)
				if rng.IntN(4) == 0 {
					hops, n := 1+rng.IntN(20), uint64(rng.IntN(5))
					pbc.ObserveHops(hops, n)
					w.ObserveHops(hops, n)
				}
				now += time.Duration(rng.IntN(2000)) // busy time
			}
			if pbc.StateBytes() != w.StateBytes() {
				t.Errorf("state bytes %d vs %d", pbc.StateBytes(), w.StateBytes())
			}
		}
	}
}
