package agent

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/lpictl/lpictl/controller"
)

// PlanPort is one port of the dry-run plan (`lpictl agent --check`): what
// the agent would do with it, read without changing anything. Every field
// is always present in its JSON form (docs/agent.md "Dry-run plan").
type PlanPort struct {
	Name   string `json:"name"`
	Driver string `json:"driver"`
	// Selected is false for a port that ports.names / ports.drivers match
	// but ports.exclude removes.
	Selected bool `json:"selected"`
	// EEE: the EEE state could be read (EEEKnown), EEE is supported and
	// enabled, tx LPI is enabled and its timer in force (ns, and as text).
	EEEKnown     bool   `json:"eee_known"`
	EEESupported bool   `json:"eee_supported"`
	EEEEnabled   bool   `json:"eee_enabled"`
	TxLPIEnabled bool   `json:"tx_lpi_enabled"`
	TxLPITimerNS int64  `json:"tx_lpi_timer_ns"`
	TxLPITimer   string `json:"tx_lpi_timer"`
	Observation  string `json:"observation"`
	// CanSet: the backend can set the port's tx LPI timer; Actuation is
	// the path it would take (ethtool, driver model, emulated, sim, none).
	CanSet    bool   `json:"can_set"`
	Actuation string `json:"actuation"`
	// InitialNS is the controller's first t_PDT before the register
	// (predictor's answer within the limits), FirstNS after rounding and
	// clamping to the port's register; Clamped: the range cut it.
	InitialNS int64 `json:"initial_pdt_ns"`
	FirstNS   int64 `json:"first_pdt_ns"`
	Rounded   bool  `json:"rounded"`
	Clamped   bool  `json:"clamped"`
	// Write: enforce mode would write FirstNS first (after the warmup).
	// First is the text of the plan column: a duration or "none: …".
	Write bool   `json:"write"`
	First string `json:"first_write"`
	// Reason says why the port is left alone (or notes on a written one).
	Reason string `json:"reason"`
}

// PlanOptions tune Plan.
type PlanOptions struct {
	// Actuation names the path a settable port's timer is written by (the
	// backend's EEE interface); nil: "sim" for the simulator, else the
	// backend's name.
	Actuation func(PortInfo) string
}

// Plan lists every port cfg selects on backend with what enforce mode
// would do first, and warnings (selection patterns that match no port).
// It opens ports only to read their EEE state and changes nothing.
func Plan(ctx context.Context, cfg Config, backend Backend, opts PlanOptions) ([]PlanPort, []string, error) {
	infos, err := backend.Ports(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("list ports: %w", err)
	}
	var warnings []string
	for _, sel := range []struct {
		key    string
		pats   []string
		driver bool
	}{{"ports.names", cfg.Ports.Names, false}, {"ports.drivers", cfg.Ports.Drivers, true}, {"ports.exclude", cfg.Ports.Exclude, false}} {
		for _, pat := range sel.pats {
			hit := false
			for _, in := range infos {
				s := in.Name
				if sel.driver {
					s = in.Driver
				}
				if matchAny([]string{pat}, s) {
					hit = true
					break
				}
			}
			if !hit {
				warnings = append(warnings, fmt.Sprintf("%s pattern %q matches no port", sel.key, pat))
			}
		}
	}
	var records map[string]PortRecord
	if backend.Persistent() && cfg.StateDir != "" {
		if records, err = ReadState(cfg.StateDir); err != nil {
			warnings = append(warnings, err.Error())
		}
	}
	sort.Slice(infos, func(i, j int) bool { return infos[i].Name < infos[j].Name })
	now := backend.Now()
	var out []PlanPort
	for _, in := range infos {
		selected := cfg.Ports.Selected(in.Name, in.Driver)
		matched := matchAny(cfg.Ports.Names, in.Name) || (in.Driver != "" && matchAny(cfg.Ports.Drivers, in.Driver))
		if !selected && !matched {
			continue
		}
		pp := PlanPort{Name: in.Name, Driver: in.Driver, Selected: selected, Observation: in.Observation,
			CanSet: in.CanSet, Actuation: "none", TxLPITimer: "unknown"}
		if in.CanSet && selected {
			pp.Actuation = backend.Name()
			if opts.Actuation != nil {
				pp.Actuation = opts.Actuation(in)
			}
		}
		spec := cfg.portSpec(in)
		var why []string
		if selected {
			if err := planInitial(&pp, spec, now); err != nil {
				why = append(why, "port configuration: "+err.Error())
			}
			planEEE(ctx, backend, in, &pp, &why)
		} else {
			why = append(why, "excluded by ports.exclude")
		}
		pp.Write = len(why) == 0
		switch {
		case !pp.Write:
		case cfg.Mode != Enforce:
			pp.Write = false
			why = append(why, "observe mode")
		case !in.CanSet:
			pp.Write = false
			r := "tx LPI timer not settable"
			if in.Reason != "" {
				r += ": " + in.Reason
			}
			why = append(why, r)
		case !pp.EEEEnabled || !pp.TxLPIEnabled:
			pp.Write = false
			why = append(why, "EEE or tx LPI is off (lpictl never turns it on)")
		default:
			switch firstChange(time.Duration(pp.FirstNS), time.Duration(pp.TxLPITimerNS), spec.Controller.Hysteresis) {
			case firstEqual:
				pp.Write = false
				pp.First = "none: the timer in force is the value"
			case firstHeld:
				pp.Write = false
				pp.First = "none: within hysteresis of the timer in force"
			}
		}
		if r, ok := records[in.Name]; ok && selected {
			why = append(why, fmt.Sprintf("state file holds original settings of a previous run (tx LPI timer %v): restored at start",
				r.Original.TxLPITimer))
		}
		if pp.Write {
			pp.First = time.Duration(pp.FirstNS).String()
			if w := cfg.Safety.Warmup.D(); w > 0 {
				why = append(why, fmt.Sprintf("after the %v warmup", w))
			}
			if in.Reason != "" {
				why = append(why, in.Reason)
			}
		} else if pp.First == "" {
			pp.First = "none"
		}
		for i, w := range why {
			if i > 0 {
				pp.Reason += "; "
			}
			pp.Reason += w
		}
		out = append(out, pp)
	}
	if len(out) == 0 && len(cfg.Ports.Names)+len(cfg.Ports.Drivers) > 0 {
		warnings = append(warnings, "no ports selected (set ports.names or ports.drivers)")
	}
	return out, warnings, nil
}

// planInitial fills the controller's first t_PDT: before and after the
// port's register.
func planInitial(pp *PlanPort, spec PortSpec, now time.Duration) error {
	ctl, _, err := newController(spec, now)
	if err != nil {
		return err
	}
	pp.FirstNS = int64(ctl.PDT())
	// The same controller on an unlimited register gives the value the
	// register rounded and clamped.
	free := spec
	free.Controller.Register = controller.Register{}
	raw, _, err := newController(free, now)
	if err != nil {
		return err
	}
	pp.InitialNS = int64(raw.PDT())
	_, pp.Clamped = spec.Controller.Register.Apply(raw.PDT())
	pp.Rounded = !pp.Clamped && pp.InitialNS != pp.FirstNS
	return nil
}

// planEEE reads the port's EEE state (opening it read-only for that).
func planEEE(ctx context.Context, backend Backend, in PortInfo, pp *PlanPort, why *[]string) {
	port, err := backend.Open(ctx, in)
	if err != nil {
		*why = append(*why, "open: "+err.Error())
		return
	}
	defer port.Close()
	if o, ok := port.(interface{ Observation() string }); ok {
		pp.Observation = o.Observation()
	}
	st, err := port.EEE(ctx)
	switch {
	case errors.Is(err, ErrNotSupported):
		pp.EEEKnown = true
		*why = append(*why, "no EEE: observe only")
		return
	case err != nil:
		*why = append(*why, "EEE state: "+err.Error())
		return
	}
	pp.EEEKnown, pp.EEESupported = true, true
	pp.EEEEnabled, pp.TxLPIEnabled = st.Enabled, st.TxLPIEnabled
	pp.TxLPITimerNS, pp.TxLPITimer = int64(st.TxLPITimer), st.TxLPITimer.String()
}

// firstAction is what the agent does with its first decision on a port
// against the timer in force.
type firstAction int

const (
	firstWrite firstAction = iota // write it
	firstEqual                    // the timer in force is the value: nothing to write
	firstHeld                     // held by hysteresis against the timer in force
)

// firstChange decides the first write of pdt on a port whose timer in
// force is cur, under the controller's hysteresis h (the agent's apply and
// the dry-run plan).
func firstChange(pdt, cur time.Duration, h float64) firstAction {
	switch {
	case pdt == cur:
		return firstEqual
	case withinHysteresis(pdt, cur, h):
		return firstHeld
	}
	return firstWrite
}
