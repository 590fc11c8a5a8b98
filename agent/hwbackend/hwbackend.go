package hwbackend

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lpictl/lpictl/agent"
	"github.com/lpictl/lpictl/configs"
	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/eeectl"
	"github.com/lpictl/lpictl/hwlink/emulate"
	"github.com/lpictl/lpictl/hwlink/netdev"
	"github.com/lpictl/lpictl/hwlink/observe"
	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/power"
)

// Options configure the hardware backend (the agent's hw: section).
type Options struct {
	NetNS        hwlink.NetNS
	Observe      string // auto, ebpf, counters, emulated, none
	Attach       string // auto, tcx, tc
	Ingress      bool
	PollInterval time.Duration
	SampleFloor  time.Duration
	// Hops is the hop-count table for PerfBound (nil = none).
	Hops *hwlink.HopTable
	// Model, when set, replaces the kernel's EEE interface (driver model).
	Model *ModelFile
	// Emulated makes the emulated EEE ports of NetNS (`lpictl emulate
	// attach`, pinned under BPFFS) the EEE interface: their timers are set
	// in the emulator as its driver profile allows; other ports are
	// observe-only (EEE reads go to ethtool).
	Emulated bool
	// BPFFS is the bpffs mount of the emulators' pins ("" = /sys/fs/bpf).
	BPFFS  string
	Logger *slog.Logger
}

// FromConfig turns the agent's hw: section into Options, reading the hop
// table and the driver-model file it names.
func FromConfig(c agent.HWConfig, log *slog.Logger) (Options, error) {
	o := Options{NetNS: hwlink.NetNS(c.NetNS), Observe: c.Observe, Attach: c.Attach, Ingress: c.Ingress,
		PollInterval: c.PollInterval.D(), SampleFloor: c.SampleFloor.D(), Logger: log,
		Emulated: c.EEEBackend == "emulated", BPFFS: c.BPFFS}
	if c.HopsFile != "" {
		data, err := configs.ReadFile(c.HopsFile)
		if err != nil {
			return o, fmt.Errorf("hw.hops_file: %w", err)
		}
		t, err := hwlink.ParseHopConfig(data)
		if err != nil {
			return o, fmt.Errorf("hw.hops_file %s: %w", c.HopsFile, err)
		}
		o.Hops = t
	}
	if c.EEEBackend == "model" {
		m, err := OpenModel(c.ModelFile)
		if err != nil {
			return o, fmt.Errorf("hw.model_file: %w", err)
		}
		o.Model = m
	}
	return o, nil
}

// Backend is the agent's hardware backend: hwlink discovery, eBPF or
// counter observation (or an emulated port's own idle periods), EEE through
// eeectl.Actuator (ethtool netlink, a driver model, or emulated EEE ports)
// and carrier changes from rtnetlink link events.
type Backend struct {
	opts    Options
	log     *slog.Logger
	ethtool *eeectl.EthtoolBackend
	act     *eeectl.Actuator
	cancel  context.CancelFunc
	// emu finds emulated EEE ports (and is the EEE interface with
	// Options.Emulated); nil when neither EEE nor observation uses them.
	emu *emulate.Backend

	mu      sync.Mutex
	carrier map[string]uint64
	speed   map[string]uint64
	switchd map[string]bool
	open    map[*port]struct{} // open ports, told when their link goes
}

var (
	_ agent.Backend    = (*Backend)(nil)
	_ agent.LedgerPort = (*port)(nil)
)

// New opens the backend; ctx bounds its link-event subscription.
func New(ctx context.Context, opts Options) (*Backend, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = 10 * time.Millisecond
	}
	// Without a bpffs the emulated ports could not be found, and the agent
	// would run observe-only without saying why.
	if opts.Emulated || opts.Observe == string(observe.MethodEmulated) {
		bpffs := opts.BPFFS
		if bpffs == "" {
			bpffs = emulate.DefaultBPFFS
		}
		if err := emulate.CheckBPFFS(bpffs); err != nil {
			return nil, fmt.Errorf("hw.bpffs: %w", err)
		}
	}
	et, err := eeectl.NewEthtoolBackend(eeectl.BackendOptions{NetNS: opts.NetNS, Logger: opts.Logger})
	if err != nil {
		return nil, err
	}
	var eee eeectl.EEEBackend = et
	if opts.Model != nil {
		eee = opts.Model
	}
	var emu *emulate.Backend
	if opts.Emulated || opts.Observe == "auto" || opts.Observe == string(observe.MethodEmulated) {
		emu, err = emulate.NewBackend(emulate.BackendOptions{NetNS: opts.NetNS, BPFFS: opts.BPFFS,
			Fallback: et, Logger: opts.Logger})
		if err != nil {
			et.Close()
			return nil, err
		}
		if opts.Emulated {
			eee = emu
		}
	}
	act, err := eeectl.NewActuator(eee, opts.Logger)
	if err != nil {
		if emu != nil {
			emu.Close()
		}
		et.Close()
		return nil, err
	}
	b := &Backend{opts: opts, log: opts.Logger, ethtool: et, act: act, emu: emu,
		carrier: map[string]uint64{}, speed: map[string]uint64{}, switchd: map[string]bool{}, open: map[*port]struct{}{}}
	sctx, cancel := context.WithCancel(ctx)
	b.cancel = cancel
	// Link events tell open ports that their link was deleted or renamed
	// (their next Drain returns agent.ErrPortGone, and the agent closes
	// or follows them at once), and count carrier transitions in other
	// namespaces, whose sysfs the agent does not see. In its own
	// namespace the kernel's carrier_changes counter in sysfs counts every
	// flap, even one shorter than an event round trip.
	events, err := netdev.SubscribeLinks(sctx, netdev.SubscribeOptions{NetNS: opts.NetNS,
		OnError: func(err error) { b.log.Debug("link events", "error", err) }})
	if err != nil {
		msg := "no link events: deleted or renamed ports are noticed at the next rescan"
		if opts.NetNS != "" {
			msg += ", carrier flaps after changes will not be seen"
		}
		b.log.Warn(msg, "error", err)
	} else {
		go b.watch(events)
	}
	return b, nil
}

// watch counts carrier transitions per interface name and tells open ports
// that their link was deleted or renamed.
func (b *Backend) watch(events <-chan netdev.LinkEvent) {
	for ev := range events {
		b.handle(ev)
	}
}

// handle applies one link event.
func (b *Backend) handle(ev netdev.LinkEvent) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch ev.Type {
	case netdev.LinkCarrierUp, netdev.LinkCarrierDown:
		b.carrier[ev.Name]++
	case netdev.LinkRenamed:
		b.carrier[ev.Name] = b.carrier[ev.OldName]
		delete(b.carrier, ev.OldName)
		b.log.Info("port renamed", "device", ev.OldName, "new_name", ev.Name)
		b.markGone(ev.OldName, ev.Index, fmt.Errorf("%s: renamed to %s: %w", ev.OldName, ev.Name, agent.ErrPortGone))
	case netdev.LinkRemoved:
		delete(b.carrier, ev.Name)
		b.markGone(ev.Name, ev.Index, fmt.Errorf("%s: deleted: %w", ev.Name, agent.ErrPortGone))
	}
}

// markGone makes the open ports of link (name, index) fail with err. b.mu
// is held.
func (b *Backend) markGone(name string, index int, err error) {
	for p := range b.open {
		if p.name == name && (index == 0 || p.index == 0 || p.index == index) && p.goneErr == nil {
			p.goneErr = err
		}
	}
}

// Name implements agent.Backend.
func (b *Backend) Name() string { return agent.BackendHW }

// Now implements agent.Backend: CLOCK_MONOTONIC, the clock of eBPF samples.
func (b *Backend) Now() time.Duration { return observe.MonotonicNow() }

// Step implements agent.Backend (nothing to do on hardware).
func (b *Backend) Step(context.Context) error { return nil }

// Persistent implements agent.Backend: hardware keeps settings.
func (b *Backend) Persistent() bool { return true }

// Ports implements agent.Backend.
func (b *Backend) Ports(ctx context.Context) ([]agent.PortInfo, error) {
	disc, err := netdev.Discover(ctx, netdev.DiscoverOptions{NetNS: b.opts.NetNS, PollInterval: b.opts.PollInterval, Logger: b.log})
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	for _, p := range disc {
		b.speed[p.Name] = p.Speed
		b.switchd[p.Name] = p.Switchdev
	}
	b.mu.Unlock()
	var out []agent.PortInfo
	if b.opts.Model != nil {
		byName := map[string]netdev.PortInfo{}
		for _, p := range disc {
			byName[p.Name] = p
		}
		for _, mp := range b.opts.Model.Ports() {
			in := agent.PortInfo{Name: mp.Name, MAC: mp.MAC, Driver: mp.Driver, Observation: "none"}
			if p, ok := byName[mp.Name]; ok {
				in.Index, in.Observation, in.Speed = p.Index, b.method(p, b.emulated(ctx, p.Name)), p.Speed
				if in.MAC == "" {
					in.MAC = p.MAC
				}
			}
			c, err := b.act.Probe(ctx, mp.Name)
			if err != nil && c.Reason == "" {
				c.Reason = err.Error()
			}
			b.fill(&in, c)
			out = append(out, in)
		}
		return out, nil
	}
	for _, p := range disc {
		emulated := b.emulated(ctx, p.Name)
		// TableName: a DSA port's switch driver rather than "dsa".
		in := agent.PortInfo{Name: p.Name, Index: p.Index, MAC: p.MAC, Driver: p.Driver.TableName(), Observation: b.method(p, emulated),
			Speed: p.Speed, Virtual: VirtualKind(p.Kind)}
		if emulated {
			// The estimates' preset: the one the emulator runs.
			if st, err := b.emu.Status(ctx, p.Name, observe.MonotonicNow()); err == nil {
				in.Preset = EmulatorPreset(st)
			}
		}
		switch {
		case emulated && b.opts.Emulated:
			// The kernel's answer for the netdev (veth: EOPNOTSUPP) is
			// not the port's: the emulator's driver profile decides.
			c, err := b.act.Probe(ctx, p.Name)
			if err != nil && c.Reason == "" {
				c.Reason = err.Error()
			}
			if c.Caps.Driver != "" {
				in.Driver = EmulatedDriverPrefix + c.Caps.Driver
			}
			b.fill(&in, c)
			// The delay ledger's reserve: the emulated port's own timing.
			if st, err := b.emu.Status(ctx, p.Name, observe.MonotonicNow()); err == nil {
				in.MissCost = st.MissCost()
			}
		case b.opts.Emulated:
			b.fill(&in, eeectl.Capability{Reason: "observe-only: no emulated EEE port on this interface " +
				"(hw.eee_backend: emulated sets the timers of `lpictl emulate attach` ports only)"})
		default:
			b.fill(&in, p.Actuation)
		}
		out = append(out, in)
	}
	return out, nil
}

// VirtualKind returns kind if it is that of a virtual device whose link
// speed means nothing for power (emulate.VirtualKinds: veth reports 10 Gb/s),
// else "".
func VirtualKind(kind string) string {
	if slices.Contains(emulate.VirtualKinds, kind) {
		return kind
	}
	return ""
}

// EmulatorPreset is the power preset an emulated EEE port runs: its preset
// (sim/power) with the powers and transition times the emulator was given
// (after --scale: "NAME ×K" then). A preset that no longer loads by name
// (a file) is rebuilt from the emulator's own figures.
func EmulatorPreset(st emulate.Status) *power.Preset {
	p := &power.Preset{Name: st.Preset, RateBps: float64(st.RateBps), WakePowerW: st.WakePowerW}
	if base, err := power.Load(st.Preset); err == nil {
		c := *base
		p = &c
		p.WakePowerW = st.WakePowerW
	}
	if p.RateBps <= 0 {
		p.RateBps = float64(st.RateBps)
	}
	state := func(t emulate.Timing) *power.LowPower {
		if !t.Present {
			return nil
		}
		return &power.LowPower{PowerW: t.PowerW, WakeTime: predictor.Duration(t.Wake), SleepTime: predictor.Duration(t.Sleep)}
	}
	p.FastWake, p.DeepSleep = state(st.FastWake), state(st.DeepSleep)
	if st.Scale > 0 && st.Scale != 1 {
		p.Name = fmt.Sprintf("%s ×%g", st.Preset, st.Scale)
	}
	return p
}

// EmulatedDriverPrefix starts the driver of an emulated EEE port (with
// hw.eee_backend: emulated): "emulated/" and its driver profile, e.g.
// emulated/st_gmac. ports.drivers: ["emulated/*"] selects every emulated
// port of the namespace.
const EmulatedDriverPrefix = "emulated/"

// emulated reports whether the interface carries an emulated EEE port.
func (b *Backend) emulated(ctx context.Context, name string) bool {
	return b.emu != nil && b.emu.Emulated(ctx, name)
}

func (b *Backend) fill(in *agent.PortInfo, c eeectl.Capability) {
	in.CanSet, in.Reason = c.CanSetTimer, c.Reason
	caps, _ := eeectl.LookupDriver(in.Driver)
	if c.Caps.Driver != "" {
		caps = c.Caps
	}
	in.Register = agent.Register{Unit: caps.Unit, Min: caps.Min, Max: caps.Max}
	in.DefaultPDT = caps.DefaultTimer
	if b.opts.Hops != nil {
		in.Hops = hopMap(b.opts.Hops.Port(in.Name))
	}
}

// maxPredictorHops is the largest hop count the predictor takes.
const maxPredictorHops = 255

func hopMap(shares []hwlink.HopShare) map[int]float64 {
	m := map[int]float64{}
	for _, s := range shares {
		h := min(max(s.Hops, 1), maxPredictorHops)
		m[h] += s.Share
	}
	return m
}

// method is the observation method Open will try first: an emulated
// port's own idle periods with auto or emulated, else the plan.
func (b *Backend) method(p netdev.PortInfo, emulated bool) string {
	switch b.opts.Observe {
	case "none":
		return string(observe.MethodNone)
	case string(observe.MethodEmulated):
		if emulated {
			return string(observe.MethodEmulated)
		}
		return string(observe.MethodNone)
	case "auto":
		if emulated {
			return string(observe.MethodEmulated)
		}
	case "counters":
		if p.Switchdev {
			return string(observe.MethodHWCounters)
		}
		return string(observe.MethodCounters)
	case "ebpf":
		return string(observe.MethodEBPF)
	}
	return string(p.Observation.Method)
}

// Open implements agent.Backend.
func (b *Backend) Open(ctx context.Context, in agent.PortInfo) (agent.Port, error) {
	p := &port{b: b, name: in.Name, index: in.Index, method: in.Observation, gaps: make([]observe.GapSample, 1024),
		emulated: b.emulated(ctx, in.Name)}
	b.mu.Lock()
	speed, switchdev := b.speed[in.Name], b.switchd[in.Name]
	b.open[p] = struct{}{}
	b.mu.Unlock()
	ok := false
	defer func() {
		if !ok {
			b.forget(p)
		}
	}()
	octx, cancel := context.WithCancel(ctx)
	p.cancel = cancel
	if in.Observation == string(observe.MethodEmulated) {
		obs, err := emulate.OpenObserver(ctx, emulate.Ref{Interface: in.Name, NetNS: b.opts.NetNS, BPFFS: b.opts.BPFFS})
		if err == nil {
			p.obs = obs
			ok = true
			return p, nil
		}
		b.log.Warn("emulated port's idle periods unavailable; not observed", "device", in.Name, "error", err)
		p.method = string(observe.MethodNone)
	}
	if in.Observation == string(observe.MethodEBPF) {
		mode := observe.AttachAuto
		switch b.opts.Attach {
		case "tcx":
			mode = observe.AttachTCX
		case "tc":
			mode = observe.AttachTC
		}
		obs, err := observe.AttachEBPF(ctx, observe.EBPFConfig{Interface: in.Name, NetNS: b.opts.NetNS, Mode: mode,
			Ingress: b.opts.Ingress, Speed: speed, SampleFloor: b.opts.SampleFloor, Logger: b.log})
		if err == nil {
			p.obs = obs
			ok = true
			return p, nil
		}
		b.log.Warn("eBPF observation unavailable; polling counters", "device", in.Name, "error", err)
		p.method = string(observe.MethodCounters)
	}
	if p.method == string(observe.MethodPSample) {
		// Offloaded switch ports (switchdev) whose driver samples in the
		// ASIC: timestamped packet samples, else the plan's fallback.
		obs, err := observe.AttachPSample(ctx, observe.PSampleConfig{Interface: in.Name, NetNS: b.opts.NetNS,
			Ingress: b.opts.Ingress, Speed: speed, Logger: b.log})
		if err == nil {
			p.obs = obs
			ok = true
			return p, nil
		}
		b.log.Warn("psample observation unavailable; polling hardware counters", "device", in.Name, "error", err)
		p.method = string(observe.MethodHWCounters)
	}
	if p.method == string(observe.MethodCounters) || p.method == string(observe.MethodHWCounters) {
		obs, err := observe.NewCounterObserver(observe.CounterConfig{Interface: in.Name, NetNS: b.opts.NetNS,
			Interval: b.opts.PollInterval, Hardware: switchdev})
		if err != nil {
			cancel()
			return nil, err
		}
		p.obs = obs
		go func() {
			err := obs.Run(octx, func(err error) { b.log.Debug("counter poll", "device", in.Name, "error", err) })
			if err != nil && !errors.Is(err, context.Canceled) {
				b.log.Warn("counter observation stopped", "device", in.Name, "error", err)
			}
		}()
		ok = true
		return p, nil
	}
	p.method = string(observe.MethodNone)
	ok = true
	return p, nil
}

// Restore implements agent.Backend. An emulated port's delay ledger,
// which the agent programs only on a port it changed, is switched off
// with the rest (its account stays readable).
func (b *Backend) Restore(ctx context.Context, name string, s agent.Settings) error {
	on := s.TxLPIEnabled
	_, err := b.act.SetTxLPI(ctx, name, eeectl.TxLPIRequest{Timer: s.TxLPITimer, TxLPIEnabled: &on})
	if b.opts.Emulated && b.emulated(ctx, name) {
		if st, serr := b.emu.Status(ctx, name, observe.MonotonicNow()); serr == nil && st.Ledger.On {
			l := st.Ledger.Ledger
			l.On = false
			err = errors.Join(err, b.emu.SetLedger(ctx, name, l))
		}
	}
	return mapErr(err)
}

// forget drops p from the open ports.
func (b *Backend) forget(p *port) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.open, p)
}

// Close implements agent.Backend.
func (b *Backend) Close() error {
	b.cancel()
	var err error
	if b.emu != nil {
		err = b.emu.Close()
	}
	return errors.Join(err, b.ethtool.Close())
}

// port is one open hardware port.
type port struct {
	b      *Backend
	name   string
	index  int
	method string
	// goneErr (under b.mu) is set when the link was deleted or renamed.
	goneErr error
	obs     observe.Observer
	cancel  context.CancelFunc
	gaps    []observe.GapSample
	// emulated: the interface carried an emulated EEE port when opened;
	// its counters come from the emulator.
	emulated bool
	// peer: the link partner's advertised EEE modes as last read (by the
	// agent's goroutine, in EEE).
	peer []string
	// claim: this process owns the port (Claim).
	claim *hwlink.PortClaim
}

// Claim takes the port for this process (hwlink.ClaimPort: one owner per
// device, whatever the agents' state directories). A driver model's
// ports are claimed by name.
func (p *port) Claim() error {
	if p.claim != nil {
		return nil
	}
	key := ""
	if p.b.opts.Model != nil {
		key = "model/" + p.name
	}
	c, err := hwlink.ClaimPort(p.b.opts.NetNS, p.index, key)
	if err != nil {
		return fmt.Errorf("%s: %w", p.name, err)
	}
	p.claim = c
	return nil
}

// Firmware is the port's firmware version (ethtool drvinfo), "" if unknown.
func (p *port) Firmware(ctx context.Context) string {
	if p.b.ethtool == nil || p.b.opts.Model != nil {
		return ""
	}
	di, err := p.b.ethtool.DriverInfo(ctx, p.name)
	if err != nil {
		return ""
	}
	return di.Firmware
}

// PeerEEEModes are the link partner's advertised EEE modes (ethtool
// names) as of the last EEE read.
func (p *port) PeerEEEModes() []string { return p.peer }

// Observation reports the method actually in use.
func (p *port) Observation() string { return p.method }

// gone returns the error of a deleted or renamed link (nil while it is there).
func (p *port) gone() error {
	p.b.mu.Lock()
	defer p.b.mu.Unlock()
	return p.goneErr
}

func (p *port) Drain(dst []agent.Observation) (int, error) {
	if err := p.gone(); err != nil {
		return 0, err
	}
	if p.obs == nil {
		return 0, nil
	}
	n, err := p.obs.DrainGaps(p.gaps[:min(len(dst), len(p.gaps))])
	if err != nil {
		return 0, mapErr(err)
	}
	k := 0
	for _, g := range p.gaps[:n] {
		if g.Dir != observe.Egress {
			continue
		}
		o := agent.Observation{End: g.End, Length: g.Length}
		if g.MissedKnown {
			o.MissedKnown, o.Missed, o.PDT, o.Delay = true, g.Missed, g.PDT, g.Delay
			if g.NeverSleeps {
				o.PDT = agent.PDTNever
			}
		}
		dst[k] = o
		k++
	}
	return k, nil
}

func (p *port) Hops(func(int, uint64)) {}

func (p *port) EEE(ctx context.Context) (agent.EEEState, error) {
	st, err := p.b.act.GetEEE(ctx, p.name)
	if err != nil {
		return agent.EEEState{}, mapErr(err)
	}
	p.peer = st.LinkPartner
	return agent.EEEState{Enabled: st.Enabled, Active: st.Active, TxLPIEnabled: st.TxLPIEnabled, TxLPITimer: st.TxLPITimer}, nil
}

func (p *port) SetPDT(ctx context.Context, d time.Duration) (agent.ApplyResult, error) {
	res, err := p.b.act.SetTxLPI(ctx, p.name, eeectl.TxLPIRequest{Timer: d})
	if err != nil {
		return agent.ApplyResult{}, mapErr(err)
	}
	return agent.ApplyResult{Applied: res.Applied, Clamped: res.Clamped, Unchanged: res.Unchanged}, nil
}

// SetHold sets the hybrid hold of an emulated port (agent.HoldSetter);
// real NICs have no such register.
func (p *port) SetHold(ctx context.Context, d time.Duration) error {
	if !p.emulated {
		return fmt.Errorf("%s: hybrid hold: %w (only emulated ports have one)", p.name, agent.ErrNotSupported)
	}
	return mapErr(p.b.emu.SetHold(ctx, p.name, d))
}

// OwnLedger implements agent.LedgerPort: an emulated port whose EEE the
// agent drives (hw.eee_backend: emulated) applies the ledger itself.
func (p *port) OwnLedger() bool { return p.emulated && p.b.opts.Emulated }

// SetLedger implements agent.LedgerPort.
func (p *port) SetLedger(ctx context.Context, l agent.PortLedger) error {
	if !p.OwnLedger() {
		return fmt.Errorf("%s: delay ledger: %w (only emulated ports apply it themselves)", p.name, agent.ErrNotSupported)
	}
	return mapErr(p.b.emu.SetLedger(ctx, p.name, emulate.Ledger{On: l.On, Rate: l.Rate, Reserve: l.Reserve, Start: l.Start}))
}

// Ledger implements agent.LedgerPort.
func (p *port) Ledger(ctx context.Context) (agent.PortLedgerStatus, error) {
	if !p.OwnLedger() {
		return agent.PortLedgerStatus{}, fmt.Errorf("%s: delay ledger: %w", p.name, agent.ErrNotSupported)
	}
	st, err := p.b.emu.Status(ctx, p.name, observe.MonotonicNow())
	if err != nil {
		return agent.PortLedgerStatus{}, mapErr(err)
	}
	l := st.Ledger
	return agent.PortLedgerStatus{PortLedger: agent.PortLedger{On: l.On, Rate: l.Rate, Reserve: l.Reserve, Start: l.Start},
		Spent: l.Spent, Held: l.Held, Overruns: l.Overruns}, nil
}

func (p *port) Restore(ctx context.Context, s agent.Settings) error {
	return p.b.Restore(ctx, p.name, s)
}

func (p *port) Counters(ctx context.Context) (agent.PortCounters, error) {
	var c agent.PortCounters
	if m := p.b.opts.Model; m != nil {
		c.CarrierChanges, _ = m.CarrierChanges(p.name)
		return c, nil
	}
	if p.b.opts.NetNS == "" {
		n, err := readCarrierChanges(p.name)
		if err != nil {
			return c, err
		}
		c.CarrierChanges = n
	} else {
		p.b.mu.Lock()
		c.CarrierChanges = p.b.carrier[p.name]
		p.b.mu.Unlock()
	}
	if p.emulated {
		// The emulator's own account: time in Fast Wake and Deep Sleep,
		// power-downs (one per miss, and the idle period in progress if
		// it has gone down).
		st, err := p.b.emu.Status(ctx, p.name, observe.MonotonicNow())
		if err != nil {
			return c, mapErr(err)
		}
		c.LowPowerTime, c.LowPowerKnown = st.Times.FastWake+st.Times.DeepSleep, true
		c.LPIEntries, c.LPIEntriesKnown = st.Misses, true
		switch st.State {
		case emulate.StateGoingDown.String(), emulate.StateFastWake.String(), emulate.StateDeepSleep.String():
			c.LPIEntries++
		}
		return c, nil
	}
	if st, err := p.b.ethtool.LPICounters(ctx, p.name); err == nil {
		c.LowPowerTime, c.LowPowerKnown, c.LPIEntries, c.LPIEntriesKnown = lpiFromStats(st)
	}
	return c, nil
}

// ErrorCounters reads the port's error and drop counters (the kernel's
// link statistics, stats64: /sys/class/net/NAME/statistics in the agent's
// own namespace, rtnetlink IFLA_STATS64 in hw.netns) for the agent's harm
// check (safety.harm_*). Model ports have none (all zero).
func (p *port) ErrorCounters(context.Context) (agent.ErrorCounters, error) {
	if p.b.opts.Model != nil {
		return agent.ErrorCounters{}, nil
	}
	if p.b.opts.NetNS == "" {
		return readErrorCounters(p.name)
	}
	e, err := observe.ReadLinkErrors(p.b.opts.NetNS, p.name)
	if err != nil {
		return agent.ErrorCounters{}, mapErr(err)
	}
	return agent.ErrorCounters{RxErrors: e.RxErrors, TxErrors: e.TxErrors, RxCRCErrors: e.RxCRCErrors,
		RxDropped: e.RxDropped, TxDropped: e.TxDropped}, nil
}

// readErrorCounters reads /sys/class/net/NAME/statistics (dev_get_stats,
// the same rtnl_link_stats64 as IFLA_STATS64) in the agent's namespace.
func readErrorCounters(name string) (agent.ErrorCounters, error) {
	var c agent.ErrorCounters
	if strings.ContainsAny(name, "/") || name == "." || name == ".." {
		return c, fmt.Errorf("%q: bad interface name", name)
	}
	for _, f := range []struct {
		file string
		v    *uint64
	}{{"rx_errors", &c.RxErrors}, {"tx_errors", &c.TxErrors}, {"rx_crc_errors", &c.RxCRCErrors},
		{"rx_dropped", &c.RxDropped}, {"tx_dropped", &c.TxDropped}} {
		data, err := os.ReadFile("/sys/class/net/" + name + "/statistics/" + f.file)
		if errors.Is(err, os.ErrNotExist) {
			return c, fmt.Errorf("%s: %w", name, agent.ErrPortGone)
		}
		if err != nil {
			return c, err
		}
		if *f.v, err = strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64); err != nil {
			return c, fmt.Errorf("%s: statistics/%s: %w", name, f.file, err)
		}
	}
	return c, nil
}

// readCarrierChanges reads /sys/class/net/NAME/carrier_changes (the
// agent's own network namespace).
func readCarrierChanges(name string) (uint64, error) {
	if strings.ContainsAny(name, "/") || name == "." || name == ".." {
		return 0, fmt.Errorf("%q: bad interface name", name)
	}
	data, err := os.ReadFile("/sys/class/net/" + name + "/carrier_changes")
	if errors.Is(err, os.ErrNotExist) {
		return 0, fmt.Errorf("%s: %w", name, agent.ErrPortGone)
	}
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
}

// lpiFromStats reads driver LPI statistics: counters named like tx LPI
// entries (igc tx_lpi_counter, stmmac irq_tx_path_in_lpi_mode_n) and LPI
// time in µs where a driver reports it ("…lpi…time…" or "…lpi…_us").
// Names are driver-specific and partly unverified (docs/hwlink.md).
func lpiFromStats(st map[string]uint64) (t time.Duration, tOK bool, entries uint64, eOK bool) {
	for k, v := range st {
		k = strings.ToLower(k)
		if !strings.Contains(k, "lpi") || !strings.Contains(k, "tx") {
			continue
		}
		switch {
		case strings.Contains(k, "time") || strings.HasSuffix(k, "_us"):
			if v < math.MaxInt64/uint64(time.Microsecond) {
				t += time.Duration(v) * time.Microsecond
				tOK = true
			}
		case strings.Contains(k, "exit"):
		default:
			entries += v
			eOK = true
		}
	}
	return t, tOK, entries, eOK
}

func (p *port) Close() error {
	p.b.forget(p)
	p.cancel()
	_ = p.claim.Release()
	if p.obs != nil {
		return p.obs.Close()
	}
	return nil
}

// mapErr wraps hwlink's sentinels with the agent's.
func mapErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, hwlink.ErrNotSupported):
		return fmt.Errorf("%w: %w", agent.ErrNotSupported, err)
	case errors.Is(err, hwlink.ErrNoDevice):
		return fmt.Errorf("%w: %w", agent.ErrPortGone, err)
	}
	return err
}
