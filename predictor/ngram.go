package predictor

import (
	"math"
	"math/bits"
	"time"
)

// NGram predicts the class of the next idle period from the classes of the
// last n (paper 003's n-gram pattern prediction, adapted from MPI calls on
// InfiniBand lanes to idle periods on an Ethernet port; docs/predictors.md):
//
//   - Each ended idle period is put in one of K classes by its length:
//     class 0 below t_w (too short to gain anything), class 1 from t_w to
//     the break-even t_s + t_w, then "long" classes from the break-even up,
//     each boundary twice the one before (K = 2: below and above the
//     break-even only).
//   - A table maps the last n classes (the context) to K saturating 8-bit
//     counters: how often each class followed that context. When one
//     reaches 255 all K are halved, so old history fades.
//   - Decision: if the context's most frequent successor was counted at
//     least min_count times and holds at least the confidence share of
//     the context's counts, a long class answers t_PDT 0 (sleep at once)
//     and a shorter one h_maxval (stay awake: h_maxval is also
//     PerfBoundCorrect's cap). Otherwise — fewer than n periods seen, an
//     unknown context, too little confidence — the embedded PerfBound
//     answers; it sees every period, so its histogram keeps learning.
//
// The table is allocated once: a direct table of K^n entries when that is
// at most table_size, else a direct-mapped hashed table of table_size
// entries whose tags are the whole context; a context that finds its slot
// taken replaces the entry (counters cleared). Observe and Predict
// allocate nothing. An NGram is used by pointer and never copied.
type NGram struct {
	n, k     int
	bounds   []time.Duration // K-1 class boundaries, ascending
	longFrom int             // the first long class
	awake    time.Duration   // h_maxval
	minCount uint8
	conf     float64

	// Context: the last n classes, 4 bits each, newest in the low bits
	// (key), and as a base-K number mod K^n (idx, direct tables only).
	key, keyMask uint64
	idx, kn      uint64
	seen         int // periods observed, up to n

	hashed bool
	counts []uint8  // entries × K
	tags   []uint64 // hashed: context key | tagValid per entry
	bitsK  int      // ⌈log2 K⌉, for the storage report

	pb PerfBound
}

const tagValid = 1 << 63

func newNGram(c Config) *NGram {
	g := new(NGram)
	g.init(c)
	return g
}

// init builds g in place from a defaulted, valid configuration.
func (g *NGram) init(c Config) {
	nc := c.NGram
	*g = NGram{
		n:        nc.N,
		k:        nc.Classes,
		awake:    c.Histogram.MaxValue.D(),
		minCount: uint8(nc.MinCount),
		conf:     nc.Confidence,
		keyMask:  1<<(4*uint(nc.N)) - 1,
		bitsK:    bits.Len(uint(nc.Classes - 1)),
	}
	g.pb.init(c)
	g.bounds, g.longFrom = classBounds(nc.Classes, c.WakeTime.D(), c.breakEven().D())
	entries := nc.TableSize
	if kn, ok := power(nc.Classes, nc.N); ok && kn <= uint64(nc.TableSize) {
		entries, g.kn = int(kn), kn
	} else {
		g.hashed = true
		g.tags = make([]uint64, entries)
	}
	g.counts = make([]uint8, entries*nc.Classes)
}

// classBounds returns the K-1 class boundaries and the first long class:
// t_w and the break-even for K ≥ 3, then doublings of the break-even
// (saturating); the break-even alone for K = 2.
func classBounds(k int, wake, breakEven time.Duration) ([]time.Duration, int) {
	if k == 2 {
		return []time.Duration{breakEven}, 1
	}
	b := make([]time.Duration, k-1)
	b[0], b[1] = wake, breakEven
	for i := 2; i < len(b); i++ {
		b[i] = b[i-1] * 2
		if b[i-1] > math.MaxInt64/2 {
			b[i] = math.MaxInt64
		}
	}
	return b, 2
}

// power returns k^n and whether it fits in 62 bits.
func power(k, n int) (uint64, bool) {
	p := uint64(1)
	for range n {
		hi, lo := bits.Mul64(p, uint64(k))
		if hi != 0 || lo > 1<<62 {
			return 0, false
		}
		p = lo
	}
	return p, true
}

// Class returns the class of an idle period of length d.
func (g *NGram) Class(d time.Duration) int {
	c := 0
	for c < len(g.bounds) && d >= g.bounds[c] {
		c++
	}
	return c
}

// Bounds returns the class boundaries (class c is [Bounds[c-1], Bounds[c])).
func (g *NGram) Bounds() []time.Duration { return append([]time.Duration(nil), g.bounds...) }

// LongFrom returns the first class predicted long enough to sleep at once.
func (g *NGram) LongFrom() int { return g.longFrom }

// slot returns the table entry of the current context, and whether the
// entry holds it (a hashed slot may hold another context, or none).
func (g *NGram) slot() (int, bool) {
	if !g.hashed {
		return int(g.idx), true
	}
	i := int((g.key * 0x9E3779B97F4A7C15 >> 32) % uint64(len(g.tags)))
	return i, g.tags[i] == g.key|tagValid
}

// Observe counts the period's class after the current context, then
// shifts it into the context; PerfBound records it too.
func (g *NGram) Observe(ip IdlePeriod) {
	g.pb.Observe(ip)
	c := g.Class(ip.Length)
	if g.seen == g.n {
		i, ok := g.slot()
		row := g.counts[i*g.k : i*g.k+g.k]
		if !ok { // hashed: take the slot over
			clear(row)
			g.tags[i] = g.key | tagValid
		}
		if row[c] == math.MaxUint8 {
			for j := range row {
				row[j] >>= 1
			}
		}
		row[c]++
	} else {
		g.seen++
	}
	g.key = (g.key<<4 | uint64(c)) & g.keyMask
	if !g.hashed {
		g.idx = (g.idx*uint64(g.k) + uint64(c)) % g.kn
	}
}

// Predicted returns the class the table predicts for the next idle period,
// or ok false when it does not (the PerfBound fallback then answers).
// Ties go to the lower class (staying awake costs no delay).
func (g *NGram) Predicted() (class int, ok bool) {
	if g.seen < g.n {
		return 0, false
	}
	i, found := g.slot()
	if !found {
		return 0, false
	}
	row := g.counts[i*g.k : i*g.k+g.k]
	best, total := 0, 0
	for j, v := range row {
		total += int(v)
		if v > row[best] {
			best = j
		}
	}
	if row[best] < g.minCount || float64(row[best]) < g.conf*float64(total) {
		return 0, false
	}
	return best, true
}

// Predict answers 0 for a predicted long period, h_maxval for a predicted
// shorter one, and PerfBound's t_PDT when there is no confident prediction.
func (g *NGram) Predict(now time.Duration) time.Duration {
	c, ok := g.Predicted()
	switch {
	case !ok:
		return g.pb.Predict(now)
	case c >= g.longFrom:
		return 0
	default:
		return g.awake
	}
}

// BudgetRate is the fallback PerfBound's hop factor l (Bounded).
func (g *NGram) BudgetRate() float64 { return g.pb.HopFactor() }

// WakeCost is the fallback's t_w (Bounded).
func (g *NGram) WakeCost() time.Duration { return g.pb.WakeCost() }

// ObserveHops feeds the fallback's hop factor.
func (g *NGram) ObserveHops(hops int, packets uint64) { g.pb.ObserveHops(hops, packets) }

// StateBytes is PerfBound's storage plus the table — entries × K one-byte
// counters, and for a hashed table a tag of ⌈n·⌈log2 K⌉/8⌉ bytes per
// entry — plus the context register of ⌈n·⌈log2 K⌉/8⌉ bytes.
func (g *NGram) StateBytes() int {
	ctx := (g.n*g.bitsK + 7) / 8
	entries := len(g.counts) / g.k
	b := g.pb.StateBytes() + entries*g.k + ctx
	if g.hashed {
		b += entries * ctx
	}
	return b
}

// Kind returns KindNGram.
func (g *NGram) Kind() Kind { return KindNGram }

// Entries returns the table's entries and whether it is hashed.
func (g *NGram) Entries() (entries int, hashed bool) { return len(g.counts) / g.k, g.hashed }

// PerfBound returns the fallback PerfBound predictor.
func (g *NGram) PerfBound() *PerfBound { return &g.pb }
