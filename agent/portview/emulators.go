package portview

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/lpictl/lpictl/hwlink/emulate"
)

// WriteCheck writes what `lpictl emulate attach --check` found: what
// attach would replace and add, and whether it would refuse.
func WriteCheck(w io.Writer, c emulate.CheckResult) {
	virt := "virtual"
	if !c.Virtual {
		virt = "not virtual"
	}
	fmt.Fprintf(w, "%s: kind %s (%s)\n", c.Device, c.Kind, virt)
	root := c.RootQdisc
	if root == "" {
		root = "none"
	}
	fmt.Fprintf(w, "  root qdisc %s: %s\n", root, c.RootQdiscAction)
	if c.Clsact {
		fmt.Fprintln(w, "  clsact qdisc: there (the tc attach point adds its filter to it)")
	} else {
		fmt.Fprintln(w, "  clsact qdisc: none (the tc attach point adds one)")
	}
	fmt.Fprintf(w, "  egress filters: %s\n", listOrNone(c.EgressFilters))
	fmt.Fprintf(w, "  TCX egress programs: %s (the emulator is added after them)\n", listOrNone(c.TCXPrograms))
	if c.PinDir != "" {
		fmt.Fprintf(w, "  pins %s\n", c.PinDir)
	}
	if c.Refused != "" {
		fmt.Fprintf(w, "attach would refuse: %s\n", c.Refused)
	} else {
		fmt.Fprintln(w, "attach would go ahead; nothing was changed")
	}
}

// lowPowerDesc describes the low-power state a mode enters first.
func lowPowerDesc(s emulate.Status) string {
	switch s.Mode {
	case "always-on":
		return "never sleeps"
	case "fast-wake":
		return fmt.Sprintf("Fast Wake t_w %v t_s %v", s.FastWake.Wake, s.FastWake.Sleep)
	case "deep-sleep":
		return fmt.Sprintf("Deep Sleep t_w %v t_s %v", s.DeepSleep.Wake, s.DeepSleep.Sleep)
	}
	return fmt.Sprintf("Fast Wake t_w %v t_s %v, Deep Sleep after %v (t_w %v)", s.FastWake.Wake, s.FastWake.Sleep,
		s.HybridHold, s.DeepSleep.Wake)
}

// WriteAttached writes what `lpictl emulate attach` attached.
func WriteAttached(w io.Writer, s emulate.Status) {
	var added []string
	if s.FQAdded {
		added = append(added, "fq root qdisc")
	}
	if s.ClsactAdded {
		added = append(added, "clsact qdisc")
	}
	extra := ""
	if len(added) > 0 {
		extra = ", added " + strings.Join(added, " and ")
	}
	rate := "none"
	if s.RateBps != 0 {
		rate = Speed(s.RateBps)
	}
	fmt.Fprintf(w, "%s: emulated EEE port attached via %s (delay %s%s)\n", s.Device, s.AttachedVia, s.Delay, extra)
	fmt.Fprintf(w, "  preset %s, %s: %s (scale %g)\n", s.Preset, s.Mode, lowPowerDesc(s), s.Scale)
	fmt.Fprintf(w, "  tx LPI timer %v, driver profile %s, rate %s\n", s.TxLPITimer, s.Driver, rate)
	if l := s.Link; l != nil {
		peer := "not attached yet"
		if l.PeerAttached {
			peer = "attached"
		}
		fmt.Fprintf(w, "  LPI per link: end %d of link %s (handshake %v; the other end %s)\n", l.End, l.Name, l.Handshake, peer)
	} else {
		fmt.Fprintln(w, "  LPI per direction")
	}
	fmt.Fprintf(w, "  pins %s\n", s.PinDir)
}

// Removed says what `lpictl emulate detach` removed from a port whose
// status before was s.
func Removed(s emulate.Status) string {
	switch {
	case s.FQAdded && s.ClsactAdded:
		return "program, pins, fq and clsact qdiscs removed"
	case s.FQAdded:
		return "program, pins and fq root qdisc removed"
	case s.ClsactAdded:
		return "program, pins and clsact qdisc removed"
	}
	return "program and pins removed"
}

func pct(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }

// WriteEmulators writes the table of `lpictl emulate status`.
func WriteEmulators(w io.Writer, ports []emulate.Status) error {
	if len(ports) == 0 {
		fmt.Fprintln(w, "no emulated EEE ports (lpictl emulate attach DEV --preset P --mode M)")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "DEVICE\tVIA\tDELAY\tPRESET\tMODE\tT_PDT\tSTATE\tWAKE\tDOWN\tFW\tDS\tUP\tPACKETS\tWAKEUPS\tHITS/MISSES\tHELD\tENERGY\tSAVED")
	for _, s := range ports {
		dev := s.Device
		if !s.Attached {
			dev += " (gone)"
		}
		f := s.Fractions
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%v\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d/%d\t%d\t%.4g J\t%s\n",
			dev, s.AttachedVia, s.Delay, s.Preset, s.Mode, s.TxLPITimer, s.State,
			pct(f.Wake), pct(f.GoingDown), pct(f.FastWake), pct(f.DeepSleep), pct(f.GoingUp),
			s.Packets, s.Wakeups, s.Hits, s.Misses, s.Delayed, s.EnergyJ, pct(s.Saving))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	writeLinks(w, ports)
	return nil
}

// writeLinks lists the ports per link (LPI per link, docs/model.md §1.2):
// their state times and energy above are the link's, shared by both ends.
func writeLinks(w io.Writer, ports []emulate.Status) {
	for _, s := range ports {
		l := s.Link
		if l == nil {
			continue
		}
		peer := "the other end not attached"
		if l.PeerAttached {
			peer = "both ends attached"
		}
		fmt.Fprintf(w, "%s: LPI per link, end %d of link %s (%s; owner end %d, handshake %v, %d link wake-ups, %d deepens)\n",
			s.Device, l.End, l.Name, peer, l.Owner, l.Handshake, l.Wakeups, l.Deepens)
	}
}
