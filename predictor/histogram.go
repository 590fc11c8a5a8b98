package predictor

import "time"

// bin is one populated histogram bin: idle periods of length in
// [idx·r_bin, (idx+1)·r_bin).
type bin struct {
	idx   uint32
	count uint32
}

// ringElem is one raw value kept by the circular strategy.
type ringElem struct {
	idx   uint32
	start time.Duration // start of the idle period, for the covered span X
}

// histogram is PerfBound's sparse idle-period histogram (SPEC §2.2, paper 000
// §3.2): only populated bins are stored, sorted by index, so that the bin
// search walks them from the top without allocating.
//
// Covered span (X in N = l·X/t_w): from `origin` to now, where origin is the
// start of the oldest idle period counted (unbounded, circular) or the last
// clear (clearing). A clear triggered by the h_maxN count is dated at the
// start of the idle period that triggered it, so that period is covered;
// a TTL clear is dated when the TTL timer expired (last clear + k·TTL).
type histogram struct {
	strategy Strategy
	binWidth time.Duration
	maxValue time.Duration
	ttl      time.Duration
	maxN     int

	bins    []bin
	n       int // values counted
	origin  time.Duration
	started bool // origin is set

	ring []ringElem // circular only: capacity maxN
	head int        // index of the oldest element
}

func newHistogram(c HistogramConfig) histogram {
	h := histogram{
		strategy: c.Strategy,
		binWidth: c.BinWidth.D(),
		maxValue: c.MaxValue.D(),
		ttl:      c.TTL.D(),
		maxN:     c.MaxRecords,
	}
	if h.strategy == Circular {
		h.ring = make([]ringElem, 0, h.maxN)
	}
	return h
}

// binOf clamps v to h_maxval and returns its bin index.
func (h *histogram) binOf(v time.Duration) uint32 {
	if v > h.maxValue {
		v = h.maxValue
	}
	if v < 0 {
		v = 0
	}
	return uint32(v / h.binWidth)
}

// maintain applies the TTL of the clearing strategy up to now.
func (h *histogram) maintain(now time.Duration) {
	if h.strategy != Clearing || !h.started || now-h.origin < h.ttl {
		return
	}
	h.origin += (now - h.origin) / h.ttl * h.ttl
	h.clear()
}

func (h *histogram) clear() {
	h.bins = h.bins[:0]
	h.n = 0
}

// add counts an idle period of length v that started at start and ended at end.
func (h *histogram) add(v, start, end time.Duration) {
	if !h.started {
		h.origin, h.started = start, true
	}
	idx := h.binOf(v)
	switch h.strategy {
	case Clearing:
		h.maintain(end)
		if h.n >= h.maxN {
			h.origin = start
			h.clear()
		}
	case Circular:
		if len(h.ring) == h.maxN {
			old := h.ring[h.head]
			h.decrement(old.idx)
			h.ring[h.head] = ringElem{idx: idx, start: start}
			h.head++
			if h.head == h.maxN {
				h.head = 0
			}
		} else {
			h.ring = append(h.ring, ringElem{idx: idx, start: start})
		}
		h.origin = h.ring[h.head].start
	}
	h.increment(idx)
}

// find returns the position of idx in bins, or where it would be inserted.
func (h *histogram) find(idx uint32) int {
	lo, hi := 0, len(h.bins)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if h.bins[mid].idx < idx {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

func (h *histogram) increment(idx uint32) {
	h.n++
	i := h.find(idx)
	if i < len(h.bins) && h.bins[i].idx == idx {
		h.bins[i].count++
		return
	}
	h.bins = append(h.bins, bin{})
	copy(h.bins[i+1:], h.bins[i:])
	h.bins[i] = bin{idx: idx, count: 1}
}

func (h *histogram) decrement(idx uint32) {
	i := h.find(idx)
	if i == len(h.bins) || h.bins[i].idx != idx {
		return // cannot happen: every ring element was counted
	}
	h.n--
	h.bins[i].count--
	if h.bins[i].count == 0 {
		h.bins = append(h.bins[:i], h.bins[i+1:]...)
	}
}

// search is the PerfBound bin search (SPEC §2.2 step 3). Walking the
// populated bins from the highest down and accumulating their counts, it
// picks the lowest populated bin whose accumulated count is still ≤ budget
// and answers that bin's middle. Reading: "bins" are the populated bins
// (the map-like structure of paper 000 §3.2 stores only those); empty bins
// between two populated ones are not candidates. If the highest populated
// bin alone exceeds the budget, the answer is its upper edge, so that no
// observed gap would have caused a wake-up. The histogram must not be empty.
func (h *histogram) search(budget float64) time.Duration {
	// Counts are integers, so "accumulated ≤ N" is "accumulated ≤ ⌊N⌋".
	total := uint64(h.n)
	if budget >= float64(total) {
		return h.middle(0) // every record fits: the lowest populated bin
	}
	limit := uint64(budget)
	chosen := -1
	if limit >= total/2 {
		// Walk up from the lowest bin: the accumulated count from bin i
		// upwards is total − below(i); find the first i where it is ≤ limit.
		var below uint64
		for i := range h.bins {
			if total-below <= limit {
				chosen = i
				break
			}
			below += uint64(h.bins[i].count)
		}
	} else {
		var cum uint64
		for i := len(h.bins) - 1; i >= 0; i-- {
			cum += uint64(h.bins[i].count)
			if cum > limit {
				break
			}
			chosen = i
		}
	}
	if chosen < 0 {
		top := h.bins[len(h.bins)-1].idx
		return time.Duration(top+1) * h.binWidth
	}
	return h.middle(chosen)
}

func (h *histogram) middle(i int) time.Duration {
	return time.Duration(h.bins[i].idx)*h.binWidth + h.binWidth/2
}

// covered is X: the span the counted records cover at now.
func (h *histogram) covered(now time.Duration) time.Duration {
	if x := now - h.origin; x > 0 {
		return x
	}
	return 0
}
