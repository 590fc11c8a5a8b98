package predictor

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// The worked histogram of the hybrid tests: bin width 1 µs, populated bins
// (index → count) 1→4, 3→3, 7→2, 15→1, 99→1, i.e. middles m = 1.5, 3.5,
// 7.5, 15.5, 99.5 µs. The periods are observed back to back from time 0
// (unbounded histogram, origin 0), so at now the span X is now, and with
// no hop information l = bound: D = bound × now. By hand (µs):
//
//	bin j          0      1      2     3     4
//	m_j            1.5    3.5    7.5   15.5  99.5
//	c_j            4      3      2     1     1
//	C_j            11     7      4     2     1
//	T_j = Σ_{i≥j} c_i (m_i − m_j):
//	  T_4 = 0
//	  T_3 = 1·(99.5−15.5)                   = 84
//	  T_2 = 1·(15.5−7.5) + 1·(99.5−7.5)     = 8 + 92        = 100
//	  T_1 = 2·(7.5−3.5) + 12 + 96           = 8 + 12 + 96   = 116
//	  T_0 = 3·2 + 2·6 + 1·14 + 1·98         = 6+12+14+98    = 130
var hybridGaps = []time.Duration{
	1500, 1500, 1500, 1500, // bin 1
	3500, 3500, 3500, // bin 3
	7500, 7500, // bin 7
	15500, // bin 15
	99500, // bin 99
}

// hybridConfig is the worked example's configuration: bound 1/16 (exact in
// binary), so D = now/16; now = 192 µs gives D = 12 µs = 12000 ns.
func hybridConfig(kind Kind, fastWake, deepWake time.Duration, rhoF, rhoD float64) Config {
	return Config{
		Kind:       kind,
		Bound:      1.0 / 16,
		WakeTime:   Duration(fastWake),
		InitialPDT: dur(7 * us),
		History:    4,
		Decay:      0.5,
		Histogram:  HistogramConfig{Strategy: Unbounded, BinWidth: Duration(us), MaxValue: Duration(200 * us), Search: SearchPopulated},
		Hybrid:     HybridConfig{DeepWakeTime: Duration(deepWake), FastWakePower: rhoF, DeepSleepPower: rhoD},
	}
}

const hybridNow = 192 * us // D = 192 µs / 16 = 12 µs

// feedHybrid observes hybridGaps back to back from time 0; missed marks
// periods by index as misses, with t_PDT in force pdt[i].
func feedHybrid(p Predictor, missed map[int]time.Duration) {
	var end time.Duration
	for i, g := range hybridGaps {
		end += g
		pdt, miss := missed[i]
		if !miss {
			pdt = g + 1
		}
		p.Observe(IdlePeriod{End: end, Length: g, Missed: miss, PDT: pdt})
	}
}

func mustNew(t *testing.T, cfg Config) Predictor {
	t.Helper()
	p, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

func TestHybridPerfBoundWorked(t *testing.T) {
	tests := []struct {
		name               string
		fast, deep         time.Duration
		rhoF, rhoD         float64
		bound              float64 // 0: the worked 1/16
		wantPDT, wantHold  time.Duration
		wantPlainSameAsPDT bool
	}{
		{
			// t_wF 1 µs, t_wD 5 µs (Δ 4 µs), ρF 0.5, ρD 0.1: saving =
			// 0.5·T_j + 0.4·T_k. N = 12, every bin a candidate.
			//   j=0: R = 12 − 1·11 = 1;  Δ·C_k ≤ 1 needs C_k ≤ 0.25: none → Never; 0.5·130 = 65
			//   j=1: R = 12 − 7 = 5;     C_k ≤ 1.25 → k=4, H = 99.5−3.5 = 96; 0.5·116 + 0.4·0 = 58
			//   j=2: R = 12 − 4 = 8;     C_k ≤ 2 → k=3, H = 15.5−7.5 = 8;     0.5·100 + 0.4·84 = 83.6
			//   j=3: R = 12 − 2 = 10;    C_k ≤ 2.5 → k=3, H = 0;              0.5·84 + 0.4·84 = 75.6
			//   j=4: R = 11;             k=4, H = 0;                            0
			// Literal sum for (2,3): bin 3: 0.5·8 + 0.9·0 = 4; bin 4: 0.5·8 + 0.9·84 = 79.6; total 83.6.
			// Best j=2: t_PDT 7.5 µs, hold 8 µs (plain PerfBound: 1.5 µs).
			name: "finite hold", fast: 1000, deep: 5000, rhoF: 0.5, rhoD: 0.1,
			wantPDT: 7500, wantHold: 8000,
		},
		{
			// Δ = 10 µs: j=0 R=1, j=1 R=5, j=2 R=8 → C_k ≤ 0.1/0.5/0.8: none;
			//   j=3: R = 10 → C_k ≤ 1 → k=4, H = 84; 0.5·84 + 0.4·0 = 42
			//   j=4: R = 11 → k=4, H = 0; 0
			//   Never: j=0 65, j=1 58, j=2 50. Best j=0: 1.5 µs, NeverHold
			//   (Deep Sleep fits only high up, where it saves nothing).
			name: "deep sleep too costly", fast: 1000, deep: 11000, rhoF: 0.5, rhoD: 0.1,
			wantPDT: 1500, wantHold: NeverHold, wantPlainSameAsPDT: true,
		},
		{
			// Δ = 0: Δ·C_k = 0 ≤ R_j for every candidate → k = j, H = 0;
			// saving 0.5·T_j + 0.4·T_j = 0.9·T_j, largest at j=0 (117).
			name: "equal wake times", fast: 1000, deep: 1000, rhoF: 0.5, rhoD: 0.1,
			wantPDT: 1500, wantHold: 0, wantPlainSameAsPDT: true,
		},
		{
			// ρD = ρF: Deep Sleep saves nothing over Fast Wake and wakes
			// slower: NeverHold, plain PerfBound's t_PDT.
			name: "equal powers", fast: 1000, deep: 5000, rhoF: 0.4, rhoD: 0.4,
			wantPDT: 1500, wantHold: NeverHold, wantPlainSameAsPDT: true,
		},
		{
			// ρD > ρF (a "deep" state that draws more): NeverHold too.
			name: "deep sleep draws more", fast: 1000, deep: 5000, rhoF: 0.1, rhoD: 0.5,
			wantPDT: 1500, wantHold: NeverHold, wantPlainSameAsPDT: true,
		},
		{
			// bound 1/1024: D = 192/1024 µs = 187.5 ns, N = 0.1875 < C_4 = 1:
			// no candidate → the top bin's upper edge, 100 µs, NeverHold.
			name: "no candidate", fast: 1000, deep: 5000, rhoF: 0.5, rhoD: 0.1, bound: 1.0 / 1024,
			wantPDT: 100 * us, wantHold: NeverHold, wantPlainSameAsPDT: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := hybridConfig(KindPerfBound, tc.fast, tc.deep, tc.rhoF, tc.rhoD)
			if tc.bound != 0 {
				cfg.Bound = tc.bound
			}
			p := mustNew(t, cfg)
			feedHybrid(p, nil)
			pdt := p.Predict(hybridNow)
			hold, ok := p.(HoldChooser).Hold()
			if pdt != tc.wantPDT || hold != tc.wantHold || !ok {
				t.Errorf("t_PDT, hold = %v, %v (ok %v), want %v, %v", pdt, hold, ok, tc.wantPDT, tc.wantHold)
			}
			cfg.Hybrid = HybridConfig{}
			plain := mustNew(t, cfg)
			feedHybrid(plain, nil)
			if got := plain.Predict(hybridNow); (got == pdt) != tc.wantPlainSameAsPDT {
				t.Errorf("plain PerfBound answers %v, hybrid %v: same = %v, want %v", got, pdt, got == pdt, tc.wantPlainSameAsPDT)
			}
		})
	}
}

// TestHybridEmptyHistogram: no evidence, the initial t_PDT and NeverHold.
func TestHybridEmptyHistogram(t *testing.T) {
	for _, kind := range []Kind{KindPerfBound, KindPerfBoundCorrect, KindPerfBoundCorrectWeighted} {
		p := mustNew(t, hybridConfig(kind, 1000, 5000, 0.5, 0.1))
		if hold, ok := p.(HoldChooser).Hold(); hold != NeverHold || !ok {
			t.Errorf("%s before Predict: hold %v ok %v, want NeverHold", kind, hold, ok)
		}
		if pdt := p.Predict(hybridNow); pdt != 7*us {
			t.Errorf("%s: empty histogram answers %v, want the initial 7µs", kind, pdt)
		}
		if hold, ok := p.(HoldChooser).Hold(); hold != NeverHold || !ok {
			t.Errorf("%s: empty histogram holds %v (ok %v), want NeverHold", kind, hold, ok)
		}
	}
}

// TestHybridCorrected follows PerfBoundCorrect and the weighted kind in
// the worked "finite hold" case (t_PB = 7.5 µs, hold 8 µs, D = 12 µs,
// t_wF 1 µs, Δ 4 µs) with n_R = 4: the last four periods are 7.5 (hit),
// 7.5 (hit), 15.5 (miss at t_PDT 7.75: ratio 2) and 99.5 µs (miss at
// 49.75: ratio 2).
func TestHybridCorrected(t *testing.T) {
	misses := map[int]time.Duration{9: 7750, 10: 49750}
	tests := []struct {
		name              string
		kind              Kind
		missed            map[int]time.Duration
		wantPDT, wantHold time.Duration
	}{
		{
			// cf = 2/4 × 2 = 1 → t = 7.5 × 2 = 15 µs. j' = bin 3 (15.5 ≥ 15),
			// R = 12 − 1·C_3 = 10, Δ·C_3 = 8 ≤ 10 → k = 3, hold = 15.5 − 15 = 0.5 µs.
			name: "perfboundcorrect", kind: KindPerfBoundCorrect, missed: misses,
			wantPDT: 15000, wantHold: 500,
		},
		{
			// decay 0.5, ages 3,2,1,0 = hit, hit, miss, miss:
			// all = 0.125+0.25+0.5+1 = 1.875, missW = 0.5+1 = 1.5, gm_w = 2,
			// cf = 1.5/1.875 × 2 = 1.6 → t = 7.5 × 2.6 = 19.5 µs. j' = bin 4
			// (99.5), R = 12 − 1 = 11, Δ·C_4 = 4 ≤ 11 → k = 4,
			// hold = 99.5 − 19.5 = 80 µs.
			name: "weighted", kind: KindPerfBoundCorrectWeighted, missed: misses,
			wantPDT: 19500, wantHold: 80 * us,
		},
		{
			// No miss: cf = 0, t = t_PB and the hold is PerfBound's.
			name: "perfboundcorrect no miss", kind: KindPerfBoundCorrect,
			wantPDT: 7500, wantHold: 8000,
		},
		{
			name: "weighted no miss", kind: KindPerfBoundCorrectWeighted,
			wantPDT: 7500, wantHold: 8000,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := mustNew(t, hybridConfig(tc.kind, 1000, 5000, 0.5, 0.1))
			feedHybrid(p, tc.missed)
			pdt := p.Predict(hybridNow)
			hold, ok := p.(HoldChooser).Hold()
			if pdt != tc.wantPDT || hold != tc.wantHold || !ok {
				t.Errorf("t_PDT, hold = %v, %v (ok %v), want %v, %v", pdt, hold, ok, tc.wantPDT, tc.wantHold)
			}
			pb := p.(interface{ PerfBound() *PerfBound }).PerfBound()
			if h, _ := pb.Hold(); h != 8000 {
				t.Errorf("underlying PerfBound's hold = %v, want its own 8µs", h)
			}
		})
	}
}

// TestHybridCorrectedCapped: corrections capped at h_maxval, which lies
// below the top bin's middle when h_maxval is a multiple of r_bin.
func TestHybridCorrectedCapped(t *testing.T) {
	// h_maxval = 99 µs: the 99.5 µs period is clamped into bin 99
	// (middle 99.5 µs). t_wF = 5 µs, D = 12 µs: N = 2.4, candidates
	// j = 3 (C 2), 4 (C 1); Δ = 1 µs.
	//   j=3: R = 12 − 10 = 2 → Δ·C_3 = 2 ≤ 2 → k=3, H 0; 0.5·84 + 0.4·84 = 75.6
	//   j=4: R = 7 → k=4; 0.
	// t_PB = 15.5 µs. Two misses of ratio ≥ 16 in n_R = 4 (cf ≥ 2/4 × 16
	// = 8) give min(15.5 × 9, 99) = 99 µs: j' = bin 4 (99.5 ≥ 99), R = 12 − 5 = 7,
	// Δ·C_4 = 1 ≤ 7 → hold 99.5 − 99 = 0.5 µs. With t_wF = 7 µs instead,
	// N = 1.71: only j = 4 is a candidate (R = 5, Δ·C_4 = 1: k = 4),
	// t_PB = 99.5 µs and min(99.5 × 9, 99) = 99 µs: j' = 4 again, R = 12 − 7 = 5, hold 0.5 µs.
	// With t_wF = 13 µs, N < 1: no candidate, t_PB = 100 µs (upper edge),
	// capped to 99 µs: NeverHold.
	for _, tc := range []struct {
		fast     time.Duration
		wantHold time.Duration
	}{{5000, 500}, {7000, 500}, {13000, NeverHold}} {
		cfg := hybridConfig(KindPerfBoundCorrect, tc.fast, tc.fast+1000, 0.5, 0.1)
		cfg.Histogram.MaxValue = Duration(99 * us)
		p := mustNew(t, cfg)
		feedHybrid(p, map[int]time.Duration{9: 15500 / 16, 10: 99500 / 16})
		pdt := p.Predict(hybridNow)
		hold, _ := p.(HoldChooser).Hold()
		if pdt != 99*us || hold != tc.wantHold {
			t.Errorf("t_wF %v: t_PDT, hold = %v, %v, want 99µs, %v", tc.fast, pdt, hold, tc.wantHold)
		}
	}
}

// TestHybridUnset: without Config.Hybrid every HoldChooser says ok=false
// (and the n-gram predictor and Fixed are not HoldChoosers).
func TestHybridUnset(t *testing.T) {
	for _, kind := range Kinds {
		cfg := hybridConfig(kind, 1000, 0, 0, 0)
		cfg.PDT = dur(us)
		p := mustNew(t, cfg)
		feedHybrid(p, nil)
		p.Predict(hybridNow)
		hc, is := p.(HoldChooser)
		if want := kind != KindFixed && kind != KindNGram; is != want {
			t.Errorf("%s: HoldChooser = %v, want %v", kind, is, want)
		}
		if is {
			if hold, ok := hc.Hold(); ok || hold != 0 {
				t.Errorf("%s: Hold() = %v, %v without hybrid, want 0, false", kind, hold, ok)
			}
		}
	}
	// The n-gram predictor ignores the hybrid keys: its fallback PerfBound
	// answers plain PerfBound's t_PDT.
	cfg := hybridConfig(KindNGram, 1000, 5000, 0.5, 0.1)
	g := mustNew(t, cfg).(*NGram)
	feedHybrid(g, nil)
	if got := g.PerfBound().Predict(hybridNow); got != 1500 {
		t.Errorf("ngram's PerfBound in hybrid mode answers %v, want plain 1.5µs", got)
	}
	if _, ok := g.PerfBound().Hold(); ok {
		t.Error("ngram's PerfBound chooses holds; it should use the configured one")
	}
}

// TestHybridMatchesPlain: with ρD = ρF, or Δ so large that no Deep Sleep
// boundary fits, hybrid PerfBound answers plain PerfBound's t_PDT (and
// NeverHold), on random histograms, budgets and strategies.
func TestHybridMatchesPlain(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 1))
	for trial := range 1500 {
		strategy := Strategies[trial%len(Strategies)]
		fast := time.Duration(1 + rng.IntN(5000))
		rhoF := rng.Float64() * 0.99
		deep, rhoD := fast+time.Duration(rng.IntN(10000)), rhoF // equal powers
		if trial%2 == 1 {
			deep, rhoD = fast+time.Duration(1e15), rhoF*rng.Float64() // Δ·1 > D always
		}
		cfg := Config{
			Kind: KindPerfBound, Bound: rng.Float64(), WakeTime: Duration(fast),
			Hops:      map[int]float64{1 + rng.IntN(8): 1, 1 + rng.IntN(8): rng.Float64()},
			Histogram: HistogramConfig{Strategy: strategy, TTL: Duration(50 * us), MaxRecords: 1 + rng.IntN(80), Search: SearchPopulated},
		}
		plain := mustNew(t, cfg)
		cfg.Hybrid = HybridConfig{DeepWakeTime: Duration(deep), FastWakePower: rhoF, DeepSleepPower: rhoD}
		hy := mustNew(t, cfg)
		var now time.Duration
		for i, n := 0, 1+rng.IntN(120); i < n; i++ {
			g := time.Duration(rng.IntN(60)) * DefaultBinWidth / time.Duration(1+rng.IntN(3))
			now += g
			for _, p := range []Predictor{plain, hy} {
				p.Observe(IdlePeriod{End: now, Length: g})
			}
			at := now + time.Duration(rng.IntN(int(20*us)))
			want, got := plain.Predict(at), hy.Predict(at)
			hold, ok := hy.(HoldChooser).Hold()
			if got != want || hold != NeverHold || !ok {
				t.Fatalf("trial %d step %d: hybrid %v hold %v (ok %v), plain %v", trial, i, got, hold, ok, want)
			}
		}
	}
}

// TestHybridMatchesBruteForce checks the O(B) walk against the literal
// definitions on random histograms: every candidate j, every Deep Sleep
// boundary k ≥ j and NeverHold are evaluated with the saving written as
// the two sums over the bins; the lowest feasible k must be the best k
// for every j (ρD < ρF), and the chosen (t_PDT, hold) the best pair, ties
// to the lowest j. Powers are multiples of 1/8 and times integers, so
// every sum is exact and ties are real ties.
func TestHybridMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 2))
	const width = 100
	for trial := range 3000 {
		fast := time.Duration(1 + rng.IntN(400))
		deep := fast + time.Duration(rng.IntN(3000))
		if trial%10 == 0 {
			deep = fast
		}
		rhoF := float64(rng.IntN(8)) / 8
		rhoD := float64(rng.IntN(8)) / 8
		cfg := Config{
			Kind: KindPerfBound, Bound: float64(1+rng.IntN(64)) / 64, WakeTime: Duration(fast),
			Histogram: HistogramConfig{Strategy: Unbounded, BinWidth: width, Search: SearchPopulated},
			Hybrid:    HybridConfig{DeepWakeTime: Duration(deep), FastWakePower: rhoF, DeepSleepPower: rhoD},
		}
		p := mustNew(t, cfg).(*PerfBound)
		var now time.Duration
		for i, n := 0, 1+rng.IntN(40); i < n; i++ {
			g := time.Duration(rng.IntN(50))*width + width/2
			now += g
			p.Observe(IdlePeriod{End: now, Length: g})
		}
		now = now/64*64 + 64*time.Duration(rng.IntN(200)) // D = bound·now is an integer
		gotPDT := p.Predict(now)
		gotHold, _ := p.Hold()

		bins := p.hist.bins
		nb := len(bins)
		m := func(i int) float64 { return float64(bins[i].idx)*width + width/2 }
		count := func(j int) (c float64) {
			for i := j; i < nb; i++ {
				c += float64(bins[i].count)
			}
			return c
		}
		d := cfg.Bound * float64(now)
		delta := float64(deep - fast)
		saving := func(j, k int) (s float64) { // k == nb: NeverHold
			hold := m(k%nb) - m(j)
			for i := j; i < nb; i++ {
				c := float64(bins[i].count)
				if i < k {
					s += c * (1 - rhoF) * (m(i) - m(j))
				} else {
					s += c * ((1-rhoF)*hold + (1-rhoD)*(m(i)-m(j)-hold))
				}
			}
			return s
		}
		bestJ, bestK, bestS := -1, nb, 0.0
		for j := 0; j < nb; j++ {
			if float64(fast)*count(j) > d {
				continue
			}
			r := d - float64(fast)*count(j)
			lowK := nb
			for k := j; k < nb; k++ {
				if delta*count(k) <= r {
					lowK = k
					break
				}
			}
			if rhoD < rhoF {
				for k := lowK; k <= nb; k++ {
					if k < nb && delta*count(k) > r {
						t.Fatalf("trial %d: feasibility not upward closed", trial)
					}
					if saving(j, k) > saving(j, lowK) {
						t.Fatalf("trial %d: j=%d: k=%d saves %v > lowest feasible k=%d's %v", trial, j, k, saving(j, k), lowK, saving(j, lowK))
					}
				}
			} else {
				lowK = nb // Deep Sleep saves nothing over Fast Wake
			}
			if s := saving(j, lowK); bestJ < 0 || s > bestS {
				bestJ, bestK, bestS = j, lowK, s
			}
		}
		wantPDT, wantHold := time.Duration(bins[nb-1].idx+1)*width, NeverHold
		if bestJ >= 0 {
			wantPDT = time.Duration(m(bestJ))
			if bestK < nb {
				wantHold = time.Duration(m(bestK) - m(bestJ))
			}
		}
		if gotPDT != wantPDT || gotHold != wantHold {
			t.Fatalf("trial %d: bins %+v D %v t_wF %v t_wD %v ρF %v ρD %v: got %v/%v, want %v/%v",
				trial, bins, d, fast, deep, rhoF, rhoD, gotPDT, gotHold, wantPDT, wantHold)
		}
	}
}

// TestHybridDecisionAllocs: a hybrid decision allocates nothing once the
// scratch has grown to the histogram (also past the inline 32 bins).
func TestHybridDecisionAllocs(t *testing.T) {
	for _, bins := range []int{16, 100} {
		for _, kind := range []Kind{KindPerfBound, KindPerfBoundCorrect, KindPerfBoundCorrectWeighted} {
			p := mustNew(t, Config{
				Kind: kind, WakeTime: 375, Hops: map[int]float64{4: 0.7, 6: 0.3},
				Histogram: HistogramConfig{Strategy: Circular, MaxRecords: 4 * bins},
				Hybrid:    HybridConfig{DeepWakeTime: 4480, FastWakePower: 0.4, DeepSleepPower: 0.1},
			})
			var now time.Duration
			for i := range 4 * bins {
				g := time.Duration(i%bins)*DefaultBinWidth + 50
				now += g
				p.Observe(IdlePeriod{End: now, Length: g})
			}
			p.Predict(now)
			i := 0
			allocs := testing.AllocsPerRun(200, func() {
				g := time.Duration(i*7%bins)*DefaultBinWidth + 50
				i++
				pdt := p.Predict(now)
				now += g
				p.Observe(IdlePeriod{End: now, Length: g, Missed: g > pdt, PDT: pdt})
				p.(HoldChooser).Hold()
			})
			if allocs != 0 {
				t.Errorf("%s, %d bins: %v allocations per decision", kind, bins, allocs)
			}
		}
	}
}

func TestHybridConfigErrors(t *testing.T) {
	base := func(h HybridConfig) Config {
		return Config{Kind: KindPerfBoundCorrect, WakeTime: Duration(375), Hybrid: h}
	}
	tests := []struct {
		cfg  Config
		want string
	}{
		{base(HybridConfig{DeepWakeTime: -1}), "predictor.hybrid.deep_wake_time: must be ≥ 0"},
		{base(HybridConfig{DeepWakeTime: 300}), "predictor.hybrid.deep_wake_time: 300ns is below wake_time (375ns)"},
		{base(HybridConfig{DeepWakeTime: 4480, FastWakePower: 1}), "predictor.hybrid.fast_wake_power: must be in [0, 1)"},
		{base(HybridConfig{DeepWakeTime: 4480, FastWakePower: -0.1}), "predictor.hybrid.fast_wake_power: must be in [0, 1)"},
		{base(HybridConfig{DeepWakeTime: 4480, DeepSleepPower: 1.5}), "predictor.hybrid.deep_sleep_power: must be in [0, 1)"},
		{base(HybridConfig{DeepSleepPower: -1}), "predictor.hybrid.deep_sleep_power: must be in [0, 1)"},
	}
	for _, kind := range []Kind{KindPerfBound, KindPerfBoundCorrectWeighted} {
		c := base(HybridConfig{DeepWakeTime: 100})
		c.Kind = kind
		tests = append(tests, struct {
			cfg  Config
			want string
		}{c, "predictor.hybrid.deep_wake_time: 100ns is below wake_time"})
	}
	for _, tc := range tests {
		_, err := New(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want error containing %q", tc.cfg.Hybrid, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("error %q is not one line", err)
		}
	}
	// Valid: eee-400g's values; Deep Sleep as fast as Fast Wake; and the
	// kinds that use the configured hold ignore the keys.
	for _, cfg := range []Config{
		base(HybridConfig{DeepWakeTime: 4480, FastWakePower: 0.4, DeepSleepPower: 0.1}),
		base(HybridConfig{DeepWakeTime: 375}),
		{Kind: KindNGram, WakeTime: 375, Hybrid: HybridConfig{DeepWakeTime: 1}},
		{Kind: KindFixed, PDT: dur(0), Hybrid: HybridConfig{DeepWakeTime: -1}},
	} {
		if _, err := New(cfg); err != nil {
			t.Errorf("New(%+v): %v", cfg.Hybrid, err)
		}
	}
}

// TestHybridEncoding: an unset Hybrid leaves a config's JSON and YAML as
// they were (sweep run ids hash the JSON); a set one round-trips.
func TestHybridEncoding(t *testing.T) {
	plain := Config{Kind: KindPerfBound, WakeTime: 375}
	j, err := json.Marshal(plain)
	if err != nil {
		t.Fatal(err)
	}
	y, err := yaml.Marshal(plain)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(j), "hybrid") || strings.Contains(string(y), "hybrid") {
		t.Errorf("unset hybrid is encoded: %s / %s", j, y)
	}
	set := plain
	set.Hybrid = HybridConfig{DeepWakeTime: 4480, FastWakePower: 0.4, DeepSleepPower: 0.1}
	j, _ = json.Marshal(set)
	if want := `"hybrid":{"deep_wake_time":"4.48µs","fast_wake_power":0.4,"deep_sleep_power":0.1}`; !strings.Contains(string(j), want) {
		t.Errorf("JSON %s lacks %s", j, want)
	}
	var back Config
	if err := json.Unmarshal(j, &back); err != nil || back.Hybrid != set.Hybrid {
		t.Errorf("JSON round trip: %+v, %v", back.Hybrid, err)
	}
	y, _ = yaml.Marshal(set)
	back = Config{}
	if err := yaml.Unmarshal(y, &back); err != nil || back.Hybrid != set.Hybrid {
		t.Errorf("YAML round trip of %s: %+v, %v", y, back.Hybrid, err)
	}
}
