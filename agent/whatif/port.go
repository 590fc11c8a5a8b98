package whatif

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/lpictl/lpictl/agent"
	"github.com/lpictl/lpictl/agent/hwbackend"
	"github.com/lpictl/lpictl/configs"
	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/eeectl"
	"github.com/lpictl/lpictl/hwlink/emulate"
	"github.com/lpictl/lpictl/hwlink/netdev"
	"github.com/lpictl/lpictl/hwlink/observe"
	"github.com/lpictl/lpictl/sim/estimate"
	"github.com/lpictl/lpictl/sim/power"
)

// portState is one port under observation.
type portState struct {
	out     Port
	obs     observe.Observer
	est     *estimate.Estimator
	preset  *power.Preset
	caps    eeectl.DriverCaps
	eeeOn   bool
	hasEEE  bool
	start   observe.GapStats
	statsOK bool
	rate    float64 // bits per second for busy time
	// lastTxEnd is when the last observed packet's transmission ended.
	lastTxEnd time.Duration
	sawGap    bool
}

func openPort(ctx context.Context, o Options, p netdev.PortInfo, start time.Duration) (*portState, error) {
	caps, _ := eeectl.LookupDriver(p.Driver.TableName())
	s := &portState{caps: caps}
	s.out = Port{Device: p.Name, Driver: p.Driver.TableName(), SpeedBps: p.Speed, EEE: "none",
		TimerSettable: p.Actuation.CanSetTimer, LinkFlapOnChange: caps.LinkFlap, DriverDefaultPDTS: caps.DefaultTimer.Seconds(),
		Estimates: []Estimate{}}
	if p.EEE != nil && len(p.EEE.Supported) > 0 {
		s.hasEEE, s.eeeOn, s.out.EEE = true, p.EEE.Enabled, onOff(p.EEE.Enabled)
	}
	pp := agent.PortPreset{Speed: p.Speed, Virtual: hwbackend.VirtualKind(p.Kind)}
	if st, ok := emulatorOf(ctx, o, p); ok {
		// An emulated EEE port (`lpictl emulate attach`): its own preset,
		// driver profile and EEE registers.
		pp.Own = hwbackend.EmulatorPreset(st)
		if c, ok := eeectl.LookupDriver(st.Driver); ok {
			c.LinkFlap = false // the emulator bounces no link
			caps, s.caps = c, c
		}
		s.hasEEE, s.eeeOn = true, st.EEEEnabled
		s.out.Driver = hwbackend.EmulatedDriverPrefix + st.Driver
		s.out.EEE = onOff(st.EEEEnabled)
		s.out.TimerSettable, s.out.LinkFlapOnChange, s.out.DriverDefaultPDTS = caps.TimerSettable, caps.LinkFlap, caps.DefaultTimer.Seconds()
	}
	if err := s.newEstimator(o, p, pp, start); err != nil {
		return nil, err
	}
	var err error
	s.obs, s.out.Observation, err = attach(ctx, o, p)
	if err != nil {
		s.out.Error = err.Error()
		s.out.Observation = string(observe.MethodNone)
		return s, nil
	}
	if err := s.obs.ReadStats(observe.Egress, &s.start); err == nil {
		s.statsOK = true
	}
	return s, nil
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

// newEstimator chooses the port's preset (agent.EstimatePreset) and, if
// there is one, its estimator: the agent's default predictor and
// controller; t_w is each mode's (the estimator fills it).
func (s *portState) newEstimator(o Options, p netdev.PortInfo, pp agent.PortPreset, start time.Duration) error {
	pr, from, why, err := agent.EstimatePreset(o.Preset, o.FallbackPreset, pp)
	if err != nil {
		return configs.BadInput(err)
	}
	s.out.PresetFrom = from
	s.rate = float64(p.Speed)
	if pr == nil {
		// Say so rather than guess: no estimate for this port.
		s.out.PresetNote = "preset unknown: " + why + ": set --preset (or --fallback-preset)"
		return nil
	}
	s.preset = pr
	s.out.Preset = pr.Name
	if s.rate <= 0 || pp.Virtual != "" || pp.Own != nil {
		s.rate = pr.RateBps
	}
	caps := s.caps
	spec := agent.Default().Spec(p.Name, agent.Register{Unit: caps.Unit, Min: caps.Min, Max: caps.Max}, 0, nil)
	spec.Predictor.WakeTime = 0
	s.est, err = estimate.New(estimate.Config{Preset: pr,
		Policies:  agent.EstimatePolicies(agent.EstimatePolicyKinds, o.FixedPDT, caps.DefaultTimer),
		Predictor: spec.Predictor, Controller: spec.Controller, Start: start})
	if err != nil {
		return fmt.Errorf("%s: estimator: %w", p.Name, err)
	}
	return nil
}

// attach opens the port's observer: eBPF where the plan says so (and
// o.Observe allows), else polled counters.
func attach(ctx context.Context, o Options, p netdev.PortInfo) (observe.Observer, string, error) {
	ns := hwlink.NetNS(o.NetNS)
	m := p.Observation.Method
	if o.Observe == ObserveEBPF || (o.Observe == ObserveAuto && m == observe.MethodEBPF) {
		obs, err := observe.AttachEBPF(ctx, observe.EBPFConfig{Interface: p.Name, NetNS: ns, Speed: p.Speed,
			Logger: slog.New(slog.DiscardHandler)})
		if err == nil {
			return obs, string(observe.MethodEBPF), nil
		}
		if o.Observe == ObserveEBPF {
			return nil, "", fmt.Errorf("eBPF: %w", err)
		}
	}
	if o.Observe == ObserveAuto && m == observe.MethodNone {
		return nil, "", errors.New("nothing can observe this port: " + p.Observation.Reason)
	}
	obs, err := observe.NewCounterObserver(observe.CounterConfig{Interface: p.Name, NetNS: ns, Hardware: p.Switchdev})
	if err != nil {
		return nil, "", fmt.Errorf("counters: %w", err)
	}
	go func() { _ = obs.Run(ctx, func(error) {}) }()
	return obs, string(obs.Method()), nil
}

// emulatorOf reads the status of the port's emulator (`lpictl emulate
// attach`, pins under o.BPFFS), if it has one.
func emulatorOf(ctx context.Context, o Options, p netdev.PortInfo) (emulate.Status, bool) {
	ep, err := emulate.Open(ctx, emulate.Ref{Interface: p.Name, NetNS: hwlink.NetNS(o.NetNS), BPFFS: o.BPFFS})
	if err != nil {
		return emulate.Status{}, false
	}
	defer ep.Close()
	st, err := ep.Status(observe.MonotonicNow())
	return st, err == nil
}

// finish fills the port's figures and recommendation.
func (s *portState) finish(now, start, maxDelay time.Duration) {
	el := now - start
	s.out.ElapsedS = el.Seconds()
	if s.obs != nil && s.statsOK {
		var st observe.GapStats
		if err := s.obs.ReadStats(observe.Egress, &st); err == nil {
			s.out.Packets, s.out.Bytes = st.Packets-s.start.Packets, st.Bytes-s.start.Bytes
		}
	}
	if el > 0 && s.rate > 0 {
		busy := float64(s.out.Bytes) * 8 / s.rate
		s.out.IdleShare = max(0, 1-busy/el.Seconds())
	}
	if s.obs != nil && s.est == nil && s.out.PresetNote != "" {
		s.out.Recommendation = Recommendation{Action: ActionNoEstimates, Text: "no estimate: " + s.out.PresetNote}
		return
	}
	if s.est == nil || s.obs == nil {
		s.out.Recommendation = Recommendation{Action: ActionNoEstimates, Text: "no estimate: the port could not be observed"}
		return
	}
	pkts := s.out.Packets
	if pkts == 0 {
		pkts = s.out.IdlePeriods
	}
	for _, r := range s.est.Results(now) {
		e := Estimate{Row: estimate.NewRow(r, s.out.IdlePeriods), PDTS: s.policyPDT(r).Seconds()}
		if r.Elapsed > 0 {
			e.AddedDelayPerS = r.AddedDelay.Seconds() / r.Elapsed.Seconds()
		}
		if pkts > 0 {
			e.AddedDelayPerPacketS = r.AddedDelay.Seconds() / float64(pkts)
		}
		e.WithinMaxDelay = e.AddedDelayPerPacketS <= maxDelay.Seconds()
		s.out.Estimates = append(s.out.Estimates, e)
	}
	s.out.Recommendation = Recommend(s.out, s.hasEEE, s.eeeOn, s.caps, maxDelay)
}

// policyPDT is the t_PDT a policy stands for (the predictor's: its mean;
// the driver's default timer before any idle period).
func (s *portState) policyPDT(r estimate.Result) time.Duration {
	if r.Kind == estimate.DriverDefault && r.MeanPDT <= 0 {
		return s.caps.DefaultTimer
	}
	return r.MeanPDT
}
