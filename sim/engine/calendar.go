package engine

import "math/bits"

// Calendar is a calendar queue: a ring of buckets of width 2^k ps covering
// one "year" ahead of the current bucket, each bucket a slice kept sorted by
// (At, Seq), a bitmap of non-empty buckets to skip empty ones quickly, and a
// 4-ary heap for events beyond the year, migrated into the ring as the year
// slides. Equal inputs give the same order as the heap: (At, Seq).
type Calendar struct {
	shift   uint  // bucket width = 1 << shift ps
	mask    int64 // buckets − 1
	buckets []bucket
	bitmap  []uint64
	cur     int64 // index (absolute bucket number) of the current bucket
	inRing  int
	far     Heap
}

type bucket struct {
	ev   []Event
	head int
}

// Default calendar geometry: 64 ps buckets, 2^16 of them (a 4.2 µs year).
const (
	DefaultBucketPS = 64
	DefaultBuckets  = 1 << 16
)

// NewCalendar returns a calendar with buckets of about bucketPS picoseconds
// (rounded up to a power of two) and the given number of buckets (rounded
// up to a power of two, at least 64). Zero values take the defaults.
func NewCalendar(bucketPS int64, buckets int) *Calendar {
	if bucketPS <= 0 {
		bucketPS = DefaultBucketPS
	}
	if buckets <= 0 {
		buckets = DefaultBuckets
	}
	shift := uint(bits.Len64(uint64(bucketPS - 1)))
	n := 64
	for n < buckets {
		n *= 2
	}
	return &Calendar{
		shift:   shift,
		mask:    int64(n - 1),
		buckets: make([]bucket, n),
		bitmap:  make([]uint64, n/64),
		far:     Heap{a: make([]Event, 0, 256)},
	}
}

// Len returns the number of events.
func (c *Calendar) Len() int { return c.inRing + c.far.Len() }

// yearEnd is the first time beyond the ring's window.
func (c *Calendar) yearEnd() int64 { return (c.cur + c.mask + 1) << c.shift }

// Push adds an event (At must not precede the last popped event).
func (c *Calendar) Push(e Event) {
	abs := e.At >> c.shift
	if abs-c.cur > c.mask {
		c.far.Push(e)
		return
	}
	if abs < c.cur { // cannot happen for At ≥ now; keep order anyway
		abs = c.cur
	}
	c.insert(abs&c.mask, e)
}

func (c *Calendar) insert(i int64, e Event) {
	b := &c.buckets[i]
	if len(b.ev) == b.head {
		b.ev = b.ev[:0]
		b.head = 0
		c.bitmap[i>>6] |= 1 << (uint(i) & 63)
	} else if len(b.ev) == cap(b.ev) && b.head > 0 {
		// The current bucket refills while it drains: reuse its dead prefix.
		n := copy(b.ev, b.ev[b.head:])
		b.ev = b.ev[:n]
		b.head = 0
	}
	b.ev = append(b.ev, e)
	// Insertion sort from the end: new events are usually the latest.
	j := len(b.ev) - 1
	for j > b.head && e.before(&b.ev[j-1]) {
		b.ev[j] = b.ev[j-1]
		j--
	}
	b.ev[j] = e
	c.inRing++
}

// Pop removes and returns the first event.
func (c *Calendar) Pop() Event {
	if c.inRing == 0 {
		// Jump to the far heap's first event and refill the new year.
		c.cur = c.far.Peek().At >> c.shift
		c.migrate()
	}
	i := c.cur & c.mask
	if c.buckets[i].head == len(c.buckets[i].ev) {
		c.advance()
		i = c.cur & c.mask
	}
	b := &c.buckets[i]
	e := b.ev[b.head]
	b.head++
	if b.head == len(b.ev) {
		b.ev = b.ev[:0]
		b.head = 0
		c.bitmap[i>>6] &^= 1 << (uint(i) & 63)
	}
	c.inRing--
	return e
}

// advance moves cur to the next non-empty bucket (there is one: inRing > 0)
// and migrates far events that the slid window now covers.
func (c *Calendar) advance() {
	n := c.mask + 1
	i := c.cur & c.mask
	// Search the bitmap from i+1, wrapping around.
	pos := (i + 1) & c.mask
	w := pos >> 6
	var found int64 = -1
	if m := c.bitmap[w] >> uint(pos&63) << uint(pos&63); m != 0 {
		found = w<<6 + int64(bits.TrailingZeros64(m))
	} else {
		words := int64(len(c.bitmap))
		for k := int64(1); k <= words; k++ {
			ww := (w + k) % words
			if m := c.bitmap[ww]; m != 0 {
				found = ww<<6 + int64(bits.TrailingZeros64(m))
				break
			}
		}
	}
	step := (found - i + n) & c.mask
	if step == 0 {
		step = n
	}
	c.cur += step
	c.migrate()
}

// migrate moves far events inside the current year into the ring.
func (c *Calendar) migrate() {
	end := c.yearEnd()
	for c.far.Len() > 0 && c.far.Peek().At < end {
		e := c.far.Pop()
		c.insert((e.At>>c.shift)&c.mask, e)
	}
}
