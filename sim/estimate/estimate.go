package estimate

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/eee"
	"github.com/lpictl/lpictl/sim/power"
)

// Policy kinds.
const (
	AlwaysOn      = "always-on"      // never sleeps
	PlainEEE      = "eee"            // t_PDT 0: down as soon as the queue empties
	DriverDefault = "driver-default" // the driver's own tx LPI timer (Policy.PDT)
	Fixed         = "fixed"          // a constant t_PDT (Policy.PDT)
	Predictor     = "predictor"      // Config.Predictor through a controller.Port
)

// DefaultFixedPDT is the default fixed policy's t_PDT (docs/model.md §2.2's initial
// t_PDT).
const DefaultFixedPDT = 10 * time.Microsecond

// Policy is one way of choosing t_PDT.
type Policy struct {
	// Name labels the policy's results (default: its kind; fixed-<PDT>
	// for Fixed). Names are unique.
	Name string
	Kind string
	PDT  time.Duration // t_PDT of Fixed and DriverDefault
}

// Config configures an Estimator.
type Config struct {
	// Preset is the port's power preset (see PresetForSpeed). Required.
	Preset *power.Preset
	// Modes are the low-power modes to estimate: fast-wake and deep-sleep
	// (hybrid and always-on are refused: always-on is a policy). Default:
	// fast-wake (if the preset has it) and deep-sleep (if it has it).
	Modes []power.Mode
	// Policies default to DefaultPolicies(); a DriverDefault policy is the
	// caller's to add when the driver's timer is known.
	Policies []Policy
	// Predictor configures the Predictor policy; WakeTime defaults to each
	// mode's t_w.
	Predictor predictor.Config
	// Controller configures the Predictor policy's controller.Port.
	Controller controller.Config
	// Start is when the estimator starts (the backend's clock).
	Start time.Duration
	// Handshake is the one-way power-down handshake H (eee.Params): the
	// port starts going down 2H after t_PDT. Default 0: a host sees no
	// peer handshake. Must be ≥ 0.
	Handshake time.Duration
}

// DefaultPolicies are always-on, eee, fixed DefaultFixedPDT and predictor.
func DefaultPolicies() []Policy {
	return []Policy{
		{Name: AlwaysOn, Kind: AlwaysOn},
		{Name: PlainEEE, Kind: PlainEEE},
		{Name: "fixed-" + DefaultFixedPDT.String(), Kind: Fixed, PDT: DefaultFixedPDT},
		{Name: Predictor, Kind: Predictor},
	}
}

// Result is one policy × mode's estimate at a time now.
type Result struct {
	Policy string
	Kind   string
	Mode   power.Mode
	// Elapsed is now − Start.
	Elapsed time.Duration
	// IdlePeriods counts the idle periods the modelled port saw (Hits +
	// Misses); Absorbed those it did not see because it was still waking
	// up when they ended (see the package doc).
	IdlePeriods, Hits, Misses, WakeUps uint64
	Absorbed                           uint64
	// LowPower is the time in Fast Wake or Deep Sleep.
	LowPower time.Duration
	// AddedDelay is what the packets ending idle periods waited for the
	// port's power state: t_w per miss plus t_s remainders (and the waits
	// of absorbed periods' packets).
	AddedDelay time.Duration
	// EnergyJ is the port's energy over Elapsed, AlwaysOnEnergyJ that of
	// an always-on port (P_wake × Elapsed).
	EnergyJ, AlwaysOnEnergyJ float64
	// SavedJ = AlwaysOnEnergyJ − EnergyJ; SavedPct is it as a percentage
	// of AlwaysOnEnergyJ, SavedW as mean power (SavedJ / Elapsed).
	SavedJ, SavedPct, SavedW float64
	// MeanPDT is the mean over idle periods of the t_PDT armed (Predictor:
	// the controller's decisions); 0 for always-on, which arms none.
	MeanPDT time.Duration
}

// maxPDT is the shortest t_PDT the picosecond clock cannot hold: it never
// expires (as in the simulator).
const maxPDT = time.Duration(math.MaxInt64 / 1000)

// ps converts to the link model's picoseconds (eee.Never beyond range).
func ps(d time.Duration) int64 {
	if d >= maxPDT {
		return eee.Never
	}
	return int64(d) * 1000
}

// port is one policy × mode.
type port struct {
	link   eee.Link
	params eee.Params
	ctl    *controller.Port // Predictor only
	pdt    int64            // armed t_PDT (ps) of the other kinds
	kind   string
	timer  bool // the policy arms a timer (all but always-on)
	name   string
	mode   power.Mode
	wakeW  float64
	lowW   float64 // power of the mode's low-power state

	armed    bool  // IdleStart armed the period starting at armedAt
	armedAt  int64 // ps
	armedPDT int64 // ps

	hits, misses, absorbed uint64
	delay                  int64   // ps
	sumPDT                 float64 // ns, over idle periods
}

// Estimator runs every policy × mode over one port's idle periods. It is
// not safe for concurrent use.
type Estimator struct {
	ports   []port
	start   time.Duration
	pending bool          // an idle period started (IdleStart) and has not ended
	pendAt  time.Duration // its start
}

// New validates cfg and returns an estimator starting at cfg.Start with
// the port busy (awake).
func New(cfg Config) (*Estimator, error) {
	if cfg.Preset == nil {
		return nil, errors.New("estimate: preset: required")
	}
	if err := cfg.Preset.Validate(); err != nil {
		return nil, fmt.Errorf("estimate: preset %s: %w", cfg.Preset.Name, err)
	}
	if cfg.Start < 0 || cfg.Start >= maxPDT {
		return nil, fmt.Errorf("estimate: start: must be in [0, %v), got %v", maxPDT, cfg.Start)
	}
	if cfg.Handshake < 0 || cfg.Handshake > time.Second {
		return nil, fmt.Errorf("estimate: handshake: must be in [0, 1s], got %v", cfg.Handshake)
	}
	modes := cfg.Modes
	if len(modes) == 0 {
		modes = cfg.Preset.LowPowerModes()
	}
	for i, m := range modes {
		if m != power.FastWake && m != power.DeepSleep {
			return nil, fmt.Errorf("estimate: modes[%d]: %q: want fast-wake or deep-sleep (always-on is a policy; hybrid is not estimated)", i, m)
		}
		if _, err := cfg.Preset.State(m); err != nil {
			return nil, fmt.Errorf("estimate: modes[%d]: %w", i, err)
		}
		for _, o := range modes[:i] {
			if o == m {
				return nil, fmt.Errorf("estimate: modes[%d]: %s given twice", i, m)
			}
		}
	}
	pols := cfg.Policies
	if len(pols) == 0 {
		pols = DefaultPolicies()
	}
	names := make(map[string]bool, len(pols))
	e := &Estimator{ports: make([]port, 0, len(pols)*len(modes)), start: cfg.Start}
	for i, pol := range pols {
		switch pol.Kind {
		case AlwaysOn, PlainEEE, Predictor:
			if pol.PDT != 0 {
				return nil, fmt.Errorf("estimate: policies[%d].pdt: only fixed and driver-default take a t_PDT (kind %s)", i, pol.Kind)
			}
		case Fixed:
			if pol.PDT < 0 {
				return nil, fmt.Errorf("estimate: policies[%d].pdt: must be ≥ 0, got %v", i, pol.PDT)
			}
		case DriverDefault:
			if pol.PDT <= 0 {
				return nil, fmt.Errorf("estimate: policies[%d].pdt: driver-default needs the driver's known timer (> 0), got %v", i, pol.PDT)
			}
		default:
			return nil, fmt.Errorf("estimate: policies[%d].kind: unknown %q (want %s, %s, %s, %s or %s)",
				i, pol.Kind, AlwaysOn, PlainEEE, DriverDefault, Fixed, Predictor)
		}
		name := pol.Name
		if name == "" {
			name = pol.Kind
			if pol.Kind == Fixed {
				name = "fixed-" + pol.PDT.String()
			}
		}
		if names[name] {
			return nil, fmt.Errorf("estimate: policies[%d].name: %q given twice", i, name)
		}
		names[name] = true
		for _, m := range modes {
			p, err := newPort(cfg, pol, name, m)
			if err != nil {
				return nil, fmt.Errorf("estimate: policies[%d] (%s), mode %s: %w", i, name, m, err)
			}
			e.ports = append(e.ports, p)
		}
	}
	return e, nil
}

func newPort(cfg Config, pol Policy, name string, m power.Mode) (port, error) {
	st, _ := cfg.Preset.State(m) // checked by New
	p := port{kind: pol.Kind, timer: pol.Kind != AlwaysOn, name: name, mode: m, wakeW: cfg.Preset.WakePowerW, lowW: st.Power(cfg.Preset.WakePowerW)}
	em, err := eee.ModeFor(m)
	if err != nil {
		return p, err
	}
	if pol.Kind == AlwaysOn {
		em = eee.AlwaysOn
	}
	p.params = eee.Params{Mode: em, Handshake: ps(cfg.Handshake)}
	switch m {
	case power.FastWake:
		p.params.SleepFW, p.params.WakeFW = ps(st.SleepTime.D()), ps(st.WakeTime.D())
	default:
		p.params.SleepDS, p.params.WakeDS = ps(st.SleepTime.D()), ps(st.WakeTime.D())
	}
	p.params.Prepare()
	switch pol.Kind {
	case AlwaysOn:
		p.pdt = eee.Never
	case Fixed, DriverDefault:
		p.pdt = ps(pol.PDT)
	case Predictor:
		pc := cfg.Predictor
		if pc.WakeTime == 0 {
			pc.WakeTime = st.WakeTime
		}
		if pc.SleepTime == 0 {
			pc.SleepTime = st.SleepTime
		}
		pred, err := predictor.New(pc)
		if err != nil {
			return p, fmt.Errorf("predictor: %w", err)
		}
		cc := cfg.Controller
		if cc.MissCost == 0 { // the ledger's miss cost: one power-down cycle
			cc.MissCost = predictor.Duration(controller.ChargePS(p.params.Cycle()))
		}
		if p.ctl, err = controller.NewPort(cc, pred, cfg.Start); err != nil {
			return p, fmt.Errorf("controller: %w", err)
		}
	}
	// The port starts busy: its first idle period begins at an IdleStart
	// or Idle call.
	s := ps(cfg.Start)
	p.link.Start(s, eee.Never)
	p.link.Need(&p.params, s, 0)
	return p, nil
}

// arm returns the t_PDT (ps) the port arms for an idle period starting at
// s (ps).
func (p *port) arm(s int64) int64 {
	if p.ctl != nil {
		return ps(p.ctl.Decide(time.Duration(s / 1000)))
	}
	return p.pdt
}

// IdleStart reports that the port's output queue emptied at start: an
// idle period is in progress (Results counts it as idle up to now) until
// the Idle call that ends it (end − length == start). Optional: without
// it, Idle arms t_PDT when the period ends, with the same result, and the
// time after the last ended period counts as busy. 0 allocations.
func (e *Estimator) IdleStart(start time.Duration) {
	if start < e.start {
		return
	}
	e.pending, e.pendAt = true, start
	s := ps(start)
	for i := range e.ports {
		p := &e.ports[i]
		at := max(s, p.link.ReadyAt)
		p.armed, p.armedAt, p.armedPDT = true, at, p.arm(at)
	}
}

// Idle reports one ended idle period: the port's queue emptied at
// end − length and a packet needed the port at end. A length ≤ 0 is no
// idle period (docs/model.md §1.1) and is ignored, as is a period starting before
// the estimator's start. Periods must come in order. 0 allocations.
func (e *Estimator) Idle(end, length time.Duration) {
	if length <= 0 || end-length < e.start || end >= maxPDT {
		return
	}
	start := end - length
	useArmed := e.pending && e.pendAt == start
	e.pending = false
	s, en := ps(start), ps(end)
	for i := range e.ports {
		p := &e.ports[i]
		at, pdt := max(s, p.link.ReadyAt), int64(0)
		if useArmed && p.armed {
			at, pdt = p.armedAt, p.armedPDT
		} else if en > at {
			pdt = p.arm(at)
		}
		p.armed = false
		if en <= at {
			// Still waking up from the previous miss: its packets and this
			// one queue behind the wake-up; no idle period.
			p.absorbed++
			p.delay += p.link.ReadyAt - en
			continue
		}
		p.link.Release(at, 0, pdt)
		ready, missed := p.link.Need(&p.params, en, 0)
		p.delay += ready - en
		if missed {
			p.misses++
		} else {
			p.hits++
		}
		if p.timer {
			p.sumPDT += float64(min(pdt, ps(maxPDT-1)) / 1000)
		}
		if p.ctl != nil {
			p.ctl.IdleEnded(predictor.IdlePeriod{
				End: end, Length: time.Duration((en - at) / 1000), Missed: missed, PDT: time.Duration(min(pdt/1000, int64(maxPDT-1))),
				Delay: controller.ChargePS(ready - en),
			})
		}
	}
}

// Results returns every policy × mode's estimate up to now, in the order
// of Policies × Modes (for each policy, each mode). The idle period in
// progress (IdleStart) counts as idle up to now; otherwise the time since
// the last ended idle period is busy. It does not change the estimator.
func (e *Estimator) Results(now time.Duration) []Result {
	out := make([]Result, len(e.ports))
	e.ResultsInto(out, now)
	return out
}

// ResultsInto writes Results(now) into out (len(out) ≥ the number of
// policies × modes) without allocating.
func (e *Estimator) ResultsInto(out []Result, now time.Duration) {
	now = max(now, e.start)
	elapsed := now - e.start
	n := ps(now)
	for i := range e.ports {
		p := &e.ports[i]
		l := p.link // a copy: Finish accounts it up to now
		if e.pending && p.armed && p.armedAt < n {
			l.Release(p.armedAt, 0, p.armedPDT)
		}
		l.Finish(&p.params, n)
		low := l.Times[eee.LowFastWake] + l.Times[eee.LowDeepSleep]
		r := Result{
			Policy: p.name, Kind: p.kind, Mode: p.mode, Elapsed: elapsed,
			IdlePeriods: p.hits + p.misses, Hits: p.hits, Misses: p.misses, WakeUps: uint64(l.Ups),
			Absorbed: p.absorbed, LowPower: time.Duration(low / 1000), AddedDelay: time.Duration(p.delay / 1000),
		}
		// Energy: Wake, going down and going up at wake power (all the
		// time not in low power), low power at the state's.
		sec := elapsed.Seconds()
		lowS := float64(low) * 1e-12
		r.AlwaysOnEnergyJ = p.wakeW * sec
		r.EnergyJ = p.wakeW*(sec-lowS) + p.lowW*lowS
		r.SavedJ = r.AlwaysOnEnergyJ - r.EnergyJ
		if sec > 0 {
			r.SavedPct = 100 * r.SavedJ / r.AlwaysOnEnergyJ
			r.SavedW = r.SavedJ / sec
		}
		if r.IdlePeriods > 0 {
			r.MeanPDT = time.Duration(p.sumPDT / float64(r.IdlePeriods))
		}
		out[i] = r
	}
}

// PresetForSpeed returns the shipped preset for a link speed in Mb/s (as
// ethtool reports it).
func PresetForSpeed(mbps int) (*power.Preset, error) {
	name, ok := map[int]string{
		100: "eee-100base-tx", 1000: "eee-1000base-t", 10000: "eee-10gbase-t",
		25000: "eee-25g", 40000: "eee-40g", 100000: "eee-100g", 400000: "eee-400g",
	}[mbps]
	if !ok {
		return nil, fmt.Errorf("estimate: no power preset for speed %d Mb/s (known: 100, 1000, 10000, 25000, 40000, 100000, 400000)", mbps)
	}
	return power.Load(name)
}
