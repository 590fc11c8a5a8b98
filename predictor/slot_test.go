package predictor

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestSlotSameAsNew: a PerfBound or PerfBoundCorrect built in a Slot
// answers as the one New builds, over random idle periods, hop reports
// and decisions, with and without hybrid holds; a Slot builds no other
// kind.
func TestSlotSameAsNew(t *testing.T) {
	for _, kind := range []Kind{KindPerfBound, KindPerfBoundCorrect} {
		for _, hybrid := range []bool{false, true} {
			cfg := Config{Kind: kind, WakeTime: Duration(4480 * time.Nanosecond)}
			if hybrid {
				cfg.WakeTime = Duration(575 * time.Nanosecond)
				cfg.Hybrid.DeepWakeTime = Duration(4480 * time.Nanosecond)
			}
			want, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			b, err := NewSlotBuilder(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var s Slot
			s.pbc.count = 7 // a slot used before: Init must clear it
			got := b.Init(&s)
			if got.Kind() != kind {
				t.Fatalf("a %s slot built a %s", kind, got.Kind())
			}
			r := rand.New(rand.NewPCG(1, uint64(len(kind))))
			now := time.Duration(0)
			for i := range 5000 {
				length := time.Duration(r.ExpFloat64() * float64(20*time.Microsecond))
				now += length
				ip := IdlePeriod{End: now, Length: length, Missed: r.IntN(4) == 0, PDT: time.Duration(r.IntN(20000)) * time.Nanosecond}
				want.Observe(ip)
				got.Observe(ip)
				hops, packets := 1+r.IntN(6), uint64(r.IntN(5))
				want.ObserveHops(hops, packets)
				got.ObserveHops(hops, packets)
				if w, g := want.Predict(now), got.Predict(now); w != g {
					t.Fatalf("%s hybrid=%v, period %d: t_PDT %v from the slot, %v from New", kind, hybrid, i, g, w)
				}
				if hc, ok := want.(HoldChooser); ok {
					wh, wok := hc.Hold()
					gh, gok := got.(HoldChooser).Hold()
					if wh != gh || wok != gok {
						t.Fatalf("%s hybrid=%v, period %d: hold %v %v from the slot, %v %v from New", kind, hybrid, i, gh, gok, wh, wok)
					}
				}
			}
			if want.StateBytes() != got.StateBytes() {
				t.Errorf("%s: %d state bytes from the slot, %d from New", kind, got.StateBytes(), want.StateBytes())
			}
		}
	}
	pdt := Duration(10 * time.Microsecond)
	if _, err := NewSlotBuilder(Config{Kind: KindFixed, PDT: &pdt}); err == nil {
		t.Error("a slot builder for a fixed t_PDT")
	}
}
