package hil

import (
	"bytes"
	"context"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lpictl/lpictl/controller/replay"
	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/power"
)

// A hand-made agent trace of one port: fixed t_PDT 100 µs, the emulated
// 1000BASE-T port ×10 (t_w 165 µs, t_s 1.82 ms), no handshake.
//
//	row 1: gap 50 µs < 100 µs: hit.
//	row 2: gap 200 µs: miss; going down from 100 µs until 1920 µs, so the
//	       packet waits 1920 − 200 + 165 = 1885 µs, nothing asleep.
//	row 3: gap 5 ms: miss; asleep 5000 − 1920 = 3080 µs, waits 165 µs.
const handTrace = `start_ps,gap_ps,pdt_ps,outcome,delay_ps,sent
0,50000000,100000000,hit,0,
60000000,200000000,100000000,miss,1885000000,
3000000000,5000000000,100000000,miss,165000000,
`

func fixedConfig(t *testing.T) *Config {
	t.Helper()
	c, err := Parse([]byte("predictors: [fixed]\npredictor: {pdt: 100us}\ntraffic: {flows: [{kind: probe}]}\n"), "hand.yaml", []string{"port.lpi=per-direction"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestReplayHandTrace(t *testing.T) {
	c := fixedConfig(t)
	rows, err := replay.ParseTrace(strings.NewReader(handTrace), "a0.port_trace.csv")
	if err != nil {
		t.Fatal(err)
	}
	pr, err := c.replayPort(predictor.KindFixed, "a0", rows, [2]replay.PS{}, replay.AgentPort{})
	if err != nil {
		t.Fatal(err)
	}
	want := PortReplay{Port: "a0", Rows: 3, IdlePeriods: 3, Hits: 1, Misses: 2, SpanS: 8e-3, AsleepS: 3080e-6, DelayS: 2050e-6,
		MeanPDTS: 100e-6, Decisions: 3, Matching: 3}
	if !closeReplay(pr, want) {
		t.Errorf("replay\n got %+v\nwant %+v", pr, want)
	}
	// Counted within the traffic phase only: [0, 1 ms) holds rows 1 and 2.
	pr, err = c.replayPort(predictor.KindFixed, "a0", rows, [2]replay.PS{0, 1e9}, replay.AgentPort{})
	if err != nil {
		t.Fatal(err)
	}
	if pr.IdlePeriods != 2 || pr.Hits != 1 || pr.Misses != 1 || pr.Decisions != 2 || pr.Matching != 2 {
		t.Errorf("window: %+v", pr)
	}
	// A trace whose agent decided otherwise is shown, not hidden.
	other := strings.Replace(handTrace, "0,50000000,100000000,hit", "0,50000000,40000000,miss", 1)
	rows, _ = replay.ParseTrace(strings.NewReader(other), "a0.port_trace.csv")
	pr, _ = c.replayPort(predictor.KindFixed, "a0", rows, [2]replay.PS{}, replay.AgentPort{})
	if pr.Decisions != 3 || pr.Matching != 2 {
		t.Errorf("disagreement: %+v", pr)
	}
	if n := pdtChanges(rows); n != 1 {
		t.Errorf("t_PDT changes %d, want 1", n)
	}
	// The predict configuration reproduces it through lpictl predict's
	// schema (checked by cmd/lpictl's test); here: it names the scaled
	// timing and no handshake.
	py, err := c.predictYAML(predictor.KindFixed, "a0")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"sleep_time: 1.82ms", `handshake: "0"`, "wake_time: 165µs", "kind: fixed", "recompute: interval"} {
		if !strings.Contains(string(py), s) {
			t.Errorf("predict.yaml lacks %q:\n%s", s, py)
		}
	}
}

func closeReplay(a, b PortReplay) bool {
	near := func(x, y float64) bool { return x-y < 1e-12 && y-x < 1e-12 }
	return a.Port == b.Port && a.Rows == b.Rows && a.IdlePeriods == b.IdlePeriods && a.Hits == b.Hits && a.Misses == b.Misses &&
		near(a.SpanS, b.SpanS) && near(a.AsleepS, b.AsleepS) && near(a.DelayS, b.DelayS) && near(a.MeanPDTS, b.MeanPDTS) &&
		a.Decisions == b.Decisions && a.Matching == b.Matching
}

// handVEF writes handMsgs as a VEF trace in a fresh directory: the
// directory (for the simulator's files) and the trace's path.
func handVEF(t *testing.T) (dir, vefPath string) {
	t.Helper()
	dir = t.TempDir()
	return dir, writeVEF(t, dir, handMsgs)
}

// writeVEF writes msgs as dir/t.vef and its mapping; the trace's path.
func writeVEF(t *testing.T, dir string, msgs []Msg) string {
	t.Helper()
	var b bytes.Buffer
	nodes, err := WriteVEF(&b, msgs)
	if err != nil {
		t.Fatal(err)
	}
	vefPath, err := simTrace{vef: b.Bytes(), nodes: nodes}.write(dir, "t")
	if err != nil {
		t.Fatal(err)
	}
	return vefPath
}

func TestSimulateLine(t *testing.T) {
	c := fixedConfig(t)
	dir, vefPath := handVEF(t)
	ctx := context.Background()
	base, err := c.simulate(ctx, dir, "base", predictor.KindFixed, power.AlwaysOn, vefPath, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	run, err := c.simulate(ctx, dir, "fixed", predictor.KindFixed, c.PowerMode(), vefPath, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("always-on %+v", base)
	t.Logf("fixed     %+v", run)
	if base.Messages != 6 || run.Messages != 6 || base.Misses != 0 || base.Predictor != "none" {
		t.Errorf("always-on: %+v", base)
	}
	// Always on, every idle period of the line's ports is a hit (the
	// network counts none without controllers).
	var idle uint64
	for _, p := range base.Ports {
		idle += p.IdlePeriods
	}
	if idle == 0 || base.Hits != idle {
		t.Errorf("always-on hits %d, want the ports' %d idle periods", base.Hits, idle)
	}
	// The 2 ms pause and the 10 µs/60 µs ones: the 100 µs timer expires
	// on both of the line's links at least once; energy is saved.
	if run.Misses == 0 || run.Wakeups == 0 || !(simSaving(&base, &run) > 0) || !(run.Latency.Mean > base.Latency.Mean) {
		t.Errorf("fixed 100µs: %+v", run)
	}
	pre, err := power.Load(filepath.Join(dir, "preset.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if pre.DeepSleep.WakeTime.D() != c.ScaledWake() || pre.DeepSleep.SleepTime.D() != c.ScaledSleep() || pre.Name != "eee-1000base-t-x10" {
		t.Errorf("scaled preset %+v %+v", pre, pre.DeepSleep)
	}
}

// TestSimEnsemble: the sim column is the mean of sim.phases runs with the
// agents' rounds shifted by agent.interval / sim.phases; its ranges hold
// every run's figure and the mean lies within them. With one phase the
// ensemble is the single run at the measured phase. meanSim is checked
// by hand on two runs.
func TestSimEnsemble(t *testing.T) {
	c := fixedConfig(t)
	dir, vefPath := handVEF(t)
	ctx := context.Background()
	phases := map[string]PortPhase{"a0": {Lead: 3 * time.Millisecond}, "s1": {Lead: 3 * time.Millisecond},
		"b0": {Lead: 7 * time.Millisecond}, "s0": {Lead: 7 * time.Millisecond}}
	one := 1
	c.Sim.Phases = &one
	single, err := c.simEnsemble(ctx, dir, "one", predictor.KindFixed, vefPath, 5*time.Millisecond, phases)
	if err != nil {
		t.Fatal(err)
	}
	direct, err := c.simulate(ctx, dir, "direct", predictor.KindFixed, c.PowerMode(), vefPath, 5*time.Millisecond, phases)
	if err != nil {
		t.Fatal(err)
	}
	if single.Phases != 1 || !reflect.DeepEqual(single.Ports, direct.Ports) || single.Misses != direct.Misses {
		t.Errorf("one phase: %+v, want the single run %+v", single, direct)
	}
	four := 4
	c.Sim.Phases = &four
	ens, err := c.simEnsemble(ctx, dir, "four", predictor.KindFixed, vefPath, 5*time.Millisecond, phases)
	if err != nil {
		t.Fatal(err)
	}
	if ens.Phases != 4 || len(ens.Ports) != len(simPorts) {
		t.Fatalf("four phases: %+v", ens)
	}
	for _, p := range ens.Ports {
		if p.MissesMin > p.Misses || p.Misses > p.MissesMax || p.SleepShareMin > p.SleepShare || p.SleepShare > p.SleepShareMax {
			t.Errorf("%s: mean outside its range: %+v", p.Port, p)
		}
	}

	runs := []SimResult{
		{Misses: 3, Hits: 10, SleepShare: 0.2, Latency: Dist{Mean: 1, Max: 5}, Ports: []SimPort{{Port: "a0", IdlePeriods: 10, Misses: 3, SleepShare: 0.2, DelayS: 1}}},
		{Misses: 4, Hits: 10, SleepShare: 0.4, Latency: Dist{Mean: 3, Max: 4}, Ports: []SimPort{{Port: "a0", IdlePeriods: 11, Misses: 4, SleepShare: 0.4, DelayS: 3}}},
	}
	m := meanSim(runs)
	p := m.Ports[0]
	if m.Phases != 2 || m.Misses != 4 || m.Hits != 10 || math.Abs(m.SleepShare-0.3) > 1e-12 || m.Latency.Mean != 2 || m.Latency.Max != 5 ||
		p.IdlePeriods != 11 || p.Misses != 4 || p.MissesMin != 3 || p.MissesMax != 4 ||
		math.Abs(p.SleepShare-0.3) > 1e-12 || p.SleepShareMin != 0.2 || p.SleepShareMax != 0.4 || p.DelayS != 2 {
		t.Errorf("meanSim: %+v %+v", m, p)
	}
	if runs[0].Ports[0].Misses != 3 {
		t.Error("meanSim changed its input")
	}
}

func TestCompareRows(t *testing.T) {
	base := &RunReport{Latency: Dist{Mean: 40e-6, P99: 100e-6}}
	run := &RunReport{IdlePeriods: 100, Hits: 90, Misses: 10, Wakeups: 10, LowPowerShare: 0.5, DelayTotalS: 2e-3, SavingPct: 40,
		Latency: Dist{Mean: 60e-6, P99: 300e-6}}
	rep := []PortReplay{{Rows: 60, IdlePeriods: 60, Hits: 55, Misses: 5, SpanS: 1, AsleepS: 0.4, DelayS: 1e-3, Decisions: 60, Matching: 54},
		{Rows: 40, IdlePeriods: 40, Hits: 36, Misses: 4, SpanS: 1, AsleepS: 0.6, DelayS: 0.5e-3, Decisions: 40, Matching: 40}}
	sb := &SimResult{Latency: Dist{Mean: 2e-6, P99: 3e-6}, LinkEnergyJ: 10, ExecTimeS: 1}
	sp := &SimResult{Latency: Dist{Mean: 22e-6, P99: 200e-6}, LinkEnergyJ: 6.6, ExecTimeS: 1.1, Hits: 80, Misses: 12, Wakeups: 12, SleepShare: 0.45}
	rows := compareRows(run, base, rep, sb, sp)
	got := map[string]Row{}
	for _, r := range rows {
		got[r.Metric] = r
	}
	check := func(metric string, measured, predict, sim *float64) {
		t.Helper()
		r, ok := got[metric]
		if !ok {
			t.Errorf("no row %q", metric)
			return
		}
		eq := func(a, b *float64) bool {
			if a == nil || b == nil {
				return a == b
			}
			return *a-*b < 1e-9 && *b-*a < 1e-9
		}
		if !eq(r.Measured, measured) || !eq(r.Predict, predict) || !eq(r.Sim, sim) {
			t.Errorf("%s: %v %v %v", metric, deref(r.Measured), deref(r.Predict), deref(r.Sim))
		}
		if !eq(r.PredictDif, diff(predict, measured)) || !eq(r.SimDiff, diff(sim, measured)) {
			t.Errorf("%s: differences %v %v", metric, deref(r.PredictDif), deref(r.SimDiff))
		}
	}
	check("idle periods", fp(100), fp(100), fp(92))
	check("misses", fp(10), fp(9), fp(12))
	check("sleep share", fp(50), fp(50), fp(45))
	check("wake-up delay, total", fp(2), fp(1.5), nil)
	check("link energy saving", fp(40), nil, fp(40))
	check("latency added, mean", fp(20), nil, fp(20))
	check("latency added, p99", fp(200), nil, fp(197))
	check("latency overhead, mean", fp(50), nil, fp(1000))
	check("decisions agreeing with the agent's", nil, fp(94), nil)
	// Without a simulator run, its column is empty.
	for _, r := range compareRows(run, base, nil, nil, nil) {
		if r.Sim != nil || r.Predict != nil || r.SimDiff != nil {
			t.Errorf("%s: %+v", r.Metric, r)
		}
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestPortPhases: each port's lead is t0 − its agent's opened_ns, its
// idle the time since the start of the trace row spanning t0 (none when t0
// falls between rows); the network's lead is the median.
func TestPortPhases(t *testing.T) {
	const ms = replay.PS(1e9)
	t0 := 1000 * ms
	opened := map[string]replay.PS{"a0": 600 * ms, "s1": 650 * ms, "b0": 700 * ms, "s0": 0}
	traces := map[string][]replay.TraceRow{
		"a0": {{Start: 500 * ms, Gap: 501 * ms}, {Start: 1002 * ms, Gap: 3 * ms}},
		"s1": {{Start: 400 * ms, Gap: 100 * ms}, {Start: 560 * ms, Gap: 445 * ms}},
		"b0": {{Start: 900 * ms, Gap: 50 * ms}, {Start: 1001 * ms, Gap: 5 * ms}},
	}
	got := portPhases(opened, traces, t0)
	want := map[string]PortPhase{
		"a0": {Lead: 400 * time.Millisecond, Idle: 500 * time.Millisecond},
		"s1": {Lead: 350 * time.Millisecond, Idle: 440 * time.Millisecond},
		"b0": {Lead: 300 * time.Millisecond},
		"s0": {},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("portPhases = %+v, want %+v", got, want)
	}
	if l := agentLead(opened, t0); l != 350*time.Millisecond {
		t.Errorf("agentLead = %v, want the median 350ms", l)
	}
}

// TestSimulateBlockingSends: two datagrams of one sender 20 µs apart after
// 4 ms of silence, a0 and s1 asleep (t_PDT 100 µs; t_s 1.82 ms, t_w
// 165 µs scaled). Queued, the second leaves right behind the first: one
// busy period of a0 and s1, one miss each, a0's wait t_w. Held until the
// first is delivered (the spin delay's senders: a send returns when the
// packet has crossed s1), it leaves ~330 µs after the first, when a0 has
// been idle longer than its t_PDT and is going down again: one more idle
// period and one more miss on a0 and s1, and a0's second wait is the rest
// of its t_s plus t_w (1920 µs, 2084 µs in all).
func TestSimulateBlockingSends(t *testing.T) {
	msgs := []Msg{
		{Src: 0, Dst: 1, Sender: 1, Bytes: 106, At: 1000 * us, ReplyTo: -1},
		// b answers the first (a probe: its responder is a task of its
		// own on b that waits for the request), on b0 and s0 only.
		{Src: 1, Dst: 0, Sender: 1, Bytes: 106, At: 1010 * us, ReplyTo: 0, Delay: 5 * us},
		{Src: 0, Dst: 1, Sender: 1, Bytes: 106, At: 5000 * us, ReplyTo: -1},
		{Src: 0, Dst: 1, Sender: 1, Bytes: 106, At: 5020 * us, ReplyTo: -1},
	}
	got := map[bool]map[string]SimPort{}
	for _, blocking := range []bool{false, true} {
		c := fixedConfig(t)
		c.blockingSends = blocking
		dir := t.TempDir()
		vefPath := writeVEF(t, dir, msgs)
		r, err := c.simulate(context.Background(), dir, "fixed", predictor.KindFixed, c.PowerMode(), vefPath, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Messages != uint64(len(msgs)) {
			t.Errorf("blocking %v: %d messages simulated, want %d", blocking, r.Messages, len(msgs))
		}
		got[blocking] = map[string]SimPort{}
		for _, p := range r.Ports {
			got[blocking][p.Port] = p
			t.Logf("blocking %v: %s: %d idle periods, %d misses, delay %.1f µs", blocking, p.Port, p.IdlePeriods, p.Misses, p.DelayS*1e6)
		}
	}
	for _, port := range []string{"a0", "s1"} {
		q, b := got[false][port], got[true][port]
		if q.IdlePeriods != 1 || q.Misses != 1 || b.IdlePeriods != 2 || b.Misses != 2 {
			t.Errorf("%s: queued %d idle periods, %d misses; held %d, %d: want 1, 1 and 2, 2",
				port, q.IdlePeriods, q.Misses, b.IdlePeriods, b.Misses)
		}
	}
	if d := got[false]["a0"].DelayS * 1e6; math.Abs(d-165) > 1 {
		t.Errorf("queued: a0 waits %.1f µs, want t_w 165 µs", d)
	}
	if d := got[true]["a0"].DelayS * 1e6; math.Abs(d-2084) > 2 {
		t.Errorf("held: a0 waits %.1f µs, want 165 µs + the rest of t_s and t_w (2084 µs)", d)
	}
}
