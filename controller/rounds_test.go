package controller

import (
	"strings"
	"testing"
	"time"

	"github.com/lpictl/lpictl/predictor"
)

const ms = time.Millisecond

// boundedScript is a scripted predictor under a ledger: l and c fixed.
type boundedScript struct {
	scripted
	rate float64
	cost time.Duration
}

func (b *boundedScript) BudgetRate() float64     { return b.rate }
func (b *boundedScript) WakeCost() time.Duration { return b.cost }

// TestRoundsArmAtRounds follows an agent-driven port by hand: rounds every
// 50 ms from 10 ms before the port's start; the port runs its initial
// 1 ms until the first round writes the controller's answer; a decision
// reaches the port only at the first round after the idle period it was
// made for has ended; the predictor learns the port's outcome when the
// port ran its decision, the decision's own outcome otherwise.
func TestRoundsArmAtRounds(t *testing.T) {
	initial := pd(ms)
	pred := &scripted{answers: []time.Duration{2 * ms, 3 * ms, 4 * ms}}
	p, err := NewPort(Config{Rounds: &Rounds{Interval: pd(50 * ms), Lead: pd(10 * ms), Initial: &initial}}, pred, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.PDT(); got != ms {
		t.Fatalf("PDT before any round = %v, want the initial 1ms", got)
	}
	// The round at −10 ms wrote the first answer, 2 ms.
	if got := p.Decide(0); got != 2*ms {
		t.Fatalf("Decide(0) = %v, want 2ms", got)
	}
	p.IdleEnded(predictor.IdlePeriod{End: 30 * ms, Length: 30 * ms, Missed: true, PDT: 2 * ms, Delay: 165 * us})
	// Recomputed (3 ms), but the port arms 2 ms: the round at 40 ms has
	// not seen this period's decision (it ends at 45 ms).
	if got := p.Decide(42500 * us); got != 2*ms {
		t.Fatalf("Decide(42.5ms) = %v, want 2ms (written at −10ms)", got)
	}
	p.IdleEnded(predictor.IdlePeriod{End: 45 * ms, Length: 2500 * us, Missed: true, PDT: 2 * ms, Delay: 1985 * us})
	if got := p.Decide(60 * ms); got != 2*ms {
		t.Fatalf("Decide(60ms) = %v, want 2ms", got)
	}
	// The round at 90 ms writes 3 ms (the decision of the period that
	// ended at 45 ms; this one ends at 100 ms).
	p.IdleEnded(predictor.IdlePeriod{End: 100 * ms, Length: 40 * ms, Missed: true, PDT: 2 * ms, Delay: 165 * us})
	if got := p.Decide(100 * ms); got != 3*ms {
		t.Fatalf("Decide(100ms) = %v, want 3ms (written at 90ms)", got)
	}
	if got := p.PDT(); got != 3*ms {
		t.Errorf("PDT = %v, want 3ms", got)
	}
	want := []predictor.IdlePeriod{
		{End: 30 * ms, Length: 30 * ms, Missed: true, PDT: 2 * ms, Delay: 165 * us}, // ran as decided
		{End: 45 * ms, Length: 2500 * us, Missed: false, PDT: 3 * ms},               // 3 ms would have hit
		{End: 100 * ms, Length: 40 * ms, Missed: true, PDT: 4 * ms},                 // and 4 ms missed
	}
	if len(pred.idle) != len(want) {
		t.Fatalf("predictor saw %d periods, want %d", len(pred.idle), len(want))
	}
	for i := range want {
		if pred.idle[i] != want[i] {
			t.Errorf("period %d learned %+v, want %+v", i, pred.idle[i], want[i])
		}
	}
	if s := p.Stats(100 * ms); s.Hits != 0 || s.Misses != 3 || s.Ledger != nil {
		t.Errorf("stats %+v: want the port's 3 misses, no ledger", s)
	}
}

// TestRoundsPortLedger: the port's own ledger (l = 1 %, c = 1 ms), its
// budget counted from when the agent opened the port (100 ms before the
// port's start), applied from the agent's first write and per idle
// period, as an emulated port applies it, whatever the recompute policy.
func TestRoundsPortLedger(t *testing.T) {
	for _, rc := range []Recompute{OnQueueEmpty, OnInterval} {
		initial := pd(ms)
		pred := &boundedScript{scripted: scripted{answers: []time.Duration{2 * ms}}, rate: 0.01, cost: ms}
		cfg := Config{Recompute: rc, Interval: pd(50 * ms), Ledger: LedgerOn,
			Rounds: &Rounds{Interval: pd(10 * ms), Lead: pd(100 * ms), Initial: &initial}}
		p, err := NewPort(cfg, pred, 0)
		if err != nil {
			t.Fatal(err)
		}
		// Before the first write the port has no ledger.
		if got := p.SleepAllowedAt(0); got != 0 {
			t.Errorf("%s: SleepAllowedAt(0) = %v before the first write", rc, got)
		}
		// The round at −100 ms wrote 2 ms and programmed the ledger:
		// S + c = 1 ms ≤ 1 % × (t + 100 ms) from t = 1 ns on.
		if got := p.Decide(0); got != 2*ms {
			t.Fatalf("%s: Decide(0) = %v, want 2ms (the budget started 100ms earlier)", rc, got)
		}
		p.IdleEnded(predictor.IdlePeriod{End: 5 * ms, Length: 5 * ms, Missed: true, PDT: 2 * ms, Delay: ms})
		// S = 1 ms: S + c = 2 ms ≤ 1 % × (t + 100 ms) from 100 ms + 1 ns.
		if got, want := p.Decide(5*ms), 95*ms+1; got != want {
			t.Fatalf("%s: Decide(5ms) = %v, want the hold to 100.000001ms (%v)", rc, got, want)
		}
		p.IdleEnded(predictor.IdlePeriod{End: 8 * ms, Length: 3 * ms, PDT: 95*ms + 1})
		if got := p.SleepAllowedAt(8 * ms); got != 100*ms+1 {
			t.Errorf("%s: SleepAllowedAt(8ms) = %v", rc, got)
		}
		s := p.Stats(8 * ms)
		want := LedgerStats{Rate: 0.01, Budget: 1080 * us, Spent: ms, Reserve: ms, Held: 1}
		if s.Ledger == nil || *s.Ledger != want {
			t.Errorf("%s: ledger %+v, want %+v", rc, s.Ledger, want)
		}
		if s.Misses != 1 || s.Hits != 1 {
			t.Errorf("%s: port's outcomes %d misses %d hits, want 1 and 1", rc, s.Misses, s.Hits)
		}
		// The held period: the port hit, the decision (2 ms) would have missed.
		if got := pred.idle[1]; !got.Missed || got.PDT != 2*ms || got.Delay != 0 {
			t.Errorf("%s: held period learned %+v", rc, got)
		}
	}
}

// TestRoundsLedgerLateTraffic: traffic that starts long after the agent
// opened the port (a budget head start) still spends at most l·T + c,
// T since the ledger's start, after every idle period: every gap that
// outlasts the armed t_PDT is charged the worst wait, c.
func TestRoundsLedgerLateTraffic(t *testing.T) {
	const c = 2 * ms
	pred := &boundedScript{scripted: scripted{answers: []time.Duration{0}}, rate: 0.005, cost: c}
	initial := pd(ms)
	p, err := NewPort(Config{Recompute: OnInterval, Interval: pd(50 * ms), Ledger: LedgerOn, MissCost: pd(c),
		Rounds: &Rounds{Interval: pd(50 * ms), Lead: pd(10 * time.Second), Initial: &initial}}, pred, 0)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Duration(0)
	for i := range 4000 {
		gap := time.Duration(1+i%7) * ms
		a := p.Decide(now)
		ip := predictor.IdlePeriod{End: now + gap, Length: gap, PDT: a}
		if gap >= a {
			ip.Missed, ip.Delay = true, c
		}
		p.IdleEnded(ip)
		now += gap + ip.Delay
		l := p.Stats(now).Ledger
		if l.Spent > l.Budget+l.Reserve {
			t.Fatalf("after %d periods at %v: S = %v > l·T + c = %v", i+1, now, l.Spent, l.Budget+l.Reserve)
		}
	}
	if l := p.Stats(now).Ledger; l.Spent < l.Budget/2 {
		t.Errorf("S = %v of %v: the port hardly slept", l.Spent, l.Budget)
	}
}

func TestRoundsValidate(t *testing.T) {
	neg := pd(-1)
	for _, tc := range []struct {
		r    Rounds
		want string
	}{
		{Rounds{}, "controller.rounds.interval"},
		{Rounds{Interval: pd(ms), Lead: -1}, "controller.rounds.lead"},
		{Rounds{Interval: pd(ms), Initial: &neg}, "controller.rounds.initial"},
	} {
		err := Config{Rounds: &tc.r}.WithDefaults().Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %s", tc.r, err, tc.want)
		}
	}
}

// TestRoundsOpenIdle: a port idle for 400 ms before its start (Rounds.Idle)
// reports that period until it has observed one, with its initial timer;
// the controller learns it as given (the port ran its initial 1 ms, the
// agent's decision for it), so the next decision comes from it: the
// predictor's second answer, 3 ms, is what the controller decides at 6 ms
// and what the round at 30 ms (rounds from −20 ms) writes.
func TestRoundsOpenIdle(t *testing.T) {
	initial := pd(ms)
	pred := &scripted{answers: []time.Duration{ms, 3 * ms}}
	p, err := NewPort(Config{Rounds: &Rounds{Interval: pd(50 * ms), Lead: pd(20 * ms), Initial: &initial, Idle: pd(400 * ms)}}, pred, 0)
	if err != nil {
		t.Fatal(err)
	}
	start, armed, ok := p.OpenIdle()
	if !ok || start != -400*ms || armed != ms {
		t.Fatalf("OpenIdle = %v, %v, %v; want −400ms, 1ms, true", start, armed, ok)
	}
	// The first packet at 5 ms ends it: 405 ms, a miss that waited t_w.
	first := predictor.IdlePeriod{End: 5 * ms, Length: 405 * ms, Missed: true, PDT: ms, Delay: 165 * us}
	p.IdleEnded(first)
	if _, _, ok := p.OpenIdle(); ok {
		t.Fatal("OpenIdle still reported after an observed idle period")
	}
	if len(pred.idle) != 1 || pred.idle[0] != first {
		t.Fatalf("the predictor observed %+v, want %+v", pred.idle, first)
	}
	if got := p.Decide(6 * ms); got != ms {
		t.Fatalf("Decide(6ms) = %v, want the initial 1ms (nothing written yet)", got)
	}
	if got := p.PDT(); got != ms {
		t.Fatalf("PDT = %v, want 1ms (3ms decided, not written)", got)
	}
	p.IdleEnded(predictor.IdlePeriod{End: 8 * ms, Length: 2 * ms, Missed: true, PDT: ms, Delay: 0})
	// The round at 30 ms writes 3 ms, decided at 6 ms for a period that
	// ended before it.
	if got := p.Decide(31 * ms); got != 3*ms {
		t.Fatalf("Decide(31ms) = %v, want 3ms (written at 30ms)", got)
	}

	q, err := NewPort(Config{Rounds: &Rounds{Interval: pd(50 * ms), Initial: &initial}}, &scripted{answers: []time.Duration{ms}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := q.OpenIdle(); ok {
		t.Error("OpenIdle reported without Rounds.Idle")
	}
	if err := (Config{Rounds: &Rounds{Interval: pd(50 * ms), Idle: pd(-ms)}}).WithDefaults().Validate(); err == nil || !strings.Contains(err.Error(), "rounds.idle") {
		t.Errorf("Validate(idle −1ms) = %v, want a rounds.idle error", err)
	}
}
