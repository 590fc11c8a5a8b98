package network

import "math/bits"

// logHist is a log-linear histogram of non-negative int64 values (ps):
// 2^subBits sub-buckets per power of two, so a bucket's width is at most
// 1/64 of its lower bound. It keeps per-bucket counts and value sums, the
// sums exact (integers): a float sum would depend on the order of the
// values beyond 2^53 ps, and a parallel run adds its partitions' sums.
type logHist struct {
	counts []uint64
	sums   []uint128
	n      uint64
	sum    uint128
	min    int64
	max    int64
}

const subBits = 6

func newLogHist() *logHist {
	n := (64 - subBits + 1) << subBits
	return &logHist{counts: make([]uint64, n), sums: make([]uint128, n)}
}

func bucketOf(v int64) int {
	if v < 1<<subBits {
		return int(v)
	}
	e := bits.Len64(uint64(v)) - subBits // ≥ 1
	return e<<subBits | int(uint64(v)>>uint(e-1)&(1<<subBits-1))
}

// bucketLow is the smallest value of bucket b.
func bucketLow(b int) int64 {
	e := b >> subBits
	if e == 0 {
		return int64(b)
	}
	m := int64(b&(1<<subBits-1)) | 1<<subBits
	return m << uint(e-1)
}

func (h *logHist) add(v int64) {
	if v < 0 {
		v = 0
	}
	b := bucketOf(v)
	h.counts[b]++
	h.sums[b].add(uint64(v))
	h.n++
	h.sum.add(uint64(v))
	if v > h.max {
		h.max = v
	}
	if v < h.min || h.n == 1 {
		h.min = v
	}
}

// quantile returns the lower bound of the bucket holding the q-quantile,
// clamped to the maximum.
func (h *logHist) quantile(q float64) int64 {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q*float64(h.n-1)) + 1
	var acc uint64
	for b, c := range h.counts {
		acc += c
		if acc >= rank {
			return min(bucketLow(b), h.max)
		}
	}
	return h.max
}

func (h *logHist) merge(o *logHist) {
	for i := range h.counts {
		h.counts[i] += o.counts[i]
		h.sums[i].add128(o.sums[i])
	}
	if o.n > 0 && (h.n == 0 || o.min < h.min) {
		h.min = o.min
	}
	h.n += o.n
	h.sum.add128(o.sum)
	h.max = max(h.max, o.max)
}
