package simbackend

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/lpictl/lpictl/agent"
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
	// Speed is simulated seconds per wall-clock second (> 0).
	Speed float64
	// Loop keeps the workload running past the scenario's duration.
	Loop bool
	// Clock returns wall-clock time (nil = time.Now); tests pace with it.
	Clock  func() time.Time
	Logger *slog.Logger
}

// FromConfig takes Options from the agent's sim: section.
func FromConfig(cfg agent.Config, log *slog.Logger) Options {
	return Options{Scenario: cfg.Sim.Scenario, Sets: cfg.Sim.Set, Speed: cfg.Sim.Speed, Loop: *cfg.Sim.Loop, Logger: log}
}

// maxPending bounds the idle periods a port keeps until drained.
const maxPending = 1 << 16

// Backend runs the ports the agent opens as sim/eee link models under the
// scenario's workload, paced to wall-clock time × Speed.
type Backend struct {
	opts   Options
	t      topo.Topology
	params eee.Params
	rate   float64
	tr     network.Traffic
	seed   uint64
	origin int64 // t_PDT a port starts with (ps): the scenario's initial
	reg    agent.Register
	wake   time.Duration

	mu    sync.Mutex
	start time.Time
	now   int64 // simulated time (ps) reached by the last Step
	ports map[string]*simPort
	names map[string]int32 // port name → port number
	infos []agent.PortInfo
}

var _ agent.Backend = (*Backend)(nil)

// New loads and builds the scenario.
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
	s, err := scenario.Load(opts.Scenario, opts.Sets)
	if err != nil {
		return nil, fmt.Errorf("sim.scenario: %w", err)
	}
	built, err := s.Build()
	if err != nil {
		return nil, fmt.Errorf("sim.scenario %s: %w", opts.Scenario, err)
	}
	p := built.Params
	b := &Backend{opts: opts, t: built.Topology, params: p.EEE, rate: p.RateBps, tr: built.Traffic, seed: s.Seed,
		ports: map[string]*simPort{}, names: map[string]int32{}}
	b.params.Handshake = network.Ser(int64(p.ControlBytes), p.RateBps) + p.Propagation
	b.params.Prepare()
	b.wake = time.Duration(b.params.WakeTime() / 1000)
	pc := p.Predictor.WithDefaults()
	switch {
	case b.params.Mode == eee.AlwaysOn:
		b.origin = eee.Never
	case pc.PDT != nil:
		b.origin = int64(*pc.PDT) * 1000
	default:
		b.origin = int64(*pc.InitialPDT) * 1000
	}
	reg := p.Controller.WithDefaults().Register
	b.reg = agent.Register{Unit: reg.Resolution.D(), Min: reg.Min.D(), Max: reg.Max.D()}
	b.listPorts()
	b.start = opts.Clock()
	opts.Logger.Info("simulated network", "scenario", s.Name, "topology", b.t.Name(), "ports", len(b.infos),
		"mode", b.params.Mode, "speed", opts.Speed)
	return b, nil
}

// listPorts names every cabled port: node<i> for node i's NIC and
// sw<s>p<j> for port j of switch s; the driver label is "nic" or the
// switch's role (leaf, spine, …).
func (b *Backend) listPorts() {
	t := b.t
	n := int32(t.Nodes())
	canSet, reason := true, "simulated port (sim/eee link model)"
	if b.params.Mode == eee.AlwaysOn {
		canSet, reason = false, "observe-only: the scenario's power mode is always-on"
	}
	hops := map[int]float64(nil)
	if t.Nodes() <= 4096 {
		hops = map[int]float64{}
	}
	for i := 0; i < t.Nodes(); i++ {
		in := agent.PortInfo{Name: fmt.Sprintf("node%d", i), Driver: "nic", Observation: "sim", CanSet: canSet,
			Reason: reason, Register: b.reg, WakeTime: b.wake}
		if hops != nil && i == 0 {
			// Uniform traffic: every other node equally likely (node 0's
			// distribution stands for every NIC's in the symmetric
			// topologies the simulator builds).
			for d := 1; d < t.Nodes(); d++ {
				hops[min(topo.Hops(t, 0, d), 255)]++
			}
		}
		in.Hops = hops
		b.names[in.Name] = int32(i)
		b.infos = append(b.infos, in)
	}
	base := n
	for s := 0; s < t.Switches(); s++ {
		for j := 0; j < t.Radix(s); j++ {
			if _, ok := t.PortPeer(s, j); ok {
				in := agent.PortInfo{Name: fmt.Sprintf("sw%dp%d", s, j), Driver: t.SwitchRole(s), Observation: "sim",
					CanSet: canSet, Reason: reason, Register: b.reg, WakeTime: b.wake}
				b.names[in.Name] = base + int32(j)
				b.infos = append(b.infos, in)
			}
		}
		base += int32(t.Radix(s))
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

// Step implements agent.Backend: it runs every open port up to the
// simulated time that corresponds to the wall-clock time now.
func (b *Backend) Step(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	target := int64(b.opts.Clock().Sub(b.start).Seconds() * b.opts.Speed * 1e12)
	if target <= b.now {
		return nil
	}
	b.now = target
	for _, p := range b.ports {
		if err := ctx.Err(); err != nil {
			return err
		}
		p.advance(target)
	}
	return nil
}

// Ports implements agent.Backend.
func (b *Backend) Ports(context.Context) ([]agent.PortInfo, error) {
	return append([]agent.PortInfo(nil), b.infos...), nil
}

// Open implements agent.Backend.
func (b *Backend) Open(_ context.Context, in agent.PortInfo) (agent.Port, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	idx, ok := b.names[in.Name]
	if !ok {
		return nil, fmt.Errorf("%s: %w", in.Name, agent.ErrPortGone)
	}
	p := b.ports[in.Name]
	if p == nil {
		p = b.newPort(idx)
		b.ports[in.Name] = p
	}
	return &handle{b: b, p: p}, nil
}

// Restore implements agent.Backend: a simulated port that is not open
// keeps no settings.
func (b *Backend) Restore(context.Context, string, agent.Settings) error { return nil }

// Close implements agent.Backend.
func (b *Backend) Close() error { return nil }

// simPort is one port: its link's power state (sim/eee, the simulator's
// model) and the scenario's workload at this port. The peer end is idle
// (its traffic is not modelled).
type simPort struct {
	b         *Backend
	link      eee.Link
	pdt       int64 // t_PDT in force for the next idle period (ps)
	rng       *rand.Rand
	onoff     *rand.Rand // ON/OFF schedule (shared seed when Sync)
	next      int64      // next message arrival (ps)
	onUntil   int64      // current ON period's end (onoff)
	busyUntil int64      // transmission of queued messages ends (ps)
	txing     bool
	idleStart int64
	msgs      int64
	stopped   bool
	pending   []agent.Observation
	lost      uint64
}

func (b *Backend) newPort(idx int32) *simPort {
	p := &simPort{b: b, pdt: b.origin, rng: rand.New(rand.NewPCG(b.seed, uint64(idx)+1))}
	sched := uint64(idx) + 1
	if b.tr.Sync {
		sched = 0
	}
	p.onoff = rand.New(rand.NewPCG(b.seed^0x5eed, sched))
	// The port starts idle at time 0 (as the simulator's links do) and
	// joins the workload at the current simulated time.
	p.link.Start(0, p.pdt)
	p.next = b.now
	p.arrival()
	return p
}

// ser is the transmission time of n bytes (ps).
func (p *simPort) ser(n int64) int64 { return network.Ser(n, p.b.rate) }

// arrival draws the next message arrival after p.next.
func (p *simPort) arrival() {
	tr := &p.b.tr
	mean := float64(p.ser(tr.MessageBytes)) / tr.Load // ps between messages
	t := p.next
	if tr.Arrivals == "onoff" {
		mean *= float64(tr.OnTime) / float64(tr.OnTime+tr.OffTime)
		for {
			if t < p.onUntil {
				t += int64(p.rng.ExpFloat64()*mean) + 1
				if t < p.onUntil {
					break
				}
			}
			// Next ON period after an OFF period.
			off := int64(p.onoff.ExpFloat64() * float64(tr.OffTime))
			start := max(t, p.onUntil) + off
			p.onUntil = start + int64(p.onoff.ExpFloat64()*float64(tr.OnTime)) + 1
			t = start
		}
	} else {
		t += int64(p.rng.ExpFloat64()*mean) + 1
	}
	p.next = t
	if !p.b.opts.Loop && ((tr.Duration > 0 && t > tr.Start+tr.Duration) || (tr.Messages > 0 && p.msgs >= tr.Messages)) {
		p.stopped = true
	}
}

// advance processes message arrivals up to target.
func (p *simPort) advance(target int64) {
	tr := &p.b.tr
	for !p.stopped && p.next <= target {
		t := p.next
		size := p.ser(tr.MessageBytes)
		if t >= p.busyUntil {
			if p.txing {
				p.link.Release(p.busyUntil, 0, p.pdt)
				p.idleStart, p.txing = p.busyUntil, false
			}
			ready, missed := p.link.Need(&p.b.params, t, 0)
			p.observe(agent.Observation{End: time.Duration(t / 1000), Length: time.Duration((t - p.idleStart) / 1000),
				Missed: missed, MissedKnown: true, PDT: time.Duration(p.pdt / 1000)})
			p.busyUntil, p.txing = ready+size, true
		} else {
			p.busyUntil += size
		}
		p.msgs++
		p.arrival()
	}
}

func (p *simPort) observe(o agent.Observation) {
	if len(p.pending) >= maxPending {
		p.lost++
		return
	}
	p.pending = append(p.pending, o)
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

func (h *handle) Hops(func(int, uint64)) {}

func (h *handle) EEE(context.Context) (agent.EEEState, error) {
	h.b.mu.Lock()
	defer h.b.mu.Unlock()
	on := h.b.params.Mode != eee.AlwaysOn
	timer := time.Duration(h.p.pdt / 1000)
	if h.p.pdt == eee.Never {
		timer = 0
	}
	return agent.EEEState{Enabled: on, Active: on, TxLPIEnabled: on, TxLPITimer: timer}, nil
}

// SetPDT applies t_PDT from the next idle period on (the timer is armed
// when the output queue empties, SPEC §1.1).
func (h *handle) SetPDT(_ context.Context, d time.Duration) (agent.ApplyResult, error) {
	h.b.mu.Lock()
	defer h.b.mu.Unlock()
	if h.b.params.Mode == eee.AlwaysOn {
		return agent.ApplyResult{}, fmt.Errorf("power mode always-on: %w", agent.ErrNotSupported)
	}
	v := int64(d) * 1000
	if v == h.p.pdt {
		return agent.ApplyResult{Applied: d, Unchanged: true}, nil
	}
	h.p.pdt = v
	return agent.ApplyResult{Applied: d}, nil
}

func (h *handle) Restore(_ context.Context, s agent.Settings) error {
	h.b.mu.Lock()
	defer h.b.mu.Unlock()
	h.p.pdt = int64(s.TxLPITimer) * 1000
	return nil
}

// Counters reports the time the link spent in low power up to its last
// event (sim/eee accounts lazily).
func (h *handle) Counters(context.Context) (agent.PortCounters, error) {
	h.b.mu.Lock()
	defer h.b.mu.Unlock()
	l := &h.p.link
	low := l.Times[eee.LowFastWake] + l.Times[eee.LowDeepSleep]
	return agent.PortCounters{LowPowerTime: time.Duration(low / 1000), LowPowerKnown: true,
		LPIEntries: uint64(l.Downs), LPIEntriesKnown: true}, nil
}

func (h *handle) Close() error {
	h.b.mu.Lock()
	defer h.b.mu.Unlock()
	for name, p := range h.b.ports {
		if p == h.p {
			delete(h.b.ports, name)
		}
	}
	return nil
}
