package observe

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/lpictl/lpictl/hwlink"
)

// MethodPSample: packet samples from the tc sample action through the
// psample generic netlink family; on a switch ASIC that offloads the action
// the samples come from the hardware data path.
const MethodPSample Method = "psample"

// psampleFilterPriority is the matchall filter's priority (after the eBPF
// observer's cls_bpf filter, so both can coexist).
const psampleFilterPriority = tcFilterPriority + 1

// psampleDefaultGroupBase: the default psample group of a port is
// base + 2×ifindex (egress) and +1 (ingress).
const psampleDefaultGroupBase = 0x4C500000

// psampleRecvResolution is the resolution claimed when samples carry no
// kernel timestamp and the receive time is used (an estimate of netlink
// delivery jitter, not measured).
const psampleRecvResolution = 100 * time.Microsecond

// PSampleConfig configures AttachPSample.
type PSampleConfig struct {
	// Interface is the port's name in NetNS.
	Interface string
	NetNS     hwlink.NetNS
	// Rate samples one packet in Rate (default 1: every packet, exact
	// gaps). Above 1 the gaps are a statistical estimate. On an ASIC, rate
	// 1 traps every packet to the CPU: use it only for light traffic.
	Rate uint32
	// Group is the psample group of egress samples; ingress uses Group+1.
	// 0 = 0x4C500000 + 2×ifindex.
	Group uint32
	// TruncSize is how many bytes of each packet are copied into a sample
	// (default 64; lpictl only uses the metadata).
	TruncSize uint32
	// Ingress also samples received traffic (egress is always sampled).
	Ingress bool
	// HardwareOnly sets skip_sw: the filter must be offloaded to the ASIC
	// or the attach fails. By default it also runs in software (veth, host
	// ports, switch ports whose driver cannot offload it).
	HardwareOnly bool
	// Speed is the link speed (bits/s, 0 unknown) for the transmitter
	// model, as in EBPFConfig.
	Speed uint64
	// RingSize is how many gap samples are kept until drained (default 4096).
	RingSize int
	Logger   *slog.Logger
}

// PSampleObserver observes a port through psample: it installs a clsact
// qdisc (if none is there) and a matchall filter with a sample action,
// listens on psample's "packets" multicast group and turns consecutive
// samples into gaps (see docs/hwlink.md). Close removes exactly what it
// installed. DrainGaps and ReadStats are safe for concurrent use and do not
// allocate.
type PSampleObserver struct {
	ifname  string
	ifindex int
	ns      netns.NsHandle
	log     *slog.Logger
	groups  [2]uint32
	dirs    int // 1 = egress, 2 = egress+ingress
	rate    uint32

	route      *netlink.Conn
	genl       *genetlink.Conn
	family     uint16
	filters    []tcFilterSpec
	addedQdisc bool
	offloaded  [2]bool
	done       chan struct{}
	closeOnce  sync.Once

	mu       sync.Mutex
	est      psampleEstimator
	ring     gapRing
	stamped  bool // samples carry PSAMPLE_ATTR_TIMESTAMP
	received uint64

	foreign   atomic.Uint64 // samples of our groups for another port
	recvErrs  atomic.Uint64
	decodeErr atomic.Uint64
}

var _ Observer = (*PSampleObserver)(nil)

// AttachPSample installs the sample action on cfg.Interface and starts
// listening. Errors match ErrNotSupported when the kernel lacks psample,
// cls_matchall or act_sample (or, with HardwareOnly, the driver cannot
// offload), ErrPermission without CAP_NET_ADMIN.
func AttachPSample(ctx context.Context, cfg PSampleConfig) (*PSampleObserver, error) {
	return attachPSample(ctx, cfg, true)
}

// setDefaults fills in rate 1, 64-byte truncation and a 4096-gap ring.
func (cfg *PSampleConfig) setDefaults() error {
	if cfg.Rate == 0 {
		cfg.Rate = 1
	}
	if cfg.TruncSize == 0 {
		cfg.TruncSize = 64
	}
	if cfg.RingSize == 0 {
		cfg.RingSize = 4096
	}
	if cfg.RingSize < 0 {
		return fmt.Errorf("%s: negative ring size", cfg.Interface)
	}
	return nil
}

// attachPSample is AttachPSample; subscribe=false skips the psample
// subscription (tests of the tc part on kernels without psample).
func attachPSample(ctx context.Context, cfg PSampleConfig, subscribe bool) (*PSampleObserver, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := hwlink.CheckIfname(cfg.Interface); err != nil {
		return nil, err
	}
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	o := &PSampleObserver{ifname: cfg.Interface, ns: netns.None(), log: cfg.Logger, rate: cfg.Rate,
		ring: newGapRing(cfg.RingSize), dirs: 1}
	if o.log == nil {
		o.log = slog.New(slog.DiscardHandler)
	}
	if cfg.Ingress {
		o.dirs = 2
	}
	o.est.nsPerByteQ16 = SpeedQ16(cfg.Speed)
	ok := false
	defer func() {
		if !ok {
			o.Close()
		}
	}()
	ns, err := cfg.NetNS.Open() // "" gives the caller's own (no handle)
	if err != nil {
		return nil, err
	}
	o.ns = ns
	ncfg := hwlink.NetlinkConfig(o.ns)
	// Subscribe first, so that no sample is missed once the filter exists.
	if subscribe {
		if err := o.subscribe(ncfg); err != nil {
			return nil, err
		}
	}
	if o.route, err = netlink.Dial(unix.NETLINK_ROUTE, ncfg); err != nil {
		return nil, fmt.Errorf("%s: dial rtnetlink: %w", o.ifname, err)
	}
	_ = o.route.SetOption(netlink.ExtendedAcknowledge, true)
	nlh, err := hwlink.NetlinkHandleIn(o.ns)
	if err != nil {
		return nil, err
	}
	defer nlh.Close()
	lk, err := nlh.LinkByName(cfg.Interface)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Interface, hwlink.ClassifyLinkErr(err))
	}
	o.ifindex = lk.Attrs().Index
	base := cfg.Group
	if base == 0 {
		base = psampleDefaultGroupBase + 2*uint32(o.ifindex)
	}
	o.groups = [2]uint32{base, base + 1}

	if err := o.ensureClsact(nlh); err != nil {
		return nil, err
	}
	for dir := range o.dirs {
		if err := o.addFilter(Direction(dir), cfg); err != nil {
			return nil, err
		}
	}
	o.done = make(chan struct{})
	if o.genl != nil {
		go o.receive()
	} else {
		close(o.done)
	}
	ok = true
	o.log.Debug("psample observer attached", "device", o.ifname, "rate", cfg.Rate, "groups", o.groups[:o.dirs],
		"offloaded", o.offloaded[:o.dirs])
	return o, nil
}

// Interface returns the observed interface's name.
func (o *PSampleObserver) Interface() string { return o.ifname }

// Groups returns the psample groups in use (egress, ingress).
func (o *PSampleObserver) Groups() (egress, ingress uint32) { return o.groups[0], o.groups[1] }

// Offloaded reports whether the kernel says the egress filter runs in
// hardware (TCA_CLS_FLAGS_IN_HW). On a switchdev port without offload the
// samples only cover CPU-bound packets.
func (o *PSampleObserver) Offloaded() bool { return o.offloaded[Egress] }

// Statistical reports whether the gaps are a statistical estimate (rate
// above 1, as configured or as the samples say).
func (o *PSampleObserver) Statistical() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.statisticalLocked()
}

func (o *PSampleObserver) statisticalLocked() bool {
	if p := o.est.dirs[Egress].perSample; p > 0 {
		return p > 1
	}
	return o.rate > 1
}

// Method implements Observer.
func (o *PSampleObserver) Method() Method { return MethodPSample }

// Resolution implements Observer: 1 ns (the kernel's sample timestamp)
// with every packet sampled; the receive-time resolution (an estimate of
// 100 µs) when samples carry no timestamp; with rate N > 1 the mean time
// between samples, over which each gap is averaged.
func (o *PSampleObserver) Resolution() time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	base := time.Nanosecond
	if o.received > 0 && !o.stamped {
		base = psampleRecvResolution
	}
	if o.statisticalLocked() {
		return max(base, o.est.meanInterval(Egress))
	}
	return base
}

// Status describes the observation for status output.
func (o *PSampleObserver) Status() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	per := o.est.dirs[Egress].perSample
	if per == 0 {
		per = float64(o.rate)
	}
	s := describeRate(per)
	if o.offloaded[Egress] {
		s += "; sampled by the hardware (filter in_hw)"
	} else {
		s += "; sampled in software at the clsact hook (a switch ASIC's forwarded packets are not seen)"
	}
	switch {
	case o.received == 0:
	case o.stamped:
		s += "; kernel timestamps"
	default:
		s += "; no kernel timestamps, receive time used"
	}
	if n := o.foreign.Load(); n > 0 {
		s += fmt.Sprintf("; %d samples of another port in lpictl's groups ignored", n)
	}
	return s
}

// SetSpeed updates the link speed (bits/s, 0 unknown).
func (o *PSampleObserver) SetSpeed(bps uint64) {
	o.mu.Lock()
	o.est.nsPerByteQ16 = SpeedQ16(bps)
	o.mu.Unlock()
}

// DrainGaps implements Observer.
func (o *PSampleObserver) DrainGaps(dst []GapSample) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.ring.drain(dst), nil
}

// ReadStats implements Observer. With rate N > 1 packet, byte and gap
// counts are estimates (N per sample).
func (o *PSampleObserver) ReadStats(dir Direction, st *GapStats) error {
	if dir > Ingress {
		return fmt.Errorf("%s: invalid direction %d", o.ifname, dir)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	*st = o.est.dirs[dir].stats
	return nil
}

// Close stops listening and removes the filters, and the clsact qdisc if
// it added it and nothing else uses it.
func (o *PSampleObserver) Close() error {
	var errs []error
	o.closeOnce.Do(func() {
		if o.genl != nil {
			errs = append(errs, o.genl.Close())
			if o.done != nil {
				<-o.done
			}
		}
		if o.route != nil {
			for _, f := range o.filters {
				req, err := encodeFilterRef(f)
				if err == nil {
					_, err = o.route.Execute(netlink.Message{
						Header: netlink.Header{Type: unix.RTM_DELTFILTER, Flags: netlink.Request | netlink.Acknowledge},
						Data:   req,
					})
				}
				if err != nil && !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.ENODEV) {
					errs = append(errs, fmt.Errorf("delete matchall/sample filter: %w", err))
				}
			}
			o.filters = nil
			errs = append(errs, o.route.Close())
		}
		if o.addedQdisc {
			if h, err := hwlink.NetlinkHandleIn(o.ns); err != nil {
				errs = append(errs, err)
			} else {
				errs = append(errs, removeClsactIfUnused(h, o.ifindex))
				h.Close()
			}
		}
		if o.ns.IsOpen() {
			errs = append(errs, o.ns.Close())
			o.ns = netns.None()
		}
	})
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%s: detach psample: %w", o.ifname, err)
	}
	return nil
}
