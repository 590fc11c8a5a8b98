package plot

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

var (
	barColor  = color.RGBA{0x44, 0x44, 0x44, 0xff}
	overColor = color.RGBA{0xaa, 0xaa, 0xaa, 0xff}
	cumColor  = color.RGBA{0xc0, 0x1c, 0x1c, 0xff}
)

// bin is one idle_hist.csv row of the chosen class, in the plot's unit.
type bin struct {
	lo, hi          float64 // bin edges (unit)
	share, cum      float64 // the bar and the cumulative line, in %: shares of idle time or of periods
	time, cumTime   float64 // idle-time share of the bin and cumulative, in %
	count, cumCount float64 // periods in the bin, cumulative share of periods in %
	overflow        bool    // the last, open-ended bin (periods above the range)
}

// trackedPort as a class picks each run's tracked port (output.idle_hist_port,
// class "port<i>"), whichever port that is: runs of different scenarios
// may track different ports.
const trackedPort = "port"

func isPortClass(c string) bool {
	i, ok := strings.CutPrefix(c, trackedPort)
	if !ok || i == "" {
		return false
	}
	for _, r := range i {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// readBins reads the bins of class from an idle_hist.csv.
func readBins(path, class string) ([]bin, error) {
	t, err := ReadResults(path)
	if err != nil {
		return nil, err
	}
	if err := requireCols(t, "class", "lo_ns", "hi_ns", "count", "idle_share", "cum_idle_share", "cum_count_share"); err != nil {
		return nil, err
	}
	var bins []bin
	var classes []string
	seen := map[string]bool{}
	for r := range t.Rows {
		c := t.Cell(r, "class")
		if !seen[c] {
			seen[c] = true
			classes = append(classes, c)
		}
		if c != class && !(class == trackedPort && isPortClass(c)) {
			continue
		}
		var b bin
		for _, f := range []struct {
			col string
			v   *float64
		}{{"lo_ns", &b.lo}, {"hi_ns", &b.hi}, {"idle_share", &b.time}, {"cum_idle_share", &b.cumTime},
			{"count", &b.count}, {"cum_count_share", &b.cumCount}} {
			v, ok, err := t.Float(r, f.col)
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, inputErr("%s: column %s row %d: empty", path, f.col, r+2)
			}
			*f.v = v
		}
		b.time *= 100
		b.cumTime *= 100
		b.cumCount *= 100
		bins = append(bins, b)
	}
	if len(bins) == 0 {
		return nil, inputErr("%s: no rows of class %q (classes: %s)", path, class, strings.Join(classes, ", "))
	}
	// The last bin holds every period above the 99th percentile: much
	// wider than the fixed-width bins before it. Draw it one width wide.
	if n := len(bins); n >= 2 {
		w := bins[0].hi - bins[0].lo
		if last := &bins[n-1]; last.hi-last.lo > 1.5*w {
			last.overflow = true
			last.hi = last.lo + w
		}
	}
	return bins, nil
}

// minBarWidth is the narrowest bar drawn.
const minBarWidth = vg.Length(1.5)

// binBars draws bins as adjoining bars of idle-time share.
type binBars struct{ bins []bin }

func (b binBars) Plot(c draw.Canvas, p *gplot.Plot) {
	tx, ty := p.Transforms(&c)
	for _, bn := range b.bins {
		if bn.share <= 0 {
			continue
		}
		clr := color.Color(barColor)
		if bn.overflow {
			clr = overColor
		}
		r := vg.Rectangle{Min: vg.Point{X: tx(bn.lo), Y: ty(0)}, Max: vg.Point{X: tx(bn.hi), Y: ty(bn.share)}}
		// With Fig. 1's 200 bins a bar can be narrower than a pixel: keep
		// the sparse ones visible.
		if r.Max.X-r.Min.X < minBarWidth {
			r.Max.X = r.Min.X + minBarWidth
		}
		c.SetColor(clr)
		c.Fill(r.Path())
		// A hairline keeps neighbouring bars apart.
		c.SetLineStyle(draw.LineStyle{Color: color.White, Width: vg.Points(0.3)})
		c.Stroke(r.Path())
	}
}

func (b binBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = math.Inf(1), math.Inf(-1)
	for _, bn := range b.bins {
		xmin, xmax = math.Min(xmin, bn.lo), math.Max(xmax, bn.hi)
		ymax = math.Max(ymax, bn.share)
	}
	if ymax == 0 {
		ymax = 1
	}
	return xmin, xmax, 0, ymax
}

// cumLine draws the cumulative share against a second y axis of 0–100 %
// spanning the data area, whatever the bars' y range.
type cumLine struct{ bins []bin }

func (l cumLine) points(c draw.Canvas, p *gplot.Plot) []vg.Point {
	tx, _ := p.Transforms(&c)
	y := func(pct float64) vg.Length { return c.Min.Y + vg.Length(pct/100)*(c.Max.Y-c.Min.Y) }
	pts := []vg.Point{{X: tx(l.bins[0].lo), Y: y(0)}}
	for _, bn := range l.bins {
		pts = append(pts, vg.Point{X: tx(bn.hi), Y: y(bn.cum)})
	}
	return pts
}

func (l cumLine) Plot(c draw.Canvas, p *gplot.Plot) {
	c.StrokeLines(cumStyle(), c.ClipLinesXY(l.points(c, p))...)
}

func cumStyle() draw.LineStyle { return draw.LineStyle{Color: cumColor, Width: vg.Points(1.5)} }

// twinPanel is a histogram plot with the cumulative share's axis on the
// right, as in paper 000 Fig. 1.
type twinPanel struct {
	p     *gplot.Plot
	label string
}

func (tp twinPanel) Draw(c draw.Canvas) {
	const rightW = 44
	pc := draw.Crop(c, 0, -vg.Points(rightW), 0, 0)
	tp.p.Draw(pc)
	dc := tp.p.DataCanvas(pc)
	ls := draw.LineStyle{Color: cumColor, Width: vg.Points(0.75)}
	x := dc.Max.X + vg.Points(2)
	c.StrokeLine2(ls, x, dc.Min.Y, x, dc.Max.Y)
	sty := tp.p.Y.Tick.Label
	sty.Color = cumColor
	sty.XAlign = draw.XLeft
	sty.YAlign = draw.YCenter
	for pct := 0; pct <= 100; pct += 25 {
		y := dc.Min.Y + vg.Length(float64(pct)/100)*(dc.Max.Y-dc.Min.Y)
		c.StrokeLine2(ls, x, y, x+vg.Points(4), y)
		c.FillText(sty, vg.Point{X: x + vg.Points(6), Y: y}, fmt.Sprint(pct))
	}
	lab := tp.p.Y.Label.TextStyle
	lab.Color = cumColor
	lab.Rotation = -math.Pi / 2
	lab.XAlign = draw.XCenter
	lab.YAlign = draw.YCenter
	c.FillText(lab, vg.Point{X: c.Max.X - vg.Points(8), Y: (dc.Min.Y + dc.Max.Y) / 2}, tp.label)
}

// axisColumns are results.csv's axis columns: those between baseline_id
// and seed, plus seed.
func axisColumns(t *Table) []string {
	start, end := -1, -1
	for i, h := range t.Header {
		switch h {
		case "baseline_id":
			start = i
		case "seed":
			end = i
		}
	}
	if start < 0 || end < start {
		return nil
	}
	return t.Header[start+1 : end+1]
}

// runTitle names a run by its axis values ("mode=fast-wake, pdt=10ns, seed=1").
func runTitle(t *Table, r int) string {
	var parts []string
	for _, c := range axisColumns(t) {
		v := t.Cell(r, c)
		switch {
		case v == "":
		case c == "base": // a scenario file: its name says which application
			parts = append(parts, strings.TrimSuffix(filepath.Base(v), filepath.Ext(v)))
		default:
			parts = append(parts, c[strings.LastIndex(c, ".")+1:]+"="+v)
		}
	}
	if len(parts) == 0 {
		return "run " + t.Cell(r, "index")
	}
	return strings.Join(parts, ", ")
}

// idleHist is paper 000 Fig. 1: per selected run, the number of idle
// periods in each length bin (bars) and the cumulative share of periods
// (line) — or, with weight "time", each bin's share of idle time and its
// cumulative share. With every run's idle_log.csv the length axis is
// logarithmic, bins a tenth of a decade wide, the same range in every
// panel; else linear, idle_hist.csv's bins.
func idleHist(dir string, t *Table, rows []int, class, weight string) (*figure, error) {
	if _, err := t.Col("id"); err != nil {
		return nil, err
	}
	if weight == "" {
		weight = "count"
	}
	barName, yLabel, cumName := "idle periods per bin", "Idle periods in bin", "cumulative share of periods"
	switch weight {
	case "count":
	case "time":
		barName, yLabel, cumName = "idle time per bin", "Idle time in bin (%)", "cumulative idle time"
	default:
		return nil, inputErr("--weight %q: want count (periods, as paper 000 Fig. 1) or time", weight)
	}
	rows = pointRows(t, rows)
	if len(rows) == 0 {
		return nil, inputErr("%s: no ok rows with role point", t.Path)
	}
	f := &figure{legend: newLegend()}
	overflow := false
	// Runs with an idle_log.csv (every simulator run since it has one)
	// are drawn on a log axis of length, from its log-linear histogram:
	// every period, from nanoseconds to seconds. Older runs, with only
	// idle_hist.csv's fixed-width bins up to the 99th percentile, on a
	// linear axis.
	logAxis := true
	for _, r := range rows {
		ok, err := hasIdleLog(filepath.Join(dir, "points", t.Cell(r, "id"), "idle_log.csv"))
		if err != nil {
			return nil, err
		}
		logAxis = logAxis && ok
	}
	xmin, xmax := math.Inf(1), math.Inf(-1)
	var plots []*gplot.Plot
	for _, r := range rows {
		id := t.Cell(r, "id")
		var bins []bin
		var err error
		if logAxis {
			bins, err = readLogBins(filepath.Join(dir, "points", id, "idle_log.csv"), class)
		} else {
			bins, err = readBins(filepath.Join(dir, "points", id, "idle_hist.csv"), class)
		}
		if err != nil {
			return nil, err
		}
		xLabel := "Idle period length"
		if !logAxis {
			maxNs := 0.0
			for _, b := range bins {
				maxNs = math.Max(maxNs, b.hi)
			}
			unit, scale := durationUnit(maxNs * 1e-9)
			for i := range bins {
				bins[i].lo *= 1e-9 / scale
				bins[i].hi *= 1e-9 / scale
			}
			xLabel = fmt.Sprintf("Idle period length (%s)", unit)
		}
		for i := range bins {
			if weight == "count" {
				bins[i].share, bins[i].cum = bins[i].count, bins[i].cumCount
			} else {
				bins[i].share, bins[i].cum = bins[i].time, bins[i].cumTime
			}
			overflow = overflow || bins[i].overflow
			xmin, xmax = math.Min(xmin, bins[i].lo), math.Max(xmax, bins[i].hi)
		}
		p := newPanel(runTitle(t, r), xLabel, yLabel)
		p.Add(binBars{bins: bins}, cumLine{bins: bins})
		p.Y.Min = 0
		applyNiceY(p)
		if logAxis {
			p.X.Scale = gplot.LogScale{}
			p.X.Tick.Marker = logTicks{duration: true}
		} else {
			p.X.Tick.Marker = niceTicks{}
		}
		plots = append(plots, p)
		f.panels = append(f.panels, twinPanel{p: p, label: strings.ToUpper(cumName[:1]) + cumName[1:] + " (%)"})
	}
	if logAxis {
		// One x range for every panel, whole decades: the applications'
		// idle periods compare at a glance.
		lo, hi := math.Pow(10, math.Floor(math.Log10(xmin)+1e-9)), math.Pow(10, math.Ceil(math.Log10(xmax)-1e-9))
		for _, p := range plots {
			p.X.Min, p.X.Max = lo, hi
		}
	}
	names := []string{barName}
	f.legend.Add(names[0], barThumb{barColor})
	if overflow {
		names = append(names, "periods beyond the last bin")
		f.legend.Add(names[1], barThumb{overColor})
	}
	names = append(names, cumName)
	f.legend.Add(names[len(names)-1], &plotter.Line{LineStyle: cumStyle()})
	f.legendW = legendWidth(f.legend, names)
	f.cols, f.rows = grid(len(f.panels), 3)
	const panelW, panelH = 400, 300
	f.width = vg.Points(math.Max(560, float64(f.cols)*panelW)) + f.legendW
	f.height = vg.Points(float64(f.rows)*panelH + 45)
	return f, nil
}

// barThumb is a filled legend swatch.
type barThumb struct{ c color.Color }

func (b barThumb) Thumbnail(c *draw.Canvas) {
	c.SetColor(b.c)
	c.Fill(c.Rectangle.Path())
}
