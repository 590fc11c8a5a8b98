package controller

import (
	"testing"
	"time"

	"github.com/lpictl/lpictl/predictor"
)

// TestLedgerHandComputed follows one port at l = 1 % and c = 6.5 µs by
// hand: the port may first go down once l·t ≥ c (650 µs), each miss's
// delay is charged as measured (or at c when not measured), and after a
// charge the port waits until l·t covers S + c again.
func TestLedgerHandComputed(t *testing.T) {
	pred := predictor.NewFixed(0) // "sleep at once", bound 1 %
	p, err := NewPort(Config{Ledger: LedgerOn, MissCost: pd(6500)}, pred, 0)
	if err != nil {
		t.Fatal(err)
	}
	// At 0: need S + c = 6.5 µs = 0.01·t → t = 650 µs (+1 ns of slack).
	if got := p.Decide(0); got != 650001 {
		t.Fatalf("Decide(0) = %v, want 650.001µs", got)
	}
	// At 1 ms the budget is 10 µs ≥ 6.5 µs: sleep at once.
	if got := p.Decide(time.Millisecond); got != 0 {
		t.Fatalf("Decide(1ms) = %v, want 0", got)
	}
	p.IdleEnded(predictor.IdlePeriod{End: 1100 * us, Length: 100 * us, Missed: true, PDT: 0, Delay: 4480})
	// S = 4.48 µs; S + c = 10.98 µs → t = 1.098 ms: at 1.1 ms it is free.
	if got := p.Decide(1100 * us); got != 0 {
		t.Fatalf("Decide(1.1ms) = %v, want 0", got)
	}
	p.IdleEnded(predictor.IdlePeriod{End: 1200 * us, Length: 100 * us, Missed: true}) // unmeasured: charged c
	// S = 10.98 µs; S + c = 17.48 µs → t = 1.748 ms (+1 ns).
	if got := p.Decide(1200 * us); got != 548001 {
		t.Fatalf("Decide(1.2ms) = %v, want 548.001µs", got)
	}
	s := p.Stats(1200 * us).Ledger
	want := LedgerStats{Rate: 0.01, Budget: 12 * us, Spent: 10980, Reserve: 6500, Held: 2, Unmeasured: 1}
	if s == nil || *s != want {
		t.Fatalf("ledger stats %+v, want %+v", s, want)
	}
	if r := s.Ratio(); r != 10980.0/12000 {
		t.Errorf("ratio %v", r)
	}
	// Figures and LedgerStats, which the simulator sums over millions of
	// ports, are Stats' parts and allocate nothing.
	st, f := p.Stats(1200*us), p.Figures(1200*us)
	if l, ok := p.LedgerStats(1200 * us); !ok || l != want {
		t.Errorf("LedgerStats %+v, %v; want %+v", l, ok, want)
	}
	st.Ledger, st.Hold = nil, nil
	if f != st {
		t.Errorf("Figures %+v, Stats without its pointers %+v", f, st)
	}
	if a := testing.AllocsPerRun(100, func() { p.Figures(1300 * us); p.LedgerStats(1300 * us) }); a != 0 {
		t.Errorf("Figures and LedgerStats: %v allocations a call", a)
	}
	unguarded, err := NewPort(Config{Ledger: LedgerOff}, predictor.NewFixed(0), 0)
	if err != nil {
		t.Fatal(err)
	}
	if l, ok := unguarded.LedgerStats(0); ok || unguarded.Stats(0).Ledger != nil {
		t.Errorf("a port without a ledger reports one: %+v", l)
	}
}

// TestLedgerModes: auto guards adaptive predictors, not fixed; off guards
// none; on guards fixed too; an interval port is held for a whole interval.
func TestLedgerModes(t *testing.T) {
	pb := func() predictor.Predictor {
		p, err := predictor.New(predictor.Config{Kind: predictor.KindPerfBound, WakeTime: pd(4480)})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name    string
		mode    LedgerMode
		pred    predictor.Predictor
		guarded bool
	}{
		{"auto perfbound", LedgerAuto, pb(), true},
		{"auto fixed", LedgerAuto, predictor.NewFixed(0), false},
		{"on fixed", LedgerOn, predictor.NewFixed(0), true},
		{"off perfbound", LedgerOff, pb(), false},
		{"default (auto)", "", pb(), true},
	} {
		p, err := NewPort(Config{Ledger: tc.mode}, tc.pred, 0)
		if err != nil {
			t.Fatal(err)
		}
		if p.Guarded() != tc.guarded || (p.Stats(0).Ledger != nil) != tc.guarded {
			t.Errorf("%s: guarded %v, want %v", tc.name, p.Guarded(), tc.guarded)
		}
	}
	if _, err := NewPort(Config{Ledger: "sometimes"}, pb(), 0); err == nil {
		t.Error("ledger: sometimes accepted")
	}
	p, err := NewPort(Config{Ledger: LedgerOn, Recompute: OnInterval, MissCost: pd(6500)}, predictor.NewFixed(0), 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Decide(0); got != Never {
		t.Errorf("interval port in deficit: Decide = %v, want Never", got)
	}
	if got := p.Decide(time.Second); got != 0 {
		t.Errorf("interval port in credit: Decide = %v, want 0", got)
	}
}

// rationing answers "stay awake" whenever the ledger holds the port.
type rationing struct{ *predictor.Fixed }

func (rationing) Held(_, _ time.Duration) time.Duration { return Never }

func TestLedgerRationedPredictor(t *testing.T) {
	p, err := NewPort(Config{Ledger: LedgerOn, MissCost: pd(6500)}, rationing{predictor.NewFixed(0)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Decide(0); got != Never {
		t.Errorf("held rationed port: Decide = %v, want Never (its choice)", got)
	}
	if got := p.Decide(time.Millisecond); got != 0 {
		t.Errorf("free port: Decide = %v, want 0", got)
	}
}

// TestRoundUpCounted: the register rounds toward the answer's intent and
// counts what half up would have lowered.
func TestRoundUpCounted(t *testing.T) {
	s := &scripted{answers: []time.Duration{300100 * time.Nanosecond}}
	p, err := NewPort(Config{Ledger: LedgerOff, Register: Register{WidthBits: 16, Resolution: pd(us)}}, s, 0)
	if err != nil {
		t.Fatal(err)
	}
	if p.PDT() != 301*us || p.Stats(0).RoundedUp != 1 {
		t.Errorf("PDT %v, rounded up %d; want 301µs, 1", p.PDT(), p.Stats(0).RoundedUp)
	}
}
