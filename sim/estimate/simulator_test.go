package estimate_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lpictl/lpictl/sim/eee"
	"github.com/lpictl/lpictl/sim/estimate"
	"github.com/lpictl/lpictl/sim/network"
	"github.com/lpictl/lpictl/sim/power"
	"github.com/lpictl/lpictl/sim/scenario"
)

// TestAgreesWithSimulator runs `lpictl sim run`'s model in process (two
// nodes on one switch, node 0 sending to node 1 only, so node 0's NIC is
// the last to transmit on its link at every idle period and its peer never
// has traffic), then feeds the estimator node 0's NIC's exact idle periods
// from the simulator's port trace, with the simulator's preset, mode,
// predictor and controller, and compares that port's misses, wake-ups,
// low-power time and energy with ports.csv's.
//
// The simulator has a power-down handshake (a control message's
// serialisation plus the propagation); the estimator is given the same
// (Config.Handshake). The link runs at 8 Gb/s with 1-byte control messages
// and no propagation, so that every time is a whole number of ns (the
// estimator's API is time.Duration) and the handshake is exactly 1 ns.
func TestAgreesWithSimulator(t *testing.T) {
	dir := t.TempDir()
	vef := flowVEF(t, dir, 300)
	for _, c := range []struct{ mode, pred, pdt string }{
		{"deep-sleep", "perfboundcorrect", ""},
		{"fast-wake", "perfbound", ""},
		{"deep-sleep", "fixed", "2us"},
		{"fast-wake", "fixed", "500ns"},
	} {
		t.Run(c.mode+"/"+c.pred+c.pdt, func(t *testing.T) {
			pdt := ""
			if c.pdt != "" {
				pdt = ", pdt: " + c.pdt
			}
			doc := fmt.Sprintf("topology: {kind: fbfly, dims: [1], nodes_per_switch: 2}\n"+
				"network: {link_rate: 8e9, control_bytes: 1, propagation: 0s, speedup: 2}\n"+
				"power: {mode: %s}\npredictor: {kind: %s, bound: 0.05, histogram: {search: populated}%s}\nworkload: {kind: vef, file: %s}\noutput: {idle_hist_port: 0}\n",
				c.mode, c.pred, pdt, vef)
			s, err := scenario.Parse([]byte(doc), "flow.yaml", nil)
			if err != nil {
				t.Fatal(err)
			}
			o, err := scenario.Run(context.Background(), s, nil)
			if err != nil {
				t.Fatal(err)
			}
			p := o.Built.Params
			if h := network.Ser(int64(p.ControlBytes), p.RateBps) + p.Propagation; h != 1000 {
				t.Fatalf("handshake %d ps, want 1000", h)
			}
			var rows []network.TraceRow
			o.Net.TraceRows(func(r *network.TraceRow) { rows = append(rows, *r) })
			misses := 0
			for _, r := range rows {
				if r.Missed {
					misses++
				}
			}
			if len(rows) < 100 || misses == 0 || misses == len(rows) {
				t.Fatalf("%d idle periods, %d misses: the flow does not exercise both outcomes", len(rows), misses)
			}

			// The estimator reports no hop counts; every packet of this
			// flow travels 2 hops (NIC → switch → NIC), which the static
			// distribution gives PerfBound (the simulator reports them).
			pc := p.Predictor
			pc.Hops = map[int]float64{2: 1}
			e, err := estimate.New(estimate.Config{
				Preset: o.Built.Preset, Modes: []power.Mode{power.Mode(c.mode)},
				Policies:  []estimate.Policy{{Kind: estimate.Predictor}},
				Predictor: pc, Controller: s.Controller, Handshake: time.Nanosecond,
			})
			if err != nil {
				t.Fatal(err)
			}
			ns := func(ps int64) time.Duration {
				if ps%1000 != 0 {
					t.Fatalf("time %d ps is not a whole ns", ps)
				}
				return time.Duration(ps / 1000)
			}
			for _, r := range rows {
				e.Idle(ns(r.Start+r.Gap), ns(r.Gap))
			}
			// The run ends with the link idle since node 0's last
			// transmission: that idle period is in progress at the end.
			end := o.Net.Reached()
			link := o.Net.PortLink(0, end)
			e.IdleStart(ns(link.IdleFrom()))
			res := e.Results(ns(end))[0]

			var row network.PortRow
			o.Net.Ports(func(r *network.PortRow) {
				if r.Port == 0 {
					row = *r
				}
			})
			low := link.Times[eee.LowFastWake] + link.Times[eee.LowDeepSleep]
			if res.Misses != row.Misses || res.Hits != row.Hits || res.IdlePeriods != uint64(len(rows)) || res.Absorbed != 0 {
				t.Errorf("estimator %d hits / %d misses of %d (absorbed %d); simulator %d / %d of %d",
					res.Hits, res.Misses, res.IdlePeriods, res.Absorbed, row.Hits, row.Misses, len(rows))
			}
			if res.WakeUps != row.Wakeups {
				t.Errorf("wake-ups: estimator %d, simulator %d", res.WakeUps, row.Wakeups)
			}
			if res.LowPower != ns(low) {
				t.Errorf("low-power time: estimator %v, simulator %v", res.LowPower, ns(low))
			}
			var delay int64
			for _, r := range rows {
				delay += r.Delay
			}
			if res.AddedDelay != ns(delay) {
				t.Errorf("added delay: estimator %v, simulator %v", res.AddedDelay, ns(delay))
			}
			if math.Abs(res.EnergyJ-row.EnergyJ) > 1e-12*row.EnergyJ {
				t.Errorf("energy: estimator %.15g J, simulator (ports.csv) %.15g J", res.EnergyJ, row.EnergyJ)
			}
			if row.MeanPDTNs > 0 && !math.IsInf(row.MeanPDTNs, 1) && c.pdt != "" && res.MeanPDT != time.Duration(row.MeanPDTNs) {
				t.Errorf("mean t_PDT: estimator %v, simulator %v ns", res.MeanPDT, row.MeanPDTNs)
			}
		})
	}
}

// flowVEF writes a trace of msgs messages from node 0 to node 1, the
// first at time 0 (the simulator's links start idle at 0, the estimator's
// port busy: a first packet at the NIC latency, 100 ns, is before any
// t_PDT tested here, so that first period costs nothing), then with
// log-uniform gaps from 100 ns to 100 µs and even sizes of 64 B to 3 KB (64 ns
// to 3 µs at 8 Gb/s, 0.5 ns per byte through the crossbar at speed-up 2:
// whole ns; some queue behind a wake-up, some do not).
func flowVEF(t *testing.T, dir string, msgs int) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(17, 18))
	var b strings.Builder
	fmt.Fprintf(&b, "VEF 2 %d 1 0 0 TRUE\nC0 0 1\n", msgs)
	at := int64(0)
	for i := range msgs {
		if i > 0 {
			at += int64(100 * math.Pow(10, rng.Float64()*3))
		}
		fmt.Fprintf(&b, "%d 0 1 %d 0 %d -1\n", i, 64+2*rng.IntN(1500), at)
	}
	path := filepath.Join(dir, "flow.vef")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
