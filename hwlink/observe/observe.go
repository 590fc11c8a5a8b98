package observe

import (
	"math/bits"
	"time"

	"golang.org/x/sys/unix"
)

// Direction of traffic on a port.
type Direction uint8

const (
	Egress  Direction = 0
	Ingress Direction = 1
)

func (d Direction) String() string {
	if d == Ingress {
		return "ingress"
	}
	return "egress"
}

// Method is how a port's idle gaps are observed.
type Method string

const (
	// MethodEBPF: the idlegap eBPF program at TCX/clsact; every packet the
	// host sends (or receives) is seen, gaps are exact to the hook.
	MethodEBPF Method = "ebpf"
	// MethodHWCounters: a switchdev/DSA port forwarding in hardware; its
	// hardware packet counters are polled (netlink stats64).
	MethodHWCounters Method = "hw-counters"
	// MethodCounters: interface counters are polled because eBPF cannot be
	// used; gaps are multiples of the poll interval.
	MethodCounters Method = "counters"
	// MethodNone: nothing can observe this port.
	MethodNone Method = "none"
	// MethodEmulated: an emulated EEE port (emulate.Attach) reports its own
	// ended idle periods — from a departure to the next arrival — with its
	// outcome, the t_PDT armed and the wake-up wait (emulate.Observer).
	MethodEmulated Method = "emulated"
)

// GapSample is one idle gap: Length long, ending at End (CLOCK_MONOTONIC,
// as returned by [MonotonicNow]).
type GapSample struct {
	End    time.Duration
	Length time.Duration
	Dir    Direction
	// PacketLen is the length of the packet that ended the gap (0 when
	// observed through counters).
	PacketLen uint32

	// The port's own outcome, where the observer knows it (MissedKnown:
	// MethodEmulated): Missed says the gap reached PDT, the t_PDT armed for
	// it, so the port went down and the packet paid a wake-up; NeverSleeps
	// that the port could not go down at all (always-on mode, EEE or tx LPI
	// off), whatever PDT says. Delay is the wait the packet that ended the
	// gap paid for the port's power state (0 if none or unknown). Seq
	// numbers the port's idle periods (0 = not numbered).
	MissedKnown bool
	Missed      bool
	NeverSleeps bool
	PDT         time.Duration
	Delay       time.Duration
	Seq         uint64
}

// HistBuckets is the number of buckets of the idle-gap histogram.
const HistBuckets = 496

// histSubBits: each power of two is split into 1<<histSubBits buckets.
const histSubBits = 3

// HistBucket returns the histogram bucket of a gap of ns nanoseconds:
// 0..7 ns map to their own bucket, above that every power of two is split
// into 8 equal buckets (at most 12.5 % relative width). Identical to
// hist_bucket in bpf/idlegap.c.
func HistBucket(ns uint64) int {
	if ns < 1<<histSubBits {
		return int(ns)
	}
	e := 63 - bits.LeadingZeros64(ns)
	sub := int(ns>>(e-histSubBits)) & (1<<histSubBits - 1)
	return (e-(histSubBits-1))*(1<<histSubBits) + sub
}

// HistBucketBounds returns the range [lo, hi) of bucket i in nanoseconds
// (hi of the last bucket saturates at MaxUint64).
func HistBucketBounds(i int) (lo, hi uint64) {
	if i < 1<<histSubBits {
		return uint64(i), uint64(i) + 1
	}
	e := i/(1<<histSubBits) + histSubBits - 1
	sub := uint64(i % (1 << histSubBits))
	shift := uint(e - histSubBits)
	lo = (1<<histSubBits + sub) << shift
	if i == HistBuckets-1 {
		return lo, ^uint64(0)
	}
	return lo, (1<<histSubBits + sub + 1) << shift
}

// GapStats are a direction's cumulative counters and idle-gap histogram.
type GapStats struct {
	Packets     uint64
	Bytes       uint64
	Gaps        uint64 // packets that found the link idle
	Busy        uint64 // packets that found the link transmitting
	Idle        time.Duration
	Samples     uint64 // gap samples produced
	SamplesLost uint64 // samples that did not fit (ring full)
	Races       uint64 // packets not measured: lost repeated races with other CPUs
	Hist        [HistBuckets]uint64
}

// Observer is a source of idle gaps on one port. Methods may be called from
// one goroutine at a time; DrainGaps and ReadStats never allocate.
type Observer interface {
	// Method and Resolution say how gaps are observed and how finely.
	Method() Method
	Resolution() time.Duration
	// DrainGaps moves up to len(dst) pending gap samples into dst and
	// returns how many; 0 when none are pending.
	DrainGaps(dst []GapSample) (int, error)
	// ReadStats fills st with dir's cumulative counters and histogram.
	ReadStats(dir Direction, st *GapStats) error
	// Close detaches and releases everything.
	Close() error
}

// MonotonicNow returns CLOCK_MONOTONIC, the clock of GapSample.End (and of
// bpf_ktime_get_ns).
func MonotonicNow() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
