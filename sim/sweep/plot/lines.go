package plot

import (
	"fmt"
	"image/color"
	"math"
	"sort"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// ySpec is one column drawn in a panel.
type ySpec struct {
	col  string
	dash bool
}

// panelSpec is one panel of a line figure.
type panelSpec struct {
	title, yLabel string
	ys            []ySpec
	logY          bool
}

// lineNote is a legend entry that explains a line style (not a series).
type lineNote struct {
	name string
	dash bool
}

// panelRow is one row of a line figure's panels: the rows of the table
// whose row key is name ("" for a figure of one row).
type panelRow struct {
	name string
	rows []int
}

// splitRows groups rows by rowKey, in order of first appearance (nil
// rowKey: one group of all rows).
func splitRows(rows []int, rowKey func(r int) string) []panelRow {
	if rowKey == nil {
		return []panelRow{{rows: rows}}
	}
	var out []panelRow
	at := map[string]int{}
	for _, r := range rows {
		k := rowKey(r)
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, panelRow{name: k})
		}
		out[i].rows = append(out[i].rows, r)
	}
	return out
}

// linesFigure draws one panel per spec; in each, every series (rows with
// the same key) of every y column is a line at the rows' x, averaged over
// seeds with min–max error bars. Series keep one style across panels,
// and no two series share one: each has its own colour while there are
// at most len(palette), and its own colour × marker pair beyond. With
// rowKey, the panels are repeated in one row per distinct row key (e.g.
// the power mode), each drawing that key's rows, and the key is left out
// of the series names.
func linesFigure(t *Table, rows []int, x *xAxis, xf xOf, key, rowKey func(r int) string,
	specs []panelSpec, notes []lineNote) (*figure, error) {
	groups := splitRows(rows, rowKey)
	all := make([][][]series, len(specs)*len(groups))
	var xs []float64
	points := 0
	for gi, g := range groups {
		for si, sp := range specs {
			i := gi*len(specs) + si
			all[i] = make([][]series, len(sp.ys))
			for j, y := range sp.ys {
				ss, err := aggregate(t, g.rows, xf, y.col, key)
				if err != nil {
					return nil, err
				}
				for _, s := range ss {
					for _, p := range s.Pts {
						xs = append(xs, p.X)
						points++
						if sp.logY && p.Min <= 0 {
							return nil, inputErr("%s: --logy: column %s has a value ≤ 0 (%g)", t.Path, y.col, p.Min)
						}
					}
				}
				all[i][j] = ss
			}
		}
	}
	if points == 0 {
		cols := []string{}
		for _, sp := range specs {
			for _, y := range sp.ys {
				cols = append(cols, y.col)
			}
		}
		return nil, inputErr("%s: no ok row has both an x value and a value of %s", t.Path, strings.Join(cols, ", "))
	}
	x.setup(xs)
	// Series order (and style) by first appearance in the table, among the
	// series that have points.
	plotted := map[string]bool{}
	for i := range all {
		for j := range all[i] {
			for _, s := range all[i][j] {
				plotted[s.Name] = plotted[s.Name] || len(s.Pts) > 0
			}
		}
	}
	var names []string
	seen := map[string]int{}
	for _, r := range rows {
		k := key(r)
		if _, ok := seen[k]; !ok && plotted[k] {
			seen[k] = len(names)
			names = append(names, k)
		}
	}

	f := &figure{align: true, legend: newLegend()}
	for i := range all {
		g, sp := groups[i/len(specs)], specs[i%len(specs)]
		title := sp.title
		if g.name != "" {
			title += " — " + g.name
		}
		p := newPanel(title, x.label, sp.yLabel)
		x.apply(p)
		if sp.logY {
			applyLogY(p)
		} else {
			applyNiceY(p)
		}
		for j, y := range sp.ys {
			for _, s := range all[i][j] {
				if _, err := addSeries(p, s, seen[s.Name], y.dash, x.place); err != nil {
					return nil, err
				}
			}
		}
		if !sp.logY {
			addZeroLine(p)
		}
		widenLog(&p.Y, sp.logY)
		widenLog(&p.X, x.log)
		f.panels = append(f.panels, p)
	}
	legendNames := make([]string, len(names))
	for i, n := range names {
		legendNames[i] = n
		if n == "" {
			legendNames[i] = "(no value)"
		}
	}
	if len(names) == 1 && names[0] == "" {
		legendNames = nil
	}
	for i, n := range names {
		c, g := style(i)
		f.series = append(f.series, seriesStyle{name: n, color: c, glyph: g})
	}
	for i, n := range legendNames {
		c, g := style(i)
		f.legend.Add(n, &plotter.Line{LineStyle: draw.LineStyle{Color: c, Width: vg.Points(1.5)}},
			&plotter.Scatter{GlyphStyle: draw.GlyphStyle{Color: c, Shape: g, Radius: vg.Points(2.5)}})
	}
	for _, n := range notes {
		ls := draw.LineStyle{Color: color.Gray{Y: 0x55}, Width: vg.Points(1.5)}
		if n.dash {
			ls.Dashes = dashed
		}
		f.legend.Add(n.name, &plotter.Line{LineStyle: ls})
	}
	all2 := append(append([]string{}, legendNames...), noteNames(notes)...)
	f.legendW = legendWidth(f.legend, all2)
	f.cols, f.rows = grid(len(f.panels), 3)
	if rowKey != nil {
		f.cols, f.rows = len(specs), len(groups)
	}
	const panelW, panelH = 340, 330
	f.width = vg.Points(math.Max(600, float64(f.cols)*panelW)) + f.legendW
	f.height = vg.Points(float64(f.rows)*panelH + 45)
	return f, nil
}

func noteNames(notes []lineNote) []string {
	out := make([]string, len(notes))
	for i, n := range notes {
		out[i] = n.name
	}
	return out
}

// legendWidth is the width of the legend column for entries names (0: none).
func legendWidth(l gplot.Legend, names []string) vg.Length {
	if len(names) == 0 {
		return 0
	}
	var w vg.Length
	for _, n := range names {
		w = max(w, l.TextStyle.Width(n))
	}
	return w + l.ThumbnailWidth + vg.Points(24)
}

// widenLog gives a log axis whose data is one value a range around it
// (gonum would widen it by ±1, possibly below zero).
func widenLog(a *gplot.Axis, log bool) {
	if log && a.Min == a.Max && a.Min > 0 {
		a.Min, a.Max = a.Min/2, a.Max*2
	}
}

// zeroLine is a thin horizontal line at y = 0 when 0 is within the y range.
type zeroLine struct{}

func (zeroLine) Plot(c draw.Canvas, p *gplot.Plot) {
	if p.Y.Min > 0 || p.Y.Max < 0 {
		return
	}
	_, ty := p.Transforms(&c)
	y := ty(0)
	c.StrokeLine2(draw.LineStyle{Color: color.Gray{Y: 0x88}, Width: vg.Points(0.75)}, c.Min.X, y, c.Max.X, y)
}

func addZeroLine(p *gplot.Plot) { p.Add(zeroLine{}) }

// describeKey joins the labels of a row's series columns.
func describeKey(t *Table, cols []string, label func(col, v string) string) func(r int) string {
	return func(r int) string {
		parts := make([]string, 0, len(cols))
		for _, c := range cols {
			if !t.Has(c) {
				continue
			}
			v := t.Cell(r, c)
			if v == "" {
				continue
			}
			parts = append(parts, label(c, v))
		}
		return strings.Join(parts, ", ")
	}
}

// knownLabels spells the values of power.mode, predictor.kind and
// predictor.histogram.strategy as the paper does.
var knownLabels = map[string]string{
	"fast-wake":        "Fast Wake",
	"deep-sleep":       "Deep Sleep",
	"always-on":        "Always on",
	"hybrid":           "Hybrid",
	"fixed":            "Fixed",
	"perfbound":        "PerfBound",
	"perfboundcorrect": "PerfBoundCorrect",
	"unbounded":        "unbounded histogram",
	"clearing":         "self-clearing histogram",
	"circular":         "circular buffer",
}

func paperLabel(_, v string) string {
	if l, ok := knownLabels[strings.ToLower(v)]; ok {
		return l
	}
	return v
}

// requireCols checks that t has every column in cols.
func requireCols(t *Table, cols ...string) error {
	for _, c := range cols {
		if _, err := t.Col(c); err != nil {
			return err
		}
	}
	return nil
}

// pointRows keeps the sweep points (role=point) when the table has roles:
// baselines have no overheads or savings of their own.
func pointRows(t *Table, rows []int) []int {
	if !t.Has("role") {
		return rows
	}
	var out []int
	for _, r := range rows {
		if t.Cell(r, "role") == "point" {
			out = append(out, r)
		}
	}
	return out
}

// threePanels are the panels of paper 000 Figs. 7/8: execution-time
// overhead, energy saving (total solid, network dashed), latency overhead.
func threePanels() ([]panelSpec, []lineNote) {
	return []panelSpec{
			{title: "(a) Execution time", yLabel: "Execution time overhead (%)",
				ys: []ySpec{{col: "exec_overhead_pct"}}},
			{title: "(b) Energy", yLabel: "Energy saving (%)",
				ys: []ySpec{{col: "total_saving_pct"}, {col: "network_saving_pct", dash: true}}},
			{title: "(c) Packet latency", yLabel: "Mean packet latency overhead (%)",
				ys: []ySpec{{col: "latency_overhead_pct"}}},
		}, []lineNote{
			{name: "total energy saving (b)"},
			{name: "network energy saving (b)", dash: true},
		}
}

func threePanelCols() []string {
	return []string{"exec_overhead_pct", "total_saving_pct", "network_saving_pct", "latency_overhead_pct"}
}

// pdtSweep is paper 000 Figs. 7/13/16: the three panels against t_PDT on a
// log axis, one series per power mode.
func pdtSweep(t *Table, rows []int) (*figure, error) {
	const xcol = "predictor.pdt"
	if err := requireCols(t, append([]string{xcol}, threePanelCols()...)...); err != nil {
		return nil, err
	}
	rows = pointRows(t, rows)
	x := &xAxis{label: "Power-down threshold t_PDT", scale: xDuration, log: true}
	specs, notes := threePanels()
	return linesFigure(t, rows, x, columnX(t, xcol, xDuration, nil),
		describeKey(t, []string{"power.mode"}, paperLabel), nil, specs, notes)
}

// predictors is paper 000 Figs. 8/14/17: the three panels against the
// PerfBound bound (in %), one series per predictor × histogram strategy ×
// power mode (the columns that exist).
func predictors(t *Table, rows []int) (*figure, error) {
	const xcol = "predictor.bound"
	if err := requireCols(t, append([]string{xcol}, threePanelCols()...)...); err != nil {
		return nil, err
	}
	rows = pointRows(t, rows)
	// Bounds are fractions (0.01) or percentages ("1%"), placed evenly in
	// ascending order like the paper's bar groups.
	pct := map[string]float64{}
	var vals []float64
	for _, r := range rows {
		s := strings.TrimSpace(t.Cell(r, xcol))
		if s == "" {
			continue
		}
		if _, done := pct[s]; done {
			continue
		}
		v, err := parseBound(s)
		if err != nil {
			return nil, inputErr("%s: column %s row %d: unparsable number %q", t.Path, xcol, r+2, s)
		}
		pct[s] = v
		vals = append(vals, v)
	}
	sort.Float64s(vals)
	vals = uniqueFloats(vals)
	index := map[float64]int{}
	cats := make([]string, len(vals))
	for i, v := range vals {
		index[v] = i
		cats[i] = fmt.Sprintf("%s%%", trimFloat(v))
	}
	xf := func(r int) (float64, bool, error) {
		s := strings.TrimSpace(t.Cell(r, xcol))
		if s == "" {
			return 0, false, nil
		}
		return float64(index[pct[s]]), true, nil
	}
	x := &xAxis{label: "PerfBound bound (tolerated slowdown, %)", scale: xCategorical, cats: cats}
	specs, notes := threePanels()
	// One row of panels per power mode, one series per predictor ×
	// histogram in each: a dozen series in one panel were not told apart.
	key := describeKey(t, []string{"predictor.kind", "predictor.histogram.strategy"}, paperLabel)
	var rowKey func(int) string
	if t.Has("power.mode") {
		rowKey = describeKey(t, []string{"power.mode"}, paperLabel)
	}
	return linesFigure(t, rows, x, xf, key, rowKey, specs, notes)
}

// generic draws --y columns (one panel each; A+B draws B dashed in A's
// panel) against --x, one series per distinct joined value of the
// --series columns.
func generic(t *Table, rows []int, o Options) (*figure, error) {
	if o.X == "" || len(o.Y) == 0 {
		return nil, inputErr("figure generic needs --x COL and --y COL[,COL…]")
	}
	var cols []string
	for _, y := range o.Y {
		cols = append(cols, strings.Split(y, "+")...)
	}
	if err := requireCols(t, append(append([]string{o.X}, cols...), o.Series...)...); err != nil {
		return nil, err
	}
	scale, cats := classify(t, rows, o.X)
	if o.LogX && scale == xCategorical {
		return nil, inputErr("%s: --logx: column %s holds neither numbers nor durations", t.Path, o.X)
	}
	x := &xAxis{label: o.X, scale: scale, cats: cats, log: o.LogX}
	if scale == xDuration {
		x.label = o.X + " (duration)"
	}
	specs := make([]panelSpec, len(o.Y))
	for i, y := range o.Y {
		parts := strings.Split(y, "+")
		specs[i] = panelSpec{title: strings.Join(parts, " (solid), ") + " (dashed)", yLabel: columnLabel(parts[0]), logY: o.LogY}
		if len(parts) == 1 {
			specs[i].title = y
		}
		for j, c := range parts {
			specs[i].ys = append(specs[i].ys, ySpec{col: c, dash: j > 0})
		}
	}
	key := describeKey(t, o.Series, func(_, v string) string { return v })
	return linesFigure(t, rows, x, columnX(t, o.X, scale, cats), key, nil, specs, nil)
}

// columnLabel names a results.csv column with its unit.
func columnLabel(col string) string {
	switch {
	case strings.HasSuffix(col, "_pct"):
		return strings.TrimSuffix(col, "_pct") + " (%)"
	case strings.HasSuffix(col, "_s"):
		return strings.TrimSuffix(col, "_s") + " (s)"
	case strings.HasSuffix(col, "_j"):
		return strings.TrimSuffix(col, "_j") + " (J)"
	case strings.HasPrefix(col, "frac_"):
		return col + " (fraction of link time)"
	}
	return col
}
