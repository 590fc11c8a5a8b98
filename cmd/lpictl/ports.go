package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/lpictl/lpictl/agent"
	"github.com/lpictl/lpictl/agent/whatif"
	"github.com/lpictl/lpictl/hwlink"
)

func newPortsCommand() *cobra.Command {
	var (
		asJSON bool
		netns  string
		all    bool
		wi     whatif.Options
	)
	cmd := &cobra.Command{
		Use:   "ports",
		Short: "List local ports: driver, speed, carrier, EEE state and what lpictl can do there",
		Long: "ports lists the network ports of this host (or of --netns): name, driver, speed, carrier,\n" +
			"EEE supported/enabled/active, the tx LPI timer, how lpictl would observe idle gaps (eBPF, psample or\n" +
			"counters, and at which resolution) and whether it can set the timer (or why not).\n" +
			"It only reads; nothing is changed.\n\n" +
			"--what-if DURATION observes the ports that are up (or --port) for DURATION (at most 1h; eBPF, else\n" +
			"polled counters) and estimates what EEE would save on each under several policies (always-on,\n" +
			"plain EEE, the driver's default timer, a fixed timer, the predictor): idle share, saving in W and %,\n" +
			"added delay per second and per packet, wake-ups, and a recommendation that fits the driver\n" +
			"(docs/agent.md \"What EEE would save\"). Ctrl-C ends it early and reports what was observed.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !strings.Contains(netns, "/") { // a missing path: Discover says so
				if err := checkNetNS(netns); err != nil {
					return err
				}
			}
			whatIf := cmd.Flags().Changed("what-if")
			if whatIf {
				wi.NetNS = netns
				if err := wi.Validate(); err != nil {
					return exitStatusOf(err)
				}
			} else {
				for _, f := range []string{"max-delay", "preset", "fallback-preset", "fixed-pdt", "observe", "port", "bpffs"} {
					if cmd.Flags().Changed(f) {
						return badInput(fmt.Errorf("--%s needs --what-if DURATION", f))
					}
				}
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			ports, err := hwlink.Discover(ctx, hwlink.DiscoverOptions{NetNS: hwlink.NetNS(netns), All: all})
			if err != nil {
				if errors.Is(err, os.ErrNotExist) {
					return badInput(fmt.Errorf("--netns %q: %w", netns, err))
				}
				return err
			}
			w := cmd.OutOrStdout()
			switch {
			case whatIf:
				rep, err := whatif.Run(cmd.Context(), wi, ports)
				if err != nil {
					return exitStatusOf(err)
				}
				if asJSON {
					return writeJSON(w, rep)
				}
				return rep.WriteText(w)
			case asJSON:
				if ports == nil {
					ports = []hwlink.PortInfo{}
				}
				return writeJSON(w, ports)
			}
			return writePortsTable(w, ports)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().StringVar(&netns, "netns", "", "network namespace: a name (ip netns) or a path such as /proc/PID/ns/net")
	cmd.Flags().BoolVar(&all, "all", false, "also list bridges, bonds, VLANs and other virtual links")
	f := cmd.Flags()
	f.DurationVar(&wi.Duration, "what-if", 0, "observe the ports for this long (≤ 1h) and estimate what EEE would save on each")
	f.DurationVar(&wi.MaxDelay, "max-delay", whatif.DefaultMaxDelay, "with --what-if: most mean added delay per packet a recommended policy may cost")
	f.StringVar(&wi.Preset, "preset", "", "with --what-if: power preset of every port (default: an emulated port's own, else by link speed)")
	f.StringVar(&wi.FallbackPreset, "fallback-preset", agent.DefaultFallbackPreset,
		"with --what-if: preset where the speed is unknown, has none or means nothing (veth); default: no estimate there")
	f.StringVar(&wi.BPFFS, "bpffs", hwlink.DefaultBPFFS, "with --what-if: the bpffs holding emulated ports' pins (`lpictl emulate attach --bpffs`)")
	f.DurationVar(&wi.FixedPDT, "fixed-pdt", agent.DefaultEstimateFixedPDT, "with --what-if: t_PDT of the fixed policy")
	f.StringVar(&wi.Observe, "observe", whatif.ObserveAuto, "with --what-if: auto (eBPF where possible, else counters), ebpf or counters")
	f.StringSliceVar(&wi.Ports, "port", nil, "with --what-if: only these ports (repeat or comma-separate; default: every port that is up)")
	return cmd
}

func writePortsTable(w io.Writer, ports []hwlink.PortInfo) error {
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, drv, speedString(p.Speed),
			carrierString(p), eee, timer, observe, act)
	}
	return tw.Flush()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func carrierString(p hwlink.PortInfo) string {
	if p.Carrier {
		return "up"
	}
	return "down"
}

func speedString(bps uint64) string {
	switch {
	case bps == 0:
		return "unknown"
	case bps%1_000_000_000 == 0:
		return fmt.Sprintf("%dG", bps/1_000_000_000)
	default:
		return fmt.Sprintf("%dM", bps/1_000_000)
	}
}
