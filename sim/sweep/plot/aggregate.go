package plot

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/lpictl/lpictl/predictor"
)

// stat is one plotted point: the mean of n values of one x in one series,
// with their minimum and maximum (the error bar).
type stat struct {
	X, Mean, Min, Max float64
	N                 int
}

// series is one curve: a name for the legend and its points by ascending X.
type series struct {
	Name string
	Pts  []stat
}

// xOf returns a row's x position; ok is false when the row has no x value.
type xOf func(r int) (x float64, ok bool, err error)

// aggregate groups rows by series key and x, and averages column y over
// each group (several seeds of one point). Rows with an empty y or x cell
// are skipped. Series keep the order in which their first row appears.
func aggregate(t *Table, rows []int, x xOf, y string, key func(r int) string) ([]series, error) {
	if _, err := t.Col(y); err != nil {
		return nil, err
	}
	type group struct {
		sum, min, max float64
		n             int
	}
	var names []string
	groups := map[string]map[float64]*group{}
	for _, r := range rows {
		xv, ok, err := x(r)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		yv, ok, err := t.Float(r, y)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		k := key(r)
		g, seen := groups[k]
		if !seen {
			g = map[float64]*group{}
			groups[k] = g
			names = append(names, k)
		}
		if p := g[xv]; p != nil {
			p.sum += yv
			p.min = math.Min(p.min, yv)
			p.max = math.Max(p.max, yv)
			p.n++
		} else {
			g[xv] = &group{sum: yv, min: yv, max: yv, n: 1}
		}
	}
	out := make([]series, 0, len(names))
	for _, k := range names {
		s := series{Name: k}
		for xv, g := range groups[k] {
			s.Pts = append(s.Pts, stat{X: xv, Mean: g.sum / float64(g.n), Min: g.min, Max: g.max, N: g.n})
		}
		sort.Slice(s.Pts, func(i, j int) bool { return s.Pts[i].X < s.Pts[j].X })
		out = append(out, s)
	}
	return out, nil
}

// xScale says how a column's values are placed on the x axis.
type xScale int

const (
	xNumber      xScale = iota // plain numbers
	xDuration                  // durations ("10ns", "1us"), placed in seconds
	xCategorical               // anything else, evenly spaced in first-seen order
)

// parseSeconds reads a duration as written in a sweep file ("0", "10ns",
// "1us", "100ms", "1s"; a bare number is nanoseconds) and returns seconds.
func parseSeconds(s string) (float64, error) {
	d, err := predictor.ParseDuration(strings.ReplaceAll(s, "μs", "us"))
	if err != nil {
		return 0, err
	}
	return d.Seconds(), nil
}

// classify decides how the non-empty values of a column are placed: numbers
// if all parse as numbers, durations if all parse as durations, categories
// otherwise. cats lists the distinct values in first-seen order.
func classify(t *Table, rows []int, col string) (scale xScale, cats []string) {
	numbers, durations := true, true
	seen := map[string]bool{}
	for _, r := range rows {
		s := strings.TrimSpace(t.Cell(r, col))
		if s == "" {
			continue
		}
		if !seen[s] {
			seen[s] = true
			cats = append(cats, s)
		}
		if _, err := strconv.ParseFloat(s, 64); err != nil {
			numbers = false
		}
		if _, err := parseSeconds(s); err != nil {
			durations = false
		}
	}
	switch {
	case len(cats) == 0:
		return xCategorical, nil
	case numbers:
		return xNumber, cats
	case durations:
		return xDuration, cats
	}
	return xCategorical, cats
}

// columnX returns the x function of a column placed on scale: numbers as
// read, durations in seconds, categories by their index in cats.
func columnX(t *Table, col string, scale xScale, cats []string) xOf {
	index := map[string]int{}
	for i, c := range cats {
		index[c] = i
	}
	return func(r int) (float64, bool, error) {
		s := strings.TrimSpace(t.Cell(r, col))
		if s == "" {
			return 0, false, nil
		}
		switch scale {
		case xNumber:
			return t.Float(r, col)
		case xDuration:
			v, err := parseSeconds(s)
			if err != nil {
				return 0, false, inputErr("%s: column %s row %d: %v", t.Path, col, r+2, err)
			}
			return v, true, nil
		}
		return float64(index[s]), true, nil
	}
}

// zeroPosition is where x = 0 is drawn on a log axis: one decade left of
// the smallest positive value. ok is false when no value is positive.
func zeroPosition(xs []float64) (pos float64, ok bool) {
	minPos := math.Inf(1)
	for _, x := range xs {
		if x > 0 && x < minPos {
			minPos = x
		}
	}
	if math.IsInf(minPos, 1) {
		return 0, false
	}
	return minPos / 10, true
}

// formatSeconds writes a duration in seconds with the largest unit that
// keeps it ≥ 1: "10ns", "1µs", "100ms", "1s".
func formatSeconds(v float64) string {
	if v == 0 {
		return "0"
	}
	units := []struct {
		name  string
		scale float64
	}{{"s", 1}, {"ms", 1e-3}, {"µs", 1e-6}, {"ns", 1e-9}}
	for _, u := range units {
		if math.Abs(v) >= u.scale*(1-1e-9) || u.name == "ns" {
			return strconv.FormatFloat(roundSig(v/u.scale), 'g', -1, 64) + u.name
		}
	}
	return ""
}

// roundSig rounds to 6 significant digits, hiding binary noise in labels.
func roundSig(v float64) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	return f
}

// durationUnit picks the unit (name and seconds per unit) in which values
// up to maxSeconds read best.
func durationUnit(maxSeconds float64) (string, float64) {
	switch {
	case maxSeconds < 1e-6:
		return "ns", 1e-9
	case maxSeconds < 1e-3:
		return "µs", 1e-6
	case maxSeconds < 1:
		return "ms", 1e-3
	}
	return "s", 1
}

// parseBound reads a PerfBound bound as written in a sweep file, a
// fraction ("0.01") or a percentage ("1%"), and returns percent.
func parseBound(s string) (float64, error) {
	if p, ok := strings.CutSuffix(strings.TrimSpace(s), "%"); ok {
		return strconv.ParseFloat(strings.TrimSpace(p), 64)
	}
	v, err := strconv.ParseFloat(s, 64)
	return roundSig(v * 100), err
}

// uniqueFloats drops repeats from a sorted slice.
func uniqueFloats(v []float64) []float64 {
	out := v[:0]
	for i, x := range v {
		if i == 0 || x != v[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// trimFloat writes v shortest, without binary noise.
func trimFloat(v float64) string { return strconv.FormatFloat(roundSig(v), 'g', -1, 64) }
