package emulate

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/controller/replay"
	"github.com/lpictl/lpictl/predictor"
)

// TestReplayAgentLinkMatchesModel cross-checks controller/replay's joint
// replay of a link's two traces (ReplayAgentLink, what lpictl hil run's
// predict column runs per link) against the link mode's Go model
// (refLink): random traffic on both ends of a link, each end with its own
// fixed t_PDT armed at once and, in some runs, its own ledger; the ends'
// exported idle periods, as the agents' traces give them, replayed
// jointly must give every idle period's outcome and wait, and the link's
// low time, as the model had them.
func TestReplayAgentLinkMatchesModel(t *testing.T) {
	const (
		t0  = 1000 // ns
		hs  = 1000 // ns
		q16 = 1 << 16
	)
	var allHeld uint64
	tm := emuTiming{sleepFW: 20000, wakeFW: 10000, sleepDS: 40000, wakeDS: 30000, hold: 150000}
	for seed := range uint64(24) {
		rng := rand.New(rand.NewPCG(seed, 7))
		mode := ModeFastWake
		if seed%3 == 2 {
			mode = ModeHybrid
		}
		var cfg [2]refEndCfg
		var ledger [2]bool
		for e := range cfg {
			cfg[e] = refEndCfg{epoch: t0, mode: mode, pdt: uint64(20000 + rng.IntN(200000)), hold: tm.hold}
			if ledger[e] = seed%2 == 1 && rng.IntN(3) > 0; ledger[e] {
				cfg[e].led = Ledger{On: true, Rate: 1.0 / 16, Reserve: 30 * time.Microsecond, Start: t0}
			}
		}
		r := newRefLink(tm, q16, hs, t0, 0, cfg[0], mode)
		now := uint64(t0)
		for range 3000 {
			// Bursts, alternation and long silences on both ends.
			switch k := rng.IntN(10); {
			case k < 4:
				now += 1 + uint64(rng.IntN(3000))
			case k < 8:
				now += 1 + uint64(rng.IntN(250000))
			default:
				now += 1 + uint64(rng.IntN(800000))
			}
			e := rng.IntN(2)
			r.send(e, cfg[e], now, uint32(64+rng.IntN(1437)), 1)
		}
		// A last packet on each end: the replay does not know when an
		// end's last busy stretch ends (its trace stops at the packet that
		// began it); the link's idle periods before these are all known.
		now += 1000000
		r.send(0, cfg[0], now, 64, 1)
		r.send(1, cfg[1], now+1, 64, 1)

		var ends [2]replay.AgentLinkEnd
		for e := range ends {
			pdt := predictor.Duration(cfg[e].pdt)
			pred, err := predictor.New(predictor.Config{Kind: predictor.KindFixed, PDT: &pdt, Bound: 1.0 / 16,
				WakeTime: predictor.Duration(10 * time.Microsecond)})
			if err != nil {
				t.Fatal(err)
			}
			port, err := controller.NewPort(controller.Config{Recompute: controller.OnInterval,
				Interval: predictor.Duration(time.Millisecond), Ledger: controller.LedgerOff}, pred, 0)
			if err != nil {
				t.Fatal(err)
			}
			ends[e].Port = port
			if ledger[e] {
				ends[e].Agent.Ledger = &replay.PortLedger{Reserve: cfg[e].led.Reserve, Start: replay.PS(cfg[e].led.Start) * 1000}
			}
			for _, ev := range r.end[e].events {
				ends[e].Rows = append(ends[e].Rows, replay.TraceRow{Start: replay.PS(ev.End-ev.Length) * 1000,
					Gap: replay.PS(ev.Length) * 1000, PDT: replay.PS(ev.PDT) * 1000, Missed: ev.Missed, Delay: replay.PS(ev.Delay) * 1000})
			}
		}
		timing := replay.Timing{Wake: time.Duration(tm.wakeFW), Sleep: time.Duration(tm.sleepFW), Handshake: hs * 1000}
		if mode == ModeHybrid {
			timing.DeepWake, timing.Hold = time.Duration(tm.wakeDS), time.Duration(tm.hold)
		}
		steps, res, err := replay.ReplayAgentLink(timing, ends)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		var misses, held uint64
		for e := range ends {
			evs := r.end[e].events
			if len(steps[e]) != len(evs) {
				t.Fatalf("seed %d end %d: %d steps for %d idle periods", seed, e, len(steps[e]), len(evs))
			}
			bad := 0
			for i, ev := range evs {
				st := steps[e][i]
				if ev.Held {
					held++
				}
				if st.Missed != ev.Missed || st.Delay != replay.PS(ev.Delay)*1000 {
					if bad++; bad <= 3 {
						t.Errorf("seed %d (%v) end %d idle period %d (%v from %v): replay missed %v wait %v, model %v %v (held %v)",
							seed, mode, e, i+1, ev.Length, ev.End-ev.Length, st.Missed, st.Delay.D(), ev.Missed, ev.Delay, ev.Held)
					}
				}
			}
			misses += res[e].Misses
		}
		low := replay.PS(r.times[StateFastWake]+r.times[StateDeepSleep]) * 1000
		if got := max(res[0].Asleep, res[1].Asleep); got != low {
			t.Errorf("seed %d: the link low %v, the replay %v (ends %v, %v)", seed, low.D(), got.D(), res[0].Asleep.D(), res[1].Asleep.D())
		}
		if deep := replay.PS(r.times[StateDeepSleep]) * 1000; max(res[0].DeepAsleep, res[1].DeepAsleep) != deep {
			t.Errorf("seed %d: deep sleep %v, the replay %v", seed, deep.D(), max(res[0].DeepAsleep, res[1].DeepAsleep).D())
		}
		if misses == 0 || r.wakeups == 0 {
			t.Errorf("seed %d: no misses (%d wake-ups): the traffic does not test the link", seed, r.wakeups)
		}
		allHeld += held
	}
	if allHeld == 0 {
		t.Error("no idle period held by a ledger: the traffic does not test the ledgers")
	}
}
