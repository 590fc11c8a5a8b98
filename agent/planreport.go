package agent

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// PlanReport is the configuration check and dry-run plan of `lpictl agent
// --check` (--json writes it as is).
type PlanReport struct {
	Config   string     `json:"config"` // the file read, or "defaults"
	Mode     string     `json:"mode"`
	Backend  string     `json:"backend"`
	Ports    []PlanPort `json:"ports"`
	Warnings []string   `json:"warnings"`
}

// NewPlanReport is the report of Plan's result for cfg read from src.
func NewPlanReport(src string, cfg Config, plan []PlanPort, warnings []string) PlanReport {
	if plan == nil {
		plan = []PlanPort{}
	}
	if warnings == nil {
		warnings = []string{}
	}
	return PlanReport{Config: src, Mode: string(cfg.Mode), Backend: string(cfg.Backend), Ports: plan, Warnings: warnings}
}

// WriteTable prints the report as a table, its warnings to errOut.
func (r PlanReport) WriteTable(out, errOut io.Writer) error {
	for _, w := range r.Warnings {
		fmt.Fprintf(errOut, "lpictl: warning: %s\n", w)
	}
	fmt.Fprintf(out, "configuration OK (%s; mode %s, backend %s)\n", r.Config, r.Mode, r.Backend)
	if len(r.Ports) == 0 {
		_, err := fmt.Fprintln(out, "no ports selected (set ports.names or ports.drivers)")
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PORT\tDRIVER\tEEE\tOBSERVE\tTX_LPI_TIMER\tACTUATION\tFIRST_WRITE\tREASON")
	for _, p := range r.Ports {
		eee := "unknown"
		switch {
		case p.EEEKnown && !p.EEESupported:
			eee = "no"
		case p.EEESupported && p.EEEEnabled:
			eee = "on"
		case p.EEESupported:
			eee = "off"
		}
		timer := p.TxLPITimer
		if p.EEESupported && !p.TxLPIEnabled {
			timer += " (tx LPI off)"
		}
		first := p.First
		if p.Write && (p.Clamped || p.Rounded) {
			how := "rounded"
			if p.Clamped {
				how = "clamped"
			}
			first = fmt.Sprintf("%s (%s from %v)", first, how, time.Duration(p.InitialNS))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, orDash(p.Driver), eee, orDash(p.Observation),
			timer, p.Actuation, first, orDash(p.Reason))
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// ActuationPath names how the configured backend writes a settable port's
// tx LPI timer (the plan's actuation column, PlanOptions.Actuation).
func ActuationPath(cfg Config) func(PortInfo) string {
	return func(PortInfo) string {
		switch {
		case cfg.Backend == BackendSim:
			return "sim"
		case cfg.HW.EEEBackend == "model":
			return "driver model"
		case cfg.HW.EEEBackend == "emulated":
			return "emulated"
		}
		return "ethtool netlink (ioctl fallback)"
	}
}
