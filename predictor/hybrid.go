package predictor

import (
	"math"
	"time"
)

// NeverHold is a hold that never deepens (the port stays in Fast Wake).
const NeverHold = time.Duration(math.MaxInt64)

// HoldChooser is a predictor that chooses, with t_PDT, how long a port in hybrid mode holds Fast Wake
// before Deep Sleep.
//
// [PerfBound], [PerfBoundCorrect] and [PerfBoundCorrectWeighted] implement
// it. [Fixed] and [NGram] do not: in hybrid mode they use the configured
// hold (the scenario's power.hybrid_hold).
type HoldChooser interface {
	// Hold returns the hold that goes with the t_PDT the last Predict returned. ok is false when the
	// predictor is not configured for hybrid mode (Config.Hybrid unset): the caller uses its configured hold.
	Hold() (hold time.Duration, ok bool)
}

// hybrid is PerfBound's hold choice (Config.Hybrid set). It lives apart
// from PerfBound, allocated once when the predictor is built, so that a
// predictor without hybrid mode carries one nil pointer and no scratch.
//
// A decision (PerfBound.predictHybrid) walks the populated bins i =
// 0..B−1 (counts c_i, middles m_i) from the top, forming
//
//	C_j = Σ_{i≥j} c_i                  the count from the top, bin j included
//	T_j = Σ_{i≥j} c_i (m_i − m_j)      = S_j − m_j·C_j, S_j = Σ_{i≥j} c_i m_i
//
// With D = l × X (PerfBound's N × t_wF, in ns), ρF and ρD the two power
// fractions and Δ = t_wD − t_wF:
//
//   - bin j is a candidate Fast Wake threshold when t_wF·C_j ≤ D, i.e.
//     C_j ≤ ⌊N⌋ exactly as the plain bin search; R_j = D − t_wF·C_j is left;
//   - its Deep Sleep boundary is the lowest bin k ≥ j with Δ·C_k ≤ R_j (the
//     periods of bins ≥ k then wake from Deep Sleep, paying Δ more), and the
//     hold is H = m_k − m_j; no such k: NeverHold; Δ = 0: k = j;
//   - the estimated saving, in awake-power × ns, is
//     Σ_{j≤i<k} c_i (1−ρF)(m_i − m_j) + Σ_{i≥k} c_i [(1−ρF)H + (1−ρD)(m_i − m_j − H)],
//     which with m_j + H = m_k simplifies to
//     (1−ρF)·T_j + (ρF−ρD)·T_k         (T_k := 0 when k is NeverHold);
//   - the candidate with the largest saving wins, ties to the lowest j.
//
// Since T_k falls as k rises, the lowest feasible k is the best for a
// given j when ρD < ρF. When ρD ≥ ρF, Deep Sleep saves no more than Fast
// Wake and wakes slower, so the hold is NeverHold and t_PDT is plain
// PerfBound's (the saving is then (1−ρF)·T_j, largest at the lowest
// candidate).
//
// As j falls, R_j falls, so the lowest feasible k ≥ j+1 can only rise: one
// pointer finds every k in a single O(B) walk (instead of a binary search
// per candidate), and the walk stops at the first bin that is not a
// candidate.
type hybrid struct {
	fastWake float64 // t_wF, ns
	delta    float64 // Δ = t_wD − t_wF, ns
	gainF    float64 // 1 − ρF
	gainD    float64 // ρF − ρD: what Deep Sleep saves over Fast Wake
	deepen   bool    // ρD < ρF: Deep Sleep is worth a hold

	hold time.Duration // PerfBound's hold for its last answer
	// corrected is a PerfBoundCorrect's hold for its last corrected
	// t_PDT (PerfBoundCorrect.Predict).
	corrected time.Duration

	// The last decision's D, and its suffix entries: suf[i] for
	// lo ≤ i < len(suf) holds C_i and T_i (lo = len(suf): none, the
	// histogram was empty or had no candidate). Bins below lo are not
	// candidates.
	d   float64
	lo  int
	suf []suffix

	// Storage for the suffix entries of up to inlineBins bins, as
	// PerfBound.binStore for the bins; suf moves to the heap only when
	// the histogram outgrows it.
	sufStore [inlineBins]suffix
}

// suffix is one bin's suffix sums: C_i (an integer, held as the float64
// every comparison uses; exact below 2^53 periods) and T_i in ns × periods.
type suffix struct {
	c float64
	t float64
}

// newHybrid returns the hold chooser for c, or nil when c is not hybrid.
func newHybrid(c Config) *hybrid {
	hc := c.Hybrid
	if !hc.Enabled() {
		return nil
	}
	h := &hybrid{
		fastWake:  float64(c.WakeTime),
		delta:     float64(hc.DeepWakeTime - c.WakeTime),
		gainF:     1 - hc.FastWakePower,
		gainD:     hc.FastWakePower - hc.DeepSleepPower,
		deepen:    hc.DeepSleepPower < hc.FastWakePower,
		hold:      NeverHold,
		corrected: NeverHold,
	}
	h.suf = h.sufStore[:0]
	return h
}

// predictHybrid is Predict in hybrid mode: t_PDT and, in p.hy.hold, the
// hold that goes with it. The clearing TTL has been applied.
func (p *PerfBound) predictHybrid(now time.Duration) time.Duration {
	h := p.hy
	bins := p.hist.bins
	nb := len(bins)
	h.hold = NeverHold
	if cap(h.suf) < nb {
		h.suf = make([]suffix, nb, max(nb, 2*cap(h.suf)))
	}
	h.suf = h.suf[:nb]
	h.lo = nb
	if p.hist.n == 0 {
		return p.initial // no evidence: the cheaper wake, never deepen
	}
	d := p.HopFactor() * float64(p.hist.covered(now))
	budget := d / float64(p.wake) // N, the same operations as Budget
	h.d = d

	width := p.hist.binWidth
	suf := h.suf
	// Locals: stores into suf could alias h, so h's fields would be
	// reloaded every bin.
	fastWake, delta, gainF, gainD, deepen := h.fastWake, h.delta, h.gainF, h.gainD, h.deepen
	all := p.hist.searchAll
	top := bins[nb-1].idx
	aboveTop := all && top < p.hist.maxIdx // SearchAll: bin top+1 exists, C = 0
	best := -1
	var bestE, bestK uint32 // the chosen candidate's bin and boundary bin
	bestHold := false       // bestK is set
	var bestSave float64
	var c int64   // C_j
	var t float64 // T_j
	kp := nb      // lowest feasible k ≥ j+1 for R_{j+1}, nb: none
	lo := nb      // the lowest candidate so far
	above := top
	for j := nb - 1; j >= 0; j-- {
		b := bins[j]
		// T_j = T_{j+1} + C_{j+1}·(m_{j+1} − m_j) (0 at the top: c is 0).
		t += float64(c) * float64(time.Duration(above-b.idx)*width)
		above = b.idx
		c += int64(b.count)
		cf := float64(c)
		// C_j ≤ N is the bin search's C_j ≤ ⌊N⌋ (C_j is an integer);
		// C grows as j falls, so no lower bin is a candidate either.
		if cf > budget {
			break
		}
		suf[j] = suffix{c: cf, t: t}
		lo = j
		// The candidate: bin j, or with SearchAll the lowest bin of its
		// plateau (the bins down to the next populated one share C_j),
		// whose T is larger by C_j·(m_j − m_e).
		e, te := b.idx, t
		if all {
			e = plateauLow(bins, j)
			te = t + cf*float64(time.Duration(b.idx-e)*width)
		}
		save := gainF * te
		kBin, hasK := e, false
		if deepen {
			r := d - fastWake*cf
			if delta*cf <= r {
				kp = j
			} else {
				for kp < nb && delta*suf[kp].c > r {
					kp++
				}
			}
			switch {
			case kp == j:
				kBin, hasK = e, true
				save += gainD * te
			case kp < nb:
				kBin, hasK = bins[kp].idx, true
				tk := suf[kp].t
				if all {
					kBin = plateauLow(bins, kp)
					tk += suf[kp].c * float64(time.Duration(bins[kp].idx-kBin)*width)
				}
				save += gainD * tk
			case aboveTop: // SearchAll: bin top+1, C = 0, T = 0
				kBin, hasK = top+1, true
			}
		}
		if best < 0 || save >= bestSave { // ≥: ties go to the lowest j
			best, bestE, bestK, bestHold, bestSave = j, e, kBin, hasK, save
		}
	}
	h.lo = lo
	if best < 0 { // the top bin alone exceeds the budget
		return time.Duration(top+1) * width
	}
	if bestHold {
		h.hold = time.Duration(bestK-bestE) * width
	}
	return p.hist.middleOf(bestE)
}

// plateauLow is the lowest bin whose count from the top is populated bin
// j's, C_j: the bin above populated bin j−1 (0 for j = 0).
func plateauLow(bins []bin, j int) uint32 {
	if j == 0 {
		return 0
	}
	return bins[j-1].idx + 1
}

// holdFor is the hold for a t_PDT t that PerfBoundCorrect derived from
// PerfBound's last answer: j' is the lowest bin with m_j' ≥ t (populated,
// or with SearchAll any bin), R = D − t_wF·C_j', k the lowest bin ≥ j'
// with Δ·C_k ≤ R (again populated, or any), and the hold max(0, m_k − t);
// NeverHold when there is no such j' or k, when PerfBound had no
// candidate, or when Deep Sleep is not worth a hold. With t equal to
// PerfBound's answer it is PerfBound's hold.
func (p *PerfBound) holdFor(t time.Duration) time.Duration {
	h := p.hy
	bins := p.hist.bins
	nb := len(bins)
	if !h.deepen || h.lo >= nb {
		return NeverHold
	}
	width := p.hist.binWidth
	all := p.hist.searchAll
	// j: the first populated bin whose middle is ≥ t; with SearchAll, the
	// plateau of bin e, the first bin whose middle is ≥ t.
	var e uint32
	if all {
		if t > width/2 {
			e = uint32((t - width/2 + width - 1) / width)
		}
		if e > p.hist.maxIdx {
			return NeverHold
		}
	}
	lo, hi := 0, nb
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if (!all && time.Duration(bins[mid].idx)*width+width/2 < t) || (all && bins[mid].idx < e) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	j := lo
	if j == nb && all { // above every populated bin: C = 0, R = D ≥ 0
		return max(0, p.hist.middleOf(e)-t)
	}
	// Below h.lo, t_wF·C_j' > D: R < 0 and no k fits (Δ·C_k ≥ 0).
	if j < h.lo || j == nb {
		return NeverHold
	}
	r := h.d - h.fastWake*h.suf[j].c
	if all && h.delta*h.suf[j].c <= r {
		return max(0, p.hist.middleOf(e)-t) // k = e
	}
	// k: the first bin ≥ j' with Δ·C_k ≤ R (C falls as k rises).
	lo, hi = j, nb
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if h.delta*h.suf[mid].c > r {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if !all {
		if lo == nb {
			return NeverHold
		}
		return max(0, p.hist.middle(lo)-t)
	}
	// SearchAll: the lowest bin of k's plateau (lo > j here), or the bin
	// above the top one (C = 0) if there is such a bin.
	kBin := bins[lo-1].idx + 1
	if kBin > p.hist.maxIdx {
		return NeverHold
	}
	return max(0, p.hist.middleOf(kBin)-t)
}

// Hold returns the hold that goes with PerfBound's last t_PDT; ok is false
// when the predictor is not configured for hybrid mode.
func (p *PerfBound) Hold() (time.Duration, bool) {
	if p.hy == nil {
		return 0, false
	}
	return p.hy.hold, true
}

// Hold returns the hold that goes with the last corrected t_PDT; ok is
// false when the predictor is not configured for hybrid mode.
func (p *PerfBoundCorrect) Hold() (time.Duration, bool) {
	if p.pb.hy == nil {
		return 0, false
	}
	return p.pb.hy.corrected, true
}

// Hold returns the hold that goes with the last corrected t_PDT; ok is
// false when the predictor is not configured for hybrid mode.
func (p *PerfBoundCorrectWeighted) Hold() (time.Duration, bool) { return p.pbc.Hold() }

var (
	_ HoldChooser = (*PerfBound)(nil)
	_ HoldChooser = (*PerfBoundCorrect)(nil)
	_ HoldChooser = (*PerfBoundCorrectWeighted)(nil)
)
