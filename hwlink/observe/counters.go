package observe

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/lpictl/lpictl/hwlink"
)

// PacketCounts are an interface's cumulative packet counters.
type PacketCounts struct {
	TxPackets, RxPackets uint64
	TxBytes, RxBytes     uint64
}

// CounterSource reads an interface's packet counters.
type CounterSource interface {
	ReadCounts(ctx context.Context) (PacketCounts, error)
}

// CounterConfig configures a CounterObserver.
type CounterConfig struct {
	Interface string
	NetNS     hwlink.NetNS
	// Interval is the poll interval, the observation's resolution
	// (default 10 ms).
	Interval time.Duration
	// Hardware marks a switchdev/DSA port whose counters are the ASIC's
	// (Method reports MethodHWCounters).
	Hardware bool
	// RingSize is how many gap samples are kept until drained (default 4096).
	RingSize int
	// Source overrides the counter source (default: netlink link stats64).
	Source CounterSource
}

// CounterObserver estimates idle gaps by polling packet counters: a poll
// interval in which a direction's packet count did not grow counts as
// idle. A run of k idle intervals ended by a poll that sees packets is
// reported as a gap of k × Interval; the true gap lies in
// [k·Interval, (k+2)·Interval), and gaps shorter than one interval are not
// seen. Poll is driven by the caller (or Run); all methods are safe for
// concurrent use.
type CounterObserver struct {
	ifname   string
	interval time.Duration
	method   Method
	src      CounterSource
	closer   func() error

	mu   sync.Mutex
	dirs [2]counterDir
	ring gapRing
}

type counterDir struct {
	primed   bool
	last     uint64 // packets at the previous poll
	lastB    uint64
	idlePoll int // consecutive idle intervals
	stats    GapStats
}

var _ Observer = (*CounterObserver)(nil)

// NewCounterObserver returns a counter-polling observer for cfg.Interface.
func NewCounterObserver(cfg CounterConfig) (*CounterObserver, error) {
	if err := hwlink.CheckIfname(cfg.Interface); err != nil {
		return nil, err
	}
	if cfg.Interval == 0 {
		cfg.Interval = 10 * time.Millisecond
	}
	if cfg.Interval < time.Millisecond {
		return nil, fmt.Errorf("%s: counter poll interval %v below 1ms", cfg.Interface, cfg.Interval)
	}
	if cfg.RingSize == 0 {
		cfg.RingSize = 4096
	}
	if cfg.RingSize < 0 {
		return nil, fmt.Errorf("%s: negative ring size", cfg.Interface)
	}
	o := &CounterObserver{ifname: cfg.Interface, interval: cfg.Interval, method: MethodCounters,
		src: cfg.Source, ring: newGapRing(cfg.RingSize), closer: func() error { return nil }}
	if cfg.Hardware {
		o.method = MethodHWCounters
	}
	if o.src == nil {
		src, err := newLinkStatsSource(cfg.NetNS, cfg.Interface)
		if err != nil {
			return nil, err
		}
		o.src, o.closer = src, src.close
	}
	return o, nil
}

// Method implements Observer.
func (o *CounterObserver) Method() Method { return o.method }

// Resolution implements Observer: the poll interval.
func (o *CounterObserver) Resolution() time.Duration { return o.interval }

// Poll reads the counters once; now is the caller's CLOCK_MONOTONIC time
// (MonotonicNow) and becomes the End of gaps that this poll closes.
func (o *CounterObserver) Poll(ctx context.Context, now time.Duration) error {
	c, err := o.src.ReadCounts(ctx)
	if err != nil {
		return fmt.Errorf("%s: read counters: %w", o.ifname, err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.observe(Egress, c.TxPackets, c.TxBytes, now)
	o.observe(Ingress, c.RxPackets, c.RxBytes, now)
	return nil
}

func (o *CounterObserver) observe(dir Direction, pkts, bytes uint64, now time.Duration) {
	d := &o.dirs[dir]
	if !d.primed || pkts < d.last { // first poll, or counters reset
		d.primed, d.last, d.lastB, d.idlePoll = true, pkts, bytes, 0
		return
	}
	delta := pkts - d.last
	d.stats.Bytes += bytes - min(bytes, d.lastB)
	d.last, d.lastB = pkts, bytes
	if delta == 0 {
		d.idlePoll++
		return
	}
	d.stats.Packets += delta
	if d.idlePoll > 0 {
		gap := time.Duration(d.idlePoll) * o.interval
		d.stats.Gaps++
		d.stats.Idle += gap
		d.stats.Hist[min(HistBucket(uint64(gap)), HistBuckets-1)]++
		if o.ring.push(GapSample{End: now, Length: gap, Dir: dir}) {
			d.stats.Samples++
		} else {
			d.stats.SamplesLost++
		}
	} else {
		// Packets in consecutive intervals: busy as far as we can tell.
		d.stats.Busy += delta
	}
	d.idlePoll = 0
}

// Run polls every Interval until ctx ends; poll errors other than the
// interface going away are passed to onErr (if non-nil) and polling goes on.
func (o *CounterObserver) Run(ctx context.Context, onErr func(error)) error {
	t := time.NewTicker(o.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			if err := o.Poll(ctx, MonotonicNow()); err != nil {
				if ctx.Err() != nil {
					// A poll cut short by the stop is no error to report.
					return ctx.Err()
				}
				if errors.Is(err, hwlink.ErrNoDevice) {
					return err
				}
				if onErr != nil {
					onErr(err)
				}
			}
		}
	}
}

// DrainGaps implements Observer.
func (o *CounterObserver) DrainGaps(dst []GapSample) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.ring.drain(dst), nil
}

// ReadStats implements Observer.
func (o *CounterObserver) ReadStats(dir Direction, st *GapStats) error {
	if dir > Ingress {
		return fmt.Errorf("%s: invalid direction %d", o.ifname, dir)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	*st = o.dirs[dir].stats
	return nil
}

// Close releases the counter source.
func (o *CounterObserver) Close() error { return o.closer() }

// linkStatsSource reads IFLA_STATS64 over rtnetlink.
type linkStatsSource struct {
	h      *netlink.Handle
	ifname string
	index  int
}

func newLinkStatsSource(ns hwlink.NetNS, ifname string) (*linkStatsSource, error) {
	h, err := hwlink.NetlinkHandleFor(ns)
	if err != nil {
		return nil, err
	}
	lk, err := h.LinkByName(ifname)
	if err != nil {
		h.Close()
		return nil, fmt.Errorf("%s: %w", ifname, hwlink.ClassifyLinkErr(err))
	}
	return &linkStatsSource{h: h, ifname: ifname, index: lk.Attrs().Index}, nil
}

func (s *linkStatsSource) ReadCounts(ctx context.Context) (PacketCounts, error) {
	if err := ctx.Err(); err != nil {
		return PacketCounts{}, err
	}
	lk, err := s.h.LinkByIndex(s.index)
	if err != nil {
		return PacketCounts{}, hwlink.ClassifyLinkErr(err)
	}
	st := lk.Attrs().Statistics
	if st == nil {
		return PacketCounts{}, fmt.Errorf("no link statistics: %w", hwlink.ErrNotSupported)
	}
	return PacketCounts{TxPackets: st.TxPackets, RxPackets: st.RxPackets, TxBytes: st.TxBytes, RxBytes: st.RxBytes}, nil
}

func (s *linkStatsSource) close() error {
	s.h.Close()
	return nil
}

// LinkErrors are a link's cumulative error and drop counters from
// IFLA_STATS64 (rtnl_link_stats64, as `ip -s link` shows them).
type LinkErrors struct {
	RxErrors, TxErrors   uint64
	RxCRCErrors          uint64
	RxDropped, TxDropped uint64
}

// ReadLinkErrors reads ifname's error and drop counters in ns ("" = the
// caller's namespace) over rtnetlink. A missing link is ErrNoDevice.
func ReadLinkErrors(ns hwlink.NetNS, ifname string) (LinkErrors, error) {
	h, err := hwlink.NetlinkHandleFor(ns)
	if err != nil {
		return LinkErrors{}, err
	}
	defer h.Close()
	lk, err := h.LinkByName(ifname)
	if err != nil {
		return LinkErrors{}, fmt.Errorf("%s: %w", ifname, hwlink.ClassifyLinkErr(err))
	}
	st := lk.Attrs().Statistics
	if st == nil {
		return LinkErrors{}, fmt.Errorf("%s: no link statistics: %w", ifname, hwlink.ErrNotSupported)
	}
	return LinkErrors{RxErrors: st.RxErrors, TxErrors: st.TxErrors, RxCRCErrors: st.RxCrcErrors,
		RxDropped: st.RxDropped, TxDropped: st.TxDropped}, nil
}
