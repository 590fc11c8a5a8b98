package replay

import (
	"testing"
	"time"

	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/predictor"
)

// fixedPDT is an agent's controller with a fixed t_PDT at bound (the
// ledger's rate), no ledger of its own.
func fixedPDT(t *testing.T, pdt time.Duration, bound float64) *controller.Port {
	t.Helper()
	d := predictor.Duration(pdt)
	pred, err := predictor.New(predictor.Config{Kind: predictor.KindFixed, PDT: &d, Bound: bound, WakeTime: predictor.Duration(10 * time.Microsecond)})
	if err != nil {
		t.Fatal(err)
	}
	p, err := controller.NewPort(controller.Config{Recompute: controller.OnInterval, Interval: predictor.Duration(time.Millisecond), Ledger: controller.LedgerOff}, pred, 0)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// linkTiming: t_w 10 µs, t_s 20 µs, H 1 µs.
var linkTiming = Timing{Wake: 10 * time.Microsecond, Sleep: 20 * time.Microsecond, Handshake: 1e6}

const usPS PS = 1e6 // 1 µs

// row is an idle period from start for gap (µs), decided 100 µs.
func linkRow(start, gap PS) TraceRow {
	return TraceRow{Start: start * usPS, Gap: gap * usPS, PDT: 100 * usPS}
}

func replayLink(t *testing.T, ends [2]AgentLinkEnd) ([2][]Step, [2]Result) {
	t.Helper()
	steps, res, err := ReplayAgentLink(linkTiming, ends)
	if err != nil {
		t.Fatal(err)
	}
	for k := range ends {
		if len(steps[k]) != len(ends[k].Rows) || res[k].IdlePeriods != uint64(len(ends[k].Rows)) {
			t.Fatalf("end %d: %d steps, %d idle periods for %d rows", k, len(steps[k]), res[k].IdlePeriods, len(ends[k].Rows))
		}
	}
	return steps, res
}

func fixedEnd(t *testing.T, pdt time.Duration, rows ...TraceRow) AgentLinkEnd {
	return AgentLinkEnd{Port: fixedPDT(t, pdt, 0.5), Rows: rows}
}

// One end busy keeps the link awake for the other (t_PDT 100 µs on both):
//
//	end 0 idle from 0 to 500 µs: alone it would sleep from 120 µs;
//	end 1 idle 0–50, busy 50–300, idle 300–350, busy 350–450, idle from
//	450: the link's idle periods start at 0, 300 and 450 (end 1 departed
//	last, it owns the timer) and each ends before 100 µs: all hits.
func TestReplayAgentLinkBusyPeerKeepsAwake(t *testing.T) {
	e0 := []TraceRow{linkRow(0, 500)}
	e1 := []TraceRow{linkRow(0, 50), linkRow(300, 50), linkRow(450, 100)}
	steps, res := replayLink(t, [2]AgentLinkEnd{fixedEnd(t, 100*time.Microsecond, e0...), fixedEnd(t, 100*time.Microsecond, e1...)})
	checkSteps(t, steps[0], []stepWant{{}})
	checkSteps(t, steps[1][:2], []stepWant{{}, {}})
	if res[0].Misses != 0 || res[0].Asleep != 0 {
		t.Errorf("end 0: %+v", res[0])
	}
	// Alone (per direction) end 0 sleeps 380 µs.
	alone, _, err := ReplayAgentPort(fixedPDT(t, 100*time.Microsecond, 0.5), agentTiming, e0, AgentPort{})
	if err != nil {
		t.Fatal(err)
	}
	checkSteps(t, alone, []stepWant{{true, 380 * usPS, 10 * usPS}})
	// End 1's last packet (at 550 µs) finds the link idle since end 0's
	// departure at 500 µs: end 0 owns it, expiry at 600 µs: a hit.
	if s := steps[1][2]; s.Missed {
		t.Errorf("end 1 row 3: %+v", s)
	}
}

// Both ends idle: one sleep, counted by both; the packet on either end
// wakes the link, the other end's packet during the wake-up waits.
//
//	end 0 idle 0–300 µs, end 1 idle 10–305 µs: the link is idle from 10
//	µs, owned by end 1, expires at 110 µs, goes down at 112 µs (2H), is
//	low at 132 µs. End 0's packet at 300 µs (≥ expiry + H) wakes it: 168
//	µs asleep, waits t_w (ready at 310 µs); end 1's packet at 305 µs waits
//	5 µs. Both count the 168 µs.
func TestReplayAgentLinkSharedSleep(t *testing.T) {
	pdt := 100 * time.Microsecond
	steps, res := replayLink(t, [2]AgentLinkEnd{fixedEnd(t, pdt, linkRow(0, 300)), fixedEnd(t, pdt, linkRow(10, 295))})
	checkSteps(t, steps[0], []stepWant{{true, 168 * usPS, 10 * usPS}})
	checkSteps(t, steps[1], []stepWant{{true, 168 * usPS, 5 * usPS}})
	if res[0].Asleep != res[1].Asleep || res[0].Misses != 1 || res[1].Misses != 1 {
		t.Errorf("results %+v %+v", res[0], res[1])
	}
	// End 1's packet after the wake-up (at 320 µs) does not wait: end 0
	// left at 310 µs, the link's new idle period (end 0's) expires at 410.
	steps, _ = replayLink(t, [2]AgentLinkEnd{fixedEnd(t, pdt, linkRow(0, 300)), fixedEnd(t, pdt, linkRow(10, 310))})
	checkSteps(t, steps[1], []stepWant{{false, 168 * usPS, 0}})
	// The other way round: end 1 wakes it (at 290 µs, the owner), end 0's
	// packet at 295 µs waits until 300 µs.
	steps, _ = replayLink(t, [2]AgentLinkEnd{fixedEnd(t, pdt, linkRow(0, 295)), fixedEnd(t, pdt, linkRow(10, 280))})
	checkSteps(t, steps[1], []stepWant{{true, 158 * usPS, 10 * usPS}})
	checkSteps(t, steps[0], []stepWant{{true, 158 * usPS, 5 * usPS}})
}

// The owner's t_PDT decides (end 0 100 µs, end 1 300 µs):
//
//	end 0 idle 0–250, busy to 260, idle 260–660; end 1 idle 20–520.
//	From 20 µs end 1 owns the link: expiry 320 µs, after end 0's packet
//	at 250 µs (its own 100 µs would have expired at 120): a hit. From 260
//	µs end 0 owns it: expiry 360, down 362, low 382; end 1's packet at
//	520 wakes it (138 µs asleep, t_w; ready 530). From 530 end 1 owns it
//	again: expiry 830, after end 0's packet at 660: a hit, with the 138
//	µs of its idle period.
func TestReplayAgentLinkOwnerDecides(t *testing.T) {
	steps, _ := replayLink(t, [2]AgentLinkEnd{
		fixedEnd(t, 100*time.Microsecond, linkRow(0, 250), linkRow(260, 400)),
		fixedEnd(t, 300*time.Microsecond, linkRow(20, 500)),
	})
	checkSteps(t, steps[0], []stepWant{{}, {false, 138 * usPS, 0}})
	checkSteps(t, steps[1], []stepWant{{true, 138 * usPS, 10 * usPS}})
}

// The handshake: the owner's packet at the expiry finds the link
// committed (it waits 2H + t_s + t_w), the other end's only from expiry +
// H.
func TestReplayAgentLinkHandshake(t *testing.T) {
	pdt := 100 * time.Microsecond
	// End 1 owns the link from 10 µs: expiry 110 µs.
	steps, _ := replayLink(t, [2]AgentLinkEnd{fixedEnd(t, pdt, linkRow(0, 500)), fixedEnd(t, pdt, linkRow(10, 100))})
	checkSteps(t, steps[1], []stepWant{{true, 0, 32 * usPS}})
	for _, c := range []struct {
		gap    PS
		missed bool
		delay  PS
	}{{110*usPS - 1, false, 0}, {110 * usPS, false, 0}, {111*usPS - 1, false, 0}, {111 * usPS, true, 31 * usPS}} {
		e0 := []TraceRow{{Start: 0, Gap: c.gap}}
		steps, _ := replayLink(t, [2]AgentLinkEnd{fixedEnd(t, pdt, e0...), fixedEnd(t, pdt, linkRow(10, 500))})
		if s := steps[0][0]; s.Missed != c.missed || s.Delay != c.delay {
			t.Errorf("end 0's packet at %d ps: missed %v delay %d, want %v %d", c.gap, s.Missed, s.Delay, c.missed, c.delay)
		}
	}
}

// A ledger holds the link for both ends (end 0's: l = 1/16, c = 30 µs
// from 0, allowing from 480 µs; end 1 has none):
//
//	end 0 idle 0–5 µs (a hit), busy to 6, idle 6–600 µs; end 1 idle
//	10–410 µs, then no more packets. The link's timer (end 1's) expires
//	at 110 µs, held by end 0's ledger until 480 µs: end 1's packet at 410
//	µs is a hit. From 410 µs end 1 owns the link: expiry 510 µs, the
//	ledger allows it; end 0's packet at 600 µs finds it low since 532 µs.
//
// An end's ledger counts from its first packet (the program reads it
// there): without end 0's first row, end 1's packet finds the link
// asleep.
func TestReplayAgentLinkLedger(t *testing.T) {
	pdt := 100 * time.Microsecond
	led := AgentPort{Ledger: &PortLedger{Reserve: 30 * time.Microsecond}}
	e0 := AgentLinkEnd{Port: fixedPDT(t, pdt, 1.0/16), Rows: []TraceRow{linkRow(0, 5), linkRow(6, 594)}, Agent: led}
	steps, res := replayLink(t, [2]AgentLinkEnd{e0, fixedEnd(t, pdt, linkRow(10, 400))})
	checkSteps(t, steps[1], []stepWant{{}})
	checkSteps(t, steps[0], []stepWant{{}, {true, 68 * usPS, 10 * usPS}})
	if res[1].Misses != 0 || res[0].Delay != 10*usPS {
		t.Errorf("results %+v %+v", res[0], res[1])
	}
	// Without it, end 1 (the owner) finds the link asleep since 132 µs.
	for _, e := range []AgentLinkEnd{
		{Port: fixedPDT(t, pdt, 1.0/16), Rows: e0.Rows},
		{Port: fixedPDT(t, pdt, 1.0/16), Rows: []TraceRow{linkRow(0, 600)}, Agent: led},
	} {
		steps, _ = replayLink(t, [2]AgentLinkEnd{e, fixedEnd(t, pdt, linkRow(10, 400))})
		checkSteps(t, steps[1], []stepWant{{true, 278 * usPS, 10 * usPS}})
	}
}

// Each end's agent writes its own timer at its own rounds: end 0's agent
// (rounds every 1 ms from 0, initial 1 ms) has not written 100 µs yet
// when it owns the link; end 1's (no rounds) arms its decision at once.
func TestReplayAgentLinkRounds(t *testing.T) {
	pdt := 100 * time.Microsecond
	e0 := AgentLinkEnd{Port: fixedPDT(t, pdt, 0.5), Rows: []TraceRow{linkRow(10, 700)},
		Agent: AgentPort{Interval: time.Millisecond, Initial: time.Millisecond}}
	steps, _ := replayLink(t, [2]AgentLinkEnd{e0, fixedEnd(t, pdt, linkRow(0, 600))})
	checkSteps(t, steps[1], []stepWant{{}}) // end 0 owns: expiry 1010 µs
	// end 0's own packet at 710 µs: end 1 left at 600 µs and owns the
	// link with 100 µs: expiry 700, end 0 (not the owner) from 701 µs:
	// down at 702, low at 722 µs; it waits 12 µs and t_w.
	checkSteps(t, steps[0], []stepWant{{true, 0, 22 * usPS}})
	if steps[0][0].PDT != pdt {
		t.Errorf("end 0's decision %v", steps[0][0].PDT)
	}
	// Bad rows are refused, naming the end.
	bad := AgentLinkEnd{Port: fixedPDT(t, pdt, 0.5), Rows: []TraceRow{{Start: 10, Gap: 10}, {Start: 5, Gap: 10}}}
	if _, _, err := ReplayAgentLink(linkTiming, [2]AgentLinkEnd{fixedEnd(t, pdt), bad}); err == nil {
		t.Error("overlapping rows accepted")
	}
}

// TraceOutcomes: the controllers learn the trace's outcomes (here every
// row a hit) where the ports ran their decisions, not the replay's (the
// shared sleep above: both misses); the replay's figures are the same.
func TestReplayAgentLinkTraceOutcomes(t *testing.T) {
	pdt := 100 * time.Microsecond
	for _, fromTrace := range []bool{false, true} {
		e0, e1 := fixedEnd(t, pdt, linkRow(0, 300)), fixedEnd(t, pdt, linkRow(10, 295))
		e0.TraceOutcomes, e1.TraceOutcomes = fromTrace, fromTrace
		_, res := replayLink(t, [2]AgentLinkEnd{e0, e1})
		for k, r := range res {
			learned := uint64(1)
			if fromTrace {
				learned = 0
			}
			if r.Misses != 1 || r.Port.Misses != learned {
				t.Errorf("trace outcomes %v, end %d: %d misses, the controller learned %d, want 1 and %d", fromTrace, k, r.Misses, r.Port.Misses, learned)
			}
		}
	}
}
