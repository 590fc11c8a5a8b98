package simbackend

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/lpictl/lpictl/agent"
	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/sim/eee"
	"github.com/lpictl/lpictl/sim/network"
	"github.com/lpictl/lpictl/sim/scenario"
	"github.com/lpictl/lpictl/sim/topo"
)

// Options configure the simulator backend.
type Options struct {
	// Scenario is the scenario file and Sets its --set overrides.
	Scenario string
	Sets     []string
	// Speed is simulated seconds per wall-clock second (> 0). A network
	// that cannot keep up runs as fast as it can.
	Speed float64
	// Loop starts the scenario again when its workload has ended and the
	// network has drained; otherwise the network then idles.
	Loop bool
	// StepBudget bounds the wall-clock time one Step simulates (0 = 50 ms),
	// so that the agent's loop keeps its pace when the simulation cannot.
	StepBudget time.Duration
	// Clock returns wall-clock time (nil = time.Now); tests pace with it.
	Clock  func() time.Time
	Logger *slog.Logger
}

// FromConfig takes Options from the agent's sim: section; one Step
// simulates for at most three quarters of the decision interval.
func FromConfig(cfg agent.Config, log *slog.Logger) Options {
	return Options{Scenario: cfg.Sim.Scenario, Sets: cfg.Sim.Set, Speed: cfg.Sim.Speed, Loop: *cfg.Sim.Loop,
		StepBudget: cfg.Interval.D() * 3 / 4, Logger: log}
}

const (
	// maxPending bounds the idle periods a port keeps until drained.
	maxPending = 1 << 16
	// sliceEvents is how many events run between two looks at the clock
	// (a few ms of wall-clock time).
	sliceEvents = 1 << 15
	// defaultBudget is Options.StepBudget's default.
	defaultBudget = 50 * time.Millisecond
)

// Backend runs the scenario's whole network (sim/network: NICs, CIOQ
// switches, PFC, routing, EEE links) and hands the ports the agent opens
// to the agent's control loop, paced to wall-clock time × Speed.
type Backend struct {
	opts  Options
	log   *slog.Logger
	built *scenario.Built
	reg   agent.Register
	wake  time.Duration
	// missCost is the ledger's reserve c: the mode's power-down cycle.
	missCost time.Duration
	mode     eee.Mode

	mu      sync.Mutex
	net     *network.Network
	release func() error
	epoch   int
	offset  int64 // backend time (ps) of the current network's time 0
	now     int64 // backend time (ps) reached
	done    bool  // the workload ended (no loop) or failed: the network idles
	// Pacing: simulated time simBase was reached at wall-clock wallBase.
	wallBase time.Time
	simBase  int64
	lagged   bool      // the lag was reported
	lagWall  time.Time // lagging since (zero: not lagging)
	lagSim   int64     // simulated time then
	ports    map[string]*simPort
	ids      map[string]network.PortID
	infos    []agent.PortInfo
	buf      []network.IdleObservation
}

var _ agent.Backend = (*Backend)(nil)

// New loads the scenario and builds its network.
func New(opts Options) (*Backend, error) {
	if !(opts.Speed > 0) || math.IsInf(opts.Speed, 0) {
		return nil, fmt.Errorf("sim.speed: must be > 0, got %v", opts.Speed)
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.StepBudget <= 0 {
		opts.StepBudget = defaultBudget
	}
	s, err := scenario.Load(opts.Scenario, opts.Sets)
	if err != nil {
		return nil, fmt.Errorf("sim.scenario: %w", err)
	}
	built, err := s.Build()
	if err != nil {
		return nil, fmt.Errorf("sim.scenario %s: %w", opts.Scenario, err)
	}
	b := &Backend{opts: opts, log: opts.Logger, built: built, mode: built.Params.EEE.Mode,
		ports: map[string]*simPort{}, ids: map[string]network.PortID{}, buf: make([]network.IdleObservation, 4096)}
	b.net, b.release, err = built.NewNetwork()
	if err != nil {
		return nil, fmt.Errorf("sim.scenario %s: %w", opts.Scenario, err)
	}
	e := built.Params.EEE
	e.Prepare()
	b.wake = time.Duration(e.WakeTime() / 1000)
	if b.mode != eee.AlwaysOn {
		b.missCost = controller.ChargePS(e.Cycle()) // the delay ledger's reserve: one power-down cycle
	}
	reg := built.Params.Controller.WithDefaults().Register
	b.reg = agent.Register{Unit: reg.Resolution.D(), Min: reg.Min.D(), Max: reg.Max.D()}
	b.listPorts()
	b.wallBase = opts.Clock()
	opts.Logger.Info("simulated network", "scenario", s.Name, "topology", built.Topology.Name(), "ports", len(b.infos),
		"mode", b.mode, "speed", opts.Speed, "loop", opts.Loop)
	return b, nil
}

// listPorts names every cabled port (network.DeviceName): node<i> for node
// i's NIC and sw<s>p<j> for port j of switch s; the driver label is "nic"
// or the switch's role (leaf, spine, …).
func (b *Backend) listPorts() {
	t := b.built.Topology
	canSet, reason := true, "simulated port (sim/network)"
	if b.mode == eee.AlwaysOn {
		canSet, reason = false, "observe-only: the scenario's power mode is always-on"
	}
	var hops map[int]float64
	if t.Nodes() <= 4096 {
		// A prior for a NIC's hop distribution until its packets are seen
		// (Port.Hops): uniform destinations from node 0.
		hops = map[int]float64{}
		for d := 1; d < t.Nodes(); d++ {
			hops[min(topo.Hops(t, 0, d), 255)]++
		}
	}
	for i := range b.net.NumPorts() {
		id := network.PortID(i)
		if !b.net.PortCabled(id) {
			continue
		}
		in := agent.PortInfo{Name: b.net.DeviceName(id), Driver: b.net.PortClass(id), Observation: "sim",
			CanSet: canSet, Reason: reason, Register: b.reg, WakeTime: b.wake, MissCost: b.missCost,
			Speed: uint64(b.built.Params.RateBps)} // the estimates' preset follows the link rate
		if i < t.Nodes() {
			in.Hops = hops
		}
		b.ids[in.Name] = id
		b.infos = append(b.infos, in)
	}
}

// Name implements agent.Backend.
func (b *Backend) Name() string { return agent.BackendSim }

// Now implements agent.Backend: the simulated time reached.
func (b *Backend) Now() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return time.Duration(b.now / 1000)
}

// Persistent implements agent.Backend: nothing outlives the process.
func (b *Backend) Persistent() bool { return false }

// Step implements agent.Backend: it runs the network up to the simulated
// time that corresponds to the wall-clock time now, for at most
// StepBudget of wall-clock time; a simulation that falls behind continues
// from where it is at the next Step (the lag is not caught up).
func (b *Backend) Step(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	start := b.opts.Clock()
	target := b.simBase + int64(start.Sub(b.wallBase).Seconds()*b.opts.Speed*1e12)
	deadline := start.Add(b.opts.StepBudget)
	for b.now < target {
		if err := ctx.Err(); err != nil {
			return err
		}
		if b.done {
			b.now = target // nothing left to simulate: time passes
			break
		}
		reached, err := b.net.Advance(target-b.offset, sliceEvents)
		b.now = b.offset + b.net.Reached()
		b.collect()
		if err != nil {
			b.done = true
			b.log.Error("simulation failed; the simulated network idles from now on", "error", err)
			return fmt.Errorf("simulation: %w", err)
		}
		if b.net.Drained() {
			if err := b.nextEpoch(); err != nil {
				return err
			}
			reached = false
		}
		if !reached && b.opts.Clock().After(deadline) {
			break
		}
	}
	if b.now >= target {
		b.lagWall = time.Time{}
		return nil
	}
	// Behind: pace from here on instead of catching up; report the speed
	// achieved once the lag has lasted a few seconds.
	now := b.opts.Clock()
	b.wallBase, b.simBase = now, b.now
	if b.lagWall.IsZero() {
		b.lagWall, b.lagSim = start, b.now
	} else if el := now.Sub(b.lagWall).Seconds(); !b.lagged && el >= 3 {
		b.lagged = true
		b.log.Warn("the simulation is slower than sim.speed; it runs as fast as it can (durations in the agent's configuration are simulated time)",
			"speed", b.opts.Speed, "achieved", fmt.Sprintf("%.3g", float64(b.now-b.lagSim)/1e12/el))
	}
	return nil
}

// collect moves every open port's ended idle periods and hop counts out
// of the network.
func (b *Backend) collect() {
	for _, p := range b.ports {
		for {
			k := b.net.DrainIdle(p.id, b.buf)
			for _, o := range b.buf[:k] {
				p.observe(agent.Observation{End: time.Duration((b.offset + o.End) / 1000), Length: time.Duration(o.Length / 1000),
					Missed: o.Missed, MissedKnown: true, PDT: pdtDuration(o.PDT), Delay: controller.ChargePS(o.Delay)})
			}
			if k < len(b.buf) {
				break
			}
		}
		b.net.DrainHops(p.id, p.addHops)
	}
}

// nextEpoch handles the end of the workload (the network has drained): with
// Loop the scenario starts again where the last one ended, otherwise the
// network idles from now on.
func (b *Backend) nextEpoch() error {
	end := b.net.Engine().Now() // the last event
	if !b.opts.Loop || end <= 0 {
		b.done = true
		b.log.Info("the workload has ended; the simulated network idles (sim.loop is off)", "at", time.Duration(b.now/1000))
		return nil
	}
	net, release, err := b.built.NewNetwork()
	if err != nil {
		b.done = true
		return fmt.Errorf("sim.scenario: restart: %w", err)
	}
	for _, p := range b.ports {
		l := b.net.PortLink(p.id, end)
		p.base.add(&l)
	}
	if b.release != nil {
		_ = b.release()
	}
	b.net, b.release = net, release
	b.offset += end
	b.now = b.offset
	b.epoch++
	for _, p := range b.ports {
		if err := b.take(p); err != nil {
			return err
		}
	}
	b.log.Debug("scenario restarted", "epoch", b.epoch, "at", time.Duration(b.offset/1000))
	return nil
}

// take puts port p under external control in the current network with its
// t_PDT.
func (b *Backend) take(p *simPort) error {
	if err := b.net.Externalize(p.id); err != nil {
		return err
	}
	if b.mode != eee.AlwaysOn {
		return b.net.SetPDT(p.id, p.pdt)
	}
	return nil
}

// Ports implements agent.Backend.
func (b *Backend) Ports(context.Context) ([]agent.PortInfo, error) {
	return append([]agent.PortInfo(nil), b.infos...), nil
}

// Open implements agent.Backend: the port's t_PDT is taken from its
// in-simulator controller (SetPDT changes it; until then it keeps the
// value in force when opened, the scenario's initial t_PDT at the start).
func (b *Backend) Open(_ context.Context, in agent.PortInfo) (agent.Port, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	id, ok := b.ids[in.Name]
	if !ok {
		return nil, fmt.Errorf("%s: %w", in.Name, agent.ErrPortGone)
	}
	p := b.ports[in.Name]
	if p == nil {
		p = &simPort{id: id, pdt: b.net.PDT(id)}
		if err := b.net.Externalize(id); err != nil {
			return nil, fmt.Errorf("%s: %w", in.Name, err)
		}
		p.base.start = b.net.PortLink(id, b.net.Reached())
		p.base.sub = true
		b.ports[in.Name] = p
	}
	return &handle{b: b, p: p}, nil
}

// Restore implements agent.Backend: a simulated port that is not open
// keeps no settings.
func (b *Backend) Restore(context.Context, string, agent.Settings) error { return nil }

// Close implements agent.Backend.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.release == nil {
		return nil
	}
	err := b.release()
	b.release = nil
	return err
}

// simPort is an open port: externally controlled in the network.
type simPort struct {
	id      network.PortID
	pdt     int64 // t_PDT armed at the port's next idle period (ps)
	pending []agent.Observation
	lost    uint64
	hops    [256]uint64
	hopsAny bool
	base    linkBase
}

// linkBase carries a port's low-power time and LPI entries over restarts
// of the scenario, counted from when the port was opened.
type linkBase struct {
	low   int64
	downs uint64
	start eee.Link // the link when the port was opened (subtracted once)
	sub   bool
}

func (l *linkBase) add(k *eee.Link) {
	l.low += lowTime(k)
	l.downs += uint64(k.Downs)
	if l.sub {
		l.low -= lowTime(&l.start)
		l.downs -= uint64(l.start.Downs)
		l.sub = false
	}
}

func lowTime(l *eee.Link) int64 { return l.Times[eee.LowFastWake] + l.Times[eee.LowDeepSleep] }

func (p *simPort) observe(o agent.Observation) {
	if len(p.pending) >= maxPending {
		p.lost++
		return
	}
	p.pending = append(p.pending, o)
}

func (p *simPort) addHops(h int, c uint64) {
	p.hops[h] += c
	p.hopsAny = true
}

// pdtDuration converts a t_PDT in ps (eee.Never: none) to a duration.
func pdtDuration(ps int64) time.Duration {
	if ps == eee.Never {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(ps / 1000)
}

// handle is an open simulated port.
type handle struct {
	b *Backend
	p *simPort
}

func (h *handle) Drain(dst []agent.Observation) (int, error) {
	h.b.mu.Lock()
	defer h.b.mu.Unlock()
	n := copy(dst, h.p.pending)
	h.p.pending = h.p.pending[:copy(h.p.pending, h.p.pending[n:])]
	return n, nil
}

func (h *handle) Hops(f func(int, uint64)) {
	h.b.mu.Lock()
	p := h.p
	if !p.hopsAny {
		h.b.mu.Unlock()
		return
	}
	hops := p.hops
	p.hops, p.hopsAny = [256]uint64{}, false
	h.b.mu.Unlock()
	for k, c := range hops {
		if c != 0 {
			f(k, c)
		}
	}
}

func (h *handle) EEE(context.Context) (agent.EEEState, error) {
	h.b.mu.Lock()
	defer h.b.mu.Unlock()
	on := h.b.mode != eee.AlwaysOn
	timer := time.Duration(h.p.pdt / 1000)
	if h.p.pdt == eee.Never {
		timer = time.Duration(math.MaxInt64) // held awake (controller.Never)
	}
	return agent.EEEState{Enabled: on, Active: on, TxLPIEnabled: on, TxLPITimer: timer}, nil
}

// SetPDT applies t_PDT from the port's next idle period on (the timer is
// armed when the output queue empties, docs/model.md §1.1).
func (h *handle) SetPDT(_ context.Context, d time.Duration) (agent.ApplyResult, error) {
	h.b.mu.Lock()
	defer h.b.mu.Unlock()
	if h.b.mode == eee.AlwaysOn {
		return agent.ApplyResult{}, fmt.Errorf("power mode always-on: %w", agent.ErrNotSupported)
	}
	if d < 0 {
		return agent.ApplyResult{}, errors.New("t_PDT must be ≥ 0")
	}
	v := eee.Never // controller.Never (a held port), or too long for ps: no timer
	if d < time.Duration(eee.Never/1000) {
		v = int64(d) * 1000
	}
	if v == h.p.pdt {
		return agent.ApplyResult{Applied: d, Unchanged: true}, nil
	}
	if err := h.b.net.SetPDT(h.p.id, v); err != nil {
		return agent.ApplyResult{}, err
	}
	h.p.pdt = v
	return agent.ApplyResult{Applied: d}, nil
}

func (h *handle) Restore(_ context.Context, s agent.Settings) error {
	h.b.mu.Lock()
	defer h.b.mu.Unlock()
	if h.b.mode == eee.AlwaysOn {
		return nil
	}
	v := int64(s.TxLPITimer) * 1000
	if err := h.b.net.SetPDT(h.p.id, v); err != nil {
		return err
	}
	h.p.pdt = v
	return nil
}

// Counters reports the time the port's link spent in low power and its
// LPI entries (power-downs) since the port was opened, accounted up to the
// simulated time reached.
func (h *handle) Counters(context.Context) (agent.PortCounters, error) {
	h.b.mu.Lock()
	defer h.b.mu.Unlock()
	b, p := h.b, h.p
	l := b.net.PortLink(p.id, b.now-b.offset)
	base := p.base
	base.add(&l)
	return agent.PortCounters{LowPowerTime: time.Duration(base.low / 1000), LowPowerKnown: true,
		LPIEntries: base.downs, LPIEntriesKnown: true}, nil
}

// Close gives the port back to its in-simulator controller (the scenario's
// predictor), as every port the agent does not control.
func (h *handle) Close() error {
	h.b.mu.Lock()
	defer h.b.mu.Unlock()
	for name, p := range h.b.ports {
		if p == h.p {
			h.b.net.Release(p.id)
			delete(h.b.ports, name)
		}
	}
	return nil
}
