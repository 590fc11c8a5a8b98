package portview

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/lpictl/lpictl/hwlink/netdev"
)

// WritePorts writes the table of `lpictl ports`: driver, speed, carrier,
// EEE state, tx LPI timer, how idle gaps would be observed and whether
// the timer can be set.
func WritePorts(w io.Writer, ports []netdev.PortInfo) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PORT\tDRIVER\tSPEED\tCARRIER\tEEE SUP/EN/ACT\tTX LPI TIMER\tOBSERVE\tACTUATE")
	for _, p := range ports {
		drv := p.Driver.Driver
		if drv == "" {
			drv = "-"
		}
		if p.Driver.SwitchDriver != "" {
			drv += "/" + p.Driver.SwitchDriver // DSA user port: the switch's driver
		}
		eee, timer := "n/a", "-"
		if p.EEE != nil {
			eee = fmt.Sprintf("%s/%s/%s", yesNo(len(p.EEE.Supported) > 0), yesNo(p.EEE.Enabled), yesNo(p.EEE.Active))
			timer = p.EEE.TxLPITimer.String()
			if !p.EEE.TxLPIEnabled {
				timer += " (tx LPI off)"
			}
		}
		observe := string(p.Observation.Method)
		if p.Observation.Attach != "" {
			observe += "/" + p.Observation.Attach
		}
		observe += " @" + p.Observation.Resolution.String()
		act := "no: " + strings.TrimPrefix(p.Actuation.Reason, "observe-only: ")
		if p.Actuation.CanSetTimer {
			act = "yes: " + p.Actuation.Reason
		}
		carrier := "down"
		if p.Carrier {
			carrier = "up"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, drv, Speed(p.Speed), carrier, eee, timer, observe, act)
	}
	return tw.Flush()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// Speed writes a link speed in bit/s as 10G or 100M ("unknown" for 0).
func Speed(bps uint64) string {
	switch {
	case bps == 0:
		return "unknown"
	case bps%1_000_000_000 == 0:
		return fmt.Sprintf("%dG", bps/1_000_000_000)
	default:
		return fmt.Sprintf("%dM", bps/1_000_000)
	}
}

// listOrNone joins xs with commas, or says "none".
func listOrNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}
