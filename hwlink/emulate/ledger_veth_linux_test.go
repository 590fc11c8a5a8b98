package emulate

import (
	"testing"
	"time"

	"github.com/lpictl/lpictl/hwlink/hwlinktest"
	"github.com/lpictl/lpictl/hwlink/observe"
)

// TestEmulatorLedgerVeth (privileged: its own network namespaces and veth
// pair, real eBPF) drives both ends of an emulated Deep Sleep link with
// request/response probes spaced just past the timer, so that without a
// ledger every probe and every echo pays a wake-up: 150 µs a probe, 8 to
// 15 % of the time (the spin delay method, without fq, stretches the
// spacing) against a bound of 2 %. With the ledger on, each port's spent delay stays
// within its budget l·T plus the reserve c (t_s + t_w); with it off, the
// same traffic spends well beyond. 250 probes, 1 ms apart, per run.
func TestEmulatorLedgerVeth(t *testing.T) {
	hwlinktest.RequireBPF(t)
	pair := hwlinktest.NewPair(t)
	bpffs := tempBPFFS(t)
	const (
		n    = 250
		rate = 0.02
	)
	spacing := time.Millisecond
	pdt := 100 * time.Microsecond
	delay := delayMethods(t, pair, bpffs)[0]
	for _, on := range []bool{true, false} {
		name := map[bool]string{true: "ledger-on", false: "ledger-off"}[on]
		t.Run(name, func(t *testing.T) {
			a, b := attachBoth(t, pair, bpffs, Config{Preset: testPreset100, Mode: ModeDeepSleep, PDT: &pdt, Scale: 5, Delay: delay})
			defer detachAll(t, a, b)
			st, err := a.Status(observe.MonotonicNow())
			if err != nil {
				t.Fatal(err)
			}
			c := st.MissCost() // t_s + t_w, scaled: 650 µs
			start := observe.MonotonicNow()
			for _, p := range []*Port{a, b} {
				if err := p.SetLedger(Ledger{On: on, Rate: rate, Reserve: c, Start: start}); err != nil {
					t.Fatal(err)
				}
			}
			ab, ba := echoProbes(t, pair, n, spacing)
			if len(ab) < n/2 || len(ba) < n/2 {
				t.Fatalf("%d probes and %d echoes of %d arrived", len(ab), len(ba), n)
			}
			for _, p := range []*Port{a, b} {
				s, err := p.Status(observe.MonotonicNow())
				if err != nil {
					t.Fatal(err)
				}
				l := s.Ledger
				t.Logf("%s %s: %d idle periods, %d misses, %d held; spent %v, budget %v (l = %g over %v), reserve %v, ratio %.2f",
					name, p.Interface(), s.IdlePeriods, s.Misses, l.Held, l.Spent, l.Budget, rate,
					(s.Now - start).Round(time.Millisecond), l.Reserve, l.Ratio())
				switch {
				case on && l.Spent > l.Budget+l.Reserve:
					t.Errorf("%s: spent %v > budget %v + reserve %v", p.Interface(), l.Spent, l.Budget, l.Reserve)
				case on && (l.Held == 0 || s.Misses == 0):
					t.Errorf("%s: %d held, %d misses: the ledger never held or never allowed", p.Interface(), l.Held, s.Misses)
				case !on && l.Spent <= l.Budget+l.Reserve:
					t.Errorf("%s: without the ledger spent %v, not above budget %v + reserve %v: the traffic does not overspend",
						p.Interface(), l.Spent, l.Budget, l.Reserve)
				case !on && l.Held != 0:
					t.Errorf("%s: %d held with the ledger off", p.Interface(), l.Held)
				}
			}
		})
	}
}
