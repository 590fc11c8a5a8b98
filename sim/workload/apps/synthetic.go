package apps

import (
	"fmt"
	"io"
	"math"
	"math/bits"
	"math/rand/v2"

	"github.com/lpictl/lpictl/sim/workload/vef"
)

// Synthetic is open-loop traffic (papers 001 and 004): every rank injects
// messages at absolute times (VEF dependency 0) to destinations chosen by
// a pattern, with Poisson arrivals or bursty ON/OFF periods.
type Synthetic struct {
	// Pattern: uniform (default), permutation, tornado, bitreverse, hotspot.
	Pattern      string  `yaml:"pattern,omitempty" json:"pattern,omitempty"`
	MessageBytes Bytes   `yaml:"message_bytes,omitempty" json:"message_bytes,omitempty"` // default 4KiB
	Load         float64 `yaml:"load,omitempty" json:"load,omitempty"`                   // per rank, fraction of Rate, default 0.1
	Rate         float64 `yaml:"rate,omitempty" json:"rate,omitempty"`                   // link bit/s, default 400e9
	// Arrivals: poisson (default) or onoff. ON and OFF period lengths have
	// means OnTime/OffTime (default 10us/90us) and Distribution
	// exponential (default) or pareto (shape ParetoShape, default 1.5).
	Arrivals     string   `yaml:"arrivals,omitempty" json:"arrivals,omitempty"`
	OnTime       Duration `yaml:"on_time,omitempty" json:"on_time,omitempty"`
	OffTime      Duration `yaml:"off_time,omitempty" json:"off_time,omitempty"`
	Distribution string   `yaml:"distribution,omitempty" json:"distribution,omitempty"`
	ParetoShape  float64  `yaml:"pareto_shape,omitempty" json:"pareto_shape,omitempty"`
	// Hotspot: Fraction (default 0.5) of messages go to Hotspots ranks
	// (default 1, spread evenly), the rest uniformly.
	Hotspots        int     `yaml:"hotspots,omitempty" json:"hotspots,omitempty"`
	HotspotFraction float64 `yaml:"hotspot_fraction,omitempty" json:"hotspot_fraction,omitempty"`
}

// Validate checks the section; prefix is e.g. "workload.synthetic".
func (s *Synthetic) Validate(prefix string, ranks int) error {
	switch s.Pattern {
	case "", "uniform", "permutation", "tornado", "hotspot":
	case "bitreverse":
		if ranks > 0 && ranks&(ranks-1) != 0 {
			return fmt.Errorf("%s.pattern: bitreverse needs a power-of-two number of ranks, got %d", prefix, ranks)
		}
	default:
		return fmt.Errorf("%s.pattern: unknown pattern %q (want uniform, permutation, tornado, bitreverse or hotspot)", prefix, s.Pattern)
	}
	switch s.Arrivals {
	case "", "poisson", "onoff":
	default:
		return fmt.Errorf("%s.arrivals: unknown arrival process %q (want poisson or onoff)", prefix, s.Arrivals)
	}
	switch s.Distribution {
	case "", "exponential", "pareto":
	default:
		return fmt.Errorf("%s.distribution: unknown distribution %q (want exponential or pareto)", prefix, s.Distribution)
	}
	if s.ParetoShape != 0 && !(s.ParetoShape > 1) {
		return fmt.Errorf("%s.pareto_shape: must be > 1 (finite mean), got %v", prefix, s.ParetoShape)
	}
	if s.Load < 0 || s.Load > 1 || math.IsNaN(s.Load) {
		return fmt.Errorf("%s.load: must be in (0, 1], got %v", prefix, s.Load)
	}
	if s.Rate < 0 || math.IsNaN(s.Rate) || math.IsInf(s.Rate, 0) {
		return fmt.Errorf("%s.rate: must be > 0 bit/s, got %v", prefix, s.Rate)
	}
	if s.MessageBytes < 0 {
		return fmt.Errorf("%s.message_bytes: must be ≥ 0", prefix)
	}
	if s.Hotspots < 0 || (ranks > 0 && s.Hotspots > ranks) {
		return fmt.Errorf("%s.hotspots: must be in [1, ranks], got %d", prefix, s.Hotspots)
	}
	if s.HotspotFraction < 0 || s.HotspotFraction > 1 || math.IsNaN(s.HotspotFraction) {
		return fmt.Errorf("%s.hotspot_fraction: must be in [0, 1], got %v", prefix, s.HotspotFraction)
	}
	return nil
}

type arrival struct {
	at   int64
	rank int32
}

// arrivals is a binary min-heap of the ranks' next arrivals, ordered by
// (time, rank): a total order, so the messages come out the same whatever
// the heap's layout. Typed rather than container/heap: it is popped once
// per message.
type arrivals []arrival

func (a arrivals) less(i, j int) bool {
	return a[i].at < a[j].at || (a[i].at == a[j].at && a[i].rank < a[j].rank)
}

// init orders the heap.
func (a arrivals) init() {
	for i := len(a)/2 - 1; i >= 0; i-- {
		a.down(i)
	}
}

// down moves element i down to its place.
func (a arrivals) down(i int) {
	n := len(a)
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if c+1 < n && a.less(c+1, c) {
			c++
		}
		if !a.less(c, i) {
			return
		}
		a[i], a[c] = a[c], a[i]
		i = c
	}
}

// popRoot removes the first arrival.
func (a *arrivals) popRoot() {
	q := *a
	n := len(q) - 1
	q[0] = q[n]
	*a = q[:n]
	(*a).down(0)
}

type synthetic struct {
	p       Synthetic
	n       int
	end     int64
	rng     *rand.Rand
	perm    []int32
	hot     []int32
	q       arrivals
	onEnd   []int64
	gapMean float64 // ps between messages while sending
	onMean  float64
	offMean float64
	msg     int64
	comms   [][]int32
	last    int64
}

func newSynthetic(s Spec) (*synthetic, error) {
	p := Synthetic{}
	if s.Params.Synthetic != nil {
		p = *s.Params.Synthetic
	}
	if err := p.Validate("synthetic", s.Ranks); err != nil {
		return nil, err
	}
	if p.Pattern == "" {
		p.Pattern = "uniform"
	}
	if p.Arrivals == "" {
		p.Arrivals = "poisson"
	}
	if p.Distribution == "" {
		p.Distribution = "exponential"
	}
	p.MessageBytes = Bytes(orBytes(p.MessageBytes, 4<<10))
	p.Load = orFloat(p.Load, 0.1)
	p.Rate = orFloat(p.Rate, 400e9)
	p.ParetoShape = orFloat(p.ParetoShape, 1.5)
	p.Hotspots = orInt(p.Hotspots, 1)
	p.HotspotFraction = orFloat(p.HotspotFraction, 0.5)
	if p.OnTime == 0 {
		p.OnTime = Duration(10_000)
	}
	if p.OffTime == 0 {
		p.OffTime = Duration(90_000)
	}
	_, dur := Defaults(KindSynthetic)
	if s.Duration > 0 {
		dur = s.Duration
	}
	y := &synthetic{p: p, n: s.Ranks, end: ps(dur), rng: rand.New(rand.NewPCG(s.Seed, 7))}
	w := make([]int32, s.Ranks)
	for i := range w {
		w[i] = int32(i)
	}
	y.comms = [][]int32{w}
	// Mean gap between messages of one rank at the offered load.
	bitsPerMsg := float64(max(1, int64(p.MessageBytes))) * 8
	y.gapMean = bitsPerMsg / (p.Load * p.Rate) * 1e12
	if p.Arrivals == "onoff" {
		y.onMean, y.offMean = float64(ps(p.OnTime.D())), float64(ps(p.OffTime.D()))
		y.gapMean *= y.onMean / (y.onMean + y.offMean)
		y.onEnd = make([]int64, s.Ranks)
	}
	switch p.Pattern {
	case "permutation":
		y.perm = derangement(y.rng, s.Ranks)
	case "hotspot":
		for i := 0; i < p.Hotspots; i++ {
			y.hot = append(y.hot, int32(i*s.Ranks/p.Hotspots))
		}
	}
	// One arrival per rank: grown by appends, the queue left several times
	// its size in garbage on a million-rank run (docs/simulator.md "Memory").
	y.q = make(arrivals, 0, s.Ranks)
	for r := 0; r < s.Ranks; r++ {
		start := int64(0)
		if y.onEnd != nil {
			// Start in a random phase: OFF first with probability off/(on+off).
			if y.rng.Float64() < y.offMean/(y.onMean+y.offMean) {
				start = y.period(y.offMean)
			}
			y.onEnd[r] = start + y.period(y.onMean)
		}
		y.q = append(y.q, arrival{at: y.next(r, start), rank: int32(r)})
	}
	y.q.init()
	return y, nil
}

func derangement(rng *rand.Rand, n int) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = int32(i)
	}
	if n < 2 {
		return p
	}
	// Sattolo's algorithm: a uniformly random cyclic permutation, so no
	// rank maps to itself.
	for i := n - 1; i > 0; i-- {
		j := rng.IntN(i)
		p[i], p[j] = p[j], p[i]
	}
	return p
}

func (y *synthetic) period(mean float64) int64 {
	if y.p.Distribution == "pareto" {
		a := y.p.ParetoShape
		xm := mean * (a - 1) / a
		return int64(xm / math.Pow(1-y.rng.Float64(), 1/a))
	}
	return int64(y.rng.ExpFloat64() * mean)
}

// next is rank r's next arrival after t.
func (y *synthetic) next(r int, t int64) int64 {
	t += int64(y.rng.ExpFloat64() * y.gapMean)
	if y.onEnd == nil {
		return t
	}
	for t > y.onEnd[r] && t < y.end {
		// The ON period ended: skip an OFF period, start a new ON one.
		start := y.onEnd[r] + y.period(y.offMean)
		y.onEnd[r] = start + y.period(y.onMean)
		t = start + int64(y.rng.ExpFloat64()*y.gapMean)
	}
	return t
}

func (y *synthetic) dest(src int) int {
	n := y.n
	switch y.p.Pattern {
	case "permutation":
		return int(y.perm[src])
	case "tornado":
		return (src + max(1, (n+1)/2-1)) % n
	case "bitreverse":
		k := bits.Len(uint(n)) - 1
		return int(bits.Reverse(uint(src)) >> (bits.UintSize - k))
	case "hotspot":
		if y.rng.Float64() < y.p.HotspotFraction {
			return int(y.hot[y.rng.IntN(len(y.hot))])
		}
	}
	if n < 2 {
		return src
	}
	d := y.rng.IntN(n - 1)
	if d >= src {
		d++
	}
	return d
}

func (y *synthetic) Tasks() int       { return y.n }
func (y *synthetic) Comms() [][]int32 { return y.comms }
func (y *synthetic) Progress() float64 {
	return float64(y.last) / float64(max(1, y.end))
}

func (y *synthetic) Next(r *vef.Record) error {
	for len(y.q) > 0 {
		a := y.q[0]
		if a.at >= y.end {
			y.q.popRoot()
			continue
		}
		src := int(a.rank)
		dst := y.dest(src)
		y.q[0].at = y.next(src, a.at)
		y.q.down(0)
		if dst == src { // bit-reverse fixed points send nothing
			continue
		}
		y.last = a.at
		*r = vef.Record{Kind: vef.Message, ID: y.msg, Src: int32(src), Dst: int32(dst), Bytes: int64(y.p.MessageBytes), Dep: vef.DepNone, Time: a.at, DepID: -1}
		y.msg++
		return nil
	}
	return io.EOF
}
