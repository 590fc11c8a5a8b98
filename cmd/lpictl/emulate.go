package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/emulate"
	"github.com/lpictl/lpictl/hwlink/observe"
	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/power"
	"github.com/lpictl/lpictl/sim/scenario"
)

func newEmulateCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "emulate",
		Short: "Emulated EEE port: docs/model.md §1's port power states in eBPF on a netdev's egress",
		Long: "emulate turns a network interface's egress into an emulated Energy Efficient Ethernet port: an\n" +
			"eBPF program runs the port's power state machine (awake, going down, Fast Wake / Deep Sleep,\n" +
			"waking) on the real packets that leave it and holds each packet for the wake-up it would pay.\n" +
			"Its tx LPI timer (t_PDT) is set through an emulated EEE interface, as the agent sets a NIC's.\n" +
			"See docs/hil.md.",
	}
	cmd.AddCommand(newEmulateAttachCommand(), newEmulateStatusCommand(), newEmulateDetachCommand())
	return cmd
}

// checkNetNS refuses a --netns that does not exist: a name `ip netns` does
// not know, or a missing path.
func checkNetNS(netns string) error {
	switch {
	case netns == "":
	case !strings.Contains(netns, "/"):
		if _, err := os.Stat("/run/netns/" + netns); err != nil {
			return badInput(fmt.Errorf("--netns %q: no such named network namespace (give a name from `ip netns` or a path)", netns))
		}
	default:
		if _, err := os.Stat(netns); err != nil {
			return badInput(fmt.Errorf("--netns: %w", err))
		}
	}
	return nil
}

// emulateErr maps hwlink's errors to exit statuses: a missing device or
// emulator is bad input (2), the rest a runtime failure (1).
func emulateErr(err error) error {
	if errors.Is(err, hwlink.ErrNoDevice) || errors.Is(err, emulate.ErrNotEmulated) ||
		errors.Is(err, emulate.ErrPhysicalDevice) || errors.Is(err, emulate.ErrPrivateBPFFS) {
		return badInput(err)
	}
	return err
}

// args wraps a cobra argument check so that a wrong count is bad input.
func args(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error { return badInput(check(cmd, a)) }
}

// emulatedPreset takes what the emulator needs from a power preset (a
// port's powers and transition times).
func emulatedPreset(p *power.Preset) emulate.Preset {
	ep := emulate.Preset{Name: p.Name, RateBps: p.RateBps, WakePowerW: p.WakePowerW}
	low := func(l *power.LowPower) *emulate.LowPower {
		if l == nil {
			return nil
		}
		return &emulate.LowPower{PowerW: l.Power(p.WakePowerW), Wake: l.WakeTime.D(), Sleep: l.SleepTime.D()}
	}
	ep.FastWake, ep.DeepSleep = low(p.FastWake), low(p.DeepSleep)
	return ep
}

func parseAttachMode(s string) (observe.AttachMode, error) {
	switch strings.ToLower(s) {
	case "", "auto":
		return observe.AttachAuto, nil
	case "tcx":
		return observe.AttachTCX, nil
	case "tc", "clsact":
		return observe.AttachTC, nil
	}
	return 0, fmt.Errorf("--attach %q: want auto, tcx or tc", s)
}

func newEmulateAttachCommand() *cobra.Command {
	var (
		presetName, mode, pdt, rate, hold, driver, delay, spinMax string
		netns, attach, bpffs                                      string
		scale                                                     float64
		asJSON, allowPhysical, check                              bool
	)
	cmd := &cobra.Command{
		Use:   "attach DEV --preset P --mode M [--pdt D] [--rate R] [--scale K]",
		Short: "Make DEV's egress an emulated EEE port",
		Long: "attach loads the emulator on DEV's egress (TCX, or clsact where TCX is missing), makes fq its root\n" +
			"qdisc (fq holds each packet until the departure time the program gives it) and pins everything\n" +
			"under the bpffs, so the port stays after this command exits. The preset gives the transition\n" +
			"times and powers (configs/presets, or a YAML file); --scale multiplies the transition times where\n" +
			"kernel timer jitter (tens of µs) would hide µs-scale wake-ups. --pdt sets the tx LPI timer for use\n" +
			"without the agent; an agent in enforce mode sets it through the emulated EEE backend (docs/hil.md).\n" +
			"--driver picks the driver profile whose refusals, units and ranges the EEE interface copies.\n" +
			"--delay auto (the default) uses fq where the kernel has it, else spin (the program waits on the\n" +
			"sending CPU, at most --spin-max per packet); none only accounts.\n" +
			"Only virtual devices (veth, dummy, netkit, ifb) are taken unless --allow-physical; --check prints\n" +
			"what attach would replace (root qdisc, filters, programs) and changes nothing.\n" +
			"Under `ip netns exec` the pins go to the bpffs outside that command's mount namespace (or attach\n" +
			"refuses): --netns NS does the same without it.",
		Example: `  lpictl emulate attach veth0 --preset eee-1000base-t --mode deep-sleep --pdt 0 --scale 100
  lpictl emulate attach eth1 --preset eee-10gbase-t --mode fast-wake --pdt 20us --rate preset
  lpictl emulate attach veth0 --netns ns1 --preset eee-100base-tx --mode deep-sleep --delay spin`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !(scale > 0) {
				return badInput(fmt.Errorf("--scale %v: must be > 0", scale))
			}
			if presetName == "" || mode == "" {
				return badInput(errors.New("--preset and --mode are required (e.g. --preset eee-1000base-t --mode deep-sleep)"))
			}
			preset, err := power.Load(presetName)
			if err != nil {
				return badInput(fmt.Errorf("--preset: %w", err))
			}
			cfg := emulate.Config{Interface: args[0], NetNS: hwlink.NetNS(netns), Preset: emulatedPreset(preset),
				Scale: scale, Driver: driver, BPFFS: bpffs, AllowPhysical: allowPhysical}
			if cfg.Mode, err = emulate.ParseMode(mode); err != nil {
				return badInput(fmt.Errorf("--mode: %w", err))
			}
			if cmd.Flags().Changed("pdt") {
				d, err := predictor.ParseDuration(pdt)
				if err != nil {
					return badInput(fmt.Errorf("--pdt: %w", err))
				}
				cfg.PDT = &d
			}
			if cfg.HybridHold, err = predictor.ParseDuration(hold); err != nil {
				return badInput(fmt.Errorf("--hold: %w", err))
			}
			if cfg.Rate, err = emulate.ParseRate(rate, preset.RateBps); err != nil {
				return badInput(fmt.Errorf("--rate: %w", err))
			}
			if cfg.Delay, err = emulate.ParseDelay(delay); err != nil {
				return badInput(fmt.Errorf("--delay: %w", err))
			}
			if cfg.SpinMax, err = predictor.ParseDuration(spinMax); err != nil {
				return badInput(fmt.Errorf("--spin-max: %w", err))
			}
			if cfg.Attach, err = parseAttachMode(attach); err != nil {
				return badInput(err)
			}
			if err := checkNetNS(netns); err != nil {
				return err
			}
			if err := cfg.Validate(); err != nil {
				return badInput(fmt.Errorf("%s: %w", args[0], err))
			}
			if check {
				c, err := emulate.Check(cfg)
				if err != nil {
					return emulateErr(err)
				}
				if asJSON {
					enc := json.NewEncoder(cmd.OutOrStdout())
					enc.SetIndent("", "  ")
					return enc.Encode(c)
				}
				writeEmulateCheck(cmd.OutOrStdout(), c)
				return nil
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			p, err := emulate.Attach(ctx, cfg)
			if err != nil {
				return emulateErr(err)
			}
			defer p.Close()
			s, err := p.Status(observe.MonotonicNow())
			if err != nil {
				return err
			}
			if asJSON {
				return writeEmulateJSON(cmd.OutOrStdout(), []emulate.Status{s})
			}
			writeAttached(cmd.OutOrStdout(), s)
			if cfg.PDT != nil && *cfg.PDT != s.TxLPITimer {
				fmt.Fprintf(cmd.OutOrStdout(), "  --pdt %v fitted to the %s profile: %v\n", *cfg.PDT, s.Driver, s.TxLPITimer)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&presetName, "preset", "", "power preset: a name ("+strings.Join(power.Names(), ", ")+") or a YAML file")
	f.StringVar(&mode, "mode", "", "low-power mode: always-on, fast-wake, deep-sleep or hybrid")
	f.StringVar(&pdt, "pdt", "", "tx LPI timer t_PDT to start with, e.g. 0, 20us, 1ms (default 1ms, fitted to the driver profile)")
	f.StringVar(&rate, "rate", "none", "emulate the link's serialisation at this rate (1G, 100M, preset) or none")
	f.Float64Var(&scale, "scale", 1, "multiply the preset's transition times (t_s, t_w) by this factor")
	f.StringVar(&hold, "hold", scenario.DefaultHybridHold.String(), "hybrid mode: time in Fast Wake before Deep Sleep (not scaled)")
	f.StringVar(&driver, "driver", emulate.DefaultDriver, "driver profile of the emulated EEE interface (docs/hwlink.md's table)")
	f.StringVar(&delay, "delay", "auto", "how packets are held: auto (edt where the kernel has fq, else spin), edt (fq), spin (the program waits on the sending CPU) or none")
	f.StringVar(&spinMax, "spin-max", emulate.DefaultSpinMax.String(), "--delay spin: longest wait per packet")
	f.StringVar(&netns, "netns", "", "network namespace of DEV: a name (ip netns) or a path such as /proc/PID/ns/net")
	f.StringVar(&attach, "attach", "auto", "attach point: auto (TCX, else clsact), tcx or tc")
	f.StringVar(&bpffs, "bpffs", emulate.DefaultBPFFS, "bpffs mount for the pins (the default is mounted if needed)")
	f.BoolVar(&asJSON, "json", false, "print the new port's status (with --check: the check) as JSON")
	f.BoolVar(&allowPhysical, "allow-physical", false, "attach to a device that is not virtual (a physical NIC, bond, VLAN…): its real traffic is held — spin keeps the sending CPU busy with bottom halves off up to --spin-max per packet, edt replaces a multi-queue NIC's root qdisc with one fq")
	f.BoolVar(&check, "check", false, "dry run: print what attach would replace and add (root qdisc, clsact, filters, TCX programs) and whether it would refuse; change nothing")
	return cmd
}

func newEmulateStatusCommand() *cobra.Command {
	var (
		asJSON       bool
		bpffs, netns string
	)
	cmd := &cobra.Command{
		Use:   "status [DEV]",
		Short: "Show the emulated ports: state times, transitions, wake-ups, hits, misses and energy",
		Long: "status lists every emulated EEE port (in every network namespace), or those named DEV: the time\n" +
			"in each power state since attach (the idle period in progress included), transitions, wake-ups,\n" +
			"hits and misses of the PDT timer, the packets held back and the energy the states imply under the\n" +
			"preset (Σ state time × that state's port power), against the same time always on.",
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkNetNS(netns); err != nil {
				return err
			}
			var nsIno uint64
			if cmd.Flags().Changed("netns") {
				var err error
				if nsIno, err = hwlink.NetNS(netns).Inode(); err != nil {
					return badInput(fmt.Errorf("--netns: %w", err))
				}
			}
			ports, err := emulate.List(bpffs)
			if err != nil {
				return err
			}
			now := observe.MonotonicNow()
			out := []emulate.Status{}
			var errs []error
			for _, p := range ports {
				if (len(args) == 0 || p.Interface() == args[0]) && (nsIno == 0 || p.NetNSInode() == nsIno) {
					s, err := p.Status(now)
					if err != nil {
						errs = append(errs, err)
					} else {
						out = append(out, s)
					}
				}
				p.Close()
			}
			if err := errors.Join(errs...); err != nil {
				return err
			}
			if len(args) == 1 && len(out) == 0 {
				return badInput(fmt.Errorf("%s: %w (no emulated port of that name under %s)", args[0], emulate.ErrNotEmulated, bpffs))
			}
			if asJSON {
				return writeEmulateJSON(cmd.OutOrStdout(), out)
			}
			return writeEmulateTable(cmd.OutOrStdout(), out)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (every key always present)")
	cmd.Flags().StringVar(&bpffs, "bpffs", emulate.DefaultBPFFS, "bpffs mount holding the pins")
	cmd.Flags().StringVar(&netns, "netns", "", "only the ports of this network namespace: a name (ip netns) or a path (default: every namespace)")
	return cmd
}

func newEmulateDetachCommand() *cobra.Command {
	var netns, bpffs string
	cmd := &cobra.Command{
		Use:   "detach DEV",
		Short: "Remove DEV's emulated port: program, pins and the qdiscs attach added",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkNetNS(netns); err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			p, err := emulate.Open(ctx, emulate.Ref{Interface: args[0], NetNS: hwlink.NetNS(netns), BPFFS: bpffs})
			if err != nil {
				return emulateErr(err)
			}
			defer p.Close()
			s, _ := p.Status(observe.MonotonicNow())
			if err := p.Detach(); err != nil {
				return err
			}
			removed := "program and pins removed"
			switch {
			case s.FQAdded && s.ClsactAdded:
				removed = "program, pins, fq and clsact qdiscs removed"
			case s.FQAdded:
				removed = "program, pins and fq root qdisc removed"
			case s.ClsactAdded:
				removed = "program, pins and clsact qdisc removed"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: emulated EEE port detached (%s)\n", args[0], removed)
			return nil
		},
	}
	cmd.Flags().StringVar(&netns, "netns", "", "network namespace of DEV: a name (ip netns) or a path")
	cmd.Flags().StringVar(&bpffs, "bpffs", emulate.DefaultBPFFS, "bpffs mount holding the pins")
	return cmd
}

func writeEmulateCheck(w io.Writer, c emulate.CheckResult) {
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
	list := func(xs []string) string {
		if len(xs) == 0 {
			return "none"
		}
		return strings.Join(xs, ", ")
	}
	fmt.Fprintf(w, "  egress filters: %s\n", list(c.EgressFilters))
	fmt.Fprintf(w, "  TCX egress programs: %s (the emulator is added after them)\n", list(c.TCXPrograms))
	if c.PinDir != "" {
		fmt.Fprintf(w, "  pins %s\n", c.PinDir)
	}
	if c.Refused != "" {
		fmt.Fprintf(w, "attach would refuse: %s\n", c.Refused)
	} else {
		fmt.Fprintln(w, "attach would go ahead; nothing was changed")
	}
}

func writeEmulateJSON(w io.Writer, ports []emulate.Status) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(ports)
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

func rateString(bps uint64) string {
	if bps == 0 {
		return "none"
	}
	return speedString(bps)
}

func writeAttached(w io.Writer, s emulate.Status) {
	added := []string{}
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
	fmt.Fprintf(w, "%s: emulated EEE port attached via %s (delay %s%s)\n", s.Device, s.AttachedVia, s.Delay, extra)
	fmt.Fprintf(w, "  preset %s, %s: %s (scale %g)\n", s.Preset, s.Mode, lowPowerDesc(s), s.Scale)
	fmt.Fprintf(w, "  tx LPI timer %v, driver profile %s, rate %s\n", s.TxLPITimer, s.Driver, rateString(s.RateBps))
	fmt.Fprintf(w, "  pins %s\n", s.PinDir)
}

func pct(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }

func writeEmulateTable(w io.Writer, ports []emulate.Status) error {
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
	return tw.Flush()
}
