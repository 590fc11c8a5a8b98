package whatif

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lpictl/lpictl/sim/estimate"
)

// Report is what an observation found (docs/agent.md "What EEE would
// save"), `lpictl ports --what-if --json`'s output: every key is always
// present.
type Report struct {
	DurationS   float64  `json:"duration_s"`
	MaxDelayS   float64  `json:"max_delay_per_packet_s"`
	FixedPDTS   float64  `json:"fixed_pdt_s"`
	Ports       []Port   `json:"ports"`
	Assumptions []string `json:"assumptions"`
	Interrupted bool     `json:"interrupted"`
}

// Port is one port's observation, estimates and recommendation.
type Port struct {
	Device            string         `json:"device"`
	Driver            string         `json:"driver"`
	SpeedBps          uint64         `json:"speed_bps"`
	Observation       string         `json:"observation"`
	Preset            string         `json:"preset"`
	PresetFrom        string         `json:"preset_from"`
	PresetNote        string         `json:"preset_note"`
	EEE               string         `json:"eee"`
	TimerSettable     bool           `json:"timer_settable"`
	LinkFlapOnChange  bool           `json:"link_flap_on_change"`
	DriverDefaultPDTS float64        `json:"driver_default_pdt_s"`
	ElapsedS          float64        `json:"elapsed_s"`
	Packets           uint64         `json:"packets"`
	Bytes             uint64         `json:"bytes"`
	IdlePeriods       uint64         `json:"idle_periods"`
	IdleShare         float64        `json:"idle_share"`
	Estimates         []Estimate     `json:"estimates"`
	Recommendation    Recommendation `json:"recommendation"`
	Error             string         `json:"error"`
}

// Estimate is one policy × mode on a port: the estimate's row (the shape
// `lpictl predict --what-if` reports) and the port's own figures.
type Estimate struct {
	estimate.Row
	// PDTS is the t_PDT the policy stands for (the predictor's: its mean).
	PDTS                 float64 `json:"pdt_s"`
	AddedDelayPerS       float64 `json:"added_delay_per_s"`
	AddedDelayPerPacketS float64 `json:"added_delay_per_packet_s"`
	WithinMaxDelay       bool    `json:"within_max_delay"`
}

// Recommendation is the advice for a port.
type Recommendation struct {
	Action          string  `json:"action"` // one of the Action constants
	Policy          string  `json:"policy"`
	Mode            string  `json:"mode"`
	PDTS            float64 `json:"pdt_s"`
	SavedW          float64 `json:"saved_w"`
	SavedPct        float64 `json:"saved_pct"`
	LinkFlapWarning bool    `json:"link_flap_warning"`
	Text            string  `json:"text"`
}

// Recommendation actions.
const (
	ActionSetTimer    = "set-timer"
	ActionLeaveOn     = "leave-eee-on"
	ActionTurnOn      = "turn-eee-on"
	ActionTurnOff     = "turn-eee-off"
	ActionLeaveOff    = "leave-eee-off"
	ActionNoEEE       = "no-eee"
	ActionNoEstimates = "none"
)

// assumptions are stated in every report.
var assumptions = []string{
	"host-only view: the link partner's EEE and the LPI handshake are not seen; a port is taken to sleep when its own transmit side has been idle for t_PDT",
	"power preset: --preset, else an emulated port's own, else by link speed (not a virtual device's: veth's 10 Gb/s means nothing), else --fallback-preset if set, else no estimate; figures are per PHY (one link end)",
	"observed gaps are taken as they are: added delay does not shift later traffic",
	"the predictor policy sees every packet as one hop (h = 1)",
}

// WriteText writes the report as `lpictl ports --what-if` prints it: one
// table of estimates, then each port's recommendation.
func (rep Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PORT\tPOLICY\tMODE\tT_PDT\tIDLE\tLOW POWER\tSAVED W\tSAVED %\tDELAY/S\tDELAY/PKT\tWAKE-UPS")
	for _, p := range rep.Ports {
		for _, e := range p.Estimates {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.2f %%\t%.2f %%\t%s\t%.1f\t%s\t%s\t%d\n", p.Device, e.Policy, e.Mode, fmtSecs(e.PDTS),
				100*p.IdleShare, 100*e.LowPowerShare, fmtWatts(e.SavedW), e.SavedPct, fmtSecs(e.AddedDelayPerS),
				fmtSecs(e.AddedDelayPerPacketS), e.WakeUps)
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

func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func fmtSecs(s float64) string { return fmtDur(secs(s)) }

func fmtDur(d time.Duration) string {
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

func fmtWatts(w float64) string {
	if w < 1 {
		return fmt.Sprintf("%.3g mW", w*1000)
	}
	return fmt.Sprintf("%.3g W", w)
}
