package observe

// gapRing holds gap samples until drained: a fixed-size FIFO that refuses
// (rather than overwrites) when full, so a slow reader loses the newest
// samples and counts them. Callers serialise access.
type gapRing struct {
	buf  []GapSample
	head int // next to drain
	size int // pending samples
}

func newGapRing(n int) gapRing { return gapRing{buf: make([]GapSample, n)} }

// push appends g; false if the ring is full (or has no room at all).
func (r *gapRing) push(g GapSample) bool {
	if r.size >= len(r.buf) {
		return false
	}
	r.buf[(r.head+r.size)%len(r.buf)] = g
	r.size++
	return true
}

// drain moves pending samples into dst, oldest first, and returns how many.
func (r *gapRing) drain(dst []GapSample) int {
	n := 0
	for n < len(dst) && r.size > 0 {
		dst[n] = r.buf[r.head]
		r.head = (r.head + 1) % len(r.buf)
		r.size--
		n++
	}
	return n
}
