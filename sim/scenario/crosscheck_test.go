package scenario

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

	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/controller/replay"
	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/network"
	"github.com/lpictl/lpictl/sim/power"
)

// singleFlowVEF writes a trace of messages from node 0 to node dst only:
// node 0's NIC is then the last to transmit on its link at every idle
// period (nothing comes back), the case a one-port replay sees whole.
// Gaps and sizes spread over the ns–ms range so that the predictors
// change their minds.
func singleFlowVEF(t *testing.T, dir string, dst, msgs int) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(11, 12))
	var b strings.Builder
	fmt.Fprintf(&b, "VEF %d %d 1 0 0 TRUE\nC0", dst+1, msgs)
	for i := 0; i <= dst; i++ {
		fmt.Fprintf(&b, " %d", i)
	}
	b.WriteString("\n")
	at := int64(0)
	for i := 0; i < msgs; i++ {
		// Log-uniform gaps from 100 ns to 1 ms, sizes 64 B to 40 KB.
		at += int64(100 * math.Pow(10, rng.Float64()*4))
		fmt.Fprintf(&b, "%d 0 %d %d 0 %d -1\n", i, dst, 64+rng.IntN(40000), at)
	}
	path := filepath.Join(dir, "flow.vef")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPredictReplaysSimulatorDecisions: one port's exact gap sequence from
// the simulator (port_trace.csv) replayed through lpictl predict's replay,
// with the simulator's handshake, gives the same t_PDT and outcome at
// every idle period, and the same wait to the picosecond, for every
// predictor and low-power mode the replay models.
func TestPredictReplaysSimulatorDecisions(t *testing.T) {
	dir := t.TempDir()
	vef := singleFlowVEF(t, dir, 77, 400)
	for _, c := range []struct{ mode, pred string }{
		{"deep-sleep", "perfboundcorrect"},
		{"deep-sleep", "perfbound"},
		{"fast-wake", "perfboundcorrect"},
		{"deep-sleep", "fixed"},
		{"hybrid", "perfboundcorrect"}, // the hold chosen with t_PDT
		{"hybrid", "fixed"},            // power.hybrid_hold
	} {
		t.Run(c.mode+"/"+c.pred, func(t *testing.T) {
			doc := fmt.Sprintf("topology: {kind: megafly, groups: 17, leaves: 4, spines: 4, nodes_per_switch: 4, global_links: 4}\n"+
				"power: {mode: %s}\npredictor: {kind: %s, pdt: 2us, bound: 0.05}\nworkload: {kind: vef, file: %s}\noutput: {idle_hist_port: 0}\n",
				c.mode, c.pred, vef)
			s, err := Parse([]byte(doc), "flow.yaml", nil)
			if err != nil {
				t.Fatal(err)
			}
			if c.pred != "fixed" {
				s.Predictor.PDT = nil
			}
			o, err := Run(context.Background(), s, nil)
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, c.mode+"-"+c.pred)
			if err := o.WriteDir(out); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(filepath.Join(out, "port_trace.csv"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			rows, err := replay.ParseTrace(f, "port_trace.csv")
			if err != nil {
				t.Fatal(err)
			}
			// Messages closer than a transmission (plus a wake-up) queue
			// behind each other: fewer idle periods than messages.
			if len(rows) < 150 {
				t.Fatalf("%d idle periods traced for 400 messages", len(rows))
			}
			misses := 0
			for _, r := range rows {
				if r.Missed {
					misses++
				}
			}
			if misses == 0 || misses == len(rows) {
				t.Fatalf("%d misses of %d: the flow does not exercise both outcomes", misses, len(rows))
			}

			// The replay's port: the scenario's predictor and controller, t_w
			// and t_s of the mode from the preset, the simulator's handshake.
			pc := o.Built.Params.Predictor
			pred, err := predictor.New(pc)
			if err != nil {
				t.Fatal(err)
			}
			st, err := o.Built.Preset.State(power.Mode(s.Power.Mode))
			if err != nil {
				t.Fatal(err)
			}
			p := o.Built.Params
			h := network.Ser(int64(p.ControlBytes), p.RateBps) + p.Propagation
			timing := replay.Timing{Wake: st.WakeTime.D(), Sleep: st.SleepTime.D(), Handshake: replay.PS(h)}
			if s.Power.Mode == string(power.Hybrid) {
				timing.DeepWake = o.Built.Preset.DeepSleep.WakeTime.D()
				timing.Hold = time.Duration(p.EEE.HybridHold / 1000)
			}
			cc := s.Controller
			cc.MissCost = predictor.Duration(timing.Cycle()) // as lpictl predict fills it
			port, err := controller.NewPort(cc, pred, 0)
			if err != nil {
				t.Fatal(err)
			}
			steps, res, err := replay.ReplayTrace(port, timing, rows)
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range rows {
				got := steps[i]
				if got.PDTPS() != r.PDT || got.Missed != r.Missed || got.Delay != r.Delay {
					t.Fatalf("idle period %d (line %d): replay t_PDT %d ps, missed %v, delay %d ps; simulator %d ps, %v, %d ps",
						i+1, r.Line, got.PDTPS(), got.Missed, got.Delay, r.PDT, r.Missed, r.Delay)
				}
			}
			if timing.DeepWake > 0 {
				// Both hybrid outcomes occur: woken from Fast Wake and
				// from Deep Sleep.
				deep, fast := 0, 0
				for _, st := range steps {
					if st.Deep {
						deep++
					} else if st.Missed {
						fast++
					}
				}
				if deep == 0 || fast == 0 {
					t.Errorf("hybrid: %d wake-ups from Deep Sleep, %d from Fast Wake; want both", deep, fast)
				}
			}
			if a := res.Agreement; a == nil || a.Matching != uint64(len(rows)) || a.First != nil {
				t.Errorf("agreement %+v, want all %d", a, len(rows))
			}
			// The port's own counters agree too.
			var simHits, simMisses uint64
			o.Net.Ports(func(r *network.PortRow) {
				if r.Port == 0 {
					simHits, simMisses = r.Hits, r.Misses
				}
			})
			if res.Hits != simHits || res.Misses != simMisses {
				t.Errorf("replay %d hits / %d misses, simulator's ports.csv %d / %d", res.Hits, res.Misses, simHits, simMisses)
			}
		})
	}
}
