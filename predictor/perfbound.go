package predictor

import (
	"fmt"
	"math"
	"time"
	"unsafe"
)

// PerfBound sets t_PDT so that the wake-ups it causes stay within a
// degradation bound (docs/model.md §2.2; paper 000 §2.4, §3.2):
//
//	l = bound × Σ_i p_i / h_i        hop factor
//	N = l × X / t_w                  affordable wake-ups over the span X
//	t_PDT = middle of the lowest bin whose count from the top is ≤ N
//
// Its fields are laid out in the order a decision and a count read them,
// so that those touch as few cache lines as the traffic needs: the
// histogram's state, then the scalars every decision reads, the hop
// counts of the shortest paths first, and the inline bins from the lowest.
type PerfBound struct {
	hist histogram
	// hy chooses the hold of hybrid mode; nil when Config.Hybrid is unset
	// (and for the n-gram's fallback, which uses the configured hold).
	// Every decision tests it.
	hy      *hybrid
	initial time.Duration
	bound   float64
	wake    time.Duration

	hopDirty bool
	// hopMax is the longest path of hopCounts with a packet (0: none), so
	// that forming the sum reads only the counts that can be non-zero.
	hopMax uint8
	// w_counter and s_elem (1..8 and 1..16, validated), beside hopDirty.
	counterBytes, elementBytes uint8
	hopPackets                 uint64
	hopSum                     float64 // Σ packets/h over all observed packets, when !hopDirty
	farWeighted                float64
	staticHop                  float64 // Σ p_i/h_i of the configured distribution, normalised
	// Observed hop counts: packets per hop count h at hopCounts[h-1]
	// (1..len; longer paths count in hopPackets only, with their
	// Σ packets/h in farWeighted).
	// Integer counts make recording a packet an add and reports batchable
	// exactly; Σ p_i/h_i is formed when a decision needs it (hopDirty).
	hopCounts [15]uint64

	// Storage for the first inlineBins populated bins, so that a small
	// histogram is part of the predictor (hist.bins moves to the heap
	// when it outgrows it, and this then holds their top bins' copy and
	// directory: histogram.topBins, binDir).
	binStore [inlineBins]bin
}

// inlineBins is the number of histogram bins stored inside a PerfBound.
const inlineBins = 32

func newPerfBound(c Config) *PerfBound {
	p := new(PerfBound)
	p.init(c)
	return p
}

// init builds p in place (its histogram points into p).
func (p *PerfBound) init(c Config) {
	*p = PerfBound{
		initial:      c.InitialPDT.D(),
		bound:        c.Bound,
		wake:         c.WakeTime.D(),
		hist:         newHistogram(c.Histogram),
		staticHop:    1,
		counterBytes: uint8(c.Histogram.CounterBytes),
		elementBytes: uint8(c.Histogram.ElementBytes),
	}
	p.hist.bins = p.binStore[:0]
	if c.Kind != KindNGram {
		p.hy = newHybrid(c)
	}
	if len(c.Hops) > 0 {
		p.staticHop = StaticHopFactor(c.Hops)
	}
}

// StaticHopFactor is Σ p_i/h_i with the shares normalised to sum to 1,
// summed in hop order so the result does not depend on map order.
func StaticHopFactor(hops map[int]float64) float64 {
	var sum, total float64
	for h := 1; h <= maxHops; h++ {
		if p, ok := hops[h]; ok {
			sum += p / float64(h)
			total += p
		}
	}
	return sum / total
}

// HopFactor returns l = bound × Σ p_i/h_i for the hops seen so far.
func (p *PerfBound) HopFactor() float64 {
	if p.hopPackets == 0 {
		return p.bound * p.staticHop
	}
	if p.hopDirty {
		sum := p.farWeighted
		for h := 1; h <= int(p.hopMax); h++ {
			if c := p.hopCounts[h-1]; c != 0 {
				sum += float64(c) / float64(h)
			}
		}
		p.hopSum, p.hopDirty = sum, false
	}
	return p.bound * p.hopSum / float64(p.hopPackets)
}

// BudgetRate is the hop factor l (Bounded).
func (p *PerfBound) BudgetRate() float64 { return p.HopFactor() }

// WakeCost is t_w, or Deep Sleep's t_w in hybrid mode.
func (p *PerfBound) WakeCost() time.Duration {
	if p.hy != nil {
		return p.wake + time.Duration(p.hy.delta)
	}
	return p.wake
}

// Budget returns N = l × X / t_w at now.
func (p *PerfBound) Budget(now time.Duration) float64 {
	return p.HopFactor() * float64(p.hist.covered(now)) / float64(p.wake)
}

// Observe counts the idle period in the histogram.
func (p *PerfBound) Observe(ip IdlePeriod) {
	p.hist.add(ip.Length, ip.End-ip.Length, ip.End, &p.binStore)
}

// ObserveHops records packets that travel hops hops (clamped to 1..255).
func (p *PerfBound) ObserveHops(hops int, packets uint64) {
	if packets == 0 {
		return
	}
	hops = min(max(hops, 1), maxHops)
	if hops <= len(p.hopCounts) {
		p.hopCounts[hops-1] += packets
		p.hopMax = max(p.hopMax, uint8(hops))
	} else {
		p.farWeighted += float64(packets) / float64(hops)
	}
	p.hopPackets += packets
	p.hopDirty = true
}

// Predict runs the bin search; an empty histogram answers the initial t_PDT.
// In hybrid mode it chooses t_PDT and the hold together (see HoldChooser
// and docs/predictors.md "Hybrid holds").
func (p *PerfBound) Predict(now time.Duration) time.Duration {
	p.hist.maintain(now, &p.binStore)
	if p.hy != nil {
		return p.predictHybrid(now)
	}
	if p.hist.n == 0 {
		return p.initial
	}
	return p.hist.search(p.Budget(now), &p.binStore)
}

// StateBytes is w_counter × n_bins, plus h_maxN × s_elem for the ring of
// the circular strategy (paper 000 §3.3). The clearing strategy keeps two
// windows, each its own sparse histogram: n_bins is the populated bins of
// the previous window plus those of the current one.
func (p *PerfBound) StateBytes() int {
	b := int(p.counterBytes) * p.hist.storedBins()
	if p.hist.strategy == circular {
		b += int(p.hist.maxN) * int(p.elementBytes)
	}
	return b
}

// Kind returns KindPerfBound.
func (p *PerfBound) Kind() Kind { return KindPerfBound }

// BinAddr returns where, in the histogram's bins spilled out of the
// predictor, an idle period of length v will be counted (0 while they fit
// in it), for a caller that prefetches that cache line before it passes
// the period to Observe: out of line and cold, it is a cache miss.
func (p *PerfBound) BinAddr(v time.Duration) uintptr {
	return p.hist.binAddr(p.hist.binOf(v), &p.binStore)
}

// BinAddr is the PerfBound's (PerfBound.BinAddr).
func (p *PerfBoundCorrect) BinAddr(v time.Duration) uintptr { return p.pb.BinAddr(v) }

// PopulatedBins returns the number of populated histogram bins.
func (p *PerfBound) PopulatedBins() int { return len(p.hist.bins) }

// Records returns the number of values the histogram counts.
func (p *PerfBound) Records() int { return p.hist.n }

// PerfBoundCorrect lengthens PerfBound's answer by a correction factor learnt
// from recent mispredictions (docs/model.md §2.3, paper 000 §3.4):
//
//	cf    = miss_rate × geometric_mean(t_inac/t_PDT of the misses)
//	t_PDT = min(t_PB × (1 + cf), h_maxval)
//
// over the last n_R outcomes. Its PerfBound holds slices into its own
// inline storage, so it is used by pointer and never copied. Readings (docs/model.md §2.3): with t_PDT = 0 a miss's
// ratio is taken against t_w; a ratio below 1 (possible only then) counts
// as 1, since the correction only ever lengthens t_PDT.
//
// Its h_maxval and t_w are PerfBound's (pb.hist.maxValue, pb.wake). Its
// register's indices and counts are below n_R ≤ 2^20 (Config.Validate), so
// they are int32.
type PerfBoundCorrect struct {
	// Outcome shift register of n_R bits (1 = miss), as a ring.
	nR     int32
	head   int32 // oldest outcome
	count  int32
	misses int32

	// FIFO of ln(ratio) for the misses in the register, in step with it,
	// as a ring whose capacity is its storage's length (logRing). Logs
	// make the geometric mean a sum; summing the ≤ n_R values when the
	// misses change keeps it exact (no drift from incremental updates).
	logHead int32
	cfDirty bool
	cf      float64 // CorrectionFactor, valid while !cfDirty
	// In hybrid mode the hold for the last corrected t_PDT is pb.hy.corrected.

	// long holds the register and the FIFO when n_R > inlineHistory; nil
	// when they are inline.
	long *longRegister

	// Storage for registers of up to inlineHistory outcomes, so that the
	// predictor is one allocation and a decision touches few cache lines:
	// the register with the counts above, then PerfBound, then the FIFO
	// (read only when the misses change) in the last line.
	inlineOutcomes [(inlineHistory + 63) / 64]uint64

	pb PerfBound

	// logSpill holds the FIFO (n_R entries) once more than inlineLogCap
	// misses are in a register of up to inlineHistory outcomes: nil
	// until then. Most registers hold few misses (the bound keeps them a
	// small share), so the FIFO starts in the predictor's last line, not
	// in n_R entries of which most would stay unused (docs/simulator.md
	// "Memory": none of the Megafly-4160's spill, a quarter of LAMMPS's).
	logSpill   *[inlineHistory]float64
	inlineLogs [inlineLogCap]float64
}

// inlineLogCap is the number of miss logs the predictor holds inline: what
// fills its last cache line after logSpill.
const inlineLogCap = 7

// longRegister is the outcome register (n_R bits) and the FIFO of miss
// logs (n_R entries) of a PerfBoundCorrect too long to hold them inline.
type longRegister struct {
	outcomes []uint64
	logs     []float64
}

// inlineHistory is the longest outcome register stored inside the
// predictor: the default n_R; longer registers are allocated apart.
const inlineHistory = DefaultHistory

func newPerfBoundCorrect(c Config) *PerfBoundCorrect {
	p := new(PerfBoundCorrect)
	p.init(c)
	return p
}

// InitPerfBoundCorrect makes *p a PerfBoundCorrect for cfg (defaults filled,
// validated), in place: the same predictor New(cfg) returns, built where
// the caller keeps it (e.g. next to the port controller that uses it, so
// that a decision touches neighbouring cache lines). *p must not be copied
// afterwards and must not be in use.
func InitPerfBoundCorrect(p *PerfBoundCorrect, cfg Config) error {
	b, err := NewPerfBoundCorrectBuilder(cfg)
	if err != nil {
		return err
	}
	b.Init(p)
	return nil
}

// PerfBoundCorrectBuilder builds PerfBoundCorrect predictors in place
// (as InitPerfBoundCorrect does) from one configuration, defaulted and
// validated once: the simulator builds one per port at the port's first
// use, two million of them on its million-node Megafly, where filling and
// checking the configuration each time cost 40 % of building them.
type PerfBoundCorrectBuilder struct{ cfg Config }

// NewPerfBoundCorrectBuilder fills cfg's defaults and validates it.
func NewPerfBoundCorrectBuilder(cfg Config) (*PerfBoundCorrectBuilder, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Kind != KindPerfBoundCorrect {
		return nil, fmt.Errorf("predictor.kind: %q is not %s", cfg.Kind, KindPerfBoundCorrect)
	}
	return &PerfBoundCorrectBuilder{cfg: cfg}, nil
}

// Init makes *p a PerfBoundCorrect for the builder's configuration, in
// place, with InitPerfBoundCorrect's conditions.
func (b *PerfBoundCorrectBuilder) Init(p *PerfBoundCorrect) { p.init(b.cfg) }

// init builds p in place from a defaulted, valid configuration.
func (p *PerfBoundCorrect) init(c Config) {
	*p = PerfBoundCorrect{nR: int32(c.History)}
	p.pb.init(c)
	if c.History > inlineHistory {
		p.long = &longRegister{
			outcomes: make([]uint64, (c.History+63)/64),
			logs:     make([]float64, c.History),
		}
	}
}

// outcomes is the register's words: inline unless n_R > inlineHistory.
func (p *PerfBoundCorrect) outcomes() []uint64 {
	if p.long != nil {
		return p.long.outcomes
	}
	return p.inlineOutcomes[:]
}

// logRing is the FIFO of miss logs, a ring whose capacity is its length:
// n_R entries apart (a long register, or once spilled), else the inline
// ones (at most n_R of them).
func (p *PerfBoundCorrect) logRing() []float64 {
	switch {
	case p.long != nil:
		return p.long.logs
	case p.logSpill != nil:
		return p.logSpill[:p.nR]
	}
	return p.inlineLogs[:min(p.nR, inlineLogCap)]
}

// spillLogs moves the full inline FIFO to n_R entries of its own, oldest
// first, and returns them.
//
//go:noinline
func (p *PerfBoundCorrect) spillLogs() []float64 {
	p.logSpill = new([inlineHistory]float64)
	logs := p.logSpill[:p.nR]
	in := p.inlineLogs[:min(p.nR, inlineLogCap)]
	n := copy(logs, in[p.logHead:])
	copy(logs[n:], in[:p.logHead])
	p.logHead = 0
	return logs
}

// Observe feeds the histogram and the outcome register. The correction
// factor is recomputed only when the misses or the count change: a hit
// that pushes a hit out of a full register leaves it as it was.
func (p *PerfBoundCorrect) Observe(ip IdlePeriod) {
	p.pb.Observe(ip)
	words := p.inlineOutcomes[:]
	if p.long != nil {
		words = p.long.outcomes
	}
	changed := ip.Missed
	if p.count == p.nR { // shift the oldest outcome out
		if words[uint(p.head)/64]&(1<<(uint(p.head)%64)) != 0 {
			p.misses--
			p.logHead = wrap(p.logHead+1, int32(len(p.logRing())))
			changed = true
		}
		p.head = wrap(p.head+1, p.nR)
		p.count--
	} else {
		changed = true
	}
	pos := uint(wrap(p.head+p.count, p.nR))
	if ip.Missed {
		words[pos/64] |= 1 << (pos % 64)
	} else {
		words[pos/64] &^= 1 << (pos % 64)
	}
	p.count++
	p.cfDirty = p.cfDirty || changed
	if ip.Missed {
		ref := ip.PDT
		if ref <= 0 {
			ref = p.pb.wake
		}
		ratio := float64(ip.Length) / float64(ref)
		logs := p.logRing()
		if int(p.misses) == len(logs) { // full, so inline, and shorter than n_R
			logs = p.spillLogs()
		}
		logs[wrap(p.logHead+p.misses, int32(len(logs)))] = math.Log(max(ratio, 1))
		p.misses++
	}
}

// bit is outcome i of the register (1 = miss).
func (p *PerfBoundCorrect) bit(i int32) bool { return p.outcomes()[uint(i)/64]&(1<<(uint(i)%64)) != 0 }

// BudgetRate is PerfBound's hop factor l (Bounded).
func (p *PerfBoundCorrect) BudgetRate() float64 { return p.pb.HopFactor() }

// WakeCost is PerfBound's (Bounded).
func (p *PerfBoundCorrect) WakeCost() time.Duration { return p.pb.WakeCost() }

// ObserveHops feeds PerfBound's hop factor.
func (p *PerfBoundCorrect) ObserveHops(hops int, packets uint64) { p.pb.ObserveHops(hops, packets) }

// CorrectionFactor returns cf = miss_rate × geometric mean of the miss
// ratios in the register (0 with no miss).
func (p *PerfBoundCorrect) CorrectionFactor() float64 {
	if !p.cfDirty {
		return p.cf
	}
	p.cfDirty = false
	p.cf = 0
	if p.misses == 0 {
		return 0
	}
	logs := p.logRing()
	var sum float64
	for i, j := int32(0), p.logHead; i < p.misses; i++ {
		sum += logs[j]
		if j++; int(j) == len(logs) {
			j = 0
		}
	}
	missRate := float64(p.misses) / float64(p.count)
	p.cf = missRate * math.Exp(sum/float64(p.misses))
	return p.cf
}

// Predict returns min(t_PB × (1 + cf), h_maxval). In hybrid mode t_PB is
// hybrid PerfBound's t_PDT and the hold is recomputed for the corrected
// t_PDT (PerfBound.holdFor).
func (p *PerfBoundCorrect) Predict(now time.Duration) time.Duration {
	t := correct(p.pb.Predict(now), p.CorrectionFactor(), p.pb.hist.maxValue)
	if p.pb.hy != nil {
		p.pb.hy.corrected = p.pb.holdFor(t)
	}
	return t
}

// correct is min(tpb × (1 + cf), maxValue), to the nearest nanosecond.
func correct(tpb time.Duration, cf float64, maxValue time.Duration) time.Duration {
	t := float64(tpb) * (1 + cf)
	if t >= float64(maxValue) {
		return maxValue
	}
	return time.Duration(math.Round(t)) // nearest ns: exp(log 8) is 7.999…
}

// StateBytes is PerfBound's storage plus the n_R-bit register and a FIFO
// of n_R 4-byte floats (paper 000 §3.4 sizes the FIFO at n_R entries).
func (p *PerfBoundCorrect) StateBytes() int {
	return p.pb.StateBytes() + (int(p.nR)+7)/8 + 4*int(p.nR)
}

// OutOfLineBytes is the memory the predictor holds outside its own struct
// (its capacity, in bytes): the histogram's bins once they outgrow the
// inline ones, the clearing strategy's previous window, the circular
// strategy's ring, a long register, and the miss-log FIFO once spilled.
// The simulator's memory report adds it to the controllers' slots.
func (p *PerfBoundCorrect) OutOfLineBytes() int64 {
	h := &p.pb.hist
	var b int64
	if h.spilled(&p.pb.binStore) {
		b += int64(cap(h.bins)) * int64(unsafe.Sizeof(bin{}))
	}
	b += int64(cap(h.prev))*int64(unsafe.Sizeof(bin{})) + int64(cap(h.ring))*int64(unsafe.Sizeof(ringElem{}))
	if p.long != nil {
		b += int64(unsafe.Sizeof(longRegister{})) + 8*int64(cap(p.long.outcomes)+cap(p.long.logs))
	}
	if p.logSpill != nil {
		b += int64(unsafe.Sizeof(*p.logSpill))
	}
	return b
}

// Kind returns KindPerfBoundCorrect.
func (p *PerfBoundCorrect) Kind() Kind { return KindPerfBoundCorrect }

// PerfBound returns the underlying PerfBound predictor.
func (p *PerfBoundCorrect) PerfBound() *PerfBound { return &p.pb }

// Outcomes returns how many outcomes the register holds and how many are misses.
func (p *PerfBoundCorrect) Outcomes() (count, misses int) { return int(p.count), int(p.misses) }

// wrap is i mod n for 0 ≤ i < 2n: the register's and FIFO's indices,
// without a division (Observe and CorrectionFactor run per idle period).
func wrap(i, n int32) int32 {
	if i >= n {
		i -= n
	}
	return i
}
