package replay

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/predictor"
)

// ledgerMode is one low-power mode of the eee-400g preset (paper 000
// Table 8) as the replay models it.
type ledgerMode struct {
	name   string
	timing Timing
	hybrid predictor.HybridConfig
}

var ledgerModes = []ledgerMode{
	{"deep-sleep", Timing{Wake: 4480, Sleep: 2000, Handshake: 11280}, predictor.HybridConfig{}},
	{"fast-wake", Timing{Wake: 375, Sleep: 200, Handshake: 11280}, predictor.HybridConfig{}},
	{"hybrid", Timing{Wake: 375, Sleep: 200, Handshake: 11280, DeepWake: 4480, Hold: 20 * time.Microsecond},
		predictor.HybridConfig{DeepWakeTime: 4480, FastWakePower: 0.4, DeepSleepPower: 0.1}},
}

// ledgerPort builds a port of kind under the ledger (on: fixed too) for mode.
func ledgerPort(t testing.TB, kind predictor.Kind, m ledgerMode, bound float64, pdt time.Duration) (*controller.Port, float64) {
	t.Helper()
	cfg := predictor.Config{Kind: kind, Bound: bound, WakeTime: predictor.Duration(m.timing.Wake)}
	if kind == predictor.KindFixed {
		d := predictor.Duration(pdt)
		cfg.PDT = &d
	}
	if kind != predictor.KindNGram {
		cfg.Hybrid = m.hybrid
	}
	pred, err := predictor.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctl := controller.Config{Ledger: controller.LedgerOn, MissCost: predictor.Duration(m.timing.Cycle())}
	port, err := controller.NewPort(ctl, pred, 0)
	if err != nil {
		t.Fatal(err)
	}
	return port, pred.(predictor.Bounded).BudgetRate()
}

// gapSource makes one test sequence: random families and adversaries
// that aim at the port's threshold.
type gapSource func(r *rand.Rand, port *controller.Port, i int) time.Duration

func gapFamilies() []struct {
	name string
	gen  gapSource
} {
	ns := func(v float64) time.Duration { return time.Duration(math.Max(1, v)) }
	return []struct {
		name string
		gen  gapSource
	}{
		{"uniform-short", func(r *rand.Rand, _ *controller.Port, _ int) time.Duration { return ns(r.Float64() * 20000) }},
		{"bimodal", func(r *rand.Rand, _ *controller.Port, _ int) time.Duration {
			if r.IntN(4) == 0 {
				return ns(500000 + r.Float64()*2e6)
			}
			return ns(r.Float64() * 3000)
		}},
		{"pareto", func(r *rand.Rand, _ *controller.Port, _ int) time.Duration {
			return ns(2000 / math.Pow(1-r.Float64(), 1/1.2))
		}},
		{"periodic", func(_ *rand.Rand, _ *controller.Port, i int) time.Duration {
			if i%4 == 3 {
				return 2 * time.Millisecond
			}
			return 20 * time.Microsecond
		}},
		// The port's register value itself: a packet in the instant the
		// timer expires pays the whole cycle (handshakes, t_s, t_w).
		{"at-threshold", func(r *rand.Rand, p *controller.Port, _ int) time.Duration {
			return max(p.PDT(), 1) + time.Duration(r.IntN(3))
		}},
		// Just past the threshold, then long: misses and deep wake-ups.
		{"threshold-then-long", func(r *rand.Rand, p *controller.Port, i int) time.Duration {
			if i%2 == 0 {
				return max(p.PDT(), 1)
			}
			return ns(100000 + r.Float64()*1e6)
		}},
		{"many-tiny", func(r *rand.Rand, _ *controller.Port, _ int) time.Duration { return ns(float64(1 + r.IntN(50))) }},
	}
}

// budgetPS is l × T in picoseconds, exactly (l is the float64 the ledger
// uses), rounded down.
func budgetPS(l float64, t PS) *big.Int {
	b := new(big.Rat).Mul(new(big.Rat).SetFloat64(l), new(big.Rat).SetInt64(int64(t)))
	return new(big.Int).Quo(b.Num(), b.Denom())
}

// TestLedgerBoundProperty: for 10 000 random and adversarial gap
// sequences per predictor × mode, the delay the replay's packets waited
// never exceeds l × T + c (docs/predictors.md "The delay ledger"), in exact
// integer picoseconds; and it never exceeds l × T at the end of an idle
// period (the reserve c is kept back).
func TestLedgerBoundProperty(t *testing.T) {
	const sequences = 10000
	bounds := []float64{0.001, 0.002, 0.01, 0.05}
	fams := gapFamilies()
	for _, kind := range predictor.Kinds {
		for _, m := range ledgerModes {
			t.Run(fmt.Sprintf("%s/%s", kind, m.name), func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(len(kind)), uint64(len(m.name))))
				var worst float64
				for s := range sequences {
					fam := fams[s%len(fams)]
					bound := bounds[r.IntN(len(bounds))]
					port, l := ledgerPort(t, kind, m, bound, time.Duration(r.IntN(30000)))
					rep := New(port, m.timing)
					n := 1 + r.IntN(60)
					for i := range n {
						if _, err := rep.Gap(fam.gen(r, port, i)); err != nil {
							t.Fatal(err)
						}
						res := rep.Result()
						// Strict: at every idle period's end, the packet
						// has been charged and S ≤ l × (end of the gap).
						endOfGap := rep.end
						if st := res.Delay; budgetPS(l, endOfGap).Cmp(big.NewInt(int64(st))) < 0 {
							t.Fatalf("%s seq %d (%s, bound %v) period %d: spent %d ps > l·T = %v ps (T %d ps)",
								kind, s, fam.name, bound, i+1, st, budgetPS(l, endOfGap), endOfGap)
						}
					}
					res := rep.Result()
					c := int64(m.timing.Cycle()) * 1000
					lim := new(big.Int).Add(budgetPS(l, rep.Now()), big.NewInt(c))
					if lim.Cmp(big.NewInt(int64(res.Delay))) < 0 {
						t.Fatalf("%s seq %d (%s): spent %d ps > l·T + c = %v ps", kind, s, fam.name, res.Delay, lim)
					}
					if b := float64(l) * float64(rep.Now()); b > 0 {
						worst = max(worst, float64(res.Delay)/b)
					}
					if ls := res.Port.Ledger; ls == nil || ls.Overruns != 0 {
						t.Fatalf("%s seq %d (%s): ledger %+v, want one without overruns", kind, s, fam.name, ls)
					}
				}
				t.Logf("worst spent / (l·T) over %d sequences: %.4f", sequences, worst)
			})
		}
	}
}

// TestLedgerOffOverspends shows what the ledger prevents: n-gram on
// periodic 20 µs gaps sleeps at once in every one (each is "long") and
// pays t_w every 20 µs unguarded, about 22 % at a 1 % bound.
func TestLedgerOffOverspends(t *testing.T) {
	m := ledgerModes[0]
	cfg := predictor.Config{Kind: predictor.KindNGram, Bound: 0.01, WakeTime: predictor.Duration(m.timing.Wake)}
	run := func(mode controller.LedgerMode) (Result, float64) {
		pred, err := predictor.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		port, err := controller.NewPort(controller.Config{Ledger: mode, MissCost: predictor.Duration(m.timing.Cycle())}, pred, 0)
		if err != nil {
			t.Fatal(err)
		}
		rep := New(port, m.timing)
		for range 2000 {
			if _, err := rep.Gap(20 * time.Microsecond); err != nil {
				t.Fatal(err)
			}
		}
		res := rep.Result()
		return res, float64(res.Delay) / (0.01 * float64(rep.Now()))
	}
	off, offRatio := run(controller.LedgerOff)
	on, onRatio := run(controller.LedgerAuto)
	t.Logf("20µs gaps, 1%% bound: unguarded %d misses, %.2f× the budget; ledger %d misses, %.3f× (held %d)",
		off.Misses, offRatio, on.Misses, onRatio, on.Port.Ledger.Held)
	if offRatio <= 1 {
		t.Errorf("unguarded PerfBound stayed within the bound (%.3f): the adversary is too weak to show the ledger", offRatio)
	}
	if onRatio > 1 {
		t.Errorf("with the ledger: %.3f× the budget", onRatio)
	}
	if on.Misses == 0 {
		t.Errorf("the ledger never let the port sleep: it should spend the budget, not refuse it")
	}
}

// FuzzLedger: any gap sequence, bound, predictor and mode keeps the
// replay's delay within l × T + c (exact ps), and within l × T at every
// idle period's end. Each pair of bytes is one gap (ns, scaled by the
// first byte's top bits to reach ms).
func FuzzLedger(f *testing.F) {
	f.Add(uint8(0), uint8(0), []byte{0x10, 0x20, 0xff, 0xff, 0x00, 0x01})
	f.Add(uint8(2), uint8(1), []byte{0x4e, 0x20, 0x4e, 0x20, 0x4e, 0x20, 0xc7, 0xd0})
	f.Add(uint8(3), uint8(2), []byte{0x00, 0x01, 0x80, 0x00})
	f.Fuzz(func(t *testing.T, k, mode uint8, data []byte) {
		kind := predictor.Kinds[int(k)%len(predictor.Kinds)]
		m := ledgerModes[int(mode)%len(ledgerModes)]
		bound := []float64{0.001, 0.002, 0.01, 0.05}[int(k/8)%4]
		port, l := ledgerPort(t, kind, m, bound, time.Duration(int(mode)*997))
		rep := New(port, m.timing)
		for i := 0; i+1 < len(data) && i < 2000; i += 2 {
			g := time.Duration(data[i]&0x3f)<<8 | time.Duration(data[i+1])
			g <<= 3 * (data[i] >> 6) // ×1, ×8, ×64, ×512 ns
			if g == 0 {
				g = max(port.PDT(), 1) // the adversary's gap: the threshold itself
			}
			if _, err := rep.Gap(g); err != nil {
				t.Fatal(err)
			}
			if st := rep.Result().Delay; budgetPS(l, rep.end).Cmp(big.NewInt(int64(st))) < 0 {
				t.Fatalf("spent %d ps > l·T = %v ps", st, budgetPS(l, rep.end))
			}
		}
		lim := new(big.Int).Add(budgetPS(l, rep.Now()), big.NewInt(int64(m.timing.Cycle())*1000))
		if d := rep.Result().Delay; lim.Cmp(big.NewInt(int64(d))) < 0 {
			t.Fatalf("spent %d ps > l·T + c = %v ps", d, lim)
		}
	})
}
