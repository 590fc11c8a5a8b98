package emulate

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/lpictl/lpictl/bpf"
	"github.com/lpictl/lpictl/hwlink/hwlinktest"
)

// TestEmulatorLedgerMatchesModel drives the program through
// BPF_PROG_TEST_RUN with its delay ledger on and checks every departure,
// every exported idle period (held ones with the t_PDT they ran) and the
// ledger's account against refPort, in every sleeping mode, across a rate
// change and a restart of the ledger; and, at every packet, the guarantee:
// S ≤ l·(t − start) + c with c the mode's t_s + deepest t_w.
func TestEmulatorLedgerMatchesModel(t *testing.T) {
	hwlinktest.RequireBPF(t)
	for _, mode := range []Mode{ModeFastWake, ModeDeepSleep, ModeHybrid} {
		t.Run(mode.String(), func(t *testing.T) {
			const t0 = 1_000_000_000_000
			pdt := uint64(1000)
			p := newTestEmulator(t, testTiming, mode, pdt, 0, t0)
			obs := newTestObserver(t, p)
			ref := newRefPort(testTiming, 0, t0, pdt, mode)
			c := time.Duration(max(testTiming.sleepFW, testTiming.sleepDS) + max(testTiming.wakeFW, testTiming.wakeDS))
			led := Ledger{On: true, Rate: 0.05, Reserve: c, Start: t0}
			set := func(l Ledger) {
				if err := p.SetLedger(l); err != nil {
					t.Fatal(err)
				}
				ref.setLedger(l)
			}
			set(led)
			rng := rand.New(rand.NewPCG(11, uint64(mode)))
			now := uint64(t0)
			var held uint64
			for i := range 4000 {
				switch i {
				case 1500:
					led.Rate = 0.2
					set(led)
				case 2500: // a new start: the account restarts
					led.Start = time.Duration(now)
					led.Rate = 0.02
					set(led)
				}
				var gap uint64
				switch rng.IntN(6) {
				case 0:
					gap = 0
				case 1:
					gap = pdt + rng.Uint64N(200) // just past the timer: a miss without the ledger
				default:
					gap = rng.Uint64N(30_000)
				}
				now = max(now, ref.freeAt+gap)
				end := ref.send(now, 0, 100, 1, mode, pdt)
				_, out := runEmu(t, p, now, 100, 1, 0)
				want := uint64(0)
				if end > now {
					want = end
				}
				if out != want {
					t.Fatalf("packet %d (gap %d): tstamp %d, want %d", i, gap, out, want)
				}
				budget := mulQ32(now-uint64(led.Start), rateQ32(led.Rate))
				if ref.spent > budget+uint64(c) {
					t.Fatalf("packet %d: spent %d > budget %d + reserve %d", i, ref.spent, budget, c)
				}
			}
			held = ref.ledHeld
			var st bpf.EeeemuEmuState
			if err := p.readState(&st); err != nil {
				t.Fatal(err)
			}
			if st.LedgerSpentNs != ref.spent || st.LedgerHeld != ref.ledHeld || st.LedgerOverruns != ref.ledOverrun ||
				st.LedgerStartNs != uint64(led.Start) || st.TimeNs != ref.times || st.Misses != ref.misses || st.Hits != ref.hits {
				t.Fatalf("state\n%+v\nwant\n%+v", st, *ref)
			}
			if held == 0 || ref.misses == 0 {
				t.Errorf("held %d, misses %d: the ledger never held or never allowed", held, ref.misses)
			}
			if ref.ledOverrun != 0 {
				t.Errorf("%d overruns with a reserve that covers every miss", ref.ledOverrun)
			}
			checkEvents(t, obs, ref.events)
			s, err := p.Status(time.Duration(now))
			if err != nil {
				t.Fatal(err)
			}
			if s.Ledger.Spent != time.Duration(ref.spent) || s.Ledger.Held != held || !s.Ledger.On || s.Ledger.Reserve != c {
				t.Errorf("status ledger %+v, want spent %d held %d", s.Ledger, ref.spent, held)
			}
			t.Logf("%s: %d idle periods, %d misses, %d held; spent %v, budget %v, reserve %v", mode, ref.idle, ref.misses, held,
				s.Ledger.Spent, s.Ledger.Budget, c)
		})
	}
}

// TestLedgerSpan checks the integer arithmetic the program and the model
// share against its definition: the least span whose budget reaches need.
func TestLedgerSpan(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 10000 {
		rate := 1 + rng.Uint64N(q32One)
		need := rng.Uint64N(1 << 40)
		s := ledgerSpan(need, rate)
		if mulQ32(s, rate) < need || (s > 0 && mulQ32(s-1, rate) >= need) {
			t.Fatalf("span(%d, %d) = %d: budget %d, one less %d", need, rate, s, mulQ32(s, rate), mulQ32(s-1, rate))
		}
	}
	if got := ledgerSpan(1<<62, 1); got != 1<<64-1 {
		t.Errorf("span beyond 2^63 ns = %d, want never", got)
	}
}
