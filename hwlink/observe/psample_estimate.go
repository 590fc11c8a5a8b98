package observe

import (
	"fmt"
	"math"
	"time"
)

// psampleEstimator turns a port's consecutive psample samples into idle
// gaps, per direction. It does no I/O and is not safe for concurrent use
// (PSampleObserver holds its lock around it).
//
// Rate 1 (every packet is sampled): the transmitter model of the eBPF
// program — a packet sampled at t finds the link idle if t is after the end
// of the previous packet's transmission (start + (len+24 B) × ns/byte; with
// unknown speed transmissions are instantaneous); the gap is exact to the
// sample timestamps.
//
// Rate N > 1 (one packet in N, at random): the packets between two samples
// are not seen. The interval Δ between consecutive samples holds N packets
// on average, so the estimate is statistical: the idle time in the interval
// is Δ − N × (serialisation time of a packet the size of the sample), and
// each of the N packets is taken to end a gap of the mean, idle/N. One
// GapSample (Length = that mean) is produced per interval; ReadStats counts
// N packets and N gaps of the mean length per interval. Individual gaps and
// their spread inside the interval are not observable.
//
// A jump in the group's sequence number means samples were lost (socket
// overrun): the interval across it is not measured. A timestamp going
// backwards (clock step) restarts the direction.
type psampleEstimator struct {
	nsPerByteQ16 uint64
	dirs         [2]psampleDir
}

type psampleDir struct {
	primed  bool
	prevT   time.Duration
	prevSeq uint32
	lastEnd time.Duration // rate 1: end of the previous transmission
	// sample intervals (for the statistical resolution)
	intervals   uint64
	intervalSum time.Duration
	// packets per sample of the last sample (1 = exact)
	perSample float64
	stats     GapStats
}

// ethOverheadBytes: preamble+SFD (8), FCS (4) and the minimum inter-frame
// gap (12), as in bpf/idlegap.c.
const ethOverheadBytes = 24

// serialisation returns the transmission time of a packet of n bytes.
func (e *psampleEstimator) serialisation(n uint32) time.Duration {
	if e.nsPerByteQ16 == 0 {
		return 0
	}
	return time.Duration((uint64(n) + ethOverheadBytes) * e.nsPerByteQ16 >> 16)
}

// reset forgets the previous sample of every direction (after lost
// samples of unknown direction).
func (e *psampleEstimator) reset() {
	for i := range e.dirs {
		e.dirs[i].primed = false
	}
}

// add takes one sample of dir observed at t (CLOCK_MONOTONIC) and returns
// the gap it closes, if any.
func (e *psampleEstimator) add(dir Direction, s PSample, t time.Duration) (GapSample, bool) {
	d := &e.dirs[dir&1]
	n := s.PacketsPerSample()
	if n <= 0 || math.IsInf(n, 0) || math.IsNaN(n) {
		n = 1
	}
	d.perSample = n
	pkts := uint64(math.Round(n))
	d.stats.Packets += pkts
	d.stats.Bytes += uint64(math.Round(n * float64(s.OrigSize)))
	ser := e.serialisation(s.OrigSize)

	prime := func() {
		d.primed, d.prevT, d.prevSeq, d.lastEnd = true, t, s.Seq, t+ser
	}
	if !d.primed {
		prime()
		return GapSample{}, false
	}
	if lost := s.Seq - d.prevSeq - 1; s.Seq != d.prevSeq+1 {
		if s.Seq-d.prevSeq < 1<<31 { // forward jump: samples lost
			d.stats.SamplesLost += uint64(lost)
		}
		prime()
		return GapSample{}, false
	}
	if t < d.prevT {
		prime()
		return GapSample{}, false
	}
	delta := t - d.prevT
	d.intervals++
	d.intervalSum += delta
	d.prevT, d.prevSeq = t, s.Seq

	if n == 1 {
		start := max(t, d.lastEnd)
		gap := t - d.lastEnd
		d.lastEnd = start + ser
		if gap <= 0 {
			d.stats.Busy++
			return GapSample{}, false
		}
		return d.record(gap, 1, GapSample{End: t, Length: gap, Dir: dir, PacketLen: s.OrigSize}), true
	}
	idle := delta - time.Duration(n*float64(ser))
	d.lastEnd = t + ser
	if idle <= 0 {
		d.stats.Busy += pkts
		return GapSample{}, false
	}
	mean := time.Duration(float64(idle) / n)
	if mean <= 0 {
		d.stats.Busy += pkts
		return GapSample{}, false
	}
	d.stats.Idle += idle - mean*time.Duration(pkts) // record adds mean × pkts
	return d.record(mean, pkts, GapSample{End: t, Length: mean, Dir: dir, PacketLen: s.OrigSize}), true
}

// record counts count gaps of length gap and returns g.
func (d *psampleDir) record(gap time.Duration, count uint64, g GapSample) GapSample {
	d.stats.Gaps += count
	d.stats.Idle += gap * time.Duration(count)
	d.stats.Hist[min(HistBucket(uint64(gap)), HistBuckets-1)] += count
	return g
}

// meanInterval is the mean time between consecutive samples of dir (0 if
// none yet).
func (e *psampleEstimator) meanInterval(dir Direction) time.Duration {
	d := &e.dirs[dir&1]
	if d.intervals == 0 {
		return 0
	}
	return d.intervalSum / time.Duration(d.intervals)
}

// describeRate says what a rate means for the gap estimate.
func describeRate(perSample float64) string {
	if perSample <= 1 {
		return "every packet sampled: exact gaps between sample timestamps"
	}
	return fmt.Sprintf("1 in %.0f packets sampled: statistical estimate, each gap is the mean over the ~%.0f packets between two samples", perSample, perSample)
}
