package eee

import (
	"math/rand/v2"
	"testing"
)

// Rates of 1/4 keep every division exact: the expected instants are the
// hand calculation's, to the picosecond.

func TestGateLedger(t *testing.T) {
	g := NewGate(0.25, 1000)
	// Nothing spent: open once 0.25·t ≥ 1000, at t = 4000.
	if got := g.OpenAt(0); got != 4000 {
		t.Fatalf("OpenAt(0) = %d, want 4000", got)
	}
	if got := g.OpenAt(4000); got != 4000 {
		t.Fatalf("OpenAt(4000) = %d, want 4000", got)
	}
	// A 3000 ps stall at 20000: U = 3000, U + h = 4000 ≤ 0.25·20000 = 5000:
	// still open.
	g.Charge(20000, 23000)
	if _, ok := g.ClosesAfter(4000); ok || g.Spent() != 3000 {
		t.Fatalf("after the first stall: spent %d, closes %v; want 3000, open", g.Spent(), ok)
	}
	// An overlapping stall [22000, 26000) adds 3000 (23000…26000): U =
	// 6000, U + h = 7000 > 0.25·22000 = 5500: closed until 7000/0.25 = 28000.
	g.Charge(22000, 26000)
	if c, ok := g.ClosesAfter(4000); !ok || c != 22000 || g.Spent() != 6000 {
		t.Fatalf("closes at %d (%v), spent %d; want 22000, 6000", c, ok, g.Spent())
	}
	if got := g.OpenAt(25000); got != 28000 {
		t.Fatalf("OpenAt(25000) = %d, want 28000", got)
	}
	// A stall while closed extends the interval: U = 7000 → until 32000.
	g.Charge(27000, 28000)
	if got := g.OpenAt(22000); got != 32000 {
		t.Fatalf("OpenAt(22000) = %d, want 32000", got)
	}
	if _, ok := g.ClosesAfter(22000); ok {
		t.Fatal("ClosesAfter inside the last interval: want none")
	}
	if g.Closures != 2 || g.Charged != 3 {
		t.Fatalf("closures %d, charged %d; want 2 (time 0, 22000) and 3", g.Closures, g.Charged)
	}
	// A zero stall is no stall.
	g.Charge(40000, 40000)
	if g.Charged != 3 {
		t.Fatal("a zero stall was charged")
	}
}

func gatedParams(g *Gate) *Params {
	p := &Params{Mode: DeepSleep, SleepDS: 2000, WakeDS: 4000, Handshake: 100, Gate: g}
	p.Prepare()
	return p
}

// TestGatedLinks follows four links under one gate (rate 1/4, headroom
// 1000: closed over [0, 4000)), every one started at 0 with t_PDT 1000.
func TestGatedLinks(t *testing.T) {
	g := NewGate(0.25, 1000)
	p := gatedParams(g)
	var a, b, c, d Link
	for _, l := range []*Link{&a, &b, &c, &d} {
		l.Start(0, 1000)
	}

	// a: t_PDT expires at 1000 while closed → sleeps when the gate opens,
	// at 4000: down at 4200, low at 6200. A packet at 10000 pays t_w:
	// ready 14000. The stall [10000, 14000) makes U + h = 5000 > 2500:
	// the gate closes over [10000, 20000).
	ready, missed := a.Need(p, 10000, 0)
	if ready != 14000 || !missed {
		t.Fatalf("a: ready %d missed %v, want 14000 true", ready, missed)
	}
	want := [NumStates]int64{Wake: 4200, GoingDown: 2000, LowDeepSleep: 3800, GoingUp: 4000}
	if a.Times != want {
		t.Fatalf("a: times %v, want %v", a.Times, want)
	}
	if c, ok := g.ClosesAfter(4000); !ok || c != 10000 || g.OpenAt(10000) != 20000 {
		t.Fatalf("gate: closes at %d, reopens %d; want 10000, 20000", c, g.OpenAt(10000))
	}

	// c: asleep since 6200 like a, woken by the closure at 10000 (ready
	// at 14000); a packet at 12000 waits for the wake-up to end. Its
	// stall lies inside a's: nothing more is spent.
	ready, missed = c.Need(p, 12000, 0)
	if ready != 14000 || !missed || g.Spent() != 4000 {
		t.Fatalf("c: ready %d missed %v spent %d, want 14000 true 4000", ready, missed, g.Spent())
	}
	if c.Downs != 1 || c.Ups != 1 {
		t.Fatalf("c: downs %d ups %d, want 1 1", c.Downs, c.Ups)
	}

	// d: the run ends at 12000, during the forced wake-up.
	d.Finish(p, 12000)
	want = [NumStates]int64{Wake: 4200, GoingDown: 2000, LowDeepSleep: 3800, GoingUp: 2000}
	if d.Times != want {
		t.Fatalf("d: times %v, want %v", d.Times, want)
	}

	// b: the same first cycle as c (awake again at 14000); its timer
	// restarts then and expires at 15000, inside the closed interval, so
	// it sleeps at the reopening, 20000: down 20200, low 22200. A packet
	// at 30000 pays t_w: ready 34000.
	ready, missed = b.Need(p, 30000, 0)
	if ready != 34000 || !missed {
		t.Fatalf("b: ready %d missed %v, want 34000 true", ready, missed)
	}
	want = [NumStates]int64{Wake: 4200 + 6200, GoingDown: 4000, LowDeepSleep: 3800 + 7800, GoingUp: 8000}
	if b.Times != want || b.Downs != 2 || b.Ups != 2 {
		t.Fatalf("b: times %v downs %d ups %d, want %v 2 2", b.Times, b.Downs, b.Ups, want)
	}
	var sum int64
	for _, v := range b.Times {
		sum += v
	}
	if sum != 34000 {
		t.Fatalf("b: times sum to %d, want 34000", sum)
	}
}

// TestHoldPerIdlePeriod: a hold set with the t_PDT replaces
// Params.HybridHold for that idle period only.
func TestHoldPerIdlePeriod(t *testing.T) {
	p := &Params{Mode: Hybrid, SleepFW: 200, WakeFW: 400, SleepDS: 2000, WakeDS: 4000, HybridHold: 10000, Handshake: 0}
	p.Prepare()
	var l Link
	l.Start(0, 1000)
	l.SetHold(500)
	// Low in Fast Wake at 1200, Deep Sleep from 1700: a packet at 3000
	// pays Deep Sleep's t_w.
	if ready, _ := l.Need(p, 3000, 0); ready != 7000 {
		t.Fatalf("hold 500: ready %d, want 7000", ready)
	}
	l.Release(7000, 0, 1000)
	// The next idle period has the configured hold (10000) again: at
	// 7000+1200+3000 the link is still in Fast Wake.
	if ready, _ := l.Need(p, 11200, 0); ready != 11600 {
		t.Fatalf("default hold: ready %d, want 11600", ready)
	}
	if l.Deepens != 1 {
		t.Fatalf("deepens %d, want 1", l.Deepens)
	}
}

// TestGateInvariants drives links under one gate with random traffic in
// time order: every link's state times sum to the time it has accounted,
// and the union of stalls never exceeds rate·t + headroom, with headroom
// one wake-up cycle (Params.Cycle), whatever the t_PDTs and modes.
func TestGateInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, mode := range []Mode{FastWake, DeepSleep, Hybrid} {
		for trial := 0; trial < 20; trial++ {
			p := &Params{Mode: mode, SleepFW: 200, WakeFW: 400, SleepDS: 2000, WakeDS: 4480, HybridHold: 1000, Handshake: 12}
			p.Prepare()
			rate := []float64{0.001, 0.01, 0.1, 0.5}[trial%4]
			g := NewGate(rate, p.Cycle())
			p.Gate = g
			links := make([]Link, 1+rng.IntN(8))
			free := make([]int64, len(links)) // when each link's last packet has left
			for i := range links {
				links[i].Start(0, int64(rng.IntN(20000)))
			}
			now := int64(0)
			for step := 0; step < 400; step++ {
				now += int64(rng.IntN(3000))
				i := rng.IntN(len(links))
				l := &links[i]
				if now < free[i] {
					continue // still sending: one packet at a time per link here
				}
				ready, _ := l.Need(p, now, uint8(rng.IntN(2)))
				if ready < now {
					t.Fatalf("ready %d before now %d", ready, now)
				}
				if lim := rate*float64(now) + float64(p.Cycle()); float64(g.Spent()) > lim+1 {
					t.Fatalf("%v rate %v: spent %d > rate·t + headroom = %.0f at %d", mode, rate, g.Spent(), lim, now)
				}
				end := ready + int64(1+rng.IntN(500))
				l.Release(end, 0, int64(rng.IntN(20000)))
				l.Release(end, 1, int64(rng.IntN(20000)))
				l.account(Wake, end) // the transmission
				free[i] = end
			}
			for i := range links {
				l := &links[i]
				fin := max(now, free[i]) + 100000
				l.Finish(p, fin)
				var sum int64
				for _, v := range l.Times {
					sum += v
				}
				if sum != l.Accounted() || l.Accounted() != fin {
					t.Fatalf("%v: link %d times sum %d, accounted %d, want %d", mode, i, sum, l.Accounted(), fin)
				}
			}
		}
	}
}
