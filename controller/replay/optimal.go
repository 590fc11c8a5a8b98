package replay

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"time"
)

// MaxOptimalPeriods is the most idle periods an Optimizer holds: the
// offline optimum needs the whole input, and keeps 8 bytes per idle
// period worth sleeping in (at most 400 MB).
const MaxOptimalPeriods = 50_000_000

// OptimalConfig is what the offline optimum needs besides the input.
type OptimalConfig struct {
	// Timing is the replay's: t_w and t_s of the state entered first, the
	// handshake H, and in hybrid mode (DeepWake > 0) Deep Sleep's t_w.
	// Hold is not used: the optimum chooses per idle period to stay in
	// Fast Wake or to deepen at once.
	Timing Timing
	// LowPower is the power of the state entered first (Fast Wake in
	// hybrid mode) as a fraction of the awake power, in [0, 1]; DeepPower
	// is Deep Sleep's (hybrid mode only). They weigh the time asleep into
	// an energy saving; in hybrid mode they are the objective.
	LowPower, DeepPower float64
}

// Optimizer collects a whole replay input and computes its offline
// optimum (docs/model.md §2.5): knowing every idle period in advance, choose for
// each one to go down at once (t_PDT = 0) or to stay awake, so as to
// maximise the time asleep (hybrid: the energy saved) while the delay
// added stays within the budget l × T.
//
// Under the replay model (Replayer) an idle period of length g slept at
// once is asleep u = g − (2H + t_s) and costs its packet t_w; one with
// u ≤ 0 costs more and gains nothing, so the optimum never sleeps in it,
// and a t_PDT > 0 only loses time asleep for the same cost. Hence the
// choice is per idle period, between awake and at once.
//
// T, the time the budget covers:
//   - a gap file (Gap): the replay's elapsed time, which grows with the
//     delay spent (each idle period starts once the previous packet has
//     been sent). With G the sum of the idle periods and S the delay the
//     optimum spends, the budget reads S ≤ l·(G + S), that is
//     S ≤ l·G / (1 − l) (unbounded for l ≥ 1);
//   - a port trace (Row): the trace's own span, from 0 to the end of its
//     last idle period: S ≤ l·T.
//
// Exactness. With one low-power state (fast-wake or deep-sleep) every
// useful sleep costs the same t_w, so sleeping in the ⌊B / t_w⌋ longest
// useful idle periods is optimal (B the budget); it is computed in
// integer picoseconds, the budget's floor exactly (big.Rat). In hybrid
// mode each idle period offers three choices — awake; asleep staying in
// Fast Wake, saving (1 − ρF)·u for t_w(FW); asleep deepening at once to
// Deep Sleep, saving (1 − ρD)·u for t_w(DS) — a multiple-choice knapsack
// with only two costs. For given counts nD (deepening) and nF (Fast
// Wake) the best choice gives Deep Sleep to the nD longest idle periods
// and Fast Wake to the next nF (both savings grow with u, Deep Sleep's
// faster when ρD ≤ ρF; the other way round the optimum takes nD = 0),
// and for each nD the largest affordable nF is best. Enumerating nD
// over its O(n) values on prefix sums of the sorted idle periods solves
// the knapsack exactly (up to the float64 rounding of the savings); no
// relaxation or bound is involved. Staying in Fast Wake for a while and
// then deepening costs t_w(DS) and saves less than deepening at once,
// so it is never better.
//
// Memory: one PS per useful idle period; more than MaxOptimalPeriods idle
// periods are refused.
type Optimizer struct {
	cfg     OptimalConfig
	limit   uint64
	useful  []PS // u of every idle period with u > 0; sorted by Solve
	sorted  bool
	down    PS // 2H + t_s
	periods uint64
	zero    uint64
	idle    PS // G
	end     PS // a port trace's last end (its span)
	rows    bool
	gaps    bool

	hopPackets uint64
	hopSum     float64 // Σ packets / hops over the rows' Sent
}

// NewOptimizer validates cfg and returns an empty optimizer.
func NewOptimizer(cfg OptimalConfig) (*Optimizer, error) {
	t := cfg.Timing
	if t.Wake < 0 || t.Sleep < 0 || t.Handshake < 0 || t.DeepWake < 0 {
		return nil, errors.New("optimal: timing: t_w, t_s, the handshake and Deep Sleep's t_w must be ≥ 0")
	}
	if t.DeepWake > 0 && t.DeepWake < t.Wake {
		return nil, fmt.Errorf("optimal: timing: Deep Sleep's t_w (%v) is below Fast Wake's (%v)", t.DeepWake, t.Wake)
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"low_power", cfg.LowPower}, {"deep_power", cfg.DeepPower}} {
		if !(p.v >= 0 && p.v <= 1) {
			return nil, fmt.Errorf("optimal: %s: want a fraction of the awake power in [0, 1], got %v", p.name, p.v)
		}
	}
	o := &Optimizer{cfg: cfg, limit: MaxOptimalPeriods}
	ws, ok1 := FromDuration(t.Wake)
	ss, ok2 := FromDuration(t.Sleep)
	ds, ok3 := FromDuration(t.DeepWake)
	if !ok1 || !ok2 || !ok3 || t.Handshake > (MaxTime-ss)/2 || ws > MaxTime/2 || ds > MaxTime/2 {
		return nil, errors.New("optimal: timing: t_w, t_s and the handshake must fit the picosecond clock")
	}
	o.down = 2*t.Handshake + ss
	return o, nil
}

// Gap adds the next idle period of a gap file (a gap of 0 is no idle
// period: it is counted and skipped). Gap and Row must not be mixed.
func (o *Optimizer) Gap(gap time.Duration) error {
	if o.rows {
		return errors.New("optimal: a gap after port trace rows")
	}
	o.gaps = true
	if gap < 0 {
		return fmt.Errorf("negative gap %v", gap)
	}
	if gap == 0 {
		o.zero++
		return nil
	}
	g, ok := FromDuration(gap)
	if !ok {
		return fmt.Errorf("gap %v is longer than the picosecond clock holds (2^63 ps, about 106 days, as in the simulator)", gap)
	}
	return o.add(g)
}

// Row adds a port trace's row: its idle period and the hop counts of the
// packets sent before it (for HopFactor). Rows must come in order.
func (o *Optimizer) Row(row TraceRow) error {
	if o.gaps {
		return errors.New("optimal: a port trace row after gaps")
	}
	o.rows = true
	if row.Gap <= 0 || row.Start < 0 {
		return fmt.Errorf("gap_ps must be > 0 and start_ps ≥ 0, got %d and %d", row.Gap, row.Start)
	}
	if row.Start < o.end {
		return fmt.Errorf("start_ps %d is before the end of the previous idle period (%d)", row.Start, o.end)
	}
	end, ok := add(row.Start, row.Gap)
	if !ok {
		return errOverflow
	}
	for _, hc := range row.Sent {
		if hc.Packets == 0 {
			continue
		}
		h := min(max(hc.Hops, 1), MaxHops)
		o.hopPackets += hc.Packets
		o.hopSum += float64(hc.Packets) / float64(h)
	}
	if err := o.add(row.Gap); err != nil {
		return err
	}
	o.end = end
	return nil
}

func (o *Optimizer) add(g PS) error {
	if o.periods >= o.limit {
		return fmt.Errorf("more than %d idle periods: the offline optimum holds the whole input in memory (8 bytes per idle period); split the input", o.limit)
	}
	idle, ok := add(o.idle, g)
	if !ok {
		return errOverflow
	}
	o.idle = idle
	o.periods++
	if g > o.down {
		o.useful = append(o.useful, g-o.down)
		o.sorted = false
	}
	return nil
}

// HopFactor is Σ p_i / h_i over the packets of the port trace's rows
// (hops clamped to 1..MaxHops, as PerfBound counts them); ok is false
// when the input reported no packets (a gap file).
func (o *Optimizer) HopFactor() (f float64, ok bool) {
	if o.hopPackets == 0 {
		return 1, false
	}
	return o.hopSum / float64(o.hopPackets), true
}

// IdlePeriods is the number of idle periods added (gaps > 0).
func (o *Optimizer) IdlePeriods() uint64 { return o.periods }

// Optimum is the offline optimum of an input at a budget rate.
type Optimum struct {
	Rate        float64 // l = bound × hop factor
	IdlePeriods uint64  // idle periods of the input (gaps > 0)
	ZeroGaps    uint64  // gaps of 0 skipped
	Useful      uint64  // idle periods longer than 2H + t_s
	IdleTime    PS      // G, the sum of the idle periods
	// Elapsed is T: for a gap file G + Delay (the replay's clock after the
	// optimum's run), for a port trace its span.
	Elapsed PS
	// Budget is the most delay the budget allows, floored to the ps:
	// ⌊l·G/(1 − l)⌋ for a gap file, ⌊l·T⌋ for a port trace; MaxTime when
	// unbounded (l ≥ 1 on a gap file, or beyond the clock).
	Budget PS
	Slept  uint64 // idle periods slept in (all misses, t_PDT 0)
	Deep   uint64 // hybrid: of which deepening to Deep Sleep at once
	Asleep PS     // time in low power
	// DeepAsleep is the part of Asleep in Deep Sleep (hybrid; in
	// deep-sleep mode it is 0 and Asleep is all Deep Sleep).
	DeepAsleep PS
	Delay      PS // the added delay, ≤ Budget
	// Saving is the energy-weighted saving, in seconds of awake power:
	// (1 − ρ)·Asleep with one state, (1 − ρF)·(Asleep − DeepAsleep) +
	// (1 − ρD)·DeepAsleep in hybrid mode (the objective there).
	Saving float64
}

// Solve returns the optimum at budget rate l (bound × hop factor, > 0).
// It sorts the collected idle periods in place; the optimizer may be
// solved again (at another rate) but not added to afterwards.
func (o *Optimizer) Solve(l float64) (Optimum, error) {
	if !(l > 0) || math.IsInf(l, 0) {
		return Optimum{}, fmt.Errorf("optimal: budget rate l = bound × hop factor must be > 0, got %v", l)
	}
	if !o.sorted {
		// Longest first, then prefix sums in place: useful[i] becomes the
		// sum of the i+1 longest (≤ G, so no overflow).
		slices.SortFunc(o.useful, func(a, b PS) int {
			switch {
			case a > b:
				return -1
			case a < b:
				return 1
			}
			return 0
		})
		for i := 1; i < len(o.useful); i++ {
			o.useful[i] += o.useful[i-1]
		}
		o.sorted = true
	}
	opt := Optimum{Rate: l, IdlePeriods: o.periods, ZeroGaps: o.zero, Useful: uint64(len(o.useful)), IdleTime: o.idle}
	opt.Budget = o.budget(l)
	prefix := func(k int) PS {
		if k == 0 {
			return 0
		}
		return o.useful[k-1]
	}
	n := len(o.useful)
	count := func(b, c PS) int { // how many sleeps of cost c fit in b
		if c == 0 {
			return n
		}
		return int(min(b/c, PS(n)))
	}
	w, _ := FromDuration(o.cfg.Timing.Wake)
	if o.cfg.Timing.DeepWake <= 0 {
		k := count(opt.Budget, w)
		opt.Slept, opt.Asleep, opt.Delay = uint64(k), prefix(k), PS(k)*w
		opt.Saving = (1 - o.cfg.LowPower) * opt.Asleep.Seconds()
	} else {
		dw, _ := FromDuration(o.cfg.Timing.DeepWake)
		aF, aD := 1-o.cfg.LowPower, 1-o.cfg.DeepPower
		bestD, bestF, best := 0, 0, -1.0
		for nD := 0; nD <= count(opt.Budget, dw); nD++ {
			nF := min(n-nD, count(opt.Budget-PS(nD)*dw, w))
			v := aD*prefix(nD).Seconds() + aF*(prefix(nD+nF)-prefix(nD)).Seconds()
			if v > best {
				bestD, bestF, best = nD, nF, v
			}
		}
		opt.Slept, opt.Deep = uint64(bestD+bestF), uint64(bestD)
		opt.Asleep, opt.DeepAsleep = prefix(bestD+bestF), prefix(bestD)
		opt.Delay = PS(bestD)*dw + PS(bestF)*w
		opt.Saving = best
	}
	opt.Elapsed = o.end
	if !o.rows {
		opt.Elapsed = satAdd(o.idle, opt.Delay)
	}
	return opt, nil
}

// budget is the largest total delay (ps) allowed at rate l.
func (o *Optimizer) budget(l float64) PS {
	r := new(big.Rat).SetFloat64(l)
	if o.rows {
		r.Mul(r, new(big.Rat).SetInt64(int64(o.end)))
	} else {
		if l >= 1 {
			return MaxTime
		}
		// S ≤ l·(G + S)  ⇔  S ≤ l·G / (1 − l)
		one := big.NewRat(1, 1)
		r.Mul(r, new(big.Rat).SetInt64(int64(o.idle)))
		r.Quo(r, one.Sub(one, new(big.Rat).SetFloat64(l)))
	}
	q := new(big.Int).Quo(r.Num(), r.Denom()) // floor: r ≥ 0
	if !q.IsInt64() {
		return MaxTime
	}
	return PS(q.Int64())
}
