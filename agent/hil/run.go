package hil

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lpictl/lpictl/agent/hwbackend"
	"github.com/lpictl/lpictl/controller/replay"
	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/emulate"
	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/power"
)

// ErrNeedsRoot: the experiment creates namespaces, mounts a bpffs and
// loads eBPF programs.
var ErrNeedsRoot = errors.New("needs root (or CAP_SYS_ADMIN, CAP_NET_ADMIN and CAP_BPF): it creates network namespaces, mounts a bpffs and loads eBPF programs")

// AlwaysOn names the baseline run.
const AlwaysOn = "always-on"

// Options configure Run.
type Options struct {
	// Binary is the lpictl executable the agents run as `Binary agent -c
	// FILE` (typically os.Executable()).
	Binary string
	// Progress receives one line per step (nil: none).
	Progress io.Writer
}

func (o Options) progress(format string, args ...any) {
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, format+"\n", args...)
	}
}

// Run builds the line, runs the traffic always-on and once per predictor
// (agents in enforce mode), checks the results against lpictl predict's
// replay and the simulator, and removes everything it created — on
// return, on error and when ctx is cancelled. The report is returned
// whenever the line was built (with Setup.TornDown telling whether the
// teardown was complete), also with an error.
func Run(ctx context.Context, cfg *Config, opts Options) (rep *Report, err error) {
	if os.Geteuid() != 0 {
		return nil, ErrNeedsRoot
	}
	if opts.Binary == "" {
		return nil, errors.New("hil: no agent binary (Options.Binary)")
	}
	start := time.Now()
	rep = newReport(cfg)
	rep.StartedAt = start.UTC().Truncate(time.Millisecond)
	if stale, serr := CleanupStale(); len(stale) > 0 || serr != nil {
		rep.Setup.StaleRemoved = append(rep.Setup.StaleRemoved, stale...)
		if serr != nil {
			rep.Notes = append(rep.Notes, "leftovers of an earlier run not removed: "+serr.Error())
		}
	}
	opts.progress("building the line (namespaces, veth pairs, bpffs)")
	line, err := BuildLine()
	if err != nil {
		return nil, err
	}
	rep.Setup.Namespaces, rep.Setup.WorkDir, rep.Setup.BPFFS = line.NetNSNames(), line.Work, line.BPFFS
	rep.FQ = line.FQ
	defer func() {
		opts.progress("tearing down")
		cerr := line.Close()
		if cerr == nil {
			cerr = leftovers(rep)
		}
		rep.Setup.TornDown = cerr == nil
		if cerr != nil {
			err = errors.Join(err, fmt.Errorf("teardown: %w", cerr))
		}
		rep.WallS = time.Since(start).Seconds()
	}()

	delay, note, err := resolveDelay(cfg.Port.Delay, line.FQ)
	if err != nil {
		return rep, err
	}
	rep.Delay = delay.String()
	cfg.blockingSends = delay == emulate.DelaySpin
	if note != "" {
		rep.Notes = append(rep.Notes, note)
	}

	type predRun struct {
		kind   predictor.Kind
		run    int // index in rep.Runs
		traces map[string][]replay.TraceRow
		opened map[string]replay.PS
		rounds map[string][]replay.PS
		trace  simTrace
		window [2]replay.PS
	}
	var preds []predRun
	var alwaysOnTrace simTrace // the always-on run's traffic, for its own sim-to-real rows
	names := append([]predictor.Kind{""}, cfg.Predictors...)
	for _, kind := range names {
		name := string(kind)
		if kind == "" {
			name = AlwaysOn
		}
		opts.progress("run %s: %gs of traffic", name, cfg.Traffic.Duration.D().Seconds())
		r, err := runOne(ctx, cfg, opts, line, rep, kind, delay)
		if err != nil {
			return rep, fmt.Errorf("run %s: %w", name, err)
		}
		rep.Runs = append(rep.Runs, *r.report)
		if kind != "" {
			preds = append(preds, predRun{kind: kind, run: len(rep.Runs) - 1, traces: r.traces, opened: r.opened, rounds: r.rounds, trace: r.trace, window: r.window})
		} else {
			alwaysOnTrace = r.trace
		}
	}
	base := &rep.Runs[0]
	if cfg.Sim.PathLatency == PathLatencyMeasured {
		// The kernel's path (syscall, veth, the switch namespace's
		// forwarding softirq) takes tens of µs where a NIC and a switch
		// take 100 ns: the simulated line gets the measured one.
		cfg.pathLatency = time.Duration(base.Latency.P50 * 1e9).Round(time.Microsecond / 10)
	}
	for i := range rep.Runs[1:] {
		rep.Runs[i+1].against(base)
	}

	simDir := filepath.Join(line.Work, "sim")
	if err := os.MkdirAll(simDir, 0o755); err != nil {
		return rep, err
	}
	if *cfg.Sim.Enabled && len(cfg.Predictors) > 0 {
		// The always-on run against the simulator's always-on run of the
		// same traffic: what the comparison rests on (idle periods per
		// port, nothing asleep), before any predictor.
		opts.progress("sim-to-real %s: simulating the traffic", AlwaysOn)
		c := SimToReal{Run: AlwaysOn, Replay: []PortReplay{}, Rows: []Row{}, Ports: []PortCompare{}, Unexplained: []string{}, SimLPI: cfg.Sim.LPI}
		vefPath, err := alwaysOnTrace.write(simDir, AlwaysOn)
		var sb SimResult
		if err == nil {
			sb, err = cfg.simulate(ctx, simDir, AlwaysOn, cfg.Predictors[0], power.AlwaysOn, vefPath, 0, nil)
		}
		if err != nil {
			if ctx.Err() != nil {
				return rep, ctx.Err()
			}
			c.SimError = err.Error()
		} else {
			c.SimBase, c.Sim = &sb, &sb
		}
		c.Ports = comparePorts(base, base, nil, c.Sim)
		c.Rows = compareRows(base, base, nil, c.SimBase, c.Sim)
		if c.Unexplained = unexplained(c.Ports); c.Unexplained == nil {
			c.Unexplained = []string{}
		}
		rep.SimToReal = append(rep.SimToReal, c)
	}
	for _, p := range preds {
		opts.progress("sim-to-real %s: replaying the agents' traces, simulating the traffic", p.kind)
		c := SimToReal{Run: string(p.kind), Replay: []PortReplay{}, Rows: []Row{}, Ports: []PortCompare{}, Unexplained: []string{}}
		ap := func(port string) replay.AgentPort {
			return agentPortOf(cfg, port, p.opened[port], p.rounds[port], &rep.Runs[p.run])
		}
		if cfg.PortLPI() == power.PerLink {
			// Per link each cable's two ends are replayed jointly.
			got := map[string]PortReplay{}
			for _, ends := range linkEnds() {
				prs, err := cfg.replayLink(p.kind, ends, [2][]replay.TraceRow{p.traces[ends[0]], p.traces[ends[1]]}, p.window,
					[2]replay.AgentPort{ap(ends[0]), ap(ends[1])})
				if err != nil {
					rep.Notes = append(rep.Notes, fmt.Sprintf("%s: %v", p.kind, err))
					continue
				}
				got[ends[0]], got[ends[1]] = prs[0], prs[1]
			}
			for _, port := range sortedPorts(p.traces) {
				if pr, ok := got[port]; ok {
					c.Replay = append(c.Replay, pr)
				}
			}
		} else {
			for _, port := range sortedPorts(p.traces) {
				pr, err := cfg.replayPort(p.kind, port, p.traces[port], p.window, ap(port))
				if err != nil {
					rep.Notes = append(rep.Notes, fmt.Sprintf("%s: %v", p.kind, err))
					continue
				}
				c.Replay = append(c.Replay, pr)
			}
		}
		if *cfg.Sim.Enabled {
			vefPath, err := p.trace.write(simDir, string(p.kind))
			var sb, sp SimResult
			lead, phases := agentLead(p.opened, p.window[0]), portPhases(p.opened, p.traces, p.window[0])
			if err == nil {
				sb, err = cfg.simulate(ctx, simDir, string(p.kind)+"-always-on", p.kind, power.AlwaysOn, vefPath, lead, nil)
			}
			if err == nil {
				sp, err = cfg.simEnsemble(ctx, simDir, string(p.kind), p.kind, vefPath, lead, phases)
			}
			if err != nil {
				if ctx.Err() != nil {
					return rep, ctx.Err()
				}
				c.SimError = err.Error()
			} else {
				c.SimBase, c.Sim = &sb, &sp
			}
		} else {
			c.SimError = "disabled (sim.enabled: false)"
		}
		c.SimLPI = cfg.Sim.LPI
		c.Ports = comparePorts(&rep.Runs[p.run], base, c.Replay, c.Sim)
		c.PredictNote = cfg.predictNote()
		c.Rows = compareRows(&rep.Runs[p.run], base, c.Replay, c.SimBase, c.Sim)
		c.Unexplained = unexplained(c.Ports)
		if c.Unexplained == nil {
			c.Unexplained = []string{}
		}
		rep.SimToReal = append(rep.SimToReal, c)
	}
	rep.Notes = append(rep.Notes, standingNotes(cfg, rep)...)
	return rep, ctx.Err()
}

// resolveDelay turns the configured delay method into the emulator's.
func resolveDelay(name string, fq bool) (emulate.Delay, string, error) {
	if name == "auto" {
		if fq {
			return emulate.DelayEDT, "", nil
		}
		return emulate.DelaySpin, "the kernel has no fq qdisc: the emulated ports hold packets with the spin method (port.delay: auto)", nil
	}
	d, err := emulate.ParseDelay(name)
	if err != nil {
		return 0, "", err
	}
	if d == emulate.DelayEDT && !fq {
		return 0, "", fmt.Errorf("port.delay edt: the kernel lacks the fq qdisc (CONFIG_NET_SCH_FQ); use spin or auto: %w", hwlink.ErrNotSupported)
	}
	return d, "", nil
}

func newReport(cfg *Config) *Report {
	var uts unix.Utsname
	_ = unix.Uname(&uts)
	return &Report{
		Name: cfg.Name, Source: cfg.source, Seed: cfg.Seed,
		Preset: cfg.preset.Name, Mode: string(cfg.mode), Scale: cfg.Port.Scale,
		WakeTimeNs: int64(cfg.ScaledWake()), SleepTimeNs: int64(cfg.ScaledSleep()),
		Delay: cfg.Port.Delay, RateBps: cfg.rate, Driver: cfg.Port.Driver, InitialPDTNs: int64(cfg.Port.InitialPDT.D()),
		AgentIntervalNs: int64(cfg.Agent.Interval.D()), TrafficS: cfg.Traffic.Duration.D().Seconds(),
		Kernel: unix.ByteSliceToString(uts.Release[:]),
		Setup:  Setup{Namespaces: []string{}, AgentPids: []int{}, StaleRemoved: []string{}},
		Runs:   []RunReport{}, SimToReal: []SimToReal{}, Notes: []string{},
	}
}

// oneRun is a finished run and what the sim-to-real check needs of it.
type oneRun struct {
	report *RunReport
	traces map[string][]replay.TraceRow
	// opened is when each agent opened its port (its trace's header, the
	// agent's rounds count from there), CLOCK_MONOTONIC ps.
	opened map[string]replay.PS
	// rounds is when each agent's rounds gave its port the timer (its
	// trace's round lines), CLOCK_MONOTONIC ps.
	rounds map[string][]replay.PS
	trace  simTrace
	window [2]replay.PS // the traffic phase, CLOCK_MONOTONIC ps
}

// simTrace is a run's traffic for the simulator: the VEF trace and its
// tasks' hosts (WriteVEF).
type simTrace struct {
	vef   []byte
	nodes []int
}

// write puts the trace in dir as NAME.vef and its mapping as NAME.map
// (mapPath), returning the trace's path.
func (t simTrace) write(dir, name string) (string, error) {
	p := filepath.Join(dir, name+".vef")
	if err := os.WriteFile(p, t.vef, 0o644); err != nil {
		return "", err
	}
	return p, os.WriteFile(mapPath(p), mappingFile(t.nodes), 0o644)
}

// mapPath is the mapping file beside the trace at vefPath.
func mapPath(vefPath string) string { return strings.TrimSuffix(vefPath, ".vef") + ".map" }

// runOne runs the traffic once: always-on (kind "") or with kind's agents.
func runOne(ctx context.Context, cfg *Config, opts Options, line *Line, rep *Report, kind predictor.Kind, delay emulate.Delay) (res oneRun, err error) {
	name := string(kind)
	mode := emulate.ModeAlwaysOn
	r := &RunReport{Name: AlwaysOn, Mode: string(power.AlwaysOn), Predictor: "none", Ports: []PortReport{},
		AgentPids: []int{}, TraceRows: map[string]int{}}
	if kind != "" {
		mode, _ = emulate.ParseMode(string(cfg.mode))
		pc := cfg.PredictorFor(kind)
		r.Name, r.Mode, r.Predictor = name, string(cfg.mode), name
		if kind != predictor.KindFixed {
			r.Bound = pc.Bound
		}
	} else {
		name = AlwaysOn
	}
	res.report = r
	emus, err := attachEmulators(ctx, cfg, line, mode, delay)
	if err != nil {
		return res, err
	}
	defer func() {
		if derr := emus.detach(); derr != nil {
			err = errors.Join(err, fmt.Errorf("detach emulators: %w", derr))
		}
	}()
	attached, err := emus.status()
	if err != nil {
		return res, err
	}

	var agents []*agentProc
	stopAll := func() error {
		for _, a := range agents {
			a.signal() // all at once: they stop in parallel
		}
		var errs []error
		for _, a := range agents {
			errs = append(errs, a.stop())
		}
		return errors.Join(errs...)
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = stopAll()
		}
	}()
	if kind != "" {
		for _, role := range []string{"a", "s", "b"} {
			dir := filepath.Join(line.Work, "agents", name, role)
			a, err := startAgent(ctx, opts.Binary, cfg, kind, line.Hosts[role], line.BPFFS, dir)
			if err != nil {
				return res, err
			}
			agents = append(agents, a)
			r.AgentPids = append(r.AgentPids, a.Pid())
			rep.Setup.AgentPids = append(rep.Setup.AgentPids, a.Pid())
		}
	}
	if err := sleepCtx(ctx, cfg.Traffic.Settle.D()); err != nil {
		return res, err
	}

	// The ports' figures cover the traffic phase exactly: from its start
	// to traffic.duration later (the idle tail after it would count as
	// sleep).
	var before, after []emulate.Status
	var berr, aerr error
	tr, err := RunTraffic(ctx, cfg, line, cfg.Seed,
		func() { before, berr = emus.status() }, func() { after, aerr = emus.status() })
	if err != nil {
		return res, err
	}
	if err := errors.Join(berr, aerr); err != nil {
		return res, err
	}
	res.window = [2]replay.PS{replay.PS(tr.T0) * 1000, replay.PS(tr.T0+cfg.Traffic.Duration.D()) * 1000}
	r.Traffic = tr
	r.RTT, r.Latency, r.ThroughputBps = tr.RTT, tr.Latency, tr.ThroughputBps
	for i, p := range LinePorts {
		pr := PortReport{Port: p.Dev, NetNS: line.Hosts[p.Host].Name,
			InitialTimerNs: int64(attached[i].TxLPITimer), FinalTimerNs: int64(after[i].TxLPITimer),
			Status: diffStatus(before[i], after[i])}
		if kind != "" {
			pr.Budget = budgetCheck(after[i], attached[i].AttachedAt, r.Bound)
		}
		r.Ports = append(r.Ports, pr)
	}
	r.sumPorts()

	if kind != "" {
		stopped = true
		stopErr := stopAll()
		res.traces = map[string][]replay.TraceRow{}
		res.opened = map[string]replay.PS{}
		res.rounds = map[string][]replay.PS{}
		var errs []error
		for _, a := range agents {
			role := a.host.Role
			rep.addFile(filepath.Join("agents", name, role, "agent.log"), []byte(a.Log()))
			rep.addFile(filepath.Join("agents", name, role, "agent.yaml"), readOr(filepath.Join(a.dir, "agent.yaml")))
			rows, raw, terr := a.traces()
			if terr != nil {
				errs = append(errs, terr)
			}
			for port, rr := range rows {
				res.traces[port] = rr
				res.opened[port] = traceOpened(raw[port])
				res.rounds[port] = replay.TraceRounds(raw[port])
				r.TraceRows[port] = len(rr)
				rep.addFile(filepath.Join("agents", name, role, port+".port_trace.csv"), raw[port])
				if py, err := cfg.predictYAML(kind, port); err == nil {
					rep.addFile(filepath.Join("agents", name, role, port+".predict.yaml"), py)
				}
			}
		}
		for i := range r.Ports {
			r.Ports[i].PDTChanges = pdtChanges(res.traces[r.Ports[i].Port])
		}
		if stopErr != nil {
			return res, stopErr
		}
		if err := errors.Join(errs...); err != nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: %v", name, err))
		}
	}

	// The simulator's traffic: captured frames at the time they reached
	// their port, where the agents' traces show a wake-up held them.
	msgs, moved := unholdCaptured(tr.Msgs, tr.T0, res.traces)
	r.Traffic.CapturedHeld = moved
	// And the datagrams a held sender sent late, less the wake-ups that
	// held it, which the simulator's blocking senders model themselves.
	msgs, r.Traffic.SendsUnblocked = unblockSends(msgs, tr.T0, res.traces)
	var vb bytes.Buffer
	nodes, err := WriteVEF(&vb, msgs)
	if err != nil {
		return res, fmt.Errorf("VEF trace of the traffic: %w", err)
	}
	res.trace = simTrace{vef: vb.Bytes(), nodes: nodes}
	rep.addFile(filepath.Join("traffic", name+".vef"), res.trace.vef)
	rep.addFile(filepath.Join("traffic", name+".map"), mappingFile(nodes))
	return res, nil
}

// pdtChanges counts the changes of t_PDT along a trace.
func pdtChanges(rows []replay.TraceRow) int {
	n := 0
	for i := 1; i < len(rows); i++ {
		if rows[i].PDT != rows[i-1].PDT {
			n++
		}
	}
	return n
}

func readOr(path string) []byte {
	b, _ := os.ReadFile(path)
	return b
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// diffStatus is the port's status over [a, b]: counters, state times and
// energy of b minus a's (the state times of both include the idle period
// in progress, accounted by the program's rule, so their differences are
// the time spent in each state in between).
func diffStatus(a, b emulate.Status) emulate.Status {
	d := b
	d.AttachedAt = a.Now
	d.Elapsed = b.Elapsed - a.Elapsed
	d.Packets -= a.Packets
	d.Bytes -= a.Bytes
	d.IdlePeriods -= a.IdlePeriods
	d.Hits -= a.Hits
	d.Misses -= a.Misses
	d.Transitions -= min(a.Transitions, d.Transitions)
	d.Wakeups -= a.Wakeups
	d.Delayed -= a.Delayed
	d.DelayTotal -= a.DelayTotal
	d.SpinCapped -= a.SpinCapped
	d.Times.Wake -= a.Times.Wake
	d.Times.GoingDown -= a.Times.GoingDown
	d.Times.FastWake -= a.Times.FastWake
	d.Times.DeepSleep -= a.Times.DeepSleep
	d.Times.GoingUp -= a.Times.GoingUp
	d.EnergyJ -= a.EnergyJ
	d.AlwaysOnJ -= a.AlwaysOnJ
	d.Saving = 0
	if d.AlwaysOnJ > 0 {
		d.Saving = 1 - d.EnergyJ/d.AlwaysOnJ
	}
	if e := float64(d.Elapsed); e > 0 {
		t := d.Times
		d.Fractions = emulate.StateTimes[float64]{Wake: float64(t.Wake) / e, GoingDown: float64(t.GoingDown) / e,
			FastWake: float64(t.FastWake) / e, DeepSleep: float64(t.DeepSleep) / e, GoingUp: float64(t.GoingUp) / e}
	}
	return d
}

// leftovers checks that nothing of the run is left: namespaces, the bpffs
// mount, the work directory, agent processes.
func leftovers(rep *Report) error {
	var left []string
	for _, n := range rep.Setup.Namespaces {
		if _, err := os.Stat(filepath.Join(netnsDir, n)); err == nil {
			left = append(left, "namespace "+n)
		}
	}
	if rep.Setup.BPFFS != "" {
		for _, m := range mountPoints() {
			if m == rep.Setup.BPFFS {
				left = append(left, "mount "+m)
			}
		}
	}
	if rep.Setup.WorkDir != "" {
		if _, err := os.Stat(rep.Setup.WorkDir); err == nil {
			left = append(left, "directory "+rep.Setup.WorkDir)
		}
	}
	for _, pid := range rep.Setup.AgentPids {
		if pid > 0 && alive(pid) && isAgent(pid) {
			left = append(left, fmt.Sprintf("agent process %d", pid))
		}
	}
	if len(left) > 0 {
		return fmt.Errorf("left behind: %s", strings.Join(left, ", "))
	}
	return nil
}

// isAgent says whether pid is still an lpictl agent (not a reused pid).
func isAgent(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return err == nil && bytes.Contains(b, []byte("agent\x00-c\x00"))
}

// predictLPINote says how predict replays the traces for the ports'
// symmetry.
func predictLPINote(cfg *Config) string {
	if cfg.PortLPI() == power.PerLink {
		return fmt.Sprintf("predict replays each cable's two traces jointly, one link state, handshake %v", hwbackend.LinkHandshake(cfg.SimRateBps()))
	}
	return "predict replays each port's trace alone, handshake 0"
}

// standingNotes are the limits every report should state.
func standingNotes(cfg *Config, rep *Report) []string {
	n := []string{
		fmt.Sprintf("t_w and t_s are the preset's × %g: kernel timers and scheduling on a VM jitter by tens of µs", cfg.Port.Scale),
		fmt.Sprintf("the emulated ports run LPI %s (%s): %s; the simulator runs %s%s", cfg.Port.LPI, portLPINote(cfg), predictLPINote(cfg), cfg.Sim.LPI, simLPINote(cfg)),
		"measured latency is the datagrams' one way (probe and UDP flows, from the send to the kernel's receipt); the simulator's is every packet's, NIC to NIC, TCP included; the RTT adds the responder's turnaround",
		"energy and counters of the emulated ports cover the traffic phase; the agents' traces cover their whole run (replayed whole, counted within the traffic phase when the trace's clock allows)",
	}
	n = append(n, "the ports apply the agents' delay ledger themselves, per idle period (held: periods kept awake past t_PDT), from the agent's first timer write; predict replays the agents' controllers (no ledger) and models the ports: each decision armed from the agent's next round (every agent.interval from its start), extended by the port's ledger (bpf/eeeemu.c's rule, replay.AgentPort); the round times are the interval's, not the agent's actual ticks, so a row may arm a timer one round early or late",
		fmt.Sprintf("the simulator runs the agents' controllers on the simulated idle periods as the agents drive the ports: decisions armed at the agent's rounds (every agent.interval, in each agent's measured phase), the idle period before the traffic observed at the first packet, the delay ledger per idle period as the ports apply it; with an adaptive predictor the ledger paces each port's wait to l·T, so which idle periods are slept — misses and sleep share — turns on when the rounds fall, and the agents' ticks jitter: the sim column is the mean of %d runs with the rounds shifted by agent.interval/%d (sim.phases), each port's range beside it", *cfg.Sim.Phases, *cfg.Sim.Phases))
	if hasTCP(cfg) {
		n = append(n, "TCP is closed loop: the ports' waits slow its sender, its segments and ACKs are captured as they leave a0 and b0 and enter the simulation open loop at those times (or, where a wake-up of that port held them, at the wake-up's start), and its segment trains make few, long idle periods; rows of the ports that carry it (a0, s1 for a→b; b0, s0 for its ACKs) include that difference")
	}
	if pre := cfg.preset.Symmetry(); pre != cfg.PortLPI() {
		n = append(n, fmt.Sprintf("the preset %s is %s (%s); the loop runs it %s (port.lpi)", cfg.preset.Name, pre, cfg.preset.LPISource, cfg.Port.LPI))
	}
	n = append(n, "the simulator's traffic: the generator's datagrams and probes at their send times (probes' responses after the request's receipt), and every other frame the hosts sent (TCP segments and ACKs, iperf3, ARP) captured on a0 and b0 as it left, moved back to the start of the wake-up that held it where the port's agent trace shows one (so it does not pay that wake-up twice)")
	src := "sim.path_latency"
	if cfg.Sim.PathLatency == PathLatencyMeasured {
		src = "the always-on run's median one-way latency"
	}
	n = append(n, fmt.Sprintf("the simulated line's path latency is %v (%s), half at the sending NIC and half at the switch, serialisation on top: the kernel's path takes tens of µs where the scenario's NIC and switch take 100 ns", cfg.pathLatency, src))
	if rep.Delay == emulate.DelaySpin.String() {
		n = append(n, "delay spin: a waking port holds its sender's CPU and a send returns only once the packet has crossed the line, so a sender's next packet is sent after its last one instead of queued behind it; the simulated senders do the same (one task per sender, workload.blocking_sends)")
	}
	for _, run := range rep.Runs {
		if t := run.Traffic; t != nil && t.CaptureError != "" {
			n = append(n, fmt.Sprintf("%s: no capture (%s): the simulator sees the generator's datagrams and TCP writes only, not iperf3 or ACKs", run.Name, t.CaptureError))
		}
	}
	if cfg.rate == 0 {
		n = append(n, "no emulated serialisation (port.rate none): veth transmits instantly; the simulator uses the preset's rate")
	}
	return n
}

// hasTCP says whether the traffic has a closed-loop flow (tcp, iperf3).
func hasTCP(cfg *Config) bool {
	for _, f := range cfg.Traffic.Flows {
		if f.Kind == "tcp" || f.Kind == "iperf3" {
			return true
		}
	}
	return false
}

func simLPINote(cfg *Config) string {
	if cfg.Sim.LPI == cfg.Port.LPI {
		return " too (one link model on both sides)"
	}
	return " (sim.lpi: not the emulated ports' model; its differences include the symmetry's)"
}
