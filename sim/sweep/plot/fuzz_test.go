package plot

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/lpictl/lpictl/configs"
)

// FuzzReadResults: any bytes either read as a table whose cells all parse
// or fail as a configs.InputError; nothing panics.
func FuzzReadResults(f *testing.F) {
	for _, p := range []string{"testdata/agg.csv", "testdata/bad/results.csv"} {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("a,a\n"))
	f.Add([]byte("status,x\nok,\"1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "results.csv")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		tb, err := ReadResults(path)
		if err != nil {
			var ie *configs.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("not a configs.InputError: %v", err)
			}
			return
		}
		rows, err := tb.filter(nil)
		if err != nil {
			return
		}
		for _, col := range tb.Header {
			scale, cats := classify(tb, rows, col)
			x := columnX(tb, col, scale, cats)
			for _, r := range rows {
				if _, _, err := x(r); err != nil && scale != xNumber {
					t.Fatalf("column %s classified %v but row %d fails: %v", col, scale, r, err)
				}
				_, _, _ = tb.Float(r, col)
			}
		}
	})
}

// FuzzDurations: parseSeconds and parseBound never panic and never return
// a negative duration.
func FuzzDurations(f *testing.F) {
	for _, s := range []string{"0", "10ns", "1us", "1µs", "100ms", "1s", "2500", "0.01", "5%", "-1s", "1e400"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if v, err := parseSeconds(s); err == nil && v < 0 {
			t.Fatalf("parseSeconds(%q) = %v < 0", s, v)
		}
		_, _ = parseBound(s)
	})
}
