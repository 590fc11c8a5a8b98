package agent_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/lpictl/lpictl/agent"
)

// fakeBackend is an in-memory agent.Backend: every Step gives each port a
// few idle periods of GapLen; ports accept, refuse or flap on changes.
type fakeBackend struct {
	mu         sync.Mutex
	start      time.Time
	ports      map[string]*fakePort
	persistent bool
	gapLen     time.Duration
	restored   map[string]agent.Settings
}

type fakePort struct {
	info        agent.PortInfo
	eee         agent.EEEState
	carrier     uint64
	errs        agent.ErrorCounters // scripted with setErrors
	errOnSet    uint64              // rx errors each change adds
	firmware    string              // drvinfo firmware version
	peer        []string            // the link partner's EEE modes
	flapOnSet   bool
	countersErr error // Counters fails with it
	sets        int
	open        bool
	lastObs     time.Duration
}

func newFake(names ...string) *fakeBackend {
	b := &fakeBackend{start: time.Now(), ports: map[string]*fakePort{}, persistent: true,
		gapLen: 50 * time.Microsecond, restored: map[string]agent.Settings{}}
	for _, n := range names {
		b.add(n, true)
	}
	return b
}

func (b *fakeBackend) add(name string, canSet bool) *fakePort {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := &fakePort{info: agent.PortInfo{Name: name, Driver: "fake", MAC: "02:00:00:00:00:" + fmt.Sprintf("%02x", len(b.ports)),
		Observation: "fake", CanSet: canSet, Register: agent.Register{Unit: time.Microsecond}},
		eee: agent.EEEState{Enabled: true, Active: true, TxLPIEnabled: true, TxLPITimer: 250 * time.Microsecond}}
	if !canSet {
		p.info.Reason = "observe-only: fake driver refuses"
	}
	b.ports[name] = p
	return p
}

func (b *fakeBackend) remove(name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.ports, name)
}

// rename renames a port, keeping its identity (MAC) and state: handles
// opened under the old name then see agent.ErrPortGone.
func (b *fakeBackend) rename(old, name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.ports[old]
	delete(b.ports, old)
	p.info.Name = name
	b.ports[name] = p
}

// setCarrier sets a port's cumulative carrier change count.
func (b *fakeBackend) setCarrier(name string, n uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ports[name].carrier = n
}

// setErrors sets a port's cumulative error counters.
func (b *fakeBackend) setErrors(name string, e agent.ErrorCounters) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ports[name].errs = e
}

func (b *fakeBackend) port(name string) fakePort {
	b.mu.Lock()
	defer b.mu.Unlock()
	if p, ok := b.ports[name]; ok {
		return *p
	}
	return fakePort{}
}

func (b *fakeBackend) Name() string               { return "fake" }
func (b *fakeBackend) Now() time.Duration         { return time.Since(b.start) }
func (b *fakeBackend) Step(context.Context) error { return nil }
func (b *fakeBackend) Persistent() bool           { return b.persistent }
func (b *fakeBackend) Close() error               { return nil }
func (b *fakeBackend) Ports(context.Context) ([]agent.PortInfo, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []agent.PortInfo
	for _, p := range b.ports {
		out = append(out, p.info)
	}
	return out, nil
}

func (b *fakeBackend) Restore(_ context.Context, name string, s agent.Settings) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	p, ok := b.ports[name]
	if !ok {
		return agent.ErrPortGone
	}
	p.eee.TxLPITimer, p.eee.TxLPIEnabled = s.TxLPITimer, s.TxLPIEnabled
	b.restored[name] = s
	return nil
}

func (b *fakeBackend) Open(_ context.Context, in agent.PortInfo) (agent.Port, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p, ok := b.ports[in.Name]
	if !ok {
		return nil, agent.ErrPortGone
	}
	p.open = true
	return &fakeHandle{b: b, name: in.Name}, nil
}

type fakeHandle struct {
	b    *fakeBackend
	name string
}

func (h *fakeHandle) p() (*fakePort, error) {
	p, ok := h.b.ports[h.name]
	if !ok {
		return nil, fmt.Errorf("%s: %w", h.name, agent.ErrPortGone)
	}
	return p, nil
}

// Drain reports one idle period per millisecond since the last drain.
func (h *fakeHandle) Drain(dst []agent.Observation) (int, error) {
	h.b.mu.Lock()
	defer h.b.mu.Unlock()
	p, err := h.p()
	if err != nil {
		return 0, err
	}
	now := time.Since(h.b.start)
	n := 0
	for t := p.lastObs + time.Millisecond; t <= now && n < len(dst); t += time.Millisecond {
		dst[n] = agent.Observation{End: t, Length: h.b.gapLen}
		p.lastObs = t
		n++
	}
	return n, nil
}

func (h *fakeHandle) Hops(func(int, uint64)) {}

func (h *fakeHandle) EEE(context.Context) (agent.EEEState, error) {
	h.b.mu.Lock()
	defer h.b.mu.Unlock()
	p, err := h.p()
	if err != nil {
		return agent.EEEState{}, err
	}
	return p.eee, nil
}

func (h *fakeHandle) SetPDT(_ context.Context, d time.Duration) (agent.ApplyResult, error) {
	h.b.mu.Lock()
	defer h.b.mu.Unlock()
	p, err := h.p()
	if err != nil {
		return agent.ApplyResult{}, err
	}
	if !p.info.CanSet {
		return agent.ApplyResult{}, fmt.Errorf("%s: %w", h.name, agent.ErrNotSupported)
	}
	if p.eee.TxLPITimer == d {
		return agent.ApplyResult{Applied: d, Unchanged: true}, nil
	}
	p.sets++
	p.eee.TxLPITimer = d
	if p.flapOnSet {
		p.carrier += 2
	}
	p.errs.RxErrors += p.errOnSet
	return agent.ApplyResult{Applied: d}, nil
}

func (h *fakeHandle) Restore(ctx context.Context, s agent.Settings) error {
	return h.b.Restore(ctx, h.name, s)
}

func (h *fakeHandle) Counters(context.Context) (agent.PortCounters, error) {
	h.b.mu.Lock()
	defer h.b.mu.Unlock()
	p, err := h.p()
	if err != nil {
		return agent.PortCounters{}, err
	}
	if p.countersErr != nil {
		return agent.PortCounters{}, p.countersErr
	}
	return agent.PortCounters{CarrierChanges: p.carrier, LowPowerTime: time.Millisecond, LowPowerKnown: true}, nil
}

func (h *fakeHandle) ErrorCounters(context.Context) (agent.ErrorCounters, error) {
	h.b.mu.Lock()
	defer h.b.mu.Unlock()
	p, err := h.p()
	if err != nil {
		return agent.ErrorCounters{}, err
	}
	return p.errs, nil
}

func (h *fakeHandle) Firmware(context.Context) string {
	h.b.mu.Lock()
	defer h.b.mu.Unlock()
	if p, err := h.p(); err == nil {
		return p.firmware
	}
	return ""
}

func (h *fakeHandle) PeerEEEModes() []string {
	h.b.mu.Lock()
	defer h.b.mu.Unlock()
	if p, err := h.p(); err == nil {
		return p.peer
	}
	return nil
}

func (h *fakeHandle) Close() error {
	h.b.mu.Lock()
	defer h.b.mu.Unlock()
	if p, ok := h.b.ports[h.name]; ok {
		p.open = false
	}
	return nil
}

// testConfig is a fast configuration for in-process runs.
func testConfig(t *testing.T, mode agent.Mode, names ...string) agent.Config {
	t.Helper()
	c := agent.Config{Mode: mode, StateDir: t.TempDir(), Interval: 10e6}
	c.Metrics.Listen = agent.MetricsOff
	c.Ports.Names = names
	c.Predictor.Kind = "fixed"
	pdt := agentDur(20 * time.Microsecond)
	c.Predictor.PDT = &pdt
	zero := agentDur(0)
	c.Safety.Warmup = &zero
	c.Limits.MinChangeInterval = &zero
	return c.WithDefaults()
}

// running is an agent started in a goroutine.
type running struct {
	a      *agent.Agent
	cancel context.CancelFunc
	done   chan error
	hup    chan struct{}
}

func start(t *testing.T, cfg agent.Config, be agent.Backend, reload func() (agent.Config, error)) *running {
	t.Helper()
	return startWith(t, agent.Options{Config: cfg, Backend: be, Reload: reload})
}

// startWith starts an agent of opts (Version "test" and the test's logger
// unless set) and waits until it is ready.
func startWith(t *testing.T, opts agent.Options) *running {
	t.Helper()
	if opts.Version == "" {
		opts.Version = "test"
	}
	if opts.Logger == nil {
		opts.Logger = testLogger(t)
	}
	a, err := agent.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{a: a, cancel: cancel, done: make(chan error, 1), hup: make(chan struct{}, 1)}
	go func() { r.done <- a.Run(ctx, r.hup) }()
	t.Cleanup(func() { r.stop(t) })
	waitFor(t, "agent ready", a.Ready)
	return r
}

func (r *running) stop(t *testing.T) error {
	t.Helper()
	if r.cancel == nil {
		return nil
	}
	r.cancel()
	r.cancel = nil
	select {
	case err := <-r.done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("agent did not stop")
	}
	return nil
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	waitWithin(t, 10*time.Second, what, cond)
}

// waitWithin polls cond until it holds, failing the test after d.
func waitWithin(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s (%v)", what, d)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func readState(t *testing.T, dir string) map[string]agent.PortRecord {
	t.Helper()
	ports, err := agent.ReadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ports) == 0 {
		return nil
	}
	return ports
}
