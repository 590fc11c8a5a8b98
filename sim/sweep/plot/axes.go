package plot

import (
	"math"
	"sort"
	"strconv"

	gplot "gonum.org/v1/plot"
)

// logTicks marks decades (labelled) and their 2…9 multiples on a log axis.
// With a zero position (zero > 0) the tick there reads "0" and no tick is
// drawn between it and the smallest real value (zero·10).
type logTicks struct {
	zero     float64
	duration bool      // label values as durations in seconds
	labelAt  []float64 // if set, only these values are labelled (the data's x values)
}

func (lt logTicks) Ticks(lo, hi float64) []gplot.Tick {
	if lo <= 0 || hi <= 0 || hi < lo {
		return nil
	}
	var ticks []gplot.Tick
	if lt.zero > 0 {
		ticks = append(ticks, gplot.Tick{Value: lt.zero, Label: "0"})
	}
	inGap := func(v float64) bool {
		return lt.zero > 0 && v <= lt.zero*10*(1-1e-9)
	}
	const eps = 1e-9
	// Over many decades, label every step-th one: at most about six labels.
	step := math.Max(1, math.Ceil((math.Ceil(math.Log10(hi)-eps)-math.Floor(math.Log10(lo)+eps))/6))
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		dec := math.Pow(10, e)
		for m := 1.0; m < 10; m++ {
			v := dec * m
			if v < lo*(1-eps) || v > hi*(1+eps) || inGap(v) {
				continue
			}
			t := gplot.Tick{Value: v}
			if lt.labelAt == nil && labelMultiple(m, hi/lo) && math.Mod(math.Mod(e, step)+step, step) == 0 {
				t.Label = lt.label(v)
			}
			ticks = append(ticks, t)
		}
	}
	for _, v := range lt.labelAt {
		if v > 0 && v >= lo*(1-eps) && v <= hi*(1+eps) {
			ticks = append(ticks, gplot.Tick{Value: v, Label: lt.label(v)})
		}
	}
	return ticks
}

// labelMultiple says whether m·10^k is labelled on a log axis spanning
// ratio = max/min: decades always, 2 and 5 within two decades, every
// multiple within one.
func labelMultiple(m, ratio float64) bool {
	switch {
	case m == 1:
		return true
	case ratio <= 10:
		return true
	case ratio <= 100:
		return m == 2 || m == 5
	}
	return false
}

func (lt logTicks) label(v float64) string {
	if lt.duration {
		return formatSeconds(v)
	}
	return strconv.FormatFloat(roundSig(v), 'g', -1, 64)
}

// durationTicks labels a linear axis of seconds with duration units.
type durationTicks struct{}

func (durationTicks) Ticks(lo, hi float64) []gplot.Tick {
	ticks := gplot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = formatSeconds(ticks[i].Value)
		}
	}
	return ticks
}

// categoryTicks labels positions 0…n−1 with category names.
func categoryTicks(names []string) gplot.ConstantTicks {
	ticks := make(gplot.ConstantTicks, len(names))
	for i, n := range names {
		ticks[i] = gplot.Tick{Value: float64(i), Label: n}
	}
	return ticks
}

// xAxis describes how x values are placed and labelled.
type xAxis struct {
	label   string
	scale   xScale    // xNumber, xDuration (seconds) or xCategorical
	cats    []string  // category tick labels (xCategorical)
	log     bool      // log scale, 0 drawn one decade left of the smallest value
	zero    float64   // set by setup: where 0 is drawn on a log axis
	labelAt []float64 // set by setup: the positive values to label (nil: decades)
}

// maxLabels is the most x values labelled one by one on a log axis; with
// more, the decades are labelled.
const maxLabels = 8

// setup chooses the zero position and the labelled values from all plotted
// x values.
func (a *xAxis) setup(xs []float64) {
	if !a.log {
		return
	}
	z, ok := zeroPosition(xs)
	if !ok {
		a.log = false // nothing positive: a log axis cannot show it
		return
	}
	a.zero = z
	distinct := map[float64]bool{}
	var labels []float64
	for _, x := range xs {
		if x > 0 && !distinct[x] {
			distinct[x] = true
			labels = append(labels, x)
		}
	}
	if len(labels) <= maxLabels {
		sort.Float64s(labels)
		a.labelAt = labels
	}
}

// place maps a data x to its drawn position.
func (a *xAxis) place(x float64) float64 {
	if a.log && x <= 0 {
		return a.zero
	}
	return x
}

// apply sets p's x axis scale, ticks and range.
func (a *xAxis) apply(p *gplot.Plot) {
	p.X.Label.Text = a.label
	switch {
	case a.scale == xCategorical:
		p.X.Tick.Marker = categoryTicks(a.cats)
		p.X.Min, p.X.Max = -0.5, float64(len(a.cats))-0.5
	case a.log:
		p.X.Scale = gplot.LogScale{}
		p.X.Tick.Marker = logTicks{zero: a.zero, duration: a.scale == xDuration, labelAt: a.labelAt}
	case a.scale == xDuration:
		p.X.Tick.Marker = durationTicks{}
	default:
		p.X.Tick.Marker = niceTicks{}
	}
}

// applyLogY puts p's y axis on a log scale with decade ticks.
func applyLogY(p *gplot.Plot) {
	p.Y.Scale = gplot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
}

// niceTicks marks a linear axis every 1, 2, 2.5 or 5 × 10^k, about five
// labelled ticks, with the range widened to whole steps (AutoRescale).
type niceTicks struct{}

func (niceTicks) Ticks(lo, hi float64) []gplot.Tick {
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) || math.IsNaN(lo) || math.IsNaN(hi) || hi < lo {
		return nil
	}
	if hi == lo {
		lo, hi = lo-1, hi+1
	}
	step := niceStep(hi - lo)
	var ticks []gplot.Tick
	first, last := math.Floor(lo/step+1e-9), math.Ceil(hi/step-1e-9)
	for i := first; i <= last; i++ {
		v := roundSig(i * step)
		ticks = append(ticks, gplot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
		if i < last {
			ticks = append(ticks, gplot.Tick{Value: roundSig((i + 0.5) * step)})
		}
	}
	return ticks
}

// niceStep is the smallest of 1, 2, 2.5, 5 × 10^k giving at most 6 steps.
func niceStep(span float64) float64 {
	mag := math.Pow(10, math.Floor(math.Log10(span/6)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if span/(m*mag) <= 6+1e-9 {
			return m * mag
		}
	}
	return 10 * mag
}

// applyNiceY gives p's linear y axis nice ticks.
func applyNiceY(p *gplot.Plot) {
	p.Y.Tick.Marker = niceTicks{}
	p.Y.AutoRescale = true
}
