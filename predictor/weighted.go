package predictor

import (
	"math"
	"time"
)

// PerfBoundCorrectWeighted is PerfBoundCorrect with a recency bias (paper
// 000 §5's future work: "providing our dynamic t_PDT value calculation with
// some recency bias"). It keeps the same n_R-outcome register and FIFO of
// miss ratios, and weighs the outcome of age a (0 = the newest) by
// decay^a:
//
//	miss_rate_w = Σ_misses decay^a / Σ_all decay^a
//	gm_w        = exp(Σ_misses decay^a ln r / Σ_misses decay^a)
//	cf          = miss_rate_w × gm_w
//	t_PDT       = min(t_PB × (1 + cf), h_maxval)
//
// With decay 1 every weight is 1 and cf is PerfBoundCorrect's, computed by
// the same floating-point operations in the same order, so the decisions
// are identical. The sums are formed oldest first by Horner's rule
// (S ← S·decay + x), so no power of decay is taken and none underflows
// before its term stops mattering. It is used by pointer and never copied.
type PerfBoundCorrectWeighted struct {
	decay   float64
	cf      float64 // CorrectionFactor, valid while !cfDirty
	cfDirty bool
	pbc     PerfBoundCorrect
}

func newWeighted(c Config) *PerfBoundCorrectWeighted {
	p := &PerfBoundCorrectWeighted{decay: c.Decay}
	p.pbc.init(c)
	return p
}

// Observe feeds the histogram and the outcome register.
func (p *PerfBoundCorrectWeighted) Observe(ip IdlePeriod) {
	p.pbc.Observe(ip)
	p.cfDirty = true
}

// BudgetRate is PerfBound's hop factor l (Bounded).
func (p *PerfBoundCorrectWeighted) BudgetRate() float64 { return p.pbc.pb.HopFactor() }

// WakeCost is PerfBound's (Bounded).
func (p *PerfBoundCorrectWeighted) WakeCost() time.Duration { return p.pbc.pb.WakeCost() }

// ObserveHops feeds PerfBound's hop factor.
func (p *PerfBoundCorrectWeighted) ObserveHops(hops int, packets uint64) {
	p.pbc.ObserveHops(hops, packets)
}

// CorrectionFactor returns the recency-weighted cf (0 with no miss in the
// register, or when the misses' weight has underflowed to 0).
func (p *PerfBoundCorrectWeighted) CorrectionFactor() float64 {
	if !p.cfDirty {
		return p.cf
	}
	p.cfDirty = false
	p.cf = 0
	r := &p.pbc
	if r.misses == 0 {
		return 0
	}
	d := p.decay
	logs := r.logRing()
	var all, missW, logW float64
	for i, pos, j := int32(0), r.head, r.logHead; i < r.count; i++ {
		all = all*d + 1
		if r.bit(pos) {
			missW = missW*d + 1
			logW = logW*d + logs[j]
			j = wrap(j+1, int32(len(logs)))
		} else {
			missW *= d
			logW *= d
		}
		pos = wrap(pos+1, r.nR)
	}
	if missW == 0 {
		return 0
	}
	p.cf = missW / all * math.Exp(logW/missW)
	return p.cf
}

// Predict returns min(t_PB × (1 + cf), h_maxval).
// In hybrid mode the hold is recomputed for the corrected t_PDT, as
// PerfBoundCorrect does.
func (p *PerfBoundCorrectWeighted) Predict(now time.Duration) time.Duration {
	t := correct(p.pbc.pb.Predict(now), p.CorrectionFactor(), p.pbc.pb.hist.maxValue)
	if p.pbc.pb.hy != nil {
		p.pbc.pb.hy.corrected = p.pbc.pb.holdFor(t)
	}
	return t
}

// StateBytes is PerfBoundCorrect's: the weights are computed from the
// register at decision time, so the state is the same.
func (p *PerfBoundCorrectWeighted) StateBytes() int { return p.pbc.StateBytes() }

// Kind returns KindPerfBoundCorrectWeighted.
func (p *PerfBoundCorrectWeighted) Kind() Kind { return KindPerfBoundCorrectWeighted }

// Decay returns the weight ratio between an outcome and the next newer one.
func (p *PerfBoundCorrectWeighted) Decay() float64 { return p.decay }

// PerfBound returns the underlying PerfBound predictor.
func (p *PerfBoundCorrectWeighted) PerfBound() *PerfBound { return &p.pbc.pb }

// Outcomes returns how many outcomes the register holds and how many are misses.
func (p *PerfBoundCorrectWeighted) Outcomes() (count, misses int) { return p.pbc.Outcomes() }
