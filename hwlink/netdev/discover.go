package netdev

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/features"
	"golang.org/x/sys/unix"

	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/eeectl"
	"github.com/lpictl/lpictl/hwlink/observe"
)

// PortInfo describes one port and what lpictl can do there.
type PortInfo struct {
	Name      string            `json:"name"`
	Index     int               `json:"index"`
	Kind      string            `json:"kind"` // rtnetlink kind: device, veth, dsa, …
	Driver    eeectl.DriverInfo `json:"driver"`
	MAC       string            `json:"mac"`
	MTU       int               `json:"mtu"`
	Speed     uint64            `json:"speed_bps"` // 0 = unknown
	Carrier   bool              `json:"carrier"`
	OperState string            `json:"oper_state"`
	// Switchdev: a switch port (phys_switch_id or phys_port_name set)
	// whose traffic the ASIC forwards without the CPU.
	Switchdev    bool   `json:"switchdev"`
	PhysPortName string `json:"phys_port_name,omitempty"`
	SwitchID     string `json:"switch_id,omitempty"`
	// EEE is nil when it could not be read; EEEStatus says why.
	EEE       *eeectl.EEEState `json:"eee,omitempty"`
	EEEStatus string           `json:"eee_status"`
	// Actuation: can the tx LPI timer be driven, and if not why.
	Actuation eeectl.Capability `json:"actuation"`
	// Observation: how idle gaps would be observed.
	Observation ObservationPlan `json:"observation"`
}

// ObservationPlan is the observation method chosen for a port.
type ObservationPlan struct {
	Method     observe.Method `json:"method"`
	Attach     string         `json:"attach,omitempty"` // tcx or tc for MethodEBPF
	Resolution time.Duration  `json:"resolution_ns"`
	Reason     string         `json:"reason"`
	// Fallback is the method to use if Method fails at attach time
	// (MethodHWCounters for MethodPSample), "" if none.
	Fallback observe.Method `json:"fallback,omitempty"`
}

// DiscoverOptions configure Discover.
type DiscoverOptions struct {
	NetNS hwlink.NetNS
	// All lists every link but loopback (bridges, bonds, VLANs, …);
	// by default only ports: physical devices, veth, DSA and switchdev ports.
	All bool
	// PollInterval is the counter poll interval assumed for counter-based
	// observation (default 10 ms).
	PollInterval time.Duration
	Logger       *slog.Logger
	// SysfsRoot is where sysfs is mounted (default /sys), read to find the
	// switch driver of DSA user ports.
	SysfsRoot string
}

// isPortKind reports whether an rtnetlink kind is listed by default.
func isPortKind(kind string) bool {
	switch kind {
	case "device", "veth", "dsa":
		return true
	}
	return false
}

// Discover lists the ports in opts.NetNS (read-only: nothing is changed).
func Discover(ctx context.Context, opts DiscoverOptions) ([]PortInfo, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = 10 * time.Millisecond
	}
	h, err := hwlink.NetlinkHandleFor(opts.NetNS)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	links, err := h.LinkList()
	if err != nil {
		return nil, fmt.Errorf("list links: %w", hwlink.ClassifyErrno(err))
	}
	be, err := eeectl.NewEthtoolBackend(eeectl.BackendOptions{NetNS: opts.NetNS, Logger: log, SysfsRoot: opts.SysfsRoot})
	if err != nil {
		return nil, err
	}
	defer be.Close()
	act, err := eeectl.NewActuator(be, log)
	if err != nil {
		return nil, err
	}
	phys, err := readPhysAttrs(opts.NetNS)
	if err != nil {
		log.Debug("switchdev attributes unavailable", "error", err)
	}
	bpfPlan := probeBPF()
	var psPlan *observe.PSampleSupport // probed on the first switchdev port

	var ports []PortInfo
	for _, lk := range links {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		a := lk.Attrs()
		if a.Flags&net.FlagLoopback != 0 || (a.EncapType != "" && a.EncapType != "ether") {
			continue
		}
		pa := phys[a.Index]
		switchdev := a.PhysSwitchID != 0 || pa.switchID != "" || pa.portName != ""
		if !opts.All && !switchdev && !isPortKind(lk.Type()) {
			continue
		}
		p := PortInfo{
			Name: a.Name, Index: a.Index, Kind: lk.Type(), MAC: a.HardwareAddr.String(), MTU: a.MTU,
			Carrier: a.RawFlags&unix.IFF_LOWER_UP != 0, OperState: a.OperState.String(),
			Switchdev: switchdev, PhysPortName: pa.portName, SwitchID: pa.switchID,
		}
		describeEEE(ctx, &p, be, act, log)
		if p.Switchdev && psPlan == nil {
			ps := observe.ProbePSample(opts.NetNS)
			psPlan = &ps
		}
		var ps observe.PSampleSupport
		if psPlan != nil {
			ps = *psPlan
		}
		p.Observation = planObservation(p, bpfPlan, ps, opts.PollInterval)
		ports = append(ports, p)
	}
	return ports, nil
}

// describeEEE fills in what ethtool says of p: driver, speed (with
// carrier), EEE state and whether the tx LPI timer can be set.
func describeEEE(ctx context.Context, p *PortInfo, be *eeectl.EthtoolBackend, act *eeectl.Actuator, log *slog.Logger) {
	if di, err := be.DriverInfo(ctx, p.Name); err == nil {
		p.Driver = di
	} else {
		log.Debug("driver info", "device", p.Name, "error", err)
	}
	if p.Carrier {
		if s, err := be.LinkSpeed(ctx, p.Name); err == nil {
			p.Speed = s
		}
	}
	if st, err := be.GetEEE(ctx, p.Name); err == nil {
		p.EEE = &st
		p.EEEStatus = "ok (" + st.Source + ")"
	} else {
		p.EEEStatus = eeeStatus(err)
	}
	if c, err := act.Probe(ctx, p.Name); err == nil || c.Reason != "" {
		p.Actuation = c
	}
}

func eeeStatus(err error) string {
	switch {
	case errors.Is(err, hwlink.ErrNotSupported):
		return "not supported (EOPNOTSUPP)"
	case errors.Is(err, hwlink.ErrPermission):
		return "no permission"
	case errors.Is(err, hwlink.ErrNoDevice):
		return "device gone"
	}
	return err.Error()
}

// bpfSupport is whether sched_cls programs can be loaded here, and how
// they would be attached.
type bpfSupport struct {
	ok     bool
	attach string
	reason string
}

func probeBPF() bpfSupport {
	if err := features.HaveProgramType(ebpf.SchedCLS); err != nil {
		reason := "no BPF support: " + err.Error()
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) || strings.Contains(err.Error(), "permission") {
			reason = "no privileges for BPF (needs " + hwlink.EBPFCapabilities + ")"
		}
		return bpfSupport{reason: reason}
	}
	attach := "tc"
	var u unix.Utsname
	if unix.Uname(&u) == nil && kernelAtLeast(unix.ByteSliceToString(u.Release[:]), 6, 6) {
		attach = "tcx"
	}
	return bpfSupport{ok: true, attach: attach}
}

// kernelAtLeast compares a release string like "6.18.44-fc" to major.minor.
func kernelAtLeast(release string, major, minor int) bool {
	var ma, mi int
	if _, err := fmt.Sscanf(release, "%d.%d", &ma, &mi); err != nil {
		return false
	}
	return ma > major || (ma == major && mi >= minor)
}

// planObservation plans a port's observation. A switchdev port uses
// psample when the kernel has it (psample family, act_sample, cls_matchall)
// and its driver offloads the sample action to the ASIC; otherwise its
// hardware counters are polled (software sampling, like eBPF, would only
// see CPU-bound packets).
func planObservation(p PortInfo, b bpfSupport, ps observe.PSampleSupport, poll time.Duration) ObservationPlan {
	switch {
	case p.Switchdev && ps.OK && observe.PSampleOffloads(p.Driver.TableName()):
		return ObservationPlan{Method: observe.MethodPSample, Resolution: time.Nanosecond, Fallback: observe.MethodHWCounters,
			Reason: "switchdev port: " + p.Driver.TableName() + " offloads tc sample, packets sampled by the ASIC through psample " +
				"(rate 1: exact gaps from kernel timestamps taken after the trap; rate N > 1: statistical); hardware counters as fallback"}
	case p.Switchdev:
		why := "psample: " + ps.Reason
		if ps.OK {
			why = "psample available, but driver " + p.Driver.TableName() + " is not known to offload tc sample (software sampling sees only CPU-bound packets)"
		}
		return ObservationPlan{Method: observe.MethodHWCounters, Resolution: poll,
			Reason: "switchdev/DSA port forwards in hardware (eBPF sees only CPU-bound packets): hardware counters polled; " + why}
	case b.ok:
		return ObservationPlan{Method: observe.MethodEBPF, Attach: b.attach, Resolution: time.Nanosecond,
			Reason: "every packet through the host stack, timestamped at the " + b.attach + " hook"}
	default:
		return ObservationPlan{Method: observe.MethodCounters, Resolution: poll,
			Reason: b.reason + "; interface counters polled, gaps are multiples of the poll interval"}
	}
}
