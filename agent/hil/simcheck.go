package hil

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/lpictl/lpictl/agent"
	"github.com/lpictl/lpictl/agent/hwbackend"
	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/controller/replay"
	"github.com/lpictl/lpictl/hwlink/eeectl"
	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/network"
	"github.com/lpictl/lpictl/sim/power"
	"github.com/lpictl/lpictl/sim/scenario"
)

// SimTopology is the simulated line: one switch with two nodes, i.e. two
// cables and four ports, as host a – switch s – host b.
var SimTopology = map[string]any{"kind": "fbfly", "dims": []int{1}, "nodes_per_switch": 2}

// portSpec is the predictor and controller configuration an agent gives
// a port of the line: the agent's own Config.Spec, with the emulated
// driver profile's register.
func (c *Config) portSpec(kind predictor.Kind, port string) agent.PortSpec {
	ac := agent.Config{
		Backend: agent.BackendHW, Interval: c.Agent.Interval, Predictor: c.PredictorAt(kind, roleOf(port)),
		Limits: agent.Limits{Hysteresis: c.Agent.Hysteresis, MinChangeInterval: c.Agent.MinChangeInterval},
	}.WithDefaults()
	caps, _ := eeectl.LookupDriver(c.Port.Driver)
	spec := ac.Spec(port, agent.Register{Unit: caps.Unit, Min: caps.Min, Max: caps.Max}, c.ScaledWake(), nil)
	// The agents give the delay ledger to the emulated ports, which apply
	// it per idle period, and run their controllers without one (agent
	// budget.go): so does the replay, which then reproduces the agents'
	// decisions but not the ports' holds.
	spec.Controller.Ledger = controller.LedgerOff
	return spec
}

// simSpec is the controller configuration of the simulator's ports: the
// agents' (portSpec), driven as the agents drive the emulated ports
// (controller.Rounds): the controller decides at the start of every idle
// period, the port arms what the agent wrote at its last round (every
// agent.interval from when it opened the port, ph.Lead before the
// traffic), the initial timer until then; the idle period the port had
// before the traffic (ph.Idle: from its attach) is observed at its first
// packet, as the agent observes it; and the delay ledger where the agents
// run one — the emulated ports apply it themselves, per idle period, at
// rate l and reserve c = the scaled t_s + t_w, plus 2H per link (MissCost),
// from the agent's first write with the budget counted from its start.
func (c *Config) simSpec(kind predictor.Kind, ph PortPhase) agent.PortSpec {
	spec := c.portSpec(kind, "sim")
	spec.Controller.Ledger = controller.LedgerAuto
	spec.Controller.MissCost = predictor.Duration(c.MissCost())
	initial := *c.Port.InitialPDT
	spec.Controller.Rounds = &controller.Rounds{Interval: c.Agent.Interval, Lead: predictor.Duration(max(ph.Lead, 0)),
		Initial: &initial, Idle: predictor.Duration(max(ph.Idle, 0))}
	return spec
}

// PortPhase is how an agent drove one emulated port relative to the
// traffic's start t0 (the simulation's time 0): Lead, how long before t0
// it opened the port (its rounds fall Lead before t0 + k × agent.interval);
// Idle, how long before t0 the idle period began that the port was in at
// t0 (from its attach, before any traffic: the agent observes it as a miss
// when the first packet comes), 0 if none spans t0.
type PortPhase struct {
	Lead, Idle time.Duration
}

// portPhases is each port's phase from its agent's trace: the header's
// opened_ns and the row spanning t0.
func portPhases(opened map[string]replay.PS, traces map[string][]replay.TraceRow, t0 replay.PS) map[string]PortPhase {
	out := map[string]PortPhase{}
	for port, o := range opened {
		var ph PortPhase
		if o > 0 && o <= t0 {
			ph.Lead = (t0 - o).D()
		}
		for _, r := range traces[port] {
			if r.Start >= t0 {
				break
			}
			if r.End() > t0 {
				ph.Idle = (t0 - r.Start).D()
			}
		}
		out[port] = ph
	}
	return out
}

// agentLead is how long before the traffic (t0, CLOCK_MONOTONIC ps) the
// agents opened the ports (their traces' headers, opened): the median
// over the ports, the simulated network's own configuration (each
// simulated port of the line has its own agent's, portPhases).
func agentLead(opened map[string]replay.PS, t0 replay.PS) time.Duration {
	var leads []time.Duration
	for _, o := range opened {
		if o > 0 && o <= t0 {
			leads = append(leads, (t0 - o).D())
		}
	}
	if len(leads) == 0 {
		return 0
	}
	slices.Sort(leads)
	return leads[len(leads)/2]
}

// MissCost is the emulated port's ledger reserve c: its scaled t_s plus
// the deepest scaled t_w of the mode (agent.PresetMissCost of the scaled
// preset), plus the handshake's round trip 2H per link (port.lpi per-link:
// emulate.Status.MissCost).
func (c *Config) MissCost() time.Duration {
	mc := agent.PresetMissCost(c.scaledPreset())
	if c.PortLPI() == power.PerLink {
		mc += 2 * hwbackend.LinkHandshake(c.SimRateBps())
	}
	return mc
}

// replayTiming is the emulated port's timing for controller/replay: the
// scaled t_w and t_s, and no handshake (the emulator has no peer); in
// hybrid mode, Deep Sleep's scaled t_w after the hold.
func (c *Config) replayTiming() replay.Timing {
	t := replay.Timing{Wake: c.ScaledWake(), Sleep: c.ScaledSleep(), Handshake: 0}
	if c.mode == power.Hybrid {
		t.DeepWake = time.Duration(math.Round(float64(c.preset.DeepSleep.WakeTime) * c.Port.Scale))
		t.Hold = c.Port.HybridHold.D()
	}
	return t
}

// PortReplay is one port's agent trace replayed through lpictl predict's
// replay (controller/replay) with the agent's predictor and controller
// configuration and the emulated port's timing.
type PortReplay struct {
	Port        string  `json:"port"`
	Rows        int     `json:"rows"`
	IdlePeriods uint64  `json:"idle_periods"`
	Hits        uint64  `json:"hits"`
	Misses      uint64  `json:"misses"`
	SpanS       float64 `json:"span_s"`     // first row's start to last row's end
	AsleepS     float64 `json:"asleep_s"`   // in the low-power state
	DelayS      float64 `json:"delay_s"`    // wake-up delay, total
	MeanPDTS    float64 `json:"mean_pdt_s"` // mean t_PDT over idle periods
	// Decisions and Matching: rows whose t_PDT and outcome the replay
	// reproduced.
	Decisions uint64 `json:"decisions"`
	Matching  uint64 `json:"matching"`
	// PortLedger says the replay modelled the port's own delay ledger.
	PortLedger bool `json:"port_ledger"`
	// TraceMisses and TraceDelayS are the trace's own outcome column over
	// the same idle periods: the port's misses, and the waits of the
	// packets that ended its idle periods (what the port's ledger
	// charges: the measured side of "wake-up delay").
	// PortOutcomes says the trace's outcome and delay columns are the
	// port's (an agent in enforce mode, as hil runs them).
	TraceMisses  uint64  `json:"trace_misses"`
	TraceDelayS  float64 `json:"trace_delay_s"`
	PortOutcomes bool    `json:"port_outcomes"`
}

// agentPortOf is how the agent drove port in a run (replay.AgentPort):
// rounds at the times its trace recorded them (rounds), or every
// agent.interval from when it opened the port (its trace's header; else
// the ledger's start, else the traffic's), the configured
// initial timer, and the ledger the port ran (its emulator's status: the
// agents program it at their first write, with the start they armed it).
func agentPortOf(c *Config, port string, opened replay.PS, rounds []replay.PS, run *RunReport) replay.AgentPort {
	ap := replay.AgentPort{Interval: c.Agent.Interval.D(), FirstRound: opened, Rounds: rounds, Initial: c.Port.InitialPDT.D()}
	for _, p := range run.Ports {
		if p.Port != port {
			continue
		}
		l := p.Status.Ledger
		if l.On && l.Rate > 0 {
			ap.Ledger = &replay.PortLedger{Reserve: l.Reserve, Start: replay.PS(l.Start) * 1000}
			if ap.FirstRound <= 0 {
				ap.FirstRound = ap.Ledger.Start
			}
		}
	}
	return ap
}

// traceOpened is when the agent opened the port of a trace it wrote (the
// header's "opened_ns", CLOCK_MONOTONIC), 0 if it says nothing.
func traceOpened(raw []byte) replay.PS {
	const key = `"opened_ns":`
	i := bytes.Index(raw, []byte(key))
	if i < 0 {
		return 0
	}
	rest := raw[i+len(key):]
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	v, err := strconv.ParseInt(string(rest[:j]), 10, 64)
	if err != nil || v <= 0 || v > math.MaxInt64/1000 {
		return 0
	}
	return replay.PS(v) * 1000
}

// replayPort replays one port's whole trace as the port ran it
// (replay.ReplayAgentPort with ap: the agent's decisions, written once
// per round, and the port's own ledger); the figures count the idle
// periods that start within window (CLOCK_MONOTONIC ps: the traffic
// phase), or every one if none does (a trace on another clock). It also
// sums the trace's own outcomes over the same rows: the port's misses and
// the waits of the packets that ended its idle periods.
func (c *Config) replayPort(kind predictor.Kind, port string, rows []replay.TraceRow, window [2]replay.PS, ap replay.AgentPort) (PortReplay, error) {
	pr := PortReplay{Port: port, Rows: len(rows)}
	if len(rows) == 0 {
		return pr, nil
	}
	spec := c.portSpec(kind, port)
	pred, err := predictor.New(spec.Predictor)
	if err != nil {
		return pr, err
	}
	ctl, err := controller.NewPort(spec.Controller, pred, ap.FirstRound.D())
	if err != nil {
		return pr, err
	}
	steps, _, err := replay.ReplayAgentPort(ctl, c.replayTiming(), rows, ap)
	if err != nil {
		return pr, fmt.Errorf("replay %s: %w", port, err)
	}
	return portReplayOf(port, rows, steps, window, ap), nil
}

// portReplayOf sums a port's replayed steps over the idle periods that
// start within window (every one if none does), with the trace's own
// outcomes over the same rows.
func portReplayOf(port string, rows []replay.TraceRow, steps []replay.Step, window [2]replay.PS, ap replay.AgentPort) PortReplay {
	pr := PortReplay{Port: port, Rows: len(rows), PortLedger: ap.Ledger != nil, PortOutcomes: true}
	in := func(i int) bool { return rows[i].Start >= window[0] && rows[i].Start < window[1] }
	inside := false
	for i := range rows {
		inside = inside || in(i)
	}
	if !inside {
		in = func(int) bool { return true }
	}
	var sumPDT float64
	first, last := -1, -1
	for i, st := range steps {
		if !in(i) {
			continue
		}
		if first < 0 {
			first = i
		}
		last = i
		pr.IdlePeriods++
		if st.Missed {
			pr.Misses++
		} else {
			pr.Hits++
		}
		if rows[i].Missed {
			pr.TraceMisses++
		}
		pr.TraceDelayS += float64(rows[i].Delay) * 1e-12
		pr.AsleepS += float64(st.Asleep) * 1e-12
		pr.DelayS += float64(st.Delay) * 1e-12
		sumPDT += st.PDT.Seconds()
		pr.Decisions++
		if st.PDTPS() == rows[i].PDT && st.Missed == rows[i].Missed {
			pr.Matching++
		}
	}
	if first >= 0 {
		pr.SpanS = float64(rows[last].End()-rows[first].Start) * 1e-12
		pr.MeanPDTS = sumPDT / float64(pr.IdlePeriods)
	}
	return pr
}

// linkTiming is the emulated link's timing for controller/replay
// (port.lpi per-link): replayTiming with the link's handshake H, the
// simulator's at the simulated rate, as the emulators run it.
func (c *Config) linkTiming() replay.Timing {
	t := c.replayTiming()
	t.Handshake, _ = replay.FromDuration(hwbackend.LinkHandshake(c.SimRateBps()))
	return t
}

// linkEnds are the line's cables (per link, one emulated link each): the
// two egress ports of each, in LinePorts order (a0 and s0, s1 and b0).
func linkEnds() [][2]string {
	var out [][2]string
	at := map[string]int{}
	for _, p := range LinePorts {
		name := cableName(p)
		if k, ok := at[name]; ok {
			out[k][1] = p.Dev
			continue
		}
		at[name] = len(out)
		out = append(out, [2]string{p.Dev, ""})
	}
	return out
}

// replayLink replays the two ends of one link jointly
// (replay.ReplayAgentLink: each end's trace as its agent and port ran
// it, the link's state shared, with the handshake), each end's figures
// as replayPort gives them. The controllers learn the traces' own
// outcomes (TraceOutcomes: what the agents fed theirs), so that the
// replayed decisions follow the agents' while the link's outcomes are
// the replay's.
func (c *Config) replayLink(kind predictor.Kind, ports [2]string, rows [2][]replay.TraceRow, window [2]replay.PS, aps [2]replay.AgentPort) ([2]PortReplay, error) {
	var out [2]PortReplay
	var ends [2]replay.AgentLinkEnd
	for k, port := range ports {
		out[k] = PortReplay{Port: port, Rows: len(rows[k])}
		spec := c.portSpec(kind, port)
		pred, err := predictor.New(spec.Predictor)
		if err != nil {
			return out, err
		}
		ctl, err := controller.NewPort(spec.Controller, pred, aps[k].FirstRound.D())
		if err != nil {
			return out, err
		}
		ends[k] = replay.AgentLinkEnd{Port: ctl, Rows: rows[k], Agent: aps[k], TraceOutcomes: true}
	}
	if len(rows[0]) == 0 || len(rows[1]) == 0 {
		return out, fmt.Errorf("replay link %s–%s: both ends' traces are needed (rows: %d, %d)", ports[0], ports[1], len(rows[0]), len(rows[1]))
	}
	steps, _, err := replay.ReplayAgentLink(c.linkTiming(), ends)
	if err != nil {
		return out, fmt.Errorf("replay link %s–%s: %w", ports[0], ports[1], err)
	}
	for k, port := range ports {
		out[k] = portReplayOf(port, rows[k], steps[k], window, aps[k])
	}
	return out, nil
}

// predictYAML is a configs/predict file with which `lpictl predict -c
// FILE TRACE` replays a port's trace as the report did.
func (c *Config) predictYAML(kind predictor.Kind, port string) ([]byte, error) {
	spec := c.portSpec(kind, port)
	doc := map[string]any{
		"preset":     c.Port.Preset,
		"mode":       c.Port.Mode,
		"sleep_time": c.ScaledSleep().String(),
		"handshake":  "0",
		"predictor":  spec.Predictor,
		"controller": spec.Controller,
	}
	head := fmt.Sprintf("# lpictl predict -c %s.predict.yaml %s.port_trace.csv   (--trace: every decision)\n"+
		"# the agent's predictor and controller for %s, the emulated port's scaled t_w and t_s (×%g), no handshake.\n",
		port, port, port, c.Port.Scale)
	b, err := yaml.Marshal(doc)
	return append([]byte(head), b...), err
}

// scaledPreset is the preset with t_w and t_s multiplied by the scale, as
// the emulator runs it.
func (c *Config) scaledPreset() *power.Preset {
	p := *c.preset
	k := c.Port.Scale
	sc := func(l *power.LowPower) *power.LowPower {
		if l == nil {
			return nil
		}
		v := *l
		v.WakeTime = predictor.Duration(math.Round(float64(l.WakeTime) * k))
		v.SleepTime = predictor.Duration(math.Round(float64(l.SleepTime) * k))
		return &v
	}
	p.FastWake, p.DeepSleep = sc(p.FastWake), sc(p.DeepSleep)
	if k != 1 {
		p.Name = fmt.Sprintf("%s-x%g", p.Name, k)
		p.Source = fmt.Sprintf("%s; t_w and t_s × %g (lpictl hil run)", p.Source, k)
	}
	return &p
}

// SimResult is the simulator's figures for one mode on a run's traffic.
type SimResult struct {
	Mode        string  `json:"mode"`
	Predictor   string  `json:"predictor"`
	ExecTimeS   float64 `json:"exec_time_s"`
	Messages    uint64  `json:"messages"`
	Packets     uint64  `json:"packets"`
	Latency     Dist    `json:"latency"` // every packet, one way (count: packets)
	LinkEnergyJ float64 `json:"link_energy_j"`
	SleepShare  float64 `json:"sleep_share"` // link time in Fast Wake or Deep Sleep
	Hits        uint64  `json:"hits"`
	Misses      uint64  `json:"misses"`
	Wakeups     uint64  `json:"wakeups"`
	// LPI is the symmetry the simulator ran (model §1.2).
	LPI string `json:"lpi"`
	// Phases is how many simulations the figures are the mean of
	// (simEnsemble; counts rounded), 1 for a single run.
	Phases int       `json:"phases"`
	Ports  []SimPort `json:"ports"`
}

// SimPort is one simulated port, named as the emulated port it stands for.
type SimPort struct {
	Port        string  `json:"port"`
	IdlePeriods uint64  `json:"idle_periods"`
	Misses      uint64  `json:"misses"`
	SleepShare  float64 `json:"sleep_share"` // of the port's time, Fast Wake or Deep Sleep (its direction's, per direction)
	DelayS      float64 `json:"delay_s"`     // the waits of the packets that ended its idle periods
	Saving      float64 `json:"energy_saving"`
	// The range over the ensemble's simulations (simEnsemble): how much
	// the agents' round phase alone moves the figures.
	MissesMin     uint64  `json:"misses_min"`
	MissesMax     uint64  `json:"misses_max"`
	SleepShareMin float64 `json:"sleep_share_min"`
	SleepShareMax float64 `json:"sleep_share_max"`
}

// simEnsemble runs the simulated line sim.phases times, each port's
// agent phase (phases, simSpec) shifted by k × agent.interval / sim.phases
// from the one measured, and gives the mean of the runs (counts rounded to
// the nearest whole number) with each port's range of misses and sleep
// share. Why: which idle periods a ledger-paced port sleeps is decided by
// when its agent's rounds fall relative to the traffic; the agents' ticks
// jitter and that phase is not reproducible, and on a few seconds of
// traffic it alone moves a port's misses and sleep share by ±10 % or more
// (docs/hil.md "What is compared"). The mean over the phases is the
// simulator's prediction; the range says how far one run may stray.
func (c *Config) simEnsemble(ctx context.Context, dir, name string, kind predictor.Kind, vefPath string, lead time.Duration, phases map[string]PortPhase) (SimResult, error) {
	n := *c.Sim.Phases
	runs := make([]SimResult, 0, n)
	for k := range n {
		shift := time.Duration(int64(c.Agent.Interval.D()) * int64(k) / int64(n))
		ph := make(map[string]PortPhase, len(phases))
		for port, p := range phases {
			p.Lead += shift
			ph[port] = p
		}
		r, err := c.simulate(ctx, dir, name, kind, c.mode, vefPath, lead+shift, ph)
		if err != nil {
			return SimResult{}, err
		}
		runs = append(runs, r)
	}
	return meanSim(runs), nil
}

// meanSim is the mean of runs of one scenario (same traffic and ports).
func meanSim(runs []SimResult) SimResult {
	out := runs[0]
	out.Phases = len(runs)
	out.Ports = slices.Clone(runs[0].Ports)
	n := float64(len(runs))
	avg := func(f func(*SimResult) float64) float64 {
		var t float64
		for i := range runs {
			t += f(&runs[i])
		}
		return t / n
	}
	count := func(f func(*SimResult) uint64) uint64 {
		return uint64(math.Round(avg(func(r *SimResult) float64 { return float64(f(r)) })))
	}
	out.ExecTimeS = avg(func(r *SimResult) float64 { return r.ExecTimeS })
	out.Latency.Mean = avg(func(r *SimResult) float64 { return r.Latency.Mean })
	out.Latency.P50 = avg(func(r *SimResult) float64 { return r.Latency.P50 })
	out.Latency.P99 = avg(func(r *SimResult) float64 { return r.Latency.P99 })
	for _, r := range runs {
		out.Latency.Max = max(out.Latency.Max, r.Latency.Max)
	}
	out.LinkEnergyJ = avg(func(r *SimResult) float64 { return r.LinkEnergyJ })
	out.SleepShare = avg(func(r *SimResult) float64 { return r.SleepShare })
	out.Hits = count(func(r *SimResult) uint64 { return r.Hits })
	out.Misses = count(func(r *SimResult) uint64 { return r.Misses })
	out.Wakeups = count(func(r *SimResult) uint64 { return r.Wakeups })
	for i := range out.Ports {
		p := &out.Ports[i]
		port := func(r *SimResult) *SimPort { return &r.Ports[i] }
		p.IdlePeriods = count(func(r *SimResult) uint64 { return port(r).IdlePeriods })
		p.Misses = count(func(r *SimResult) uint64 { return port(r).Misses })
		p.SleepShare = avg(func(r *SimResult) float64 { return port(r).SleepShare })
		p.DelayS = avg(func(r *SimResult) float64 { return port(r).DelayS })
		p.Saving = avg(func(r *SimResult) float64 { return port(r).Saving })
		p.MissesMin, p.MissesMax = p.Misses, p.Misses
		p.SleepShareMin, p.SleepShareMax = p.SleepShare, p.SleepShare
		for k := range runs {
			q := port(&runs[k])
			p.MissesMin, p.MissesMax = min(p.MissesMin, q.Misses), max(p.MissesMax, q.Misses)
			p.SleepShareMin, p.SleepShareMax = min(p.SleepShareMin, q.SleepShare), max(p.SleepShareMax, q.SleepShare)
		}
	}
	return out
}

// simPorts maps the line's emulated ports to the simulated line's
// (SimTopology: node 0 is host a, node 1 host b, switch 0's port j faces
// node j).
var simPorts = []struct{ port, sim string }{{"a0", "node0"}, {"s1", "sw0p1"}, {"b0", "node1"}, {"s0", "sw0p0"}}

// scenarioYAML is the simulated line running the VEF trace at vefPath
// with the preset file at presetPath, in mode, with kind's predictor and
// the agent's controller configuration.
func (c *Config) scenarioYAML(name string, kind predictor.Kind, mode power.Mode, presetPath, vefPath string, lead time.Duration) ([]byte, error) {
	spec := c.simSpec(kind, PortPhase{Lead: lead})
	// One task per sender (WriteVEF), placed by the mapping beside the
	// trace: a host's kernel and at most one sender per flow, so a host
	// holds at most 1 + flows tasks. Under the spin delay each sends one
	// message at a time.
	workload := map[string]any{"kind": "vef", "file": vefPath, "mapping": "file", "mapping_file": mapPath(vefPath),
		"ranks_per_node": 1 + len(c.Traffic.Flows)}
	if c.blockingSends {
		workload["blocking_sends"] = true
	}
	doc := map[string]any{
		"name":     name,
		"seed":     c.Seed,
		"topology": SimTopology,
		"network":  c.simNetwork(),
		"power": map[string]any{"preset": presetPath, "mode": string(mode), "hybrid_hold": c.Port.HybridHold.String(),
			"lpi": c.Sim.LPI},
		"predictor":  spec.Predictor,
		"controller": spec.Controller,
		"workload":   workload,
	}
	return yaml.Marshal(doc)
}

// simNetwork is the simulated line's network section: the link rate, the
// MTU, and the path latency (sim.path_latency) split evenly between the
// NIC and the switch, each at least the scenario's default 100 ns.
func (c *Config) simNetwork() map[string]any {
	half := max(c.pathLatency/2, 100*time.Nanosecond)
	return map[string]any{"link_rate": c.SimRateBps(), "mtu": c.Sim.MTU,
		"nic_latency": half.String(), "switch_latency": half.String()}
}

// simulate runs the simulated line on the trace in mode (always-on or the
// experiment's) with kind's predictor, each port driven in its agent's
// phase (phases, by emulated port; simSpec), the network's own
// configuration (and that of a port without a phase) in lead's. dir holds
// the preset and scenario files it writes.
func (c *Config) simulate(ctx context.Context, dir, name string, kind predictor.Kind, mode power.Mode, vefPath string, lead time.Duration, phases map[string]PortPhase) (SimResult, error) {
	presetPath := filepath.Join(dir, "preset.yaml")
	if _, err := os.Stat(presetPath); err != nil {
		b, err := yaml.Marshal(c.scaledPreset())
		if err != nil {
			return SimResult{}, err
		}
		if err := os.WriteFile(presetPath, b, 0o644); err != nil {
			return SimResult{}, err
		}
	}
	data, err := c.scenarioYAML(name, kind, mode, presetPath, vefPath, lead)
	if err != nil {
		return SimResult{}, err
	}
	scPath := filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(scPath, data, 0o644); err != nil {
		return SimResult{}, err
	}
	s, err := scenario.ParseResolved(data, scPath)
	if err != nil {
		return SimResult{}, err
	}
	b, err := s.Build()
	if err != nil {
		return SimResult{}, err
	}
	n, release, err := b.NewNetwork()
	if err != nil {
		return SimResult{}, err
	}
	defer release()
	// Watching a port changes nothing in the run (sim/network
	// external.go); it gives each idle period's wait.
	ids := make([]network.PortID, len(simPorts))
	for i, sp := range simPorts {
		ids[i], err = n.PortByName(sp.sim)
		if ph, ok := phases[sp.port]; ok && err == nil && mode != power.AlwaysOn {
			err = n.SetPortController(ids[i], c.simSpec(kind, ph).Controller)
		}
		if err == nil {
			err = n.Watch(ids[i])
		}
		if err != nil {
			return SimResult{}, err
		}
	}
	if err := n.Run(ctx, 1<<20, nil); err != nil {
		return SimResult{}, err
	}
	r := n.Result()
	pred := string(kind)
	if mode == power.AlwaysOn {
		pred = "none"
	}
	lat := r.LatencyS
	res := SimResult{
		Mode: string(mode), Predictor: pred, ExecTimeS: r.ExecTimeS, Messages: r.Messages, Packets: r.Packets,
		Latency:     Dist{Count: int(r.Packets), Mean: lat.Mean, P50: lat.P50, P99: lat.P99, Max: lat.Max},
		LinkEnergyJ: r.EnergyJ.Links, SleepShare: r.LinkStateFraction.FastWake + r.LinkStateFraction.DeepSleep,
		Hits: r.Hits, Misses: r.Misses, Wakeups: r.Wakeups, LPI: string(c.SimLPI()), Phases: 1, Ports: []SimPort{},
	}
	rows := map[int]network.PortRow{}
	n.Ports(func(row *network.PortRow) { rows[row.Port] = *row })
	var obs []network.IdleObservation
	for i, sp := range simPorts {
		p := SimPort{Port: sp.port}
		obs = obs[:0]
		for {
			k := len(obs)
			obs = append(obs, make([]network.IdleObservation, 1024)...)
			got := n.DrainIdle(ids[i], obs[k:])
			obs = obs[:k+got]
			if got < 1024 {
				break
			}
		}
		for _, o := range obs {
			p.IdlePeriods++
			if o.Missed {
				p.Misses++
			}
			p.DelayS += float64(o.Delay) * 1e-12
		}
		row := rows[int(ids[i])]
		var total float64
		for _, t := range row.StateS {
			total += t
		}
		if total > 0 {
			p.SleepShare = (row.StateS[2] + row.StateS[3]) / total
			if wake := b.Preset.WakePowerW; wake > 0 {
				p.Saving = 100 * (1 - row.EnergyJ/(wake*total))
			}
		}
		p.MissesMin, p.MissesMax = p.Misses, p.Misses
		p.SleepShareMin, p.SleepShareMax = p.SleepShare, p.SleepShare
		res.Ports = append(res.Ports, p)
		if mode == power.AlwaysOn {
			// Without controllers the network counts no hits; every idle
			// period of the line's four ports (all its ports) is one.
			res.Hits += p.IdlePeriods
		}
	}
	return res, nil
}

// Row is one line of the sim-to-real table: a figure measured on the
// emulated ports next to lpictl predict's replay of the agents' traces
// and the simulator's; nil where a source does not give it. The
// differences are predicted − measured.
type Row struct {
	Metric     string   `json:"metric"`
	Unit       string   `json:"unit"`
	Measured   *float64 `json:"measured"`
	Predict    *float64 `json:"predict"`
	Sim        *float64 `json:"sim"`
	PredictDif *float64 `json:"predict_diff"`
	SimDiff    *float64 `json:"sim_diff"`
}

func fp(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func diff(a, b *float64) *float64 {
	if a == nil || b == nil {
		return nil
	}
	return fp(*a - *b)
}

func newRow(metric, unit string, measured, predict, sim *float64) Row {
	return Row{Metric: metric, Unit: unit, Measured: measured, Predict: predict, Sim: sim,
		PredictDif: diff(predict, measured), SimDiff: diff(sim, measured)}
}

// SimToReal is the sim-to-real check of one predictor run.
type SimToReal struct {
	Run     string       `json:"run"`
	Replay  []PortReplay `json:"replay"`
	SimBase *SimResult   `json:"sim_always_on"`
	Sim     *SimResult   `json:"sim"`
	// SimError says why the simulator gave nothing ("" if it ran).
	SimError string `json:"sim_error"`
	Rows     []Row  `json:"rows"`
	// SimLPI is the symmetry the simulator ran; Ports the per-port
	// comparison with verdicts (compare.go), Unexplained its rows outside
	// the tolerance.
	SimLPI string `json:"sim_lpi"`
	// PredictNote says how the predict column was obtained where it is
	// not per port: per link, each cable's two ends replayed jointly
	// (predictNote).
	PredictNote string        `json:"predict_note,omitempty"`
	Ports       []PortCompare `json:"ports"`
	Unexplained []string      `json:"unexplained"`
}

func sumReplay(rs []PortReplay) (t PortReplay) {
	for _, r := range rs {
		t.Rows += r.Rows
		t.IdlePeriods += r.IdlePeriods
		t.Hits += r.Hits
		t.Misses += r.Misses
		t.SpanS += r.SpanS
		t.AsleepS += r.AsleepS
		t.DelayS += r.DelayS
		t.Decisions += r.Decisions
		t.Matching += r.Matching
	}
	return t
}

// compareRows builds the table from a run, its always-on baseline, the
// replay and the simulator's runs.
func compareRows(run, base *RunReport, rep []PortReplay, simBase, sim *SimResult) []Row {
	f := func(v float64) *float64 { return fp(v) }
	u := func(v uint64) *float64 { return fp(float64(v)) }
	none := (*float64)(nil)
	haveReplay := len(rep) > 0
	t := sumReplay(rep)
	pick := func(ok bool, v *float64) *float64 {
		if !ok {
			return nil
		}
		return v
	}
	hasSim := sim != nil && simBase != nil
	var simV = func(fn func() *float64) *float64 {
		if !hasSim {
			return nil
		}
		return fn()
	}
	us := 1e6
	rows := []Row{
		newRow("idle periods", "", u(run.IdlePeriods), pick(haveReplay, u(t.IdlePeriods)), simV(func() *float64 { return u(sim.Hits + sim.Misses) })),
		newRow("hits", "", u(run.Hits), pick(haveReplay, u(t.Hits)), simV(func() *float64 { return u(sim.Hits) })),
		newRow("misses", "", u(run.Misses), pick(haveReplay, u(t.Misses)), simV(func() *float64 { return u(sim.Misses) })),
		newRow("wake-ups", "", u(run.Wakeups), pick(haveReplay, u(t.Misses)), simV(func() *float64 { return u(sim.Wakeups) })),
		newRow("sleep share", "%", f(100*run.LowPowerShare), pick(haveReplay && t.SpanS > 0, f(100*t.AsleepS/t.SpanS)),
			simV(func() *float64 { return f(100 * sim.SleepShare) })),
		newRow("wake-up delay, total", "ms", f(1e3*run.DelayTotalS), pick(haveReplay, f(1e3*t.DelayS)), none),
		newRow("link energy saving", "%", f(run.SavingPct), none, simV(func() *float64 { return f(simSaving(simBase, sim)) })),
		newRow("latency added, mean", "µs", f(us*(run.Latency.Mean-base.Latency.Mean)), none,
			simV(func() *float64 { return f(us * (sim.Latency.Mean - simBase.Latency.Mean)) })),
		newRow("latency added, p99", "µs", f(us*(run.Latency.P99-base.Latency.P99)), none,
			simV(func() *float64 { return f(us * (sim.Latency.P99 - simBase.Latency.P99)) })),
		newRow("latency overhead, mean", "%", f(overheadPct(run.Latency.Mean, base.Latency.Mean)), none,
			simV(func() *float64 { return f(overheadPct(sim.Latency.Mean, simBase.Latency.Mean)) })),
	}
	if haveReplay && t.Decisions > 0 {
		rows = append(rows, Row{Metric: "decisions agreeing with the agent's", Unit: "%",
			Predict: f(100 * float64(t.Matching) / float64(t.Decisions))})
	}
	return rows
}

// simSaving is the simulated links' energy saving against always-on over
// the same time, as the emulator's: the always-on run's energy scaled to
// the run's execution time (a run stretched by wake-ups lasts longer).
func simSaving(base, run *SimResult) float64 {
	if !(base.ExecTimeS > 0) || !(base.LinkEnergyJ > 0) {
		return math.NaN()
	}
	ao := base.LinkEnergyJ * run.ExecTimeS / base.ExecTimeS
	return 100 * (1 - run.LinkEnergyJ/ao)
}

// sortedPorts returns the ports of a trace map in LinePorts order.
func sortedPorts(m map[string][]replay.TraceRow) []string {
	var out []string
	for _, p := range LinePorts {
		if _, ok := m[p.Dev]; ok {
			out = append(out, p.Dev)
		}
	}
	for p := range m {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}
