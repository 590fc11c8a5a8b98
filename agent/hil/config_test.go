package hil

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lpictl/lpictl/hwlink/emulate"
	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/power"
)

func TestShippedConfigs(t *testing.T) {
	c, err := Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Source() != "configs/hil/quick.yaml" || c.Name != "quick" {
		t.Errorf("default: %s %s", c.Source(), c.Name)
	}
	if got := c.ScaledWake(); got != 165*time.Microsecond {
		t.Errorf("scaled t_w %v", got)
	}
	if got := c.ScaledSleep(); got != 1820*time.Microsecond {
		t.Errorf("scaled t_s %v", got)
	}
	if c.Predictor.WakeTime.D() != 165*time.Microsecond {
		t.Errorf("predictor wake_time %v, want the scaled t_w", c.Predictor.WakeTime)
	}
	if c.RateBps() != 1e9 || c.SimRateBps() != 1e9 {
		t.Errorf("rate %d %v", c.RateBps(), c.SimRateBps())
	}
	files, err := filepath.Glob("../../configs/hil/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no configs/hil/*.yaml: %v", err)
	}
	for _, f := range files {
		if _, err := Load(f, nil); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestConfigDefaults(t *testing.T) {
	c, err := Parse([]byte("traffic: {flows: [{kind: probe}]}\n"), "x.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "x" || c.Seed != 1 || c.Port.Preset != DefaultPreset || c.Port.Mode != "deep-sleep" || c.Port.Scale != 10 ||
		c.Port.Delay != "auto" || c.Port.Driver != "st_gmac" || c.Port.InitialPDT.D() != time.Millisecond {
		t.Errorf("port defaults: %+v", c.Port)
	}
	if len(c.Predictors) != 1 || c.Predictors[0] != predictor.KindPerfBoundCorrect {
		t.Errorf("predictors %v", c.Predictors)
	}
	f := c.Traffic.Flows[0]
	if f.From != "a" || f.Duration.D() != DefaultDuration || f.Interval.D() != 2*time.Millisecond || f.Spacing != "exponential" || f.Size != 64 {
		t.Errorf("probe defaults %+v", f)
	}
	if *c.Agent.Warmup != 0 || *c.Agent.Hysteresis != 0 || c.Agent.Interval.D() != DefaultInterval || !*c.Sim.Enabled || c.Sim.MTU != 1500 {
		t.Errorf("agent/sim defaults %+v %+v", c.Agent, c.Sim)
	}
	pc := c.PredictorFor(predictor.KindPerfBound)
	if pc.Kind != predictor.KindPerfBound || pc.Bound != predictor.DefaultBound {
		t.Errorf("predictor %+v", pc)
	}
	// --set overrides, as sim run's.
	c, err = Parse([]byte("traffic: {flows: [{kind: probe}]}\n"), "x.yaml",
		[]string{"predictors=[fixed, perfbound]", "predictor.pdt=200us", "traffic.duration=2s", "port.rate=none"})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Predictors) != 2 || c.PredictorFor(predictor.KindFixed).PDT.D() != 200*time.Microsecond ||
		c.Traffic.Duration.D() != 2*time.Second || c.RateBps() != 0 || c.SimRateBps() != 1e9 {
		t.Errorf("overrides: %+v", c)
	}
}

func TestConfigErrors(t *testing.T) {
	flows := "traffic: {flows: [{kind: probe}]}\n"
	for _, tc := range []struct {
		text string
		sets []string
		want string
	}{
		{"bogus: 1\n" + flows, nil, `bad.yaml: line 1: unknown key "bogus"`},
		{flows, []string{"port.bogus=1"}, `bad.yaml: --set port.bogus: unknown key "port.bogus"`},
		{"port: {preset: nope}\n" + flows, nil, "bad.yaml: port.preset: unknown power preset"},
		{"port: {mode: fast-wake}\n" + flows, nil, "bad.yaml: port.mode: preset eee-1000base-t has no state for mode fast-wake"},
		{"port: {mode: always-on}\n" + flows, nil, "bad.yaml: port.mode: always-on never sleeps"},
		{"port: {scale: -1}\n" + flows, nil, "bad.yaml: port.scale: must be in (0, 1000]"},
		{"port: {delay: fast}\n" + flows, nil, "bad.yaml: port.delay: unknown delay method"},
		{"port: {rate: fast}\n" + flows, nil, `bad.yaml: port.rate: invalid rate "fast"`},
		{"port: {driver: e1001}\n" + flows, nil, `bad.yaml: port.driver: "e1001" is not in`},
		{"agent: {interval: 10us}\n" + flows, nil, "bad.yaml: agent.interval: must be in [1ms, 10s]"},
		{"agent: {log_level: loud}\n" + flows, nil, "bad.yaml: agent.log_level: unknown level"},
		{"agent: {hysteresis: 1}\n" + flows, nil, "bad.yaml: agent.hysteresis: must be a fraction in [0, 1)"},
		{"agent: {hysteresis: -0.1}\n" + flows, nil, "bad.yaml: agent.hysteresis: must be a fraction in [0, 1)"},
		{"predictor: {kind: fixed}\n" + flows, nil, "bad.yaml: predictor.kind: comes from predictors"},
		{"predictors: [nope]\n" + flows, nil, "bad.yaml: predictors[0] nope: predictor.kind: unknown predictor"},
		{"predictors: [perfbound, perfbound]\n" + flows, nil, "bad.yaml: predictors[1]: perfbound is listed twice"},
		{"predictors: [fixed]\n" + flows, nil, "bad.yaml: predictors[0]: fixed needs predictor.pdt"},
		{"predictor: {bound: 2}\n" + flows, nil, "bad.yaml: predictors[0] perfboundcorrect: predictor.bound: must be in (0, 1]"},
		{"traffic: {duration: 2m, flows: [{kind: probe}]}\n", nil, "bad.yaml: traffic.duration: must be ≤ 1m0s"},
		{"traffic: {flows: []}\n", nil, "bad.yaml: traffic.flows: want at least one flow"},
		{"traffic: {flows: [{kind: poisson}]}\n", nil, "bad.yaml: traffic.flows: want a probe flow"},
		{"traffic: {flows: [{kind: probe}, {kind: ping}]}\n", nil, `bad.yaml: traffic.flows[1].kind: unknown flow kind "ping"`},
		{"traffic: {flows: [{kind: probe, rate: 5}]}\n", nil, "bad.yaml: traffic.flows[0].rate: not used by kind probe"},
		{"traffic: {flows: [{kind: probe, from: c}]}\n", nil, `bad.yaml: traffic.flows[0].from: want a or b`},
		{"traffic: {flows: [{kind: probe, interval: 10us}]}\n", nil, "bad.yaml: traffic.flows[0].interval: must be ≥ 100µs"},
		{"traffic: {flows: [{kind: probe, size: 8}]}\n", nil, "bad.yaml: traffic.flows[0].size: UDP payload must be in 32..1472"},
		{"traffic: {duration: 2s, flows: [{kind: probe, start: 3s}]}\n", nil, "bad.yaml: traffic.flows[0].start: must be before the end"},
		{"traffic: {duration: 2s, flows: [{kind: probe, start: 1s, duration: 2s}]}\n", nil, "bad.yaml: traffic.flows[0].duration: start + duration must be ≤"},
		{"traffic: {flows: [{kind: probe}, {kind: tcp, bytes: 4294967296}]}\n", nil, "bad.yaml: traffic.flows[1].bytes: must be in 1..1073741824"},
		{"traffic: {duration: 60s, flows: [{kind: probe}, {kind: poisson, rate: 50000}]}\n", nil, "bad.yaml: traffic.flows[1]: about 3000000 datagrams"},
		{"traffic: {flows: [{kind: probe, count: -1}]}\n", nil, "bad.yaml: traffic.flows[0].count: must be in 0..200000"},
		{"sim: {mtu: 10}\n" + flows, nil, "bad.yaml: sim.mtu: must be in 64..65536"},
		{"sim: {phases: 0}\n" + flows, nil, "bad.yaml: sim.phases: must be in 1..64 simulations, got 0"},
		{flows, []string{"sim.phases=65"}, "bad.yaml: sim.phases: must be in 1..64 simulations, got 65"},
		{flows, []string{"sim.path_latency=soon"}, `bad.yaml: sim.path_latency: want measured or a duration in [0, 10ms], got "soon"`},
		{flows, []string{"sim.path_latency=20ms"}, `bad.yaml: sim.path_latency: want measured or a duration in [0, 10ms], got "20ms"`},
		{"seed: 1.5\n" + flows, nil, "bad.yaml: line 1: seed: want an integer"},
	} {
		_, err := Parse([]byte(tc.text), "bad.yaml", tc.sets)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q %v: got %v, want %q", tc.text, tc.sets, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("error on more than one line: %q", err)
		}
	}
}

func TestExpectedPackets(t *testing.T) {
	for _, tc := range []struct {
		f    Flow
		want int
	}{
		{Flow{Kind: KindProbe, Duration: predictor.Duration(time.Second), Interval: predictor.Duration(2 * time.Millisecond)}, 1000},
		{Flow{Kind: KindProbe, Duration: predictor.Duration(time.Second), Interval: predictor.Duration(2 * time.Millisecond), Count: 10}, 20},
		{Flow{Kind: KindPoisson, Duration: predictor.Duration(2 * time.Second), Rate: 300}, 600},
		{Flow{Kind: KindOnOff, Duration: predictor.Duration(time.Second), Interval: predictor.Duration(100 * time.Microsecond),
			OnTime: predictor.Duration(2 * time.Millisecond), OffTime: predictor.Duration(18 * time.Millisecond)}, 1000},
		{Flow{Kind: KindTCP, Duration: predictor.Duration(time.Second)}, 0},
	} {
		if got := tc.f.ExpectedPackets(); got != tc.want {
			t.Errorf("%+v: %d, want %d", tc.f, got, tc.want)
		}
	}
}

func TestParseRate(t *testing.T) {
	for s, want := range map[string]uint64{"1G": 1e9, "100M": 1e8, "2.5Gbit/s": 2.5e9, "none": 0, "0": 0, "preset": 1e9, "10e9": 1e10} {
		got, err := emulate.ParseRate(s, 1e9)
		if err != nil || got != want {
			t.Errorf("%s: %d %v, want %d", s, got, err, want)
		}
	}
	if _, err := emulate.ParseRate("fast", 1e9); err == nil {
		t.Error("fast accepted")
	}
}

// TestSimPathLatency: measured by default (resolved by Run), a duration
// taken as given; the simulated NIC and switch each take half, at least
// the scenario's 100 ns.
func TestSimPathLatency(t *testing.T) {
	c, err := Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Sim.PathLatency != PathLatencyMeasured || c.pathLatency != 0 {
		t.Errorf("default %q %v", c.Sim.PathLatency, c.pathLatency)
	}
	if n := c.simNetwork(); n["nic_latency"] != "100ns" || n["switch_latency"] != "100ns" {
		t.Errorf("unresolved: %v", n)
	}
	c, err = Load("", []string{"sim.path_latency=40us"})
	if err != nil {
		t.Fatal(err)
	}
	if n := c.simNetwork(); c.pathLatency != 40*time.Microsecond || n["nic_latency"] != "20µs" || n["switch_latency"] != "20µs" {
		t.Errorf("40us: %v %v", c.pathLatency, n)
	}
	// The simulated packets take it: an always-on packet's one-way
	// latency is the path's plus its serialisation at each hop.
	dir := t.TempDir()
	vefPath := writeVEF(t, dir, []Msg{{Src: 0, Dst: 1, Sender: 1, Bytes: 106, At: 10 * us, ReplyTo: -1}})
	r, err := c.simulate(context.Background(), dir, "base", predictor.KindFixed, power.AlwaysOn, vefPath, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Latency.Mean < 41.5e-6 || r.Latency.Mean > 42e-6 {
		t.Errorf("always-on latency %v s, want 40 µs plus two serialisations of 106 B at 1 Gb/s (1.7 µs)", r.Latency.Mean)
	}
}
