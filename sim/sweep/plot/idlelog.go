package plot

import (
	"errors"
	"io/fs"
	"math"
	"os"
	"strings"
)

// logBinsPerDecade is how many bars a decade of idle-period length gets
// on idle-hist's log axis.
const logBinsPerDecade = 10

// readLogBins reads the rows of class from an idle_log.csv (the
// simulator's log-linear histogram of every idle period, buckets about
// 1/64 of their value wide) and sums them into bins of a tenth of a
// decade, edges 10^(k/10) ns, each bucket into the bin of its geometric
// middle. Bin edges come back in seconds; time and count are as in bin.
func readLogBins(path, class string) ([]bin, error) {
	t, err := ReadResults(path)
	if err != nil {
		return nil, err
	}
	if err := requireCols(t, "class", "lo_ns", "hi_ns", "count", "idle_s"); err != nil {
		return nil, err
	}
	type acc struct{ count, time float64 }
	sums := map[int]*acc{}
	var classes []string
	seen := map[string]bool{}
	var total, totalTime float64
	lo, hi := math.MaxInt, math.MinInt
	for r := range t.Rows {
		c := t.Cell(r, "class")
		if !seen[c] {
			seen[c] = true
			classes = append(classes, c)
		}
		if c != class && !(class == trackedPort && isPortClass(c)) {
			continue
		}
		var vals [4]float64
		for i, col := range []string{"lo_ns", "hi_ns", "count", "idle_s"} {
			v, ok, err := t.Float(r, col)
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, inputErr("%s: column %s row %d: empty", path, col, r+2)
			}
			vals[i] = v
		}
		mid := math.Sqrt(math.Max(vals[0], 1e-3) * math.Max(vals[1], 1e-3))
		k := int(math.Floor(math.Log10(mid) * logBinsPerDecade))
		a := sums[k]
		if a == nil {
			a = &acc{}
			sums[k] = a
		}
		a.count += vals[2]
		a.time += vals[3]
		total += vals[2]
		totalTime += vals[3]
		lo, hi = min(lo, k), max(hi, k)
	}
	if len(sums) == 0 {
		return nil, inputErr("%s: no rows of class %q (classes: %s)", path, class, strings.Join(classes, ", "))
	}
	var bins []bin
	var cum, cumTime float64
	for k := lo; k <= hi; k++ {
		b := bin{
			lo: math.Pow(10, float64(k)/logBinsPerDecade) * 1e-9,
			hi: math.Pow(10, float64(k+1)/logBinsPerDecade) * 1e-9,
		}
		if a := sums[k]; a != nil {
			b.count = a.count
			cum += a.count
			cumTime += a.time
			if totalTime > 0 {
				b.time = 100 * a.time / totalTime
			}
		}
		if total > 0 {
			b.cumCount = 100 * cum / total
		}
		if totalTime > 0 {
			b.cumTime = 100 * cumTime / totalTime
		}
		bins = append(bins, b)
	}
	return bins, nil
}

// hasIdleLog reports whether a run directory has an idle_log.csv.
func hasIdleLog(path string) (bool, error) {
	_, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}
