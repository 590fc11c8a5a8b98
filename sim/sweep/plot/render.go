package plot

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"strings"

	"github.com/google/renameio/v2"
	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// dpi of PNG output: 1 pt = 4/3 px, so a 1200×375 pt figure is 1600×500 px.
const dpi = 96

// palette: colour-blind-safe colours (Okabe–Ito), then darker variants.
var palette = []color.RGBA{
	{0x00, 0x72, 0xb2, 0xff}, // blue
	{0xd5, 0x5e, 0x00, 0xff}, // vermillion
	{0x00, 0x9e, 0x73, 0xff}, // bluish green
	{0xcc, 0x79, 0xa7, 0xff}, // reddish purple
	{0xe6, 0x9f, 0x00, 0xff}, // orange
	{0x56, 0xb4, 0xe9, 0xff}, // sky blue
	{0x33, 0x33, 0x33, 0xff}, // near black
	{0x8c, 0x56, 0x4b, 0xff}, // brown
}

// glyphs cycle with a period prime to the palette's, so series 0..39 differ.
var glyphs = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{},
	draw.BoxGlyph{}, draw.RingGlyph{},
}

var (
	dashed    = []vg.Length{vg.Points(5), vg.Points(3)}
	gridColor = color.Gray{Y: 0xdd}
)

// style of series i: its colour and marker.
func style(i int) (color.RGBA, draw.GlyphDrawer) {
	return palette[i%len(palette)], glyphs[i%len(glyphs)]
}

// figure is what Write draws: a title, panels in a grid and one legend
// column on the right shared by all panels.
type figure struct {
	title      string
	panels     []panel
	cols, rows int
	legend     gplot.Legend
	width      vg.Length // whole figure
	height     vg.Length
	legendW    vg.Length     // the legend column
	align      bool          // align the data areas of the panels (line plots)
	series     []seriesStyle // line figures: each series' style, in legend order
}

// seriesStyle is how one series of a line figure is drawn (its lines are
// solid or dashed by the column they draw, not by series).
type seriesStyle struct {
	name  string
	color color.RGBA
	glyph draw.GlyphDrawer
}

// panel is one sub-plot: a gonum plot, optionally with extra drawing
// (a second y axis) around it.
type panel interface {
	Draw(c draw.Canvas)
}

// newPanel returns a plot with the figures' common styling.
func newPanel(title, xLabel, yLabel string) *gplot.Plot {
	p := gplot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(12)
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	for _, a := range []*gplot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = vg.Points(11)
		a.Tick.Label.Font.Size = vg.Points(10)
		a.Padding = vg.Points(3)
	}
	g := plotter.NewGrid()
	g.Vertical.Color = nil
	g.Horizontal.Color = gridColor
	g.Horizontal.Width = vg.Points(0.5)
	p.Add(g)
	return p
}

// xyStats is a series' points as a plotter.XYer and YErrorer.
type xyStats []stat

func (s xyStats) Len() int                    { return len(s) }
func (s xyStats) XY(i int) (float64, float64) { return s[i].X, s[i].Mean }
func (s xyStats) YError(i int) (float64, float64) {
	return s[i].Mean - s[i].Min, s[i].Max - s[i].Mean
}

// addSeries draws s on p in style i (dashed or solid), with min–max error
// bars where a point averages values that differ. It returns the line and
// marker for a legend entry.
func addSeries(p *gplot.Plot, s series, i int, dash bool, mapX func(float64) float64) ([]gplot.Thumbnailer, error) {
	pts := make(xyStats, len(s.Pts))
	for j, st := range s.Pts {
		st.X = mapX(st.X)
		pts[j] = st
	}
	line, scatter, err := plotter.NewLinePoints(pts)
	if err != nil {
		return nil, fmt.Errorf("series %q: %w", s.Name, err)
	}
	c, g := style(i)
	line.Color = c
	line.Width = vg.Points(1.5)
	if dash {
		line.Dashes = dashed
	}
	scatter.Color = c
	scatter.Shape = g
	scatter.Radius = vg.Points(2.5)
	p.Add(line, scatter)
	spread := false
	for _, st := range pts {
		spread = spread || st.Max > st.Min
	}
	if spread {
		eb, err := plotter.NewYErrorBars(pts)
		if err != nil {
			return nil, fmt.Errorf("series %q: %w", s.Name, err)
		}
		eb.Color = c
		eb.Width = vg.Points(1)
		eb.CapWidth = vg.Points(5)
		p.Add(eb)
	}
	return []gplot.Thumbnailer{line, scatter}, nil
}

// newLegend returns the shared legend's styling.
func newLegend() gplot.Legend {
	l := gplot.NewLegend()
	l.Top = true
	l.Left = true
	l.ThumbnailWidth = vg.Points(28)
	l.TextStyle.Font.Size = vg.Points(10)
	l.Padding = vg.Points(3)
	return l
}

// render draws the figure on a canvas of the extension's format and
// returns the file's bytes.
func (f *figure) render(ext string) ([]byte, error) {
	var (
		canvas vg.CanvasWriterTo
		dc     draw.Canvas
	)
	switch ext {
	case ".png":
		c := vgimg.NewWith(vgimg.UseWH(f.width, f.height), vgimg.UseDPI(dpi),
			vgimg.UseBackgroundColor(color.White))
		canvas, dc = vgimg.PngCanvas{Canvas: c}, draw.New(c)
	case ".svg":
		c := vgsvg.New(f.width, f.height)
		dc = draw.New(c)
		dc.SetColor(color.White)
		dc.Fill(dc.Rectangle.Path())
		canvas = c
	default:
		return nil, inputErr("output %q: unknown format (want .png or .svg)", ext)
	}
	f.draw(dc)
	var buf bytes.Buffer
	if _, err := canvas.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("encode %s: %w", ext, err)
	}
	return buf.Bytes(), nil
}

func (f *figure) draw(c draw.Canvas) {
	pad := vg.Points(6)
	area := draw.Crop(c, pad, -pad, pad, -pad)
	if f.title != "" {
		sty := titleStyle()
		h := sty.Height(f.title)
		mid := (area.Min.X + area.Max.X) / 2
		area.FillText(sty, vg.Point{X: mid, Y: area.Max.Y}, f.title)
		area = draw.Crop(area, 0, 0, 0, -(h + pad))
	}
	if f.legendW > 0 {
		lc := draw.Crop(area, area.Size().X-f.legendW+pad, 0, 0, -vg.Points(20))
		f.legend.Draw(lc)
		area = draw.Crop(area, 0, -f.legendW, 0, 0)
	}
	tiles := draw.Tiles{Cols: f.cols, Rows: f.rows, PadX: vg.Points(14), PadY: vg.Points(14)}
	if f.align {
		grid := make([][]*gplot.Plot, f.rows)
		for r := range grid {
			grid[r] = make([]*gplot.Plot, f.cols)
			for col := range grid[r] {
				if i := r*f.cols + col; i < len(f.panels) {
					grid[r][col] = f.panels[i].(*gplot.Plot)
				}
			}
		}
		canvases := gplot.Align(grid, tiles, area)
		for r := range grid {
			for col, p := range grid[r] {
				if p != nil {
					p.Draw(canvases[r][col])
				}
			}
		}
		return
	}
	for i, p := range f.panels {
		p.Draw(tiles.At(area, i%f.cols, i/f.cols))
	}
}

func titleStyle() text.Style {
	sty := gplot.New().Title.TextStyle
	sty.Font.Size = vg.Points(14)
	sty.XAlign = draw.XCenter
	sty.YAlign = draw.YTop
	return sty
}

// save writes the figure to out atomically, in the format of its extension.
func (f *figure) save(out string) error {
	data, err := f.render(strings.ToLower(filepath.Ext(out)))
	if err != nil {
		return err
	}
	if err := renameio.WriteFile(out, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	return nil
}

// grid returns columns and rows for n panels, at most maxCols wide.
func grid(n, maxCols int) (cols, rows int) {
	cols = min(n, maxCols)
	return cols, int(math.Ceil(float64(n) / float64(cols)))
}
