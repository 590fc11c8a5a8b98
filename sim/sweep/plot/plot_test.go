package plot

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lpictl/lpictl/configs"
)

var figureCases = []struct {
	name string
	dir  string
	o    Options
	w, h int // PNG size in pixels
}{
	{"pdt-sweep", "testdata/pdt", Options{Figure: "pdt-sweep"}, 0, 500},
	{"predictors", "testdata/predictors", Options{Figure: "predictors"}, 0, 940}, // a row per mode
	{"predictors one mode", "testdata/predictors", Options{Figure: "predictors", Where: map[string]string{"power.mode": "deep-sleep"}}, 0, 500},
	{"powar", "testdata/powar", Options{Figure: "powar"}, 0, 940}, // a row per workload
	{"idle-hist", "testdata/idle", Options{Figure: "idle-hist"}, 0, 460},
	{"idle-hist log", "testdata/idlelog", Options{Figure: "idle-hist", Class: "port"}, 0, 460},
	{"idle-hist nic", "testdata/idle", Options{Figure: "idle-hist", Class: "nic", Where: map[string]string{"predictor.pdt": "1us"}}, 0, 460},
	{"generic", "testdata/pdt", Options{Figure: "generic", X: "predictor.pdt", Y: []string{"exec_time_s", "energy_links_j"},
		Series: []string{"power.mode"}, LogX: true, Title: "links"}, 0, 500},
	{"generic categorical", "testdata/pdt", Options{Figure: "generic", X: "power.mode", Y: []string{"frac_deep_sleep"},
		Series: []string{"predictor.pdt"}, LogY: true}, 0, 500},
}

func TestFiguresRender(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range figureCases {
		t.Run(tc.name, func(t *testing.T) {
			base := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_"))
			for _, ext := range []string{".png", ".svg"} {
				out := base + ext
				if err := Write(tc.dir, out, tc.o); err != nil {
					t.Fatal(err)
				}
				data, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				if len(data) < 5000 {
					t.Errorf("%s: only %d bytes", out, len(data))
				}
				// Same input, same bytes.
				again := base + "-again" + ext
				if err := Write(tc.dir, again, tc.o); err != nil {
					t.Fatal(err)
				}
				if data2, _ := os.ReadFile(again); !bytes.Equal(data, data2) {
					t.Errorf("%s: two renders differ", ext)
				}
				switch ext {
				case ".png":
					img, err := png.Decode(bytes.NewReader(data))
					if err != nil {
						t.Fatal(err)
					}
					if b := img.Bounds(); b.Dy() != tc.h || b.Dx() < 900 {
						t.Errorf("PNG is %d×%d, want ≥900×%d", b.Dx(), b.Dy(), tc.h)
					}
				case ".svg":
					if !bytes.Contains(data, []byte("<svg")) {
						t.Errorf("SVG has no <svg element")
					}
				}
			}
		})
	}
}

func TestFigureContent(t *testing.T) {
	// The text of the SVG names what the figure promises.
	tests := []struct {
		dir  string
		o    Options
		want []string
	}{
		{"testdata/pdt", Options{Figure: "pdt-sweep"}, []string{"lammps-pdt", "Fast Wake", "Deep Sleep",
			"(a) Execution time", "(b) Energy", "(c) Packet latency", "Execution time overhead (%)",
			"Power-down threshold t_PDT", ">0<", ">10ns<", ">1µs<", ">100µs<", ">1s<"}},
		{"testdata/predictors", Options{Figure: "predictors", Title: "LAMMPS"}, []string{">LAMMPS<",
			"PerfBoundCorrect, circular buffer", "PerfBound, self-clearing histogram",
			"(a) Execution time — Fast Wake", "(c) Packet latency — Deep Sleep",
			">1%<", ">2%<", ">5%<"}},
		{"testdata/idle", Options{Figure: "idle-hist"}, []string{"lammps-idle: idle periods (class all)",
			"mode=deep-sleep, kind=fixed, pdt=10ns, seed=1", "Idle period length (µs)", "Idle periods in bin",
			"Cumulative share of periods (%)", "periods beyond the last bin"}},
		// Fig. 1 was linear: PATMOS's and MLWF's bars vanished, LAMMPS's
		// filled 2 µs of a 95 µs axis. With idle_log.csv: a log axis of
		// durations, 10 ns to 100 ms for this AlexNet port, every other decade labelled.
		{"testdata/idlelog", Options{Figure: "idle-hist", Class: "port"}, []string{"alexnet, idle_hist_port=4160",
			">10ns<", ">1µs<", ">100µs<", ">10ms<", "Idle period length<"}},
		{"testdata/idle", Options{Figure: "idle-hist", Weight: "time"}, []string{"Idle time in bin (%)",
			"Cumulative idle time (%)", "idle time per bin"}},
	}
	for _, tc := range tests {
		out := filepath.Join(t.TempDir(), "f.svg")
		if err := Write(tc.dir, out, tc.o); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(out)
		for _, w := range tc.want {
			if !strings.Contains(string(data), w) {
				t.Errorf("%s %s: no %q in the SVG", tc.dir, tc.o.Figure, w)
			}
		}
	}
}

func TestWriteErrors(t *testing.T) {
	tmp := t.TempDir()
	out := filepath.Join(tmp, "f.png")
	tests := []struct {
		name string
		dir  string
		out  string
		o    Options
		want string
	}{
		{"unknown figure", "testdata/pdt", out, Options{Figure: "pie"},
			`unknown figure "pie" (figures: pdt-sweep, predictors, idle-hist, powar, generic)`},
		{"no results", tmp, out, Options{Figure: "pdt-sweep"},
			"results.csv: no such file (run `lpictl sweep collect " + tmp + "` first)"},
		{"missing column", "testdata/predictors", out, Options{Figure: "pdt-sweep"},
			`testdata/predictors/results.csv: no column "predictor.pdt" (columns: index, id, role, status, baseline_id, power.mode,`},
		{"no ok rows", "testdata/pdt", out, Options{Figure: "pdt-sweep", Where: map[string]string{"power.mode": "hybrid"}},
			"testdata/pdt/results.csv: no rows with status ok and power.mode=hybrid"},
		{"unparsable", "testdata/bad", out, Options{Figure: "pdt-sweep"},
			`testdata/bad/results.csv: column exec_overhead_pct row 3: unparsable number "12.x"`},
		{"generic without x", "testdata/pdt", out, Options{Figure: "generic", Y: []string{"exec_time_s"}},
			"figure generic needs --x COL and --y COL"},
		{"logx on strings", "testdata/pdt", out, Options{Figure: "generic", X: "power.mode", Y: []string{"exec_time_s"}, LogX: true},
			"--logx: column power.mode holds neither numbers nor durations"},
		{"logy nonpositive", "testdata/pdt", out, Options{Figure: "generic", X: "predictor.pdt", Y: []string{"total_saving_pct"}, LogY: true},
			"--logy: column total_saving_pct has a value ≤ 0"},
		{"unknown class", "testdata/idle", out, Options{Figure: "idle-hist", Class: "port7"},
			`idle_hist.csv: no rows of class "port7" (classes: `},
		{"format", "testdata/pdt", filepath.Join(tmp, "f.pdf"), Options{Figure: "pdt-sweep"},
			`f.pdf: unknown format ".pdf" (want .png or .svg)`},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.out == out {
				tc.out = filepath.Join(tmp, fmt.Sprintf("f%d.png", i))
			}
			err := Write(tc.dir, tc.out, tc.o)
			var ie *configs.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("err = %v, want a configs.InputError", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %q\nwant it to contain %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("err has several lines: %q", err)
			}
			if _, serr := os.Stat(tc.out); serr == nil {
				t.Errorf("%s written despite the error", tc.out)
			}
		})
	}
}

func TestFigures(t *testing.T) {
	if got := strings.Join(Figures(), ","); got != "pdt-sweep,predictors,idle-hist,powar,generic" {
		t.Errorf("Figures() = %s", got)
	}
}

func TestPredictorsOptionalColumns(t *testing.T) {
	// Without the strategy and mode columns the series are the predictor
	// kinds alone; the strategies and modes of one kind and bound become
	// seeds of one point (mean with min–max bars), not an error.
	src, err := ReadResults("testdata/predictors/results.csv")
	if err != nil {
		t.Fatal(err)
	}
	drop := map[string]bool{"predictor.histogram.strategy": true, "power.mode": true}
	var lines []string
	for i, row := range append([][]string{src.Header}, src.Rows...) {
		var keep []string
		for j, cell := range row {
			if !drop[src.Header[j]] {
				keep = append(keep, cell)
			}
		}
		if i > 0 && len(keep) != len(src.Header)-2 {
			t.Fatal("bad row")
		}
		lines = append(lines, strings.Join(keep, ","))
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "results.csv"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "p.svg")
	if err := Write(dir, out, Options{Figure: "predictors"}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(out)
	svg := string(data)
	for _, want := range []string{">PerfBound<", ">PerfBoundCorrect<", ">" + filepath.Base(dir) + "<"} {
		if !strings.Contains(svg, want) {
			t.Errorf("no %q in the SVG", want)
		}
	}
	for _, not := range []string{"circular buffer", "Deep Sleep"} {
		if strings.Contains(svg, not) {
			t.Errorf("%q in the SVG although its column is gone", not)
		}
	}
}

// Class "port" is each run's tracked port, whatever its index.
func TestTrackedPortClass(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "idle_hist.csv")
	csv := "class,bin,lo_ns,hi_ns,count,idle_s,idle_share,cum_idle_share,cum_count_share\n" +
		"all,0,0,100,1,1e-7,1,1,1\n" +
		"portx,0,0,100,1,1e-7,1,1,1\n" +
		"port4160,0,0,100,3,3e-7,0.25,0.25,0.5\n" +
		"port4160,1,100,200,3,9e-7,0.75,1,1\n"
	if err := os.WriteFile(path, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	bins, err := readBins(path, "port")
	if err != nil {
		t.Fatal(err)
	}
	if len(bins) != 2 || bins[0].time != 25 || bins[1].cumTime != 100 || bins[0].count != 3 || bins[0].cumCount != 50 {
		t.Errorf("bins %+v: want port4160's two bins (25 %% of idle time, 3 periods, 50 %% of periods; cumulative time 100 %%)", bins)
	}
	for _, c := range []string{"port", "port12", "portx", "port4160"} {
		if got, want := isPortClass(c), c == "port12" || c == "port4160"; got != want {
			t.Errorf("isPortClass(%q) = %v, want %v", c, got, want)
		}
	}
}

// TestSeriesStylesDistinct: the predictors figures drew 12 series with an
// 8-colour palette in one legend (colours repeated; issue 24 item 22).
// They now have a row of panels per power mode, whose series (predictor
// × histogram) each have a colour of their own; in any line figure no two
// series share colour and marker.
func TestSeriesStylesDistinct(t *testing.T) {
	tab, err := ReadResults("testdata/predictors/results.csv")
	if err != nil {
		t.Fatal(err)
	}
	all := make([]int, len(tab.Rows))
	for i := range all {
		all[i] = i
	}
	f, err := predictors(tab, all)
	if err != nil {
		t.Fatal(err)
	}
	if f.rows != 2 || f.cols != 3 || len(f.series) != 4 {
		t.Fatalf("predictors: %d×%d panels, %d series; want a row per mode (2×3) and 4 series (2 kinds × 2 histograms)", f.rows, f.cols, len(f.series))
	}
	colours := map[color.RGBA]string{}
	for _, s := range f.series {
		if other, dup := colours[s.color]; dup {
			t.Errorf("series %q and %q share colour %v", s.name, other, s.color)
		}
		colours[s.color] = s.name
		if strings.Contains(s.name, "Fast Wake") || strings.Contains(s.name, "Deep Sleep") {
			t.Errorf("series %q names the mode, which its panel row says", s.name)
		}
	}
	// Beyond the palette, colour × marker stays distinct.
	type pair struct {
		c color.RGBA
		g string
	}
	seen := map[pair]int{}
	for i := range 40 {
		c, g := style(i)
		k := pair{c, fmt.Sprintf("%T", g)}
		if j, dup := seen[k]; dup {
			t.Errorf("series %d and %d share colour and marker", j, i)
		}
		seen[k] = i
	}
}

func TestParseWhere(t *testing.T) {
	m, err := ParseWhere([]string{" power.mode =deep-sleep", "a=b=c"})
	if err != nil || m["power.mode"] != "deep-sleep" || m["a"] != "b=c" || len(m) != 2 {
		t.Errorf("ParseWhere = %v, %v", m, err)
	}
	if _, err := ParseWhere([]string{"nokey"}); !configs.IsBadInput(err) || err.Error() != `--where "nokey": want COL=VALUE` {
		t.Errorf("bad --where: %v", err)
	}
}
