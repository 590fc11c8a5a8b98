package predictor

import (
	"time"
	"unsafe"
)

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

// histogram is PerfBound's sparse idle-period histogram (docs/model.md §2.2, paper 000
// §3.2): only populated bins are stored, sorted by index, so that the bin
// search walks them from the top without allocating.
//
// Covered span (X in N = l·X/t_w): from `origin` to now, where origin is the
// start of the oldest idle period counted (unbounded, circular) or the start
// of the oldest window counted (clearing). A window ends when h_maxN values
// have been recorded in it, at the start of the idle period that brings the
// next value, so that period is in the new window; or when the TTL timer
// expires (window start + k·TTL).
//
// Clearing keeps two windows (docs/predictors.md "Histograms"): bins counts
// the previous full window and the current one, prev the previous window
// alone. A histogram that answered from its current window only would start
// every window nearly empty, with a budget below one wake-up, and answer
// "upper edge of the highest populated bin" — a miss for every new running
// maximum, systematically over the bound on heavy-tailed gaps. With the
// previous window kept, the search always sees between h_maxN and 2·h_maxN
// records (after the first window) over the span they cover.
type histogram struct {
	binWidth time.Duration
	maxValue time.Duration
	ttl      time.Duration
	// h_maxN ≤ 2^24 (Config.Validate), and head, the index of the ring's
	// oldest element (circular only), is below it.
	maxN      int32
	head      int32
	maxIdx    uint32 // the clamp bin, h_maxval's: the highest bin there is
	started   bool   // origin is set
	single    bool   // histogram.windows 1: a clear forgets the previous window too
	searchAll bool   // the bin search's reading is SearchAll (else SearchPopulated)
	strategy  histStrategy

	bins   []bin
	n      int // values counted
	origin time.Duration

	// Clearing only: the previous window's bins and count (bins includes
	// them), and the start of the current window.
	prev     []bin
	prevN    int
	winStart time.Duration

	ring []ringElem // circular only: capacity maxN, oldest at head
}

// inline is the storage a histogram's bins start in (PerfBound.binStore),
// passed to the methods that read or change the bins (nil for a
// histogram kept apart, which has none). Once the bins outgrow it, its
// first half holds a copy of their highest ones (topBins), its second half
// their directory (binDir). A parameter, not a field: the predictor is a
// whole number of cache lines (network.ctlSlot), with no room for one.
type inline = *[inlineBins]bin

// What the inline storage holds once the bins have outgrown it, so that a
// decision and the count of an idle period read the predictor's own cache
// lines (loaded with it) and at most one line of the spilled bins, which
// are cold when an idle period ends. Without them, on a LAMMPS port (63
// populated bins at the median, out of line) the bin search's first read
// and the binary search of a count, a miss at each of its first steps,
// took 14 % of the run.
const (
	topCopy   = inlineBins / 2                                         // the highest bins, copied
	dirStride = 8                                                      // bins per directory group: one cache line
	dirGroups = (inlineBins - topCopy) * int(unsafe.Sizeof(bin{})) / 4 // uint32 entries in the second half
)

// binDir is the directory of the spilled bins: entry g is the index
// (bin.idx) of bins[g·dirStride], for the groups the bins fill, up to
// dirGroups groups (the last group also holds every bin past them).
type binDir [dirGroups]uint32

// spilled reports whether the bins have outgrown their inline storage.
func (h *histogram) spilled(in inline) bool {
	return in != nil && cap(h.bins) > 0 && unsafe.SliceData(h.bins) != &in[0]
}

// topBins returns the highest bins, those the bin search walks first: a
// copy of the last topCopy of them (or all) once the bins are spilled, so
// that the search for a small budget, the usual one, reads none of the
// bins; else the bins themselves.
func (h *histogram) topBins(in inline) []bin {
	if !h.spilled(in) {
		return h.bins
	}
	return in[:min(len(h.bins), topCopy)]
}

// dir returns the directory of the spilled bins (nil if not spilled).
func (h *histogram) dir(in inline) *binDir {
	if !h.spilled(in) {
		return nil
	}
	return (*binDir)(unsafe.Pointer(&in[topCopy]))
}

// moved rewrites the copy of the highest bins and the directory from bin
// i's group on, after the bins from i moved (a bin inserted or removed at
// i; i = 0: all of them).
func (h *histogram) moved(in inline, i int) {
	d := h.dir(in)
	if d == nil {
		return
	}
	m := min(len(h.bins), topCopy)
	copy(in[:m], h.bins[len(h.bins)-m:])
	for g := i / dirStride; g < dirGroups && g*dirStride < len(h.bins); g++ {
		d[g] = h.bins[g*dirStride].idx
	}
}

// recount sets the copy of bin i's count, if the copy has bin i.
func (h *histogram) recount(in inline, i int) {
	if h.spilled(in) {
		if j := i - (len(h.bins) - min(len(h.bins), topCopy)); j >= 0 {
			in[j].count = h.bins[i].count
		}
	}
}

// histStrategy is a histogram's Strategy, in a byte beside its flags.
type histStrategy uint8

const (
	unbounded histStrategy = iota
	clearing
	circular
)

func strategyOf(s Strategy) histStrategy {
	switch s {
	case Clearing:
		return clearing
	case Circular:
		return circular
	}
	return unbounded
}

func newHistogram(c HistogramConfig) histogram {
	h := histogram{
		strategy:  strategyOf(c.Strategy),
		searchAll: c.Search == SearchAll,
		binWidth:  c.BinWidth.D(),
		maxValue:  c.MaxValue.D(),
		ttl:       c.TTL.D(),
		maxN:      int32(c.MaxRecords),
		single:    c.Windows == 1,
	}
	h.maxIdx = h.binOf(h.maxValue)
	if h.strategy == circular {
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

// maintain applies the TTL of the clearing strategy up to now: the window
// that expired becomes the previous one; if a whole TTL has passed since,
// with no value, the previous window is the empty one that followed it.
func (h *histogram) maintain(now time.Duration, in inline) {
	if h.strategy != clearing || !h.started || now-h.winStart < h.ttl {
		return
	}
	k := (now - h.winStart) / h.ttl
	h.rotate(h.winStart+h.ttl, in)
	if k > 1 {
		h.rotate(h.winStart+(k-1)*h.ttl, in)
	}
}

// rotate ends the current window at start: it becomes the previous window
// (the one before it is forgotten), and a new, empty window begins.
func (h *histogram) rotate(start time.Duration, in inline) {
	// bins −= prev, in place: prev's bins are all in bins.
	out, j := 0, 0
	for _, b := range h.bins {
		if j < len(h.prev) && h.prev[j].idx == b.idx {
			b.count -= h.prev[j].count
			j++
		}
		if b.count != 0 {
			h.bins[out] = b
			out++
		}
	}
	h.bins = h.bins[:out]
	h.n -= h.prevN
	h.prev = append(h.prev[:0], h.bins...)
	h.prevN = h.n
	h.origin = h.winStart
	if h.single { // the papers' clear: nothing is kept
		h.bins, h.prev, h.n, h.prevN = h.bins[:0], h.prev[:0], 0, 0
	}
	h.moved(in, 0)
	if h.n == 0 {
		h.origin = start // nothing counted: the span starts with the new window
	}
	h.winStart = start
}

// add counts an idle period of length v that started at start and ended at end.
func (h *histogram) add(v, start, end time.Duration, in inline) {
	if !h.started {
		h.origin, h.winStart, h.started = start, start, true
	}
	idx := h.binOf(v)
	switch h.strategy {
	case clearing:
		h.maintain(end, in)
		if h.n-h.prevN >= int(h.maxN) {
			h.rotate(start, in)
		}
	case circular:
		if len(h.ring) == int(h.maxN) {
			old := h.ring[h.head]
			h.decrement(old.idx, in)
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
	h.increment(idx, in)
}

// group returns the bins [lo, hi) that hold idx's place, through the
// directory d: the last group whose first bin is at most idx (the next
// group starts above idx), or none (lo = hi = 0) before every group.
func (h *histogram) group(idx uint32, d *binDir) (lo, hi int) {
	groups := min((len(h.bins)+dirStride-1)/dirStride, dirGroups)
	glo, ghi := 0, groups
	for glo < ghi {
		mid := int(uint(glo+ghi) >> 1)
		if d[mid] <= idx {
			glo = mid + 1
		} else {
			ghi = mid
		}
	}
	if glo == 0 {
		return 0, 0
	}
	lo, hi = (glo-1)*dirStride, len(h.bins)
	if glo < dirGroups {
		hi = min(lo+dirStride, hi)
	}
	return lo, hi
}

// binAddr is the address of the spilled bins where a value of bin idx is
// counted (0 while the bins are inline): for a prefetch.
func (h *histogram) binAddr(idx uint32, in inline) uintptr {
	if d := h.dir(in); d != nil {
		if lo, _ := h.group(idx, d); lo < len(h.bins) {
			return uintptr(unsafe.Pointer(&h.bins[lo]))
		}
	}
	return 0
}

// find returns the position of idx in bins, or where it would be inserted.
func (h *histogram) find(idx uint32, in inline) int {
	lo, hi := 0, len(h.bins)
	if d := h.dir(in); d != nil {
		if lo, hi = h.group(idx, d); hi == 0 {
			return 0
		}
	}
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

func (h *histogram) increment(idx uint32, in inline) {
	h.n++
	i := h.find(idx, in)
	if i < len(h.bins) && h.bins[i].idx == idx {
		h.bins[i].count++
		h.recount(in, i)
		return
	}
	fresh := !h.spilled(in)
	h.bins = append(h.bins, bin{})
	copy(h.bins[i+1:], h.bins[i:])
	h.bins[i] = bin{idx: idx, count: 1}
	if fresh {
		i = 0 // spilled only now, maybe: all of it
	}
	h.moved(in, i)
}

func (h *histogram) decrement(idx uint32, in inline) {
	i := h.find(idx, in)
	if i == len(h.bins) || h.bins[i].idx != idx {
		return // cannot happen: every ring element was counted
	}
	h.n--
	h.bins[i].count--
	if h.bins[i].count == 0 {
		h.bins = append(h.bins[:i], h.bins[i+1:]...)
		h.moved(in, i)
	} else {
		h.recount(in, i)
	}
}

// search is the PerfBound bin search (docs/model.md §2.2 step 3). Walking the bins
// from the highest down and accumulating their counts, it picks the lowest
// bin whose accumulated count is still ≤ budget and answers that bin's
// middle. Which bins are candidates is the reading, h.searchAll
// (docs/model.md §2.5 names both readings; docs/predictors.md "Bin
// search"):
//
//   - SearchPopulated: the populated bins only (the map-like structure of
//     paper 000 §3.2 stores only those); empty bins between two populated
//     ones are not candidates.
//   - SearchAll: every bin from 0 up. The accumulated count is constant
//     from a populated bin down to the one above the next populated bin,
//     so the answer is the bin just above the highest populated bin that
//     overflows the budget (often empty), or bin 0 when every record fits.
//     Exactly periodic gaps sit on their bin's lower edge, below its
//     middle: the populated reading's answer keeps them all hits, this one
//     lets them sleep.
//
// In both, if the highest populated bin alone exceeds the budget the answer
// is its upper edge (docs/model.md §2.2), so that no observed gap would have caused
// a wake-up. The histogram must not be empty.
func (h *histogram) search(budget float64, in inline) time.Duration {
	// Counts are integers, so "accumulated ≤ N" is "accumulated ≤ ⌊N⌋".
	total := uint64(h.n)
	if budget >= float64(total) {
		if h.searchAll {
			return h.binWidth / 2 // every record fits: bin 0
		}
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
		// Walk down from the highest bin, through their copy first
		// (topBins); for a budget of a few records the walk ends there.
		top := h.topBins(in)
		base := len(h.bins) - len(top)
		var cum uint64
		for j := len(top) - 1; j >= 0; j-- {
			cum += uint64(top[j].count)
			if cum > limit {
				// Bin base+j overflows: the answer is the bin above it.
				if j == len(top)-1 {
					return time.Duration(top[j].idx+1) * h.binWidth
				}
				if h.searchAll {
					return h.middleOf(top[j].idx + 1)
				}
				return h.middleOf(top[j+1].idx)
			}
		}
		chosen = base
		for i := base - 1; i >= 0; i-- {
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
	if h.searchAll {
		// total > limit, so chosen > 0 and bin chosen−1 overflows.
		return h.middleOf(h.bins[chosen-1].idx + 1)
	}
	return h.middle(chosen)
}

func (h *histogram) middle(i int) time.Duration { return h.middleOf(h.bins[i].idx) }

// middleOf is the middle of bin idx, populated or not.
func (h *histogram) middleOf(idx uint32) time.Duration {
	return time.Duration(idx)*h.binWidth + h.binWidth/2
}

// storedBins is the populated bins the strategy stores: with clearing, the
// previous window's plus the current window's (bins is their sum).
func (h *histogram) storedBins() int {
	if h.strategy != clearing {
		return len(h.bins)
	}
	n, j := len(h.prev), 0
	for _, b := range h.bins {
		if j < len(h.prev) && h.prev[j].idx == b.idx {
			if b.count != h.prev[j].count {
				n++ // also in the current window
			}
			j++
			continue
		}
		n++
	}
	return n
}

// covered is X: the span the counted records cover at now.
func (h *histogram) covered(now time.Duration) time.Duration {
	if x := now - h.origin; x > 0 {
		return x
	}
	return 0
}
