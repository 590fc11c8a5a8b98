package network

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/lpictl/lpictl/sim/eee"
)

// Regression tests of the trust round: each checks a figure against a hand
// calculation, not against the simulator's own earlier output.

// TestZeroLengthIdlePeriodsNotCounted: a 20 000 B message from node 0 to
// node 3 crosses the line as three packets. Each switch port receives
// packet k+1 exactly when packet k's last bit leaves it (store and forward
// at equal rates), so its output queue refills in the picosecond it
// emptied: back-to-back, no idle period (docs/model.md §1.1). The NIC's idle
// period after its third packet never ends. So no port has an idle
// period, a hit or a miss, and no link wakes up but for the first packet.
func TestZeroLengthIdlePeriodsNotCounted(t *testing.T) {
	for _, pdt := range []time.Duration{0, 10 * time.Microsecond} {
		n := build(t, line{}, table6(eee.DeepSleep, pdt))
		if err := n.TracePort(PortID(n.swBase[0] + 2)); err != nil { // switch 0 → switch 1
			t.Fatal(err)
		}
		n.Inject(0, 0, 3, 20000)
		r := run(t, n)
		if r.Hits != 0 || r.Misses != 0 {
			t.Errorf("t_PDT %v: %d hits, %d misses; want none (every gap is 0 ps)", pdt, r.Hits, r.Misses)
		}
		for c, h := range n.idle {
			if h.n != 0 {
				t.Errorf("t_PDT %v: class %s: %d idle periods recorded (min %d ps)", pdt, n.classes[c], h.n, h.min)
			}
		}
		rows := 0
		n.TraceRows(func(*TraceRow) { rows++ })
		if rows != 0 {
			t.Errorf("t_PDT %v: port trace has %d rows, want 0", pdt, rows)
		}
		// Every link starts idle: with t_PDT 0 the three links on the path
		// are asleep when the first packet comes and wake once each.
		if want := uint64(0); pdt != 0 && r.Wakeups != want {
			t.Errorf("t_PDT %v: %d wake-ups, want %d", pdt, r.Wakeups, want)
		}
		if want := uint64(3); pdt == 0 && r.Wakeups != want {
			t.Errorf("t_PDT 0: %d wake-ups, want %d (one per link on the path)", r.Wakeups, want)
		}
	}
}

// TestIdlePeriodEqualToPDTIsMiss: the timer expires at t_PDT (docs/model.md §1.1),
// so a packet exactly t_PDT after the queue emptied finds the link
// committed to going down; one a picosecond earlier is a hit.
func TestIdlePeriodEqualToPDTIsMiss(t *testing.T) {
	const pdt = 1 * us
	gap := func(g int64) (missed bool, delay int64) {
		n := build(t, line{}, table6(eee.DeepSleep, time.Duration(pdt/1000)))
		// Two one-packet messages: the second enters NIC 0's queue g after
		// the first's last bit left (NIC latency 100 ns, serialisation 192 ns).
		n.Inject(0, 0, 1, 9600)
		n.Inject(192*ns+g, 0, 1, 9600)
		if err := n.TracePort(0); err != nil {
			t.Fatal(err)
		}
		run(t, n)
		var rows []TraceRow
		n.TraceRows(func(r *TraceRow) { rows = append(rows, *r) })
		if len(rows) != 1 || rows[0].Gap != g || rows[0].PDT != pdt {
			t.Fatalf("gap %d ps: trace %+v, want one idle period of %d ps with t_PDT %d ps", g, rows, g, pdt)
		}
		return rows[0].Missed, rows[0].Delay
	}
	if missed, delay := gap(pdt - 1); missed || delay != 0 {
		t.Errorf("gap t_PDT−1 ps: missed %v, delay %d; want a hit", missed, delay)
	}
	missed, delay := gap(pdt)
	// Handshake H = 64 B × 20 ps + 10 ns = 11 280 ps; going down starts at
	// t_PDT + 2H and lasts t_s = 2 µs; then t_w = 4.48 µs.
	want := int64(2*11280 + 2*us + 4480*ns)
	if !missed || delay != want {
		t.Errorf("gap = t_PDT: missed %v, delay %d ps; want a miss waiting %d ps", missed, delay, want)
	}
}

// TestLinkStateFractionNoOverflow: state times summed over many links
// exceed int64 picoseconds on long, large runs (the Megafly-4160's 20 800
// links pass 2^63 ps after about 887 simulated seconds); the fractions
// must stay in [0, 1] and sum to 1.
func TestLinkStateFractionNoOverflow(t *testing.T) {
	n := build(t, line{}, table6(eee.DeepSleep, time.Microsecond))
	n.Inject(0, 0, 3, 9600)
	run(t, n)
	// 1000 simulated seconds on every link, 3/4 of it in Deep Sleep: the
	// five links' sum, 5 × 10^15 ps, fits; make it overflow by repeating
	// the links.
	const end = int64(1000e12)
	n.endTime = end
	n.links = append(n.links, make([]eee.Link, 20000-len(n.links))...)
	for i := range n.links {
		n.links[i].Times = [eee.NumStates]int64{eee.Wake: end / 4, eee.LowDeepSleep: end - end/4}
	}
	f := n.Result().LinkStateFraction
	if math.Abs(f.Wake-0.25) > 1e-12 || math.Abs(f.DeepSleep-0.75) > 1e-12 || f.Transition != 0 || f.FastWake != 0 {
		t.Errorf("fractions %+v, want wake 0.25, deep sleep 0.75", f)
	}
}

// TestPortsCSVPDTIntegers: t_PDT figures are whole nanoseconds and print
// as such (10 000 050, not 1e+07); a port that never sleeps prints +Inf.
func TestPortsCSVPDTIntegers(t *testing.T) {
	r := PortRow{Kind: "nic", Class: "nic", MeanPDTNs: 10000050, FinalPDTNs: 123456789012}
	if got := r.CSV(); !strings.HasSuffix(got, ",10000050,123456789012,0") {
		t.Errorf("CSV %q: want mean 10000050 and final 123456789012 written in full", got)
	}
	r.MeanPDTNs, r.FinalPDTNs = math.Inf(1), math.Inf(1)
	if got := r.CSV(); !strings.HasSuffix(got, ",+Inf,+Inf,0") {
		t.Errorf("CSV %q: want +Inf for a port that never sleeps", got)
	}
}

// TestLatencyPercentilesExact: single packets far apart all take the
// zero-load latency (3 hops × per hop), so p50 and p99 are exactly that —
// never a bucket's lower bound below the physical minimum.
func TestLatencyPercentilesExact(t *testing.T) {
	n := build(t, line{}, table6(eee.AlwaysOn, 0))
	for k := int64(0); k < 50; k++ {
		n.Inject(k*10*us, 0, 3, 9600)
	}
	r := run(t, n)
	want := float64(3*perHop) * 1e-12
	if l := r.LatencyS; l.P50 != want || l.P99 != want || l.PctRelError != 0 {
		t.Errorf("p50 %v, p99 %v (error %v); want exactly %v", l.P50, l.P99, l.PctRelError, want)
	}
}

// TestLatencyPercentilesBeyondCap: past latencyExactCap packets the
// percentiles are bucketed: within the stated error of the true order
// statistic and never below the smallest latency.
func TestLatencyPercentilesBeyondCap(t *testing.T) {
	n := &Network{latency: newLogHist()}
	const min0 = 906_000 // ps
	total := latencyExactCap + 1000
	for i := 0; i < total; i++ {
		n.latencyOf(min0 + int64(i%1000)*37)
	}
	l := n.latencySummary()
	if l.PctRelError == 0 || l.PctRelError > 0.016 {
		t.Fatalf("error %v, want the bucket width (≤ 1.6 %%)", l.PctRelError)
	}
	// The values are uniform over min0 + 37·{0…999}: p50 is min0 + 37·499.
	exact := float64(min0+37*499) * 1e-12
	if l.P50 < float64(min0)*1e-12 || math.Abs(l.P50-exact) > l.PctRelError*exact {
		t.Errorf("p50 %v, want %v within %v", l.P50, exact, l.PctRelError)
	}
}
