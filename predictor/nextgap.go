package predictor

import (
	"fmt"
	"math"
	"math/bits"
	"time"
)

// Defaults and limits of kind nextgap (docs/predictors.md "Next-gap
// predictor" justifies them).
const (
	// DefaultNextGapN is the context length: three classes tell the last
	// of three equal gaps before a long one from the first two.
	DefaultNextGapN = 3
	// DefaultNextGapTableSize is the successor table's entries.
	DefaultNextGapTableSize = 256
	// DefaultNextGapConfidence is the share of a context's successors
	// that must repeat the last one before it is trusted.
	DefaultNextGapConfidence = 0.8
	// DefaultNextGapWindow is how many gaps the histogram counts before
	// it halves its counts and span (the recent past it reads the budget
	// from).
	DefaultNextGapWindow = 1024
	// DefaultNextGapDelayPrice is how much sleep a wake-up's t_w of delay
	// must buy, beyond the time going down, for a threshold to take it.
	DefaultNextGapDelayPrice = 4.0
	maxNextGapN              = 15 // 4 bits a class: a context fits 60 bits
	maxNextGapTableSize      = 1 << 16
	maxNextGapWindow         = 1 << 24
)

// NextGapConfig is kind nextgap's keys (predictor.nextgap.*).
type NextGapConfig struct {
	// N is the context length: the classes (octaves) of the last N gaps
	// select the table entry that predicts the next (default 3, 1..15).
	N int `yaml:"n,omitempty" json:"n,omitempty"`
	// TableSize is the successor table's entries, hashed by context
	// (default 256, 1..65536).
	TableSize int `yaml:"table_size,omitempty" json:"table_size,omitempty"`
	// Confidence is the share of a context's successors that must fall
	// within a factor 2 of the one before for the prediction to be used,
	// in (0, 1) (default 0.8).
	Confidence float64 `yaml:"confidence,omitempty" json:"confidence,omitempty"`
	// Window is how many gaps the budget histogram counts before halving
	// (default 512, 2..2^24).
	Window int `yaml:"window,omitempty" json:"window,omitempty"`
	// DelayPrice λ is the sleep a unit of wake-up delay must buy: a
	// threshold is chosen to maximise Σ (g − θ − a − λ·t_w) over the gaps
	// g that outlast it (a = t_s, the time going down), within the
	// budget (default 4; 0 < λ ≤ 1000).
	DelayPrice float64 `yaml:"delay_price,omitempty" json:"delay_price,omitempty"`
	// BreakEven is the shortest gap worth a sleep at once and the lowest
	// threshold: t_s + t_w (+ 2H) of the state entered first (default
	// sleep_time + wake_time; 2 × wake_time when sleep_time is not known).
	BreakEven Duration `yaml:"break_even,omitempty" json:"break_even,omitempty"`
}

// withDefaults fills the unset keys; wake and sleep are t_w and t_s of
// the state entered first (0: not known yet).
func (g NextGapConfig) withDefaults(wake, sleep Duration) NextGapConfig {
	if g.N == 0 {
		g.N = DefaultNextGapN
	}
	if g.TableSize == 0 {
		g.TableSize = DefaultNextGapTableSize
	}
	if g.Confidence == 0 {
		g.Confidence = DefaultNextGapConfidence
	}
	if g.Window == 0 {
		g.Window = DefaultNextGapWindow
	}
	if g.DelayPrice == 0 {
		g.DelayPrice = DefaultNextGapDelayPrice
	}
	if g.BreakEven == 0 && wake > 0 && wake <= math.MaxInt64/2 && sleep <= math.MaxInt64/2 {
		if sleep <= 0 {
			sleep = wake // t_s not known: equal transition times
		}
		g.BreakEven = sleep + wake
	}
	return g
}

// validate checks the keys of a defaulted configuration.
func (g NextGapConfig) validate() error {
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("predictor.nextgap.%s: %s", field, fmt.Sprintf(format, args...))
	}
	switch {
	case g.N < 1 || g.N > maxNextGapN:
		return bad("n", "must be in 1..%d, got %d", maxNextGapN, g.N)
	case g.TableSize < 1 || g.TableSize > maxNextGapTableSize:
		return bad("table_size", "must be in 1..%d, got %d", maxNextGapTableSize, g.TableSize)
	case !(g.Confidence > 0 && g.Confidence < 1):
		return bad("confidence", "must be in (0, 1), got %v", g.Confidence)
	case g.Window < 2 || g.Window > maxNextGapWindow:
		return bad("window", "must be in 2..%d, got %d", maxNextGapWindow, g.Window)
	case !(g.DelayPrice > 0 && g.DelayPrice <= 1000):
		return bad("delay_price", "must be in (0, 1000], got %v", g.DelayPrice)
	case g.BreakEven < 0:
		return bad("break_even", "must be ≥ 0, got %v", g.BreakEven)
	}
	return nil
}

// The budget histogram's log-scale bins: four per octave from gapUnit
// up; bins 0..3 are linear (0, 1, 2, 3 units), bin 4(e−1)+m for e ≥ 2
// holds [(4+m)·2^(e−2), (5+m)·2^(e−2)) units. The top bin also counts
// every longer gap (gapBins·… ≈ 16.8 ms with 32 ns units).
const (
	gapUnit     = 32 * time.Nanosecond
	gapUnitLog2 = 5
	gapBins     = 72
	binsPerOct  = 4
)

// gapBin returns the histogram bin of a gap.
func gapBin(g time.Duration) int {
	if g <= 0 {
		return 0
	}
	x := uint64(g) >> gapUnitLog2
	if x < 4 {
		return int(x)
	}
	e := bits.Len64(x) - 1
	b := 4*(e-1) + int(x>>(e-2)&3)
	return min(b, gapBins-1)
}

// binEdge returns the lower edge of bin b (b ≤ gapBins: gapBins is the
// top bin's upper edge).
func binEdge(b int) time.Duration {
	if b < 4 {
		return time.Duration(b) * gapUnit
	}
	e, m := b/4+1, b%4
	return time.Duration(4+m) << (e - 2) * gapUnit
}

// gapClass is a gap's context class: its octave from 256 ns, 0..15.
func gapClass(g time.Duration) uint64 {
	if g <= 0 {
		return 0
	}
	return uint64(min(bits.Len64(uint64(g)>>8), 15))
}

// rationMargin is how much more sleep a threshold the ledger must ration
// has to promise than one the budget covers (docs/predictors.md).
const rationMargin = 1.5

// minRationed is the fewest wake-ups the window's budget must afford for
// a rationed threshold: with fewer, the histogram knows too little of
// the tail the budget is for.
const minRationed = 4

// successor is one table entry: what followed a context the last two
// times, and how often the successor repeated.
type successor struct {
	tag        uint64 // context | tagValid
	last, prev uint32 // ns, saturating
	conf       uint8
}

// Confidence counter: +1 when a successor is within a factor 2 of the
// one before, −penalty otherwise; trusted at confTrust or more. With
// penalty p the counter drifts up only when more than p/(p+1) of the
// successors repeat (Config.NextGap.Confidence).
const (
	confMax   = 15
	confTrust = 8
)

// NextGap sleeps at once in the idle periods it predicts longest, as the
// delay budget allows, and otherwise behaves as the best threshold
// (docs/predictors.md "Next-gap predictor"):
//
//   - Predict the next gap ĝ from the context of the last n gap classes
//     (octaves): a hashed table of successors keeps, per context, the
//     last two gaps that followed it and a confidence counter; ĝ is the
//     smaller of the two when the counter says the context's successors
//     repeat.
//   - A cut-off τ from the budget: a log-scale histogram of recent gaps
//     (four bins per octave, counts and covered span X halved every
//     window gaps) gives the gap length above which the wake-ups the
//     budget D = l·X affords cover the gaps seen ("all bins" reading: τ
//     is the lower edge of the lowest bin, empty or not, whose gaps
//     above fit). D also spends the delay the predictor's copy of the
//     port's ledger shows unspent beyond one spare wake-up. The next
//     bin down, which the budget covers in part, is allowed while that
//     spare exists.
//   - Decide: ĝ ≥ max(τ, break-even) → t_PDT 0 (sleep at once); else a
//     threshold θ maximising Σ (g − θ − t_s − λ·t_w) over the gaps that
//     outlast it (on independent gaps the best online policy; λ prices the
//     delay); if those outlast θ by too little, stay awake through the
//     gaps the histogram knows (beyond), never for a whole silence.
//   - Held (Rationed): when the ledger forbids going down for wait, a
//     predicted-long gap sleeps as soon as allowed only if ĝ − wait still
//     clears τ; a threshold sleeps late only if the gaps that outlast it
//     are expected to last as long past it as those that outlast τ (mean
//     residual life from the histogram). Otherwise the port stays awake
//     for the whole period.
//   - Hybrid (HoldChooser): one price per unit of delay for both states
//     (a Lagrangian reading of the multiple-choice knapsack) makes Deep
//     Sleep worth it in gaps above τ_D = τ·(Δ/t_wF)·((1−ρF)/(ρF−ρD));
//     both cut-offs come from one walk of the histogram. A gap predicted
//     above τ_D sleeps in Deep Sleep at once (hold 0), others in Fast
//     Wake; a threshold deepens after τ_D.
//
// State is fixed: the table, 72 counters and a few registers; a decision
// is O(1) for the table and O(bins) for the cut-off, and allocates
// nothing. A NextGap is used by pointer and never copied.
type NextGap struct {
	n       int
	keyMask uint64
	penalty uint8
	window  uint32
	floor   time.Duration // break-even
	// floorBin is the break-even's bin: the walk stops there.
	floorBin int
	initial  time.Duration
	awake    time.Duration // h_maxval: the answer that keeps the port awake
	wake     float64       // t_w (Fast Wake's in hybrid), ns
	delta    float64       // hybrid: t_wD − t_wF, ns; 0: one state
	deepOff  int           // hybrid: bins from τ to τ_D; < 0: never deepen
	hybrid   bool
	cost     time.Duration // charge for a miss of unknown delay
	// price is K = a + λ·t_w: what a threshold's wake-up must repay
	// (a = break-even − t_w, the time going down).
	price float64

	// Context and successor table.
	key  uint64
	cur  int // the context's slot
	seen int
	tab  []successor

	// Budget histogram and its covered span X.
	counts  [gapBins]uint32
	hi      int // the highest populated bin (0 when none)
	total   uint32
	span    float64 // ns
	lastEnd time.Duration
	started bool

	// The predictor's copy of the port's ledger.
	start time.Duration
	spent float64 // ns

	// Scratch of the last cut-off walk: suffix counts and Σ count·middle
	// from the top down to the walk's last bin (lo).
	sufC [gapBins + 1]float64
	sufW [gapBins + 1]float64
	lo   int

	// The last decision, for Held and Hold.
	answer    time.Duration
	predicted time.Duration // ĝ; 0: none
	cut       time.Duration // max(τ, break-even) in force
	thr       time.Duration // the best threshold
	cutBin    int
	deepCut   time.Duration // τ_D; NeverHold: never deepen
	hold      time.Duration

	pb PerfBound // its hop factor only (the histogram stays empty)
}

func newNextGap(c Config) *NextGap {
	g := new(NextGap)
	g.init(c)
	return g
}

// init builds g in place from a defaulted, valid configuration.
func (g *NextGap) init(c Config) {
	nc := c.NextGap.withDefaults(c.WakeTime, c.SleepTime)
	conf := nc.Confidence
	*g = NextGap{
		n:       nc.N,
		keyMask: 1<<(4*uint(nc.N)) - 1,
		penalty: uint8(min(math.Round(conf/(1-conf)), confMax)),
		window:  uint32(nc.Window),
		floor:   nc.BreakEven.D(),
		initial: c.InitialPDT.D(),
		awake:   c.Histogram.MaxValue.D(),
		wake:    float64(c.WakeTime),
		deepOff: -1,
		tab:     make([]successor, nc.TableSize),
	}
	g.penalty = max(g.penalty, 1)
	g.floorBin = gapBin(g.floor)
	g.price = float64(g.floor) + (nc.DelayPrice-1)*g.wake
	g.cost = g.floor // t_s + t_w: what a miss costs, less the handshakes
	if h := c.Hybrid; h.Enabled() {
		g.hybrid = true
		g.delta = float64(h.DeepWakeTime - c.WakeTime)
		g.cost = g.floor + time.Duration(g.delta)
		if h.DeepSleepPower < h.FastWakePower && g.delta > 0 {
			// τ_D/τ = (Δ/t_wF)·((1−ρF)/(ρF−ρD)), in bins of a quarter octave.
			ratio := g.delta / g.wake * (1 - h.FastWakePower) / (h.FastWakePower - h.DeepSleepPower)
			g.deepOff = max(0, int(math.Round(binsPerOct*math.Log2(ratio))))
		} else if h.DeepSleepPower < h.FastWakePower {
			g.deepOff = 0 // Deep Sleep wakes as fast: always deepen
		}
	}
	pc := c
	pc.Hybrid = HybridConfig{}
	g.pb.init(pc)
	g.hold = NeverHold
	g.deepCut = NeverHold
}

// Observe learns the ended idle period: the successor table, the budget
// histogram and the predictor's copy of the ledger.
func (g *NextGap) Observe(ip IdlePeriod) {
	gap := ip.Length
	if gap < 0 {
		gap = 0
	}
	if !g.started {
		g.start, g.lastEnd, g.started = ip.End-gap, ip.End-gap, true
	}
	d := ip.Delay
	if ip.Missed && d <= 0 {
		d = g.cost
	}
	g.spent += float64(max(d, 0))
	g.span += float64(max(ip.End-g.lastEnd, 0))
	g.lastEnd = max(g.lastEnd, ip.End)
	b := gapBin(gap)
	g.counts[b]++
	g.hi = max(g.hi, b)
	if g.total++; g.total >= g.window {
		var t uint32
		for i := range g.counts {
			g.counts[i] >>= 1
			t += g.counts[i]
		}
		g.total, g.span = t, g.span/2
		for g.hi > 0 && g.counts[g.hi] == 0 {
			g.hi--
		}
	}

	if g.seen == g.n {
		e := &g.tab[g.cur]
		v := uint32(min(gap, math.MaxUint32))
		if e.tag != g.key|tagValid {
			*e = successor{tag: g.key | tagValid, last: v, prev: v}
		} else {
			if within2(v, e.last) {
				e.conf = min(e.conf+1, confMax)
			} else {
				e.conf -= min(e.conf, g.penalty)
			}
			e.prev, e.last = e.last, v
		}
	} else {
		g.seen++
	}
	g.key = (g.key<<4 | gapClass(gap)) & g.keyMask
	g.cur = g.slot()
}

// within2 reports whether a and b are within a factor 2 of each other.
func within2(a, b uint32) bool {
	lo, hi := uint64(min(a, b)), uint64(max(a, b))
	return 2*lo >= hi
}

// slot is the current context's table entry.
func (g *NextGap) slot() int {
	return int((g.key * 0x9E3779B97F4A7C15 >> 32) % uint64(len(g.tab)))
}

// Predicted returns ĝ, the predicted length of the next idle period, and
// whether the table trusts it.
func (g *NextGap) Predicted() (time.Duration, bool) {
	if g.seen < g.n {
		return 0, false
	}
	e := &g.tab[g.cur]
	if e.tag != g.key|tagValid || e.conf < confTrust {
		return 0, false
	}
	return time.Duration(min(e.last, e.prev)), true
}

// slack is the predictor's estimate of the ledger's unspent budget at now.
func (g *NextGap) slack(now time.Duration, rate float64) float64 {
	return rate*float64(max(now-g.start, 0)) - g.spent
}

// Predict answers 0 for a gap predicted above the cut-off, else the
// cut-off as a threshold (see NextGap).
func (g *NextGap) Predict(now time.Duration) time.Duration {
	g.predicted, g.hold = 0, NeverHold
	if g.total == 0 {
		g.cut, g.cutBin, g.deepCut, g.lo = g.initial, gapBins, NeverHold, gapBins
		g.answer = g.initial
		return g.answer
	}
	rate := g.pb.HopFactor()
	slack := g.slack(now, rate)
	spare := float64(g.cost) + g.wake // one miss's reserve and one spare wake-up
	d := rate * g.span
	if slack > spare {
		d += slack - spare
	}
	sure, marginal, thr := g.walk(d)
	cutBin := sure
	if marginal >= 0 && slack >= spare {
		cutBin = marginal
	}
	g.cutBin = cutBin
	g.cut = max(binEdge(cutBin), g.floor)
	if cutBin >= gapBins { // even the top bin overflows the budget
		g.cut = max(binEdge(gapBins), g.floor)
	}
	g.deepCut = NeverHold
	if g.hybrid && g.deepOff >= 0 && cutBin+g.deepOff < gapBins {
		g.deepCut = max(binEdge(cutBin+g.deepOff), g.cut)
	}
	t := g.cut
	if thr >= 0 {
		t = max(binEdge(thr), g.floor)
	}
	g.thr = t
	if p, ok := g.Predicted(); ok {
		g.predicted = p
		if p >= g.cut {
			if g.hybrid {
				g.hold = NeverHold
				if p >= g.deepCut {
					g.hold = 0
				}
			}
			g.answer = 0
			return 0
		}
		// Predicted short: a gap within a factor 2 of the prediction
		// is as predicted; one that outlasts that is a surprise.
		t = max(t, 2*p)
	}
	// A threshold whose late sleeps would not gain the break-even per
	// wake-up spends the budget better elsewhere: stay awake through
	// every gap the histogram knows, and sleep only in one that outlasts
	// them all (the start-up's or a phase change's long silence).
	if g.residual(t) < g.price {
		g.answer = g.beyond(t)
		return g.answer
	}
	if g.hybrid && g.deepCut != NeverHold {
		g.hold = max(g.deepCut-t, 0)
	}
	g.answer = t
	return t
}

// walk finds the cut-off bins for the budget d (ns of delay over the
// span X): sure is the lowest bin whose gaps from it upwards the budget
// covers (gapBins: not even the top bin's), marginal the populated bin
// below it that the budget covers in part (−1: none), and thr the best
// threshold's bin: the lower edge, at or above the break-even, at which
// a threshold sleeps longest in total — the residuals past it of the
// gaps that outlast it, scaled to the n = d/t_w of them the budget
// affords when more do (the ledger rations them) — (−1: none). It
// records the suffix sums for residual.
func (g *NextGap) walk(d float64) (sure, marginal, thr int) {
	var c, w, best float64
	price := g.price
	n := d / g.wake // wake-ups affordable
	sure, marginal, thr = gapBins, -1, -1
	g.sufC[gapBins], g.sufW[gapBins] = 0, 0
	over := false
	floor, off := float64(g.floor), g.deepOff
	// Below the break-even's bin no bin is a candidate and the cut-off
	// is the break-even anyway.
	lo := g.floorBin
	if g.hi < gapBins-1 {
		sure = g.hi + 1 // empty bins above the highest populated one
	}
	for j := g.hi; j >= lo; j-- {
		if k := g.counts[j]; k != 0 {
			c += float64(k)
			w += float64(k) * gapMid[j]
		}
		g.sufC[j], g.sufW[j] = c, w
		if c == 0 {
			sure = j // nothing above: no cost, no candidate
			continue
		}
		// Hybrid: the Deep Sleep upgrades of the gaps above τ_D.
		var deep float64
		if off >= 0 && j+off < gapBins {
			deep = g.delta * g.sufC[j+off]
		}
		if !over {
			if g.wake*c+deep > d {
				marginal, over = j, true
			} else {
				sure = j
			}
		}
		// The sleep a threshold at edge e yields: the residuals w − e·c
		// of the c gaps that outlast it, of which the budget affords
		// min(c, n) (the ledger rations the rest).
		e := gapEdge[j]
		if e < floor {
			continue
		}
		r := w - (e+price)*c // the sleep past θ, less the price of the wake-ups
		if r <= 0 {
			continue
		}
		nj := n
		if deep != 0 {
			nj = max(d-deep, 0) / g.wake // Fast Wake wake-ups left
		}
		if c > nj {
			// Rationed: only with a few wake-ups to ration, and only
			// clearly better than the thresholds the budget covers
			// (the histogram's tail is short-sighted). Compare
			// r·nj/(c·margin) with best without dividing.
			if nj < minRationed || !(thr < 0 || r*nj > best*c*rationMargin) {
				continue
			}
			thr, best = j, r*nj/(c*rationMargin)
		} else if thr < 0 || r > best {
			thr, best = j, r
		}
	}
	g.lo = lo
	return sure, marginal, thr
}

// gapEdge and gapMid are the bins' lower edges and middles in ns
// (gapEdge[gapBins] is the top bin's upper edge): constant tables.
var gapEdge, gapMid = gapTables()

func gapTables() (edge [gapBins + 1]float64, mid [gapBins]float64) {
	for b := range edge {
		edge[b] = float64(binEdge(b))
	}
	for b := range mid {
		mid[b] = (edge[b] + edge[b+1]) / 2
	}
	return edge, mid
}

// residual is the mean time the histogram's gaps that outlast t do so
// (their mean residual life past t: the bins from t's upwards, t's own
// only if t is its lower edge), from the last walk; 0 when none is known.
func (g *NextGap) residual(t time.Duration) float64 {
	b := gapBin(t)
	if binEdge(b) < t {
		b++
	}
	if b < g.lo || b > g.hi || g.sufC[b] == 0 {
		return 0
	}
	return g.sufW[b]/g.sufC[b] - float64(t)
}

// beyond is the t_PDT that keeps the port awake through every gap the
// histogram knows (its top populated bin's upper edge), at least t; the
// "stay awake" answer when the histogram's top bin is reached or it is
// above that answer. A port that stays awake with it still sleeps in an
// idle period that outlasts all it has seen: a stay-awake answer that
// never expires would hold a link up for the whole of the run's start-up
// or a phase change's silence.
func (g *NextGap) beyond(t time.Duration) time.Duration {
	if g.hi >= gapBins-1 {
		return g.awake
	}
	return min(max(t, binEdge(g.hi+1), g.floor), g.awake)
}

// Held chooses what a port held awake by the ledger for wait does (see
// NextGap): the t_PDT to arm; staying awake means until the gap outlasts
// every gap the histogram knows (beyond).
func (g *NextGap) Held(now, wait time.Duration) time.Duration {
	if g.total == 0 {
		return max(g.answer, wait)
	}
	if g.answer == 0 && g.predicted > 0 { // predicted long
		if g.predicted-wait >= g.cut {
			return wait
		}
		return max(g.beyond(wait), wait)
	}
	t := max(g.answer, wait)
	if g.answer < g.awake && g.answer < g.beyond(g.answer) {
		if late := g.residual(t); late >= g.price {
			return t
		}
	}
	return max(g.beyond(t), wait)
}

// Hold returns the hybrid hold that goes with the last t_PDT; ok is false
// when the predictor is not configured for hybrid mode.
func (g *NextGap) Hold() (time.Duration, bool) {
	if !g.hybrid {
		return 0, false
	}
	return g.hold, true
}

// BudgetRate is l = bound × hop factor (Bounded).
func (g *NextGap) BudgetRate() float64 { return g.pb.HopFactor() }

// WakeCost is t_w, or Deep Sleep's t_w in hybrid mode (Bounded).
func (g *NextGap) WakeCost() time.Duration {
	return time.Duration(g.wake + g.delta)
}

// ObserveHops feeds the hop factor.
func (g *NextGap) ObserveHops(hops int, packets uint64) { g.pb.ObserveHops(hops, packets) }

// StateBytes is the table — per entry a context tag of ⌈n/2⌉ bytes, two
// 4-byte gaps and a 1-byte counter — plus 72 4-byte counters and six
// 8-byte registers (context, span, spent, start, last end, total).
func (g *NextGap) StateBytes() int {
	return len(g.tab)*((g.n+1)/2+9) + gapBins*4 + 6*8
}

// Kind returns KindNextGap.
func (g *NextGap) Kind() Kind { return KindNextGap }

var (
	_ Rationed    = (*NextGap)(nil)
	_ Bounded     = (*NextGap)(nil)
	_ HoldChooser = (*NextGap)(nil)
)
