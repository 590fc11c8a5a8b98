package observe

import (
	"testing"
)

func TestHistBucket(t *testing.T) {
	prevHi := uint64(0)
	for i := range HistBuckets {
		lo, hi := HistBucketBounds(i)
		if lo != prevHi || hi <= lo {
			t.Fatalf("bucket %d [%d, %d) does not follow %d", i, lo, hi, prevHi)
		}
		if HistBucket(lo) != i || (i < HistBuckets-1 && HistBucket(hi-1) != i) {
			t.Fatalf("bucket %d bounds [%d, %d) map to %d/%d", i, lo, hi, HistBucket(lo), HistBucket(hi-1))
		}
		prevHi = hi
	}
	if HistBucket(^uint64(0)) != HistBuckets-1 {
		t.Error("max value")
	}
}
