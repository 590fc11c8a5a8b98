package predictor

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
	"unsafe"
)

// TestSpilledBins checks what the inline storage holds once the bins
// spill (the copy of the highest, topBins, and the directory, binDir) by
// property: a PerfBound's histogram, whose bins spill out of the predictor
// and are then searched from the copy and found through the directory,
// holds the same bins as a histogram kept apart (no inline storage) after
// every idle period; its copy is the top of its bins and its directory
// their groups' first indices; both bin searches answer the same for
// random budgets, under both readings; and both find every index at the
// same place. Over the three strategies, one and two clearing windows, and
// histograms from a few bins to past the directory's reach, with idle
// periods that recur (counted in a bin that exists) and spread (new bins),
// so that bins are inserted, counted, forgotten and removed above, inside
// and below the copy.
func TestSpilledBins(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	trials := 600
	if testing.Short() {
		trials = 90
	}
	spilled, far := 0, 0
	for trial := range trials {
		c := Config{}.WithDefaults()
		hc := &c.Histogram
		hc.Strategy = []Strategy{Unbounded, Clearing, Circular}[trial%3]
		hc.Search = []Search{SearchAll, SearchPopulated}[trial/3%2]
		hc.Windows = 1 + trial/6%2
		hc.MaxRecords = 1 + rng.IntN(1500)
		hc.TTL = Duration(time.Duration(1+rng.IntN(2000)) * time.Microsecond)
		pb := newPerfBound(c)
		got, want, in := &pb.hist, newHistogram(*hc), &pb.binStore
		spread := 1 + rng.IntN(3*dirGroups*dirStride) // the bins the periods fall in
		var now time.Duration
		for i, n := 0, rng.IntN(3000); i < n; i++ {
			v := time.Duration(rng.IntN(spread)) * DefaultBinWidth
			if rng.IntN(3) == 0 {
				v = time.Duration(spread-1-rng.IntN(4)) * DefaultBinWidth // the top bins recur
			}
			now += v + time.Duration(rng.IntN(1000))*time.Nanosecond
			got.add(v, now-v, now, in)
			want.add(v, now-v, now, nil)
			if got.n != want.n || got.prevN != want.prevN || !slices.Equal(got.bins, want.bins) {
				t.Fatalf("trial %d, period %d: bins %d (n %d) against %d (n %d)", trial, i, len(got.bins), got.n, len(want.bins), want.n)
			}
			if top := got.topBins(in); !slices.Equal(top, got.bins[len(got.bins)-len(top):]) || len(top) < min(len(got.bins), topCopy) {
				t.Fatalf("trial %d, period %d: the top bins' copy %v is not the top of %v", trial, i, top, got.bins)
			}
			if d := got.dir(in); d != nil {
				for g := 0; g < dirGroups && g*dirStride < len(got.bins); g++ {
					if d[g] != got.bins[g*dirStride].idx {
						t.Fatalf("trial %d, period %d: directory entry %d is %d, bin %d is %d", trial, i, g, d[g], g*dirStride, got.bins[g*dirStride].idx)
					}
				}
			}
			for range 4 {
				idx := uint32(rng.IntN(spread + 2))
				pos := got.find(idx, in)
				if b := want.find(idx, nil); pos != b {
					t.Fatalf("trial %d, period %d: find(%d) = %d, a binary search of the bins says %d (%d bins)", trial, i, idx, pos, b, len(got.bins))
				}
				// binAddr points at the group find reads.
				if a := got.binAddr(idx, in); a != 0 {
					lo := int(a-uintptr(unsafe.Pointer(&got.bins[0]))) / int(unsafe.Sizeof(bin{}))
					if lo%dirStride != 0 || pos < lo || pos > lo+dirStride && lo != (dirGroups-1)*dirStride {
						t.Fatalf("trial %d, period %d: binAddr(%d) is bin %d, find's place %d", trial, i, idx, lo, pos)
					}
				} else if got.spilled(in) && pos >= dirStride {
					t.Fatalf("trial %d, period %d: binAddr(%d) is 0, find's place %d", trial, i, idx, pos)
				}
			}
			if got.n == 0 {
				continue
			}
			for range 4 {
				// Mostly a few records, as a decision's budget is; now and
				// then up to all of them.
				budget := rng.Float64() * 8
				if rng.IntN(4) == 0 {
					budget = rng.Float64() * float64(got.n+2)
				}
				if a, b := got.search(budget, in), want.search(budget, nil); a != b {
					t.Fatalf("trial %d, period %d: search(%v) = %v, without the copy %v (%d bins)", trial, i, budget, a, b, len(got.bins))
				}
			}
		}
		if got.spilled(in) {
			spilled++
		}
		if len(got.bins) > dirGroups*dirStride {
			far++
		}
	}
	if spilled < trials/4 || far == 0 {
		t.Fatalf("%d of %d histograms spilled, %d past the directory: too few to test them", spilled, trials, far)
	}
}
