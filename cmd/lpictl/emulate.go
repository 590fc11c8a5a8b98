package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lpictl/lpictl/agent/hwbackend"
	"github.com/lpictl/lpictl/agent/portview"
	"github.com/lpictl/lpictl/configs"
	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/emulate"
	"github.com/lpictl/lpictl/hwlink/observe"
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

// args wraps a cobra argument check so that a wrong count is bad input.
func args(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error { return configs.BadInput(check(cmd, a)) }
}

// emulateAttachLong is `lpictl emulate attach --help`'s description.
const emulateAttachLong = "attach loads the emulator on DEV's egress (TCX, or clsact where TCX is missing), makes fq its root\n" +
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
	"refuses): --netns NS does the same without it.\n" +
	"LPI symmetry (docs/model.md §1.2): a port is per direction (its egress sleeps on its own) unless\n" +
	"--link NAME makes it one end of an emulated link: attach the link's two ends (e.g. the two ends of\n" +
	"a veth pair, or host and switch egress of one cable) with the same NAME under one bpffs, and they\n" +
	"share one link state: the link goes down only when both ends are idle (the owner's t_PDT, then\n" +
	"the power-down handshake, --handshake: auto is a 64-byte control message at the link's rate plus\n" +
	"10 ns of cable, as the simulator), and a packet on either end wakes it for both. --lpi preset (the\n" +
	"default) takes the preset's symmetry when --link is given (a per-direction preset then refuses the\n" +
	"link); --lpi per-link needs --link; both ends must agree on preset, mode, scale, rate and handshake."

func newEmulateAttachCommand() *cobra.Command {
	var (
		spec          hwbackend.EmulatorSpec
		asJSON, check bool
	)
	cmd := &cobra.Command{
		Use:   "attach DEV --preset P --mode M [--pdt D] [--rate R] [--scale K]",
		Short: "Make DEV's egress an emulated EEE port",
		Long:  emulateAttachLong,
		Example: `  lpictl emulate attach veth0 --preset eee-1000base-t --mode deep-sleep --pdt 0 --scale 100
  lpictl emulate attach veth0 --preset eee-1000base-t --mode deep-sleep --scale 10 --link cable0
  lpictl emulate attach veth1 --netns ns1 --preset eee-1000base-t --mode deep-sleep --scale 10 --link cable0
  lpictl emulate attach eth1 --preset eee-10gbase-t --mode fast-wake --pdt 20us --rate preset
  lpictl emulate attach veth0 --netns ns1 --preset eee-100base-tx --mode deep-sleep --delay spin`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			spec.PDTSet = cmd.Flags().Changed("pdt")
			cfg, err := spec.Config(args[0])
			if err != nil {
				return err
			}
			if err := hwbackend.CheckNetNS(spec.NetNS); err != nil {
				return err
			}
			if err := cfg.Validate(); err != nil {
				return configs.BadInput(fmt.Errorf("%s: %w", args[0], err))
			}
			if check {
				c, err := emulate.Check(cfg)
				if err != nil {
					return hwbackend.EmulatorInputErr(err)
				}
				if asJSON {
					return writeJSON(cmd.OutOrStdout(), c)
				}
				portview.WriteCheck(cmd.OutOrStdout(), c)
				return nil
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			p, err := emulate.Attach(ctx, cfg)
			if err != nil {
				return hwbackend.EmulatorInputErr(err)
			}
			defer p.Close()
			s, err := p.Status(observe.MonotonicNow())
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), []emulate.Status{s})
			}
			portview.WriteAttached(cmd.OutOrStdout(), s)
			if cfg.PDT != nil && *cfg.PDT != s.TxLPITimer {
				fmt.Fprintf(cmd.OutOrStdout(), "  --pdt %v fitted to the %s profile: %v\n", *cfg.PDT, s.Driver, s.TxLPITimer)
			}
			return nil
		},
	}
	f := cmd.Flags()
	addEmulatorFlags(f, &spec)
	f.BoolVar(&asJSON, "json", false, "print the new port's status (with --check: the check) as JSON")
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
			if err := hwbackend.CheckNetNS(netns); err != nil {
				return err
			}
			var nsIno uint64
			if cmd.Flags().Changed("netns") {
				var err error
				if nsIno, err = hwlink.NetNS(netns).Inode(); err != nil {
					return configs.BadInput(fmt.Errorf("--netns: %w", err))
				}
			}
			out, err := hwbackend.EmulatorStatuses(bpffs, nsIno, args...)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), out)
			}
			return portview.WriteEmulators(cmd.OutOrStdout(), out)
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
			if err := hwbackend.CheckNetNS(netns); err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			p, err := emulate.Open(ctx, emulate.Ref{Interface: args[0], NetNS: hwlink.NetNS(netns), BPFFS: bpffs})
			if err != nil {
				return hwbackend.EmulatorInputErr(err)
			}
			defer p.Close()
			s, _ := p.Status(observe.MonotonicNow())
			if err := p.Detach(); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: emulated EEE port detached (%s)\n", args[0], portview.Removed(s))
			return nil
		},
	}
	cmd.Flags().StringVar(&netns, "netns", "", "network namespace of DEV: a name (ip netns) or a path")
	cmd.Flags().StringVar(&bpffs, "bpffs", emulate.DefaultBPFFS, "bpffs mount holding the pins")
	return cmd
}

// addEmulatorFlags adds the flags of `lpictl emulate attach` that describe
// the emulated port into s.
func addEmulatorFlags(f *pflag.FlagSet, s *hwbackend.EmulatorSpec) {
	f.StringVar(&s.Preset, "preset", "", "power preset: a name ("+strings.Join(power.Names(), ", ")+") or a YAML file")
	f.StringVar(&s.Mode, "mode", "", "low-power mode: always-on, fast-wake, deep-sleep or hybrid")
	f.StringVar(&s.PDT, "pdt", "", "tx LPI timer t_PDT to start with, e.g. 0, 20us, 1ms (default 1ms, fitted to the driver profile)")
	f.StringVar(&s.Rate, "rate", "none", "emulate the link's serialisation at this rate (1G, 100M, preset) or none")
	f.Float64Var(&s.Scale, "scale", 1, "multiply the preset's transition times (t_s, t_w) by this factor")
	f.StringVar(&s.Hold, "hold", scenario.DefaultHybridHold.String(), "hybrid mode: time in Fast Wake before Deep Sleep (not scaled)")
	f.StringVar(&s.Driver, "driver", emulate.DefaultDriver, "driver profile of the emulated EEE interface (docs/hwlink.md's table)")
	f.StringVar(&s.Delay, "delay", "auto", "how packets are held: auto (edt where the kernel has fq, else spin), edt (fq), spin (the program waits on the sending CPU) or none")
	f.StringVar(&s.SpinMax, "spin-max", emulate.DefaultSpinMax.String(), "--delay spin: longest wait per packet")
	f.StringVar(&s.NetNS, "netns", "", "network namespace of DEV: a name (ip netns) or a path such as /proc/PID/ns/net")
	f.StringVar(&s.Attach, "attach", "auto", "attach point: auto (TCX, else clsact), tcx or tc")
	f.StringVar(&s.BPFFS, "bpffs", emulate.DefaultBPFFS, "bpffs mount for the pins (the default is mounted if needed)")
	f.StringVar(&s.LPI, "lpi", "preset", "LPI symmetry: preset (the preset's with --link, else per-direction), per-direction or per-link (needs --link)")
	f.StringVar(&s.Link, "link", "", "make the port one end of the emulated link NAME (per link: attach the other end with the same NAME)")
	f.StringVar(&s.Handshake, "handshake", "auto", "per link: one-way time of the power-down request (auto: 64 bytes at the link's rate + 10 ns)")
	f.BoolVar(&s.AllowPhysical, "allow-physical", false, "attach to a device that is not virtual (a physical NIC, bond, VLAN…): its real traffic is held — spin keeps the sending CPU busy with bottom halves off up to --spin-max per packet, edt replaces a multi-queue NIC's root qdisc with one fq")
}
