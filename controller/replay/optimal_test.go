package replay

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/predictor"
)

func newOptimizer(t testing.TB, cfg OptimalConfig) *Optimizer {
	t.Helper()
	o, err := NewOptimizer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func solveGaps(t testing.TB, cfg OptimalConfig, l float64, gaps ...time.Duration) Optimum {
	t.Helper()
	o := newOptimizer(t, cfg)
	for _, g := range gaps {
		if err := o.Gap(g); err != nil {
			t.Fatal(err)
		}
	}
	opt, err := o.Solve(l)
	if err != nil {
		t.Fatal(err)
	}
	return opt
}

var deepSleep400G = OptimalConfig{Timing: Timing{Wake: 4480 * time.Nanosecond, Sleep: 2 * us}, LowPower: 0.1}

func TestOptimalHandComputed(t *testing.T) {
	// t_w 4 µs, t_s 2 µs, no handshake, l = 5 %. G = 159 µs, so the budget
	// is ⌊0.05 × 159 µs / 0.95⌋ = 8.368421 µs: two sleeps. Useful: 3, 98,
	// 48 and 1 µs (1 µs < t_s is not); the two longest give 146 µs.
	cfg := OptimalConfig{Timing: Timing{Wake: 4 * us, Sleep: 2 * us}, LowPower: 0.1}
	opt := solveGaps(t, cfg, 0.05, 1*us, 5*us, 0, 100*us, 50*us, 3*us)
	want := Optimum{Rate: 0.05, IdlePeriods: 5, ZeroGaps: 1, Useful: 4, IdleTime: 159e6, Elapsed: 167e6,
		Budget: 8368421, Slept: 2, Asleep: 146e6, Delay: 8e6, Saving: 0.9 * 146e-6}
	if math.Abs(opt.Saving-want.Saving) > 1e-18 {
		t.Errorf("saving %v, want %v", opt.Saving, want.Saving)
	}
	opt.Saving = want.Saving
	if opt != want {
		t.Errorf("got  %+v\nwant %+v", opt, want)
	}

	// A handshake of 1 µs makes going down take 2H + t_s = 4 µs: the 3 µs
	// gap gains nothing, the 5 µs one 1 µs.
	cfg.Timing.Handshake = 1e6
	opt = solveGaps(t, cfg, 0.5, 1*us, 5*us, 3*us)
	if opt.Useful != 1 || opt.Slept != 1 || opt.Asleep != 1e6 || opt.Delay != 4e6 {
		t.Errorf("handshake: %+v", opt)
	}

	// l ≥ 1 on a gap file: no limit, every useful gap is slept in.
	opt = solveGaps(t, cfg, 1, 5*us, 6*us, 7*us)
	if opt.Budget != MaxTime || opt.Slept != 3 || opt.Asleep != 6e6 {
		t.Errorf("unbounded: %+v", opt)
	}
}

func TestOptimalPortTraceBudgetBoundary(t *testing.T) {
	// Span 16 µs, l = 0.5: the budget is exactly 8 µs = 2 × t_w. The
	// delay may equal it.
	o := newOptimizer(t, OptimalConfig{Timing: Timing{Wake: 4 * us}})
	for i, r := range []TraceRow{
		{Start: 0, Gap: 5e6, Sent: []HopCount{{Hops: 2, Packets: 3}}},
		{Start: 5e6, Gap: 3e6, Sent: []HopCount{{Hops: 0, Packets: 1}}},
		{Start: 9e6, Gap: 7e6},
	} {
		if err := o.Row(r); err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
	}
	opt, err := o.Solve(0.5)
	if err != nil {
		t.Fatal(err)
	}
	if opt.Budget != 8e6 || opt.Slept != 2 || opt.Asleep != 12e6 || opt.Delay != 8e6 || opt.Elapsed != 16e6 || opt.IdleTime != 15e6 {
		t.Errorf("%+v", opt)
	}
	// Just below: one sleep.
	if opt, _ = o.Solve(0.4999); opt.Slept != 1 || opt.Asleep != 7e6 {
		t.Errorf("l 0.4999: %+v", opt)
	}
	// 3 packets at 2 hops and 1 at 0 (counted as 1): (3/2 + 1) / 4.
	if f, ok := o.HopFactor(); !ok || f != 2.5/4 {
		t.Errorf("hop factor %v %v", f, ok)
	}
	if err := o.Row(TraceRow{Start: 15e6, Gap: 1}); err == nil || !strings.Contains(err.Error(), "before the end") {
		t.Errorf("overlapping row: %v", err)
	}
	if err := o.Gap(us); err == nil {
		t.Error("a gap after rows accepted")
	}
}

func TestOptimalErrorsAndLimit(t *testing.T) {
	o := newOptimizer(t, deepSleep400G)
	o.limit = 3
	for i := range 3 {
		if err := o.Gap(time.Duration(i+1) * us); err != nil {
			t.Fatal(err)
		}
	}
	if err := o.Gap(0); err != nil {
		t.Errorf("a zero gap counts against the limit: %v", err)
	}
	if err := o.Gap(us); err == nil || !strings.Contains(err.Error(), "more than 3 idle periods") {
		t.Errorf("limit: %v", err)
	}
	if err := o.Gap(-1); err == nil {
		t.Error("negative gap accepted")
	}
	for _, l := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if _, err := o.Solve(l); err == nil {
			t.Errorf("rate %v accepted", l)
		}
	}
	for _, cfg := range []OptimalConfig{
		{Timing: Timing{Wake: -1}},
		{Timing: Timing{Wake: 4 * us, DeepWake: us}},
		{Timing: Timing{Wake: us}, LowPower: 1.5},
		{Timing: Timing{Wake: us}, DeepPower: math.NaN()},
		{Timing: Timing{Wake: us, Handshake: MaxTime/2 + 1}},
	} {
		if _, err := NewOptimizer(cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
	big := newOptimizer(t, deepSleep400G)
	if err := big.Gap(time.Duration(MaxTime / 1000)); err != nil {
		t.Fatal(err)
	}
	if err := big.Gap(time.Second); err == nil || !strings.Contains(err.Error(), "overflows") {
		t.Errorf("overflow: %v", err)
	}
}

// bruteForce tries every assignment of the gaps to options (0: awake, 1:
// the first state at once, 2: Deep Sleep at once, hybrid only) with the
// replay's costs, including gaps too short to gain anything, and returns
// the best objective (time asleep in ps with one state, the saving in
// hybrid) among those within the budget.
func bruteForce(cfg OptimalConfig, l float64, gaps []PS, span PS) float64 {
	t := cfg.Timing
	down := 2*t.Handshake + PS(t.Sleep)*1000
	cost := [3]PS{0, PS(t.Wake) * 1000, PS(t.DeepWake) * 1000}
	choices := 2
	if t.DeepWake > 0 {
		choices = 3
	}
	var g PS
	for _, x := range gaps {
		g += x
	}
	lr := new(big.Rat).SetFloat64(l)
	fits := func(s PS) bool {
		sr := new(big.Rat).SetInt64(int64(s))
		if span < 0 { // gap file: S(1 − l) ≤ l·G
			lhs := new(big.Rat).Mul(sr, new(big.Rat).Sub(big.NewRat(1, 1), lr))
			return lhs.Cmp(new(big.Rat).Mul(lr, new(big.Rat).SetInt64(int64(g)))) <= 0
		}
		return sr.Cmp(new(big.Rat).Mul(lr, new(big.Rat).SetInt64(int64(span)))) <= 0
	}
	best := 0.0
	pick := make([]int, len(gaps))
	total := 1
	for range gaps {
		total *= choices
	}
	for code := 0; code < total; code++ {
		c := code
		for i := range pick {
			pick[i], c = c%choices, c/choices
		}
		var s PS
		v := 0.0
		for i, x := range gaps {
			if pick[i] == 0 {
				continue
			}
			s += cost[pick[i]] + max(down-x, 0)
			u := max(x-down, 0)
			switch {
			case choices == 2:
				v += float64(u)
			case pick[i] == 1:
				v += (1 - cfg.LowPower) * PS(u).Seconds()
			default:
				v += (1 - cfg.DeepPower) * PS(u).Seconds()
			}
		}
		if v > best && fits(s) {
			best = v
		}
	}
	return best
}

func randomCase(rng *rand.Rand, hybrid bool) (OptimalConfig, float64, []PS) {
	cfg := OptimalConfig{Timing: Timing{
		Wake:      time.Duration(1 + rng.IntN(5000)),
		Sleep:     time.Duration(rng.IntN(3000)),
		Handshake: PS(rng.IntN(3)) * 11280,
	}, LowPower: rng.Float64()}
	if hybrid {
		cfg.Timing.DeepWake = cfg.Timing.Wake + time.Duration(rng.IntN(20000))
		cfg.DeepPower = rng.Float64()
		if rng.IntN(4) > 0 { // mostly the usual order, Deep Sleep lower
			cfg.LowPower, cfg.DeepPower = max(cfg.LowPower, cfg.DeepPower), min(cfg.LowPower, cfg.DeepPower)
		}
	}
	n := 1 + rng.IntN(12)
	if hybrid {
		n = 1 + rng.IntN(8)
	}
	gaps := make([]PS, n)
	for i := range gaps {
		gaps[i] = PS(1+rng.IntN(40000)) * 1000
		if i > 0 && rng.IntN(4) == 0 {
			gaps[i] = gaps[i-1] // ties
		}
	}
	return cfg, []float64{0.001, 0.01, 0.05, 0.1, 0.3, 0.5, 0.9, 1, 1.5}[rng.IntN(9)], gaps
}

func checkBrute(t *testing.T, cfg OptimalConfig, l float64, gaps []PS, trace bool) {
	t.Helper()
	o := newOptimizer(t, cfg)
	span := PS(-1)
	if trace {
		var at PS
		for i, g := range gaps {
			if err := o.Row(TraceRow{Start: at, Gap: g}); err != nil {
				t.Fatal(err)
			}
			at += g + PS(i%3)*700_000 // some busy time
		}
		span = o.end
	} else {
		for _, g := range gaps {
			if err := o.Gap(g.D()); err != nil {
				t.Fatal(err)
			}
		}
	}
	opt, err := o.Solve(l)
	if err != nil {
		t.Fatal(err)
	}
	want := bruteForce(cfg, l, gaps, span)
	got := float64(opt.Asleep)
	if cfg.Timing.DeepWake > 0 {
		got = opt.Saving
	}
	if math.Abs(got-want) > 1e-9*math.Max(1, want) {
		t.Fatalf("cfg %+v l %v trace %v gaps %v: optimum %v (%+v), brute force %v", cfg, l, trace, gaps, got, opt, want)
	}
	if opt.Delay > opt.Budget || opt.Asleep > opt.IdleTime || opt.DeepAsleep > opt.Asleep || opt.Deep > opt.Slept {
		t.Fatalf("inconsistent %+v", opt)
	}
}

func TestOptimalBruteForceOneState(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 400 {
		cfg, l, gaps := randomCase(rng, false)
		checkBrute(t, cfg, l, gaps, false)
		checkBrute(t, cfg, l, gaps, true)
	}
}

func TestOptimalBruteForceHybrid(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 300 {
		cfg, l, gaps := randomCase(rng, true)
		checkBrute(t, cfg, l, gaps, false)
		checkBrute(t, cfg, l, gaps, true)
	}
}

// oracle plays a fixed plan: t_PDT 0 or 1 s, and the hold, per idle period.
type oracle struct {
	pdt  []time.Duration
	hold []time.Duration
	i    int
}

func (p *oracle) Observe(predictor.IdlePeriod) { p.i++ }
func (p *oracle) ObserveHops(int, uint64)      {}
func (p *oracle) Predict(time.Duration) time.Duration {
	return p.pdt[min(p.i, len(p.pdt)-1)]
}
func (p *oracle) StateBytes() int             { return 0 }
func (p *oracle) Kind() predictor.Kind        { return "oracle" }
func (p *oracle) Hold() (time.Duration, bool) { return p.hold[min(p.i, len(p.hold)-1)], true }

// TestOptimalMatchesReplay replays the optimum's plan (the nD longest
// useful gaps deepen at once, the next nF sleep in Fast Wake, the rest
// stay awake) and finds its totals.
func TestOptimalMatchesReplay(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, hybrid := range []bool{false, true} {
		for range 50 {
			cfg, l, _ := randomCase(rng, hybrid)
			l = min(l, 0.5)
			gaps := make([]time.Duration, 200)
			for i := range gaps {
				gaps[i] = time.Duration(rng.ExpFloat64() * 20000)
			}
			o := newOptimizer(t, cfg)
			for _, g := range gaps {
				if err := o.Gap(g); err != nil {
					t.Fatal(err)
				}
			}
			opt, err := o.Solve(l)
			if err != nil {
				t.Fatal(err)
			}
			down := 2*cfg.Timing.Handshake + PS(cfg.Timing.Sleep)*1000
			idx := make([]int, 0, len(gaps))
			for i, g := range gaps {
				if PS(g)*1000 > down {
					idx = append(idx, i)
				}
			}
			slices.SortStableFunc(idx, func(a, b int) int { return int(gaps[b] - gaps[a]) })
			pl := &oracle{pdt: make([]time.Duration, len(gaps)), hold: make([]time.Duration, len(gaps))}
			for i := range pl.pdt {
				pl.pdt[i], pl.hold[i] = time.Second, time.Hour
			}
			for j, i := range idx[:opt.Slept] {
				pl.pdt[i] = 0
				if j < int(opt.Deep) {
					pl.hold[i] = 0
				}
			}
			port, err := controller.NewPort(controller.Config{}, pl, 0)
			if err != nil {
				t.Fatal(err)
			}
			r := New(port, cfg.Timing)
			for _, g := range gaps {
				if _, err := r.Gap(g); err != nil {
					t.Fatal(err)
				}
			}
			res := r.Result()
			if res.Misses != opt.Slept || res.Asleep != opt.Asleep || res.DeepAsleep != opt.DeepAsleep ||
				res.Delay != opt.Delay || res.DeepMisses != opt.Deep || r.Now() != opt.Elapsed {
				t.Fatalf("hybrid %v: replay %+v (now %v), optimum %+v", hybrid, res, r.Now(), opt)
			}
			if float64(res.Delay) > l*float64(r.Now())*(1+1e-12) {
				t.Fatalf("over budget: delay %v, l·T %v", res.Delay, l*float64(r.Now()))
			}
		}
	}
}

// FuzzOptimal solves random inputs: never more delay than the budget, and
// for short ones the brute force's value.
func FuzzOptimal(f *testing.F) {
	f.Add([]byte{1, 2, 3, 200, 7, 7}, uint16(4480), uint16(2000), false, uint8(10))
	f.Add([]byte{255, 0, 9, 9, 100}, uint16(375), uint16(200), true, uint8(1))
	f.Fuzz(func(t *testing.T, in []byte, wake, sleep uint16, hybrid bool, permille uint8) {
		if len(in) > 4096 {
			return
		}
		cfg := OptimalConfig{Timing: Timing{Wake: time.Duration(wake), Sleep: time.Duration(sleep), Handshake: 11280}, LowPower: 0.4}
		if hybrid {
			cfg.Timing.DeepWake, cfg.DeepPower = cfg.Timing.Wake*12, 0.1
		}
		l := (float64(permille) + 1) / 256
		gaps := make([]PS, len(in))
		for i, b := range in {
			gaps[i] = PS(b) * PS(b) * 1000
		}
		o := newOptimizer(t, cfg)
		for _, g := range gaps {
			if err := o.Gap(g.D()); err != nil {
				t.Fatal(err)
			}
		}
		opt, err := o.Solve(l)
		if err != nil {
			t.Fatal(err)
		}
		if opt.Delay > opt.Budget || opt.Asleep > opt.IdleTime || float64(opt.Delay)*(1-l) > l*float64(opt.IdleTime)*(1+1e-9) {
			t.Fatalf("%+v", opt)
		}
		var nz []PS
		for _, g := range gaps {
			if g > 0 {
				nz = append(nz, g)
			}
		}
		if (hybrid && len(nz) <= 7) || (!hybrid && len(nz) <= 11) {
			want := bruteForce(cfg, l, nz, -1)
			got := float64(opt.Asleep)
			if hybrid {
				got = opt.Saving
			}
			if math.Abs(got-want) > 1e-9*math.Max(1, want) {
				t.Fatalf("optimum %v, brute force %v", got, want)
			}
		}
	})
}

// BenchmarkOptimal collects and solves 1 million idle periods (shaped as
// gaps-demo: mostly sub-µs, some tens of µs, a few ms) per operation;
// ns/gap is per idle period.
func BenchmarkOptimal(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	gaps := make([]time.Duration, 1_000_000)
	for i := range gaps {
		switch x := rng.Float64(); {
		case x < 0.9:
			gaps[i] = time.Duration(50 + rng.IntN(400))
		case x < 0.995:
			gaps[i] = time.Duration(20000 + rng.IntN(30000))
		default:
			gaps[i] = time.Duration(500_000 + rng.IntN(5_000_000))
		}
	}
	for _, bc := range []struct {
		name string
		cfg  OptimalConfig
	}{
		{"deep-sleep", deepSleep400G},
		{"hybrid", OptimalConfig{Timing: Timing{Wake: 375, Sleep: 200, Handshake: 11280, DeepWake: 4480}, LowPower: 0.4, DeepPower: 0.1}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				o, _ := NewOptimizer(bc.cfg)
				for _, g := range gaps {
					if err := o.Gap(g); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := o.Solve(0.01); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(gaps)), "ns/gap")
		})
	}
}
