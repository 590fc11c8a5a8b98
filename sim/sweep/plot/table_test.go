package plot

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lpictl/lpictl/configs"
)

func TestReadResults(t *testing.T) {
	tb, err := ReadResults("testdata/pdt/results.csv")
	if err != nil {
		t.Fatal(err)
	}
	// 2 modes × 5 t_PDT × 2 seeds, then 2 baselines (one per seed).
	if len(tb.Rows) != 22 {
		t.Errorf("rows = %d, want 22", len(tb.Rows))
	}
	if i, err := tb.Col("predictor.pdt"); err != nil || i != 7 {
		t.Errorf("Col(predictor.pdt) = %d, %v; want 7", i, err)
	}
	// Line 2 of the file: exec_overhead_pct 8.1 (fast-wake, t_PDT 0, seed 1).
	if v, ok, err := tb.Float(0, "exec_overhead_pct"); err != nil || !ok || v != 8.1 {
		t.Errorf("Float(0, exec_overhead_pct) = %v %v %v, want 8.1", v, ok, err)
	}
	// Baselines have no overhead: an empty cell is "no value", not an error.
	if _, ok, err := tb.Float(21, "exec_overhead_pct"); ok || err != nil {
		t.Errorf("baseline overhead: ok=%v err=%v, want no value", ok, err)
	}
	if got := tb.Cell(7, "status"); got != "failed" {
		t.Errorf("row 7 status = %q, want failed", got)
	}
}

func TestReadResultsErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, path, want string
	}{
		{"missing", filepath.Join(dir, "nope.csv"), "nope.csv: no such file"},
		{"empty", write("empty.csv", ""), "empty.csv: empty file"},
		{"ragged", write("ragged.csv", "a,b\n1,2\n3\n"), "ragged.csv: record on line 3: wrong number of fields"},
		{"duplicate", write("dup.csv", "a,b,a\n1,2,3\n"), `dup.csv: column "a" appears twice`},
		{"blank name", write("blank.csv", "a,,c\n1,2,3\n"), "blank.csv: column 2 has an empty name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadResults(tc.path)
			var ie *configs.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("err = %v, want a configs.InputError", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestTableFloatAndCol(t *testing.T) {
	tb, err := ReadResults("testdata/bad/results.csv")
	if err != nil {
		t.Fatal(err)
	}
	// Data row 1 is line 3 of the file.
	_, _, err = tb.Float(1, "exec_overhead_pct")
	want := `testdata/bad/results.csv: column exec_overhead_pct row 3: unparsable number "12.x"`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
	_, err = tb.Col("no.such")
	if err == nil || !strings.Contains(err.Error(), `no column "no.such" (columns: index, id, role, status,`) {
		t.Errorf("Col(no.such) err = %v", err)
	}
}

func TestFilter(t *testing.T) {
	tb, err := ReadResults("testdata/agg.csv")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		where map[string]string
		want  []int
		err   string
	}{
		{nil, []int{0, 1, 2, 3, 5, 6, 7, 8, 9}, ""},
		{map[string]string{"power.mode": "deep-sleep"}, []int{6, 7, 8}, ""},
		{map[string]string{"power.mode": "fast-wake", "predictor.pdt": "1us"}, []int{3, 5}, ""},
		{map[string]string{"power.mode": "hybrid"}, nil, "no rows with status ok and power.mode=hybrid"},
		{map[string]string{"mode": "x"}, nil, `--where mode=x: testdata/agg.csv: no column "mode"`},
	}
	for _, tc := range tests {
		got, err := tb.filter(tc.where)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("filter(%v) err = %v, want %q", tc.where, err, tc.err)
			}
			continue
		}
		if err != nil || !equalInts(got, tc.want) {
			t.Errorf("filter(%v) = %v, %v; want %v", tc.where, got, err, tc.want)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestAggregate(t *testing.T) {
	tb, err := ReadResults("testdata/agg.csv")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := tb.filter(nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := aggregate(tb, rows, columnX(tb, "predictor.pdt", xDuration, nil), "exec_overhead_pct",
		func(r int) string { return tb.Cell(r, "power.mode") })
	if err != nil {
		t.Fatal(err)
	}
	// By hand from testdata/agg.csv: the failed row (4) and the empty cell
	// (row 7) are left out; the baseline (row 9) has no t_PDT.
	want := []series{
		{Name: "fast-wake", Pts: []stat{
			{X: 0, Mean: (10 + 14 + 12.5) / 3.0, Min: 10, Max: 14, N: 3},
			{X: 1e-6, Mean: (4 - 2) / 2.0, Min: -2, Max: 4, N: 2},
		}},
		{Name: "deep-sleep", Pts: []stat{
			{X: 1e-8, Mean: 50, Min: 50, Max: 50, N: 1},
			{X: 1e-6, Mean: 30, Min: 30, Max: 30, N: 1},
		}},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d series %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i].Name != want[i].Name || len(got[i].Pts) != len(want[i].Pts) {
			t.Fatalf("series %d = %+v, want %+v", i, got[i], want[i])
		}
		for j, w := range want[i].Pts {
			g := got[i].Pts[j]
			if g.N != w.N || !near(g.X, w.X) || !near(g.Mean, w.Mean) || g.Min != w.Min || g.Max != w.Max {
				t.Errorf("%s point %d = %+v, want %+v", want[i].Name, j, g, w)
			}
		}
	}
	// The error bars span min–max around the mean.
	lo, hi := xyStats(got[0].Pts).YError(1)
	if !near(lo, 3) || !near(hi, 3) {
		t.Errorf("YError = %v, %v; want 3, 3 (mean 1, min −2, max 4)", lo, hi)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

func TestAggregateBadNumber(t *testing.T) {
	tb, err := ReadResults("testdata/bad/results.csv")
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := tb.filter(nil)
	_, err = aggregate(tb, rows, columnX(tb, "predictor.pdt", xDuration, nil), "exec_overhead_pct",
		func(int) string { return "" })
	if err == nil || !strings.Contains(err.Error(), "column exec_overhead_pct row 3") {
		t.Errorf("err = %v, want it to name column exec_overhead_pct row 3", err)
	}
}

func TestClassify(t *testing.T) {
	tb, err := ReadResults("testdata/agg.csv")
	if err != nil {
		t.Fatal(err)
	}
	rows := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	tests := []struct {
		col   string
		scale xScale
		cats  []string
	}{
		{"seed", xNumber, []string{"1", "2", "3"}},
		{"predictor.pdt", xDuration, []string{"0", "1us", "10ns"}},
		{"power.mode", xCategorical, []string{"fast-wake", "deep-sleep"}},
	}
	for _, tc := range tests {
		scale, cats := classify(tb, rows, tc.col)
		if scale != tc.scale || strings.Join(cats, "|") != strings.Join(tc.cats, "|") {
			t.Errorf("classify(%s) = %v %v, want %v %v", tc.col, scale, cats, tc.scale, tc.cats)
		}
	}
	// Categories are placed at their index in first-seen order.
	x := columnX(tb, "power.mode", xCategorical, []string{"fast-wake", "deep-sleep"})
	if v, ok, _ := x(6); !ok || v != 1 {
		t.Errorf("deep-sleep placed at %v, want 1", v)
	}
}
