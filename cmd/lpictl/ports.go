package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lpictl/lpictl/agent"
	"github.com/lpictl/lpictl/agent/hwbackend"
	"github.com/lpictl/lpictl/agent/portview"
	"github.com/lpictl/lpictl/agent/whatif"
	"github.com/lpictl/lpictl/configs"
	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/emulate"
	"github.com/lpictl/lpictl/hwlink/netdev"
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
				if err := hwbackend.CheckNetNS(netns); err != nil {
					return err
				}
			}
			whatIf := cmd.Flags().Changed("what-if")
			if whatIf {
				wi.NetNS = netns
				if err := wi.Validate(); err != nil {
					return err
				}
			} else {
				for _, f := range []string{"max-delay", "preset", "fallback-preset", "fixed-pdt", "observe", "port", "bpffs"} {
					if cmd.Flags().Changed(f) {
						return configs.BadInput(fmt.Errorf("--%s needs --what-if DURATION", f))
					}
				}
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			ports, err := netdev.Discover(ctx, netdev.DiscoverOptions{NetNS: hwlink.NetNS(netns), All: all})
			if err != nil {
				if errors.Is(err, os.ErrNotExist) {
					return configs.BadInput(fmt.Errorf("--netns %q: %w", netns, err))
				}
				return err
			}
			w := cmd.OutOrStdout()
			switch {
			case whatIf:
				rep, err := whatif.Run(cmd.Context(), wi, ports)
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(w, rep)
				}
				return rep.WriteText(w)
			case asJSON:
				if ports == nil {
					ports = []netdev.PortInfo{}
				}
				return writeJSON(w, ports)
			}
			return portview.WritePorts(w, ports)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().StringVar(&netns, "netns", "", "network namespace: a name (ip netns) or a path such as /proc/PID/ns/net")
	cmd.Flags().BoolVar(&all, "all", false, "also list bridges, bonds, VLANs and other virtual links")
	addWhatIfFlags(cmd.Flags(), &wi)
	return cmd
}

// addWhatIfFlags adds the flags of `lpictl ports --what-if` into o.
func addWhatIfFlags(f *pflag.FlagSet, o *whatif.Options) {
	f.DurationVar(&o.Duration, "what-if", 0, "observe the ports for this long (≤ 1h) and estimate what EEE would save on each")
	f.DurationVar(&o.MaxDelay, "max-delay", whatif.DefaultMaxDelay, "with --what-if: most mean added delay per packet a recommended policy may cost")
	f.StringVar(&o.Preset, "preset", "", "with --what-if: power preset of every port (default: an emulated port's own, else by link speed)")
	f.StringVar(&o.FallbackPreset, "fallback-preset", agent.DefaultFallbackPreset,
		"with --what-if: preset where the speed is unknown, has none or means nothing (veth); default: no estimate there")
	f.StringVar(&o.BPFFS, "bpffs", emulate.DefaultBPFFS, "with --what-if: the bpffs holding emulated ports' pins (`lpictl emulate attach --bpffs`)")
	f.DurationVar(&o.FixedPDT, "fixed-pdt", agent.DefaultEstimateFixedPDT, "with --what-if: t_PDT of the fixed policy")
	f.StringVar(&o.Observe, "observe", whatif.ObserveAuto, "with --what-if: auto (eBPF where possible, else counters), ebpf or counters")
	f.StringSliceVar(&o.Ports, "port", nil, "with --what-if: only these ports (repeat or comma-separate; default: every port that is up)")
}
