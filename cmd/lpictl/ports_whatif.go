package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/lpictl/lpictl/agent"
	"github.com/lpictl/lpictl/agent/hwbackend"
	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/eeectl"
	"github.com/lpictl/lpictl/hwlink/emulate"
	"github.com/lpictl/lpictl/hwlink/netdev"
	"github.com/lpictl/lpictl/hwlink/observe"
	"github.com/lpictl/lpictl/sim/estimate"
	"github.com/lpictl/lpictl/sim/power"
)

// Bounds and defaults of `lpictl ports --what-if`.
const (
	portsMaxWhatIf = time.Hour
	// portsDefaultMaxDelay bounds the mean delay a recommended policy may add
	// per packet: about one 1000BASE-T Deep Sleep wake-up (t_w 16.5 µs).
	portsDefaultMaxDelay = 20 * time.Microsecond
	portsWhatIfPoll      = 20 * time.Millisecond
)

// portsWhatIfOptions are the --what-if flags.
type portsWhatIfOptions struct {
	duration       time.Duration
	maxDelay       time.Duration
	preset         string
	fallbackPreset string
	fixedPDT       time.Duration
	observe        string
	ports          []string
	netns          string
	bpffs          string // where emulated ports' pins are (`lpictl emulate attach --bpffs`)
	all            bool
	asJSON         bool
}

// portsWhatIfReport is the --json output of `lpictl ports --what-if`
// (docs/agent.md "What EEE would save"): every key is always present.
type portsWhatIfReport struct {
	DurationS   float64           `json:"duration_s"`
	MaxDelayS   float64           `json:"max_delay_per_packet_s"`
	FixedPDTS   float64           `json:"fixed_pdt_s"`
	Ports       []portsWhatIfPort `json:"ports"`
	Assumptions []string          `json:"assumptions"`
	Interrupted bool              `json:"interrupted"`
}

type portsWhatIfPort struct {
	Device            string                    `json:"device"`
	Driver            string                    `json:"driver"`
	SpeedBps          uint64                    `json:"speed_bps"`
	Observation       string                    `json:"observation"`
	Preset            string                    `json:"preset"`
	PresetFrom        string                    `json:"preset_from"`
	PresetNote        string                    `json:"preset_note"`
	EEE               string                    `json:"eee"`
	TimerSettable     bool                      `json:"timer_settable"`
	LinkFlapOnChange  bool                      `json:"link_flap_on_change"`
	DriverDefaultPDTS float64                   `json:"driver_default_pdt_s"`
	ElapsedS          float64                   `json:"elapsed_s"`
	Packets           uint64                    `json:"packets"`
	Bytes             uint64                    `json:"bytes"`
	IdlePeriods       uint64                    `json:"idle_periods"`
	IdleShare         float64                   `json:"idle_share"`
	Estimates         []portsWhatIfEstimate     `json:"estimates"`
	Recommendation    portsWhatIfRecommendation `json:"recommendation"`
	Error             string                    `json:"error"`
}

type portsWhatIfEstimate struct {
	Policy               string  `json:"policy"`
	Kind                 string  `json:"kind"`
	Mode                 string  `json:"mode"`
	PDTS                 float64 `json:"pdt_s"`
	MeanPDTS             float64 `json:"mean_pdt_s"`
	IdlePeriods          uint64  `json:"idle_periods"`
	Hits                 uint64  `json:"hits"`
	Misses               uint64  `json:"misses"`
	WakeUps              uint64  `json:"wakeups"`
	LowPowerS            float64 `json:"low_power_s"`
	LowPowerShare        float64 `json:"low_power_share"`
	EnergyJ              float64 `json:"energy_j"`
	AlwaysOnEnergyJ      float64 `json:"always_on_energy_j"`
	SavedJ               float64 `json:"saved_j"`
	SavedW               float64 `json:"saved_w"`
	SavedPct             float64 `json:"saved_pct"`
	AddedDelayS          float64 `json:"added_delay_s"`
	AddedDelayPerS       float64 `json:"added_delay_per_s"`
	AddedDelayPerPacketS float64 `json:"added_delay_per_packet_s"`
	WithinMaxDelay       bool    `json:"within_max_delay"`
}

// Recommendation actions.
const (
	recSetTimer    = "set-timer"
	recLeaveOn     = "leave-eee-on"
	recTurnOn      = "turn-eee-on"
	recTurnOff     = "turn-eee-off"
	recLeaveOff    = "leave-eee-off"
	recNoEEE       = "no-eee"
	recNoEstimates = "none"
)

type portsWhatIfRecommendation struct {
	Action          string  `json:"action"`
	Policy          string  `json:"policy"`
	Mode            string  `json:"mode"`
	PDTS            float64 `json:"pdt_s"`
	SavedW          float64 `json:"saved_w"`
	SavedPct        float64 `json:"saved_pct"`
	LinkFlapWarning bool    `json:"link_flap_warning"`
	Text            string  `json:"text"`
}

// validate checks the flags (bad input: exit 2).
func (o *portsWhatIfOptions) validate() error {
	switch {
	case o.duration <= 0:
		return fmt.Errorf("--what-if %v: want a positive duration such as 10s", o.duration)
	case o.duration > portsMaxWhatIf:
		return fmt.Errorf("--what-if %v: at most %v", o.duration, portsMaxWhatIf)
	case o.maxDelay < 0:
		return fmt.Errorf("--max-delay %v: must be ≥ 0", o.maxDelay)
	case o.fixedPDT < 0:
		return fmt.Errorf("--fixed-pdt %v: must be ≥ 0", o.fixedPDT)
	}
	switch o.observe {
	case "auto", "ebpf", "counters":
	default:
		return fmt.Errorf("--observe %q: want auto, ebpf or counters", o.observe)
	}
	for _, k := range []struct{ flag, name string }{{"--preset", o.preset}, {"--fallback-preset", o.fallbackPreset}} {
		if k.name == "" {
			continue
		}
		if _, err := power.Load(k.name); err != nil {
			return fmt.Errorf("%s: %w", k.flag, err)
		}
	}
	return nil
}

// portsWhatIfPortState is one port under observation.
type portsWhatIfPortState struct {
	out     portsWhatIfPort
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

// runPortsWhatIf observes the selected ports for o.duration and reports.
func runPortsWhatIf(ctx context.Context, w io.Writer, o portsWhatIfOptions, ports []netdev.PortInfo) error {
	var sel []netdev.PortInfo
	for _, p := range ports {
		if len(o.ports) > 0 {
			if slices.Contains(o.ports, p.Name) {
				sel = append(sel, p)
			}
			continue
		}
		if p.Carrier {
			sel = append(sel, p)
		}
	}
	for _, name := range o.ports {
		if !slices.ContainsFunc(sel, func(p netdev.PortInfo) bool { return p.Name == name }) {
			return badInput(fmt.Errorf("--port %q: no such port (see `lpictl ports`)", name))
		}
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	start := observe.MonotonicNow()
	states := make([]*portsWhatIfPortState, 0, len(sel))
	defer func() {
		for _, s := range states {
			if s.obs != nil {
				s.obs.Close()
			}
		}
	}()
	for _, p := range sel {
		s, err := openPortsWhatIf(ctx, o, p, start)
		if err != nil {
			return err
		}
		states = append(states, s)
	}
	for _, s := range states {
		if s.est != nil {
			// The observation starts with the port taken as idle: the
			// first gap (clipped to start) ends this period.
			s.est.IdleStart(start)
		}
	}
	buf := make([]observe.GapSample, 4096)
	drain := func() {
		for _, s := range states {
			if s.obs == nil || s.est == nil {
				continue
			}
			for {
				n, err := s.obs.DrainGaps(buf)
				if err != nil {
					if s.out.Error == "" {
						s.out.Error = "observe: " + err.Error()
					}
					break
				}
				for _, g := range buf[:n] {
					if g.Dir != observe.Egress || g.Length <= 0 || g.End <= start {
						continue
					}
					l := min(g.Length, g.End-start) // clip to the observation
					if !s.sawGap && g.End-l > start {
						// The first packet after attaching has no gap
						// sample: it ended the idle period the
						// observation started with (about when this
						// gap starts, one transmission earlier).
						s.est.Idle(g.End-l, g.End-l-start)
						s.out.IdlePeriods++
					}
					s.sawGap = true
					s.est.Idle(g.End, l)
					s.out.IdlePeriods++
					// The packet's transmission ends about here; the
					// idle period after the last one is still open.
					s.lastTxEnd = g.End + time.Duration(float64(g.PacketLen)*8/s.rate*float64(time.Second))
				}
				if n < len(buf) {
					break
				}
			}
		}
	}
	deadline := time.NewTimer(o.duration)
	defer deadline.Stop()
	tick := time.NewTicker(portsWhatIfPoll)
	defer tick.Stop()
	interrupted := false
loop:
	for {
		select {
		case <-ctx.Done():
			interrupted = true
			break loop
		case <-deadline.C:
			break loop
		case <-tick.C:
			drain()
		}
	}
	drain()
	now := observe.MonotonicNow()
	for _, s := range states {
		if s.est != nil && s.lastTxEnd > start && s.lastTxEnd < now {
			s.est.IdleStart(s.lastTxEnd) // the period in progress counts as idle up to now
		}
	}
	rep := portsWhatIfReport{DurationS: (now - start).Seconds(), MaxDelayS: o.maxDelay.Seconds(), FixedPDTS: o.fixedPDT.Seconds(),
		Ports: []portsWhatIfPort{}, Assumptions: portsWhatIfAssumptions, Interrupted: interrupted}
	for _, s := range states {
		s.finish(now, start, o.maxDelay)
		rep.Ports = append(rep.Ports, s.out)
	}
	if o.asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return writePortsWhatIfTable(w, rep)
}

// portsWhatIfAssumptions are stated in every report.
var portsWhatIfAssumptions = []string{
	"host-only view: the link partner's EEE and the LPI handshake are not seen; a port is taken to sleep when its own transmit side has been idle for t_PDT",
	"power preset: --preset, else an emulated port's own, else by link speed (not a virtual device's: veth's 10 Gb/s means nothing), else --fallback-preset if set, else no estimate; figures are per PHY (one link end)",
	"observed gaps are taken as they are: added delay does not shift later traffic",
	"the predictor policy sees every packet as one hop (h = 1)",
}

func openPortsWhatIf(ctx context.Context, o portsWhatIfOptions, p netdev.PortInfo, start time.Duration) (*portsWhatIfPortState, error) {
	caps, _ := eeectl.LookupDriver(p.Driver.TableName())
	s := &portsWhatIfPortState{caps: caps}
	s.out = portsWhatIfPort{Device: p.Name, Driver: p.Driver.TableName(), SpeedBps: p.Speed, EEE: "none",
		TimerSettable: p.Actuation.CanSetTimer, LinkFlapOnChange: caps.LinkFlap, DriverDefaultPDTS: caps.DefaultTimer.Seconds(),
		Estimates: []portsWhatIfEstimate{}}
	if p.EEE != nil && len(p.EEE.Supported) > 0 {
		s.hasEEE = true
		s.eeeOn = p.EEE.Enabled
		s.out.EEE = "off"
		if p.EEE.Enabled {
			s.out.EEE = "on"
		}
	}
	pp := agent.PortPreset{Speed: p.Speed, Virtual: hwbackend.VirtualKind(p.Kind)}
	if st, ok := portsEmulator(ctx, o, p); ok {
		// An emulated EEE port (`lpictl emulate attach`): its own preset,
		// driver profile and EEE registers.
		pp.Own = hwbackend.EmulatorPreset(st)
		if c, ok := eeectl.LookupDriver(st.Driver); ok {
			c.LinkFlap = false // the emulator bounces no link
			caps = c
			s.caps = c
		}
		s.hasEEE, s.eeeOn = true, st.EEEEnabled
		s.out.Driver = hwbackend.EmulatedDriverPrefix + st.Driver
		s.out.EEE = map[bool]string{true: "on", false: "off"}[st.EEEEnabled]
		s.out.TimerSettable, s.out.LinkFlapOnChange, s.out.DriverDefaultPDTS = caps.TimerSettable, caps.LinkFlap, caps.DefaultTimer.Seconds()
	}
	pr, from, why, err := agent.EstimatePreset(o.preset, o.fallbackPreset, pp)
	if err != nil {
		return nil, badInput(err)
	}
	s.out.PresetFrom = from
	s.rate = float64(p.Speed)
	if pr == nil {
		// Say so rather than guess: no estimate for this port.
		s.out.PresetNote = "preset unknown: " + why + ": set --preset (or --fallback-preset)"
	} else {
		s.preset = pr
		s.out.Preset = pr.Name
		if s.rate <= 0 || pp.Virtual != "" || pp.Own != nil {
			s.rate = pr.RateBps
		}
	}
	// The agent's default predictor and controller; t_w is each mode's
	// (the estimator fills it).
	spec := agent.Default().Spec(p.Name, agent.Register{Unit: caps.Unit, Min: caps.Min, Max: caps.Max}, 0, nil)
	spec.Predictor.WakeTime = 0
	if pr != nil {
		s.est, err = estimate.New(estimate.Config{Preset: pr,
			Policies:  agent.EstimatePolicies(agent.EstimatePolicyKinds, o.fixedPDT, caps.DefaultTimer),
			Predictor: spec.Predictor, Controller: spec.Controller, Start: start})
		if err != nil {
			return nil, fmt.Errorf("%s: estimator: %w", p.Name, err)
		}
	}
	s.obs, s.out.Observation, err = attachPortsWhatIf(ctx, o, p)
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

// attachPortsWhatIf opens the port's observer: eBPF where the plan says so
// (and --observe allows), else polled counters.
func attachPortsWhatIf(ctx context.Context, o portsWhatIfOptions, p netdev.PortInfo) (observe.Observer, string, error) {
	ns := hwlink.NetNS(o.netns)
	m := p.Observation.Method
	if o.observe == "ebpf" || (o.observe == "auto" && m == observe.MethodEBPF) {
		obs, err := observe.AttachEBPF(ctx, observe.EBPFConfig{Interface: p.Name, NetNS: ns, Speed: p.Speed,
			Logger: slog.New(slog.DiscardHandler)})
		if err == nil {
			return obs, string(observe.MethodEBPF), nil
		}
		if o.observe == "ebpf" {
			return nil, "", fmt.Errorf("eBPF: %w", err)
		}
	}
	if o.observe == "auto" && m == observe.MethodNone {
		return nil, "", errors.New("nothing can observe this port: " + p.Observation.Reason)
	}
	obs, err := observe.NewCounterObserver(observe.CounterConfig{Interface: p.Name, NetNS: ns, Hardware: p.Switchdev})
	if err != nil {
		return nil, "", fmt.Errorf("counters: %w", err)
	}
	go func() { _ = obs.Run(ctx, func(error) {}) }()
	return obs, string(obs.Method()), nil
}

// finish fills the port's figures and recommendation.
func (s *portsWhatIfPortState) finish(now, start, maxDelay time.Duration) {
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
		s.out.Recommendation = portsWhatIfRecommendation{Action: recNoEstimates, Text: "no estimate: " + s.out.PresetNote}
		return
	}
	if s.est == nil || s.obs == nil {
		s.out.Recommendation = portsWhatIfRecommendation{Action: recNoEstimates, Text: "no estimate: the port could not be observed"}
		return
	}
	pkts := s.out.Packets
	if pkts == 0 {
		pkts = s.out.IdlePeriods
	}
	for _, r := range s.est.Results(now) {
		e := portsWhatIfEstimate{Policy: r.Policy, Kind: r.Kind, Mode: string(r.Mode), PDTS: portsPolicyPDT(r, s).Seconds(), MeanPDTS: r.MeanPDT.Seconds(),
			IdlePeriods: r.IdlePeriods, Hits: r.Hits, Misses: r.Misses, WakeUps: r.WakeUps, LowPowerS: r.LowPower.Seconds(),
			EnergyJ: r.EnergyJ, AlwaysOnEnergyJ: r.AlwaysOnEnergyJ, SavedJ: r.SavedJ, SavedW: r.SavedW, SavedPct: r.SavedPct,
			AddedDelayS: r.AddedDelay.Seconds()}
		if r.Elapsed > 0 {
			e.LowPowerShare = r.LowPower.Seconds() / r.Elapsed.Seconds()
			e.AddedDelayPerS = r.AddedDelay.Seconds() / r.Elapsed.Seconds()
		}
		if pkts > 0 {
			e.AddedDelayPerPacketS = r.AddedDelay.Seconds() / float64(pkts)
		}
		e.WithinMaxDelay = e.AddedDelayPerPacketS <= maxDelay.Seconds()
		s.out.Estimates = append(s.out.Estimates, e)
	}
	s.out.Recommendation = recommendPort(s.out, s.hasEEE, s.eeeOn, s.caps, maxDelay)
}

// portsPolicyPDT is the t_PDT a policy stands for (the predictor's: its mean).
func portsPolicyPDT(r estimate.Result, s *portsWhatIfPortState) time.Duration {
	switch r.Kind {
	case estimate.Fixed, estimate.DriverDefault, estimate.Predictor:
		if r.MeanPDT > 0 || r.Kind == estimate.Predictor {
			return r.MeanPDT
		}
		if r.Kind == estimate.DriverDefault {
			return s.caps.DefaultTimer
		}
	}
	return r.MeanPDT
}

// recommend turns a port's estimates into advice that fits its driver:
// a timer where it can be set, EEE on or off where only that exists, the
// saving it would have where the NIC has no EEE.
func recommendPort(p portsWhatIfPort, hasEEE, eeeOn bool, caps eeectl.DriverCaps, maxDelay time.Duration) portsWhatIfRecommendation {
	bound := portsDur(maxDelay)
	best := func(ok func(portsWhatIfEstimate) bool) (portsWhatIfEstimate, bool) {
		var b portsWhatIfEstimate
		found := false
		for _, e := range p.Estimates {
			if e.Kind == estimate.AlwaysOn || !e.WithinMaxDelay || !ok(e) {
				continue
			}
			if !found || e.SavedW > b.SavedW {
				b, found = e, true
			}
		}
		return b, found && b.SavedW > 0
	}
	rec := func(a string, e portsWhatIfEstimate, text string) portsWhatIfRecommendation {
		return portsWhatIfRecommendation{Action: a, Policy: e.Policy, Mode: e.Mode, PDTS: e.PDTS, SavedW: e.SavedW, SavedPct: e.SavedPct, Text: text}
	}
	saving := func(e portsWhatIfEstimate) string {
		return fmt.Sprintf("about %s (%.0f %% of the PHY) with %s (%s), adding %s per packet on average",
			portsWatts(e.SavedW), e.SavedPct, e.Policy, e.Mode, portsDur(portsSecs(e.AddedDelayPerPacketS)))
	}
	switch {
	case len(p.Estimates) == 0:
		return portsWhatIfRecommendation{Action: recNoEstimates, Text: "no estimate"}
	case !hasEEE:
		e, ok := best(func(portsWhatIfEstimate) bool { return true })
		if !ok {
			return rec(recNoEEE, portsWhatIfEstimate{}, fmt.Sprintf("no EEE on this NIC; it would save nothing worth having within %s added delay per packet even if it had it", bound))
		}
		return rec(recNoEEE, e, fmt.Sprintf("no EEE on this NIC: it would save %s, if it had it", saving(e)))
	case p.TimerSettable && caps.TimerSettable:
		e, ok := best(func(e portsWhatIfEstimate) bool { return e.Kind != estimate.PlainEEE || caps.Min == 0 })
		if !ok {
			r := rec(recTurnOff, portsWhatIfEstimate{}, fmt.Sprintf("no timer saves energy within %s added delay per packet here: leave the timer as it is or turn EEE off", bound))
			if !eeeOn {
				r.Action, r.Text = recLeaveOff, fmt.Sprintf("leave EEE off: no timer saves energy within %s added delay per packet", bound)
			}
			return r
		}
		t, _, _ := caps.Fit(portsSecs(e.PDTS))
		r := rec(recSetTimer, e, fmt.Sprintf("set the tx LPI timer to %d µs: saves %s", t.Microseconds(), saving(e)))
		r.PDTS = t.Seconds()
		if caps.LinkFlap {
			r.LinkFlapWarning = true
			r.Text += fmt.Sprintf("; changing the timer on %s takes the link down briefly, do it once", caps.Driver)
		}
		if !eeeOn {
			r.Text += " (EEE is off on this port: turn it on too)"
		}
		return r
	default:
		// Only EEE on/off: the driver's own timer (driver-default) if
		// known, else plain EEE (t_PDT 0) as the closest estimate.
		e, ok := best(func(e portsWhatIfEstimate) bool { return e.Kind == estimate.DriverDefault })
		if !ok && caps.DefaultTimer == 0 {
			e, ok = best(func(e portsWhatIfEstimate) bool { return e.Kind == estimate.PlainEEE })
		}
		var r portsWhatIfRecommendation
		switch {
		case ok && eeeOn:
			r = rec(recLeaveOn, e, "leave EEE on: it saves "+saving(e))
		case ok:
			r = rec(recTurnOn, e, "turn EEE on: it would save "+saving(e))
		case eeeOn:
			r = rec(recTurnOff, portsWhatIfEstimate{}, fmt.Sprintf("turn EEE off: with this traffic its wake-ups add more than %s per packet for little saving", bound))
		default:
			return rec(recLeaveOff, portsWhatIfEstimate{}, fmt.Sprintf("leave EEE off: with this traffic its wake-ups would add more than %s per packet", bound))
		}
		if caps.LinkFlap && (r.Action == recTurnOn || r.Action == recTurnOff) {
			r.LinkFlapWarning = true
			r.Text += fmt.Sprintf("; warning: toggling EEE on %s takes the link down and up", caps.Driver)
		}
		return r
	}
}

func portsSecs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func portsDur(d time.Duration) string {
	switch {
	case d == 0:
		return "0 s"
	case d < time.Microsecond:
		return fmt.Sprintf("%d ns", d.Nanoseconds())
	case d < time.Millisecond:
		return fmt.Sprintf("%.3g µs", float64(d)/float64(time.Microsecond))
	case d < time.Second:
		return fmt.Sprintf("%.3g ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.3g s", d.Seconds())
}

func portsWatts(w float64) string {
	if w < 1 {
		return fmt.Sprintf("%.3g mW", w*1000)
	}
	return fmt.Sprintf("%.3g W", w)
}

func writePortsWhatIfTable(w io.Writer, rep portsWhatIfReport) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PORT\tPOLICY\tMODE\tT_PDT\tIDLE\tLOW POWER\tSAVED W\tSAVED %\tDELAY/S\tDELAY/PKT\tWAKE-UPS")
	for _, p := range rep.Ports {
		for _, e := range p.Estimates {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.2f %%\t%.2f %%\t%s\t%.1f\t%s\t%s\t%d\n", p.Device, e.Policy, e.Mode, portsDur(portsSecs(e.PDTS)),
				100*p.IdleShare, 100*e.LowPowerShare, portsWatts(e.SavedW), e.SavedPct, portsDur(portsSecs(e.AddedDelayPerS)),
				portsDur(portsSecs(e.AddedDelayPerPacketS)), e.WakeUps)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, p := range rep.Ports {
		preset := fmt.Sprintf("preset %s (%s)", p.Preset, p.PresetFrom)
		if p.Preset == "" {
			preset = "preset unknown"
		}
		fmt.Fprintf(w, "\n%s (%s, %s, %s, %d packets in %.1f s):\n  %s\n", p.Device, p.Driver, p.Observation,
			preset, p.Packets, p.ElapsedS, p.Recommendation.Text)
		if p.Error != "" {
			fmt.Fprintf(w, "  error: %s\n", p.Error)
		}
	}
	fmt.Fprintf(w, "\nAssumptions: %s.\n", strings.Join(rep.Assumptions, "; "))
	if rep.Interrupted {
		fmt.Fprintf(w, "Interrupted after %.1f s: the figures cover the time observed.\n", rep.DurationS)
	}
	return nil
}

// portsEmulator reads the status of the port's emulator (`lpictl emulate
// attach`, pins under --bpffs), if it has one.
func portsEmulator(ctx context.Context, o portsWhatIfOptions, p netdev.PortInfo) (emulate.Status, bool) {
	ep, err := emulate.Open(ctx, emulate.Ref{Interface: p.Name, NetNS: hwlink.NetNS(o.netns), BPFFS: o.bpffs})
	if err != nil {
		return emulate.Status{}, false
	}
	defer ep.Close()
	st, err := ep.Status(observe.MonotonicNow())
	return st, err == nil
}
