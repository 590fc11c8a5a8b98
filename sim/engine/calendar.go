package engine

import "math/bits"

// Calendar is a calendar queue: a ring of buckets of width 2^k ps covering
// one "year" ahead of the current bucket, a bitmap of non-empty buckets to
// skip empty ones quickly, and a 4-ary heap for events beyond the year,
// migrated into the ring as the year slides. Equal inputs give the same
// order as the heap: (At, Seq).
//
// Storage is flat, so that an insertion touches one cache line of events:
// every bucket owns a fixed run of slots in one array, kept sorted by
// (At, Seq) from the bucket's head; a small per-bucket header (head, count)
// lives in a separate dense array. An event whose bucket is full goes to a
// spill heap, and Pop takes the earlier of the ring's first event and the
// spill heap's. Spilled events are always earlier than the far heap's
// (they were inside the year when pushed; far ones were not), so the far
// heap only needs consulting when both ring and spill are empty. Runs start
// at eight slots and double (the array is re-laid out, order unchanged)
// when events keep spilling, up to maxSlotBytes for the whole array.
// Pop never reads the slots of empty buckets, so only the runs near the
// present are touched: the array's size matters little to the caches.
type Calendar struct {
	shift  uint  // bucket width = 1 << shift ps
	mask   int64 // buckets − 1
	kshift uint  // slots per bucket = 1 << kshift
	spills int   // events spilled since the runs last grew
	puts   int   // events inserted (or spilled) since then
	slots  []Event
	meta   []bucketMeta
	bitmap []uint64
	cur    int64 // index (absolute bucket number) of the current bucket
	inRing int
	spill  Heap
	far    Heap
}

type bucketMeta struct {
	head, n uint8 // live events are slots[head, head+n) of the bucket's run
}

// Default calendar geometry: 64 ps buckets, 2^16 of them (a 4.2 µs year).
const (
	DefaultBucketPS = 64
	DefaultBuckets  = 1 << 16
)

// Slot array bounds (buckets × slots per bucket × 32 B): it starts within
// initSlotBytes (with fewer than eight slots per bucket if there are very
// many buckets) and stops growing at maxSlotBytes; a run holds at most
// 1 << maxRunShift events (bucketMeta counts in a byte).
const (
	initSlotBytes = 8 << 20
	maxSlotBytes  = 64 << 20
	maxRunShift   = 7
	// The runs double once growAfter events have spilled, if that is at
	// least one in spillShare of the events put since they last grew.
	growAfter  = 1024
	spillShare = 64
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
	// Eight slots per bucket, fewer for very many buckets (the spill heap
	// takes the rest until the runs grow), within initSlotBytes.
	kshift := uint(3)
	for kshift > 0 && n<<kshift*32 > initSlotBytes {
		kshift--
	}
	return &Calendar{
		shift:  shift,
		mask:   int64(n - 1),
		kshift: kshift,
		slots:  make([]Event, n<<kshift),
		meta:   make([]bucketMeta, n),
		bitmap: make([]uint64, n/64),
		spill:  Heap{a: make([]Event, 0, 64)},
		far:    Heap{a: make([]Event, 0, 256)},
	}
}

// Len returns the number of events.
func (c *Calendar) Len() int { return c.inRing + c.spill.Len() + c.far.Len() }

// yearEnd is the first time beyond the ring's window.
func (c *Calendar) yearEnd() int64 { return (c.cur + c.mask + 1) << c.shift }

// Push adds an event (At must not precede the last popped event).
func (c *Calendar) Push(e Event) {
	abs := e.At >> c.shift
	if abs-c.cur > c.mask {
		c.far.Push(e)
		return
	}
	if abs < c.cur { // an event before the current bucket: keep order anyway
		abs = c.cur
	}
	c.insert(abs&c.mask, e)
}

func (c *Calendar) insert(i int64, e Event) {
	m := &c.meta[i]
	k := int(1) << c.kshift
	head, n := int(m.head), int(m.n)
	c.puts++
	if n == k {
		c.spill.Push(e)
		if c.spills++; c.spills >= growAfter && c.spills*spillShare >= c.puts {
			c.grow()
		}
		return
	}
	run := c.slots[int(i)<<c.kshift : int(i+1)<<c.kshift : int(i+1)<<c.kshift]
	if n == 0 {
		head = 0
		c.bitmap[i>>6] |= 1 << (uint(i) & 63)
	} else if head+n == k {
		// The current bucket refills while it drains: reuse its dead prefix.
		copy(run, run[head:head+n])
		head = 0
	}
	// Insertion sort from the end: new events are usually the latest.
	j := head + n
	for j > head && e.before(&run[j-1]) {
		run[j] = run[j-1]
		j--
	}
	run[j] = e
	m.head, m.n = uint8(head), uint8(n+1)
	c.inRing++
}

// grow doubles every bucket's run of slots, if the bounds allow.
func (c *Calendar) grow() {
	c.spills, c.puts = 0, 0
	n := len(c.meta)
	if c.kshift >= maxRunShift || n<<(c.kshift+1)*32 > maxSlotBytes {
		return
	}
	slots := make([]Event, n<<(c.kshift+1))
	for i := range c.meta {
		m := &c.meta[i]
		if m.n > 0 {
			from := i<<c.kshift + int(m.head)
			copy(slots[i<<(c.kshift+1):], c.slots[from:from+int(m.n)])
			m.head = 0
		}
	}
	c.slots = slots
	c.kshift++
}

// Pop removes and returns the first event.
func (c *Calendar) Pop() Event {
	if c.inRing == 0 {
		if c.spill.Len() > 0 {
			return c.spill.Pop()
		}
		// Jump to the far heap's first event and refill the new year.
		c.cur = c.far.Peek().At >> c.shift
		c.migrate()
		if c.inRing == 0 { // every migrated event spilled (tiny buckets)
			return c.spill.Pop()
		}
	}
	i := c.cur & c.mask
	if c.meta[i].n == 0 {
		c.advance()
		i = c.cur & c.mask
	}
	m := &c.meta[i]
	p := int(i)<<c.kshift + int(m.head)
	if c.spill.Len() > 0 && c.spill.Peek().before(&c.slots[p]) {
		return c.spill.Pop()
	}
	e := c.slots[p]
	m.head++
	m.n--
	if m.n == 0 {
		m.head = 0
		c.bitmap[i>>6] &^= 1 << (uint(i) & 63)
	}
	c.inRing--
	return e
}

// Peek returns the first event without removing it (nil if none).
func (c *Calendar) Peek() *Event { return c.peekUntil(Forever) }

// peekUntil returns the first event, or nil or an event later than t when
// the first is later than t. It moves the current bucket ahead no further
// than t's (the engine runs an event at t or earlier next, from a lane or
// from here), so that the ring keeps its window on the present: an event
// scheduled later is never before the current bucket, which would crowd
// that bucket (see Push).
func (c *Calendar) peekUntil(t int64) *Event {
	if c.inRing == 0 {
		// Bring the window to the present: to t's bucket or the first
		// pending event's, whichever is earlier.
		to := t >> c.shift
		if s := c.spill.Peek(); s != nil {
			to = min(to, s.At>>c.shift)
		}
		if f := c.far.Peek(); f != nil {
			to = min(to, f.At>>c.shift)
		} else if t == Forever && c.spill.Len() == 0 {
			return nil
		}
		if to > c.cur {
			c.cur = to
			c.migrate()
		}
		if c.inRing == 0 {
			if c.spill.Len() > 0 {
				return c.spill.Peek()
			}
			return c.far.Peek()
		}
	}
	var first *Event
	i := c.cur & c.mask
	if m := c.meta[i]; m.n > 0 {
		first = &c.slots[int(i)<<c.kshift+int(m.head)]
	} else {
		// Scan for a non-empty bucket up to t's (at most a year ahead).
		limit := min(t>>c.shift, c.cur+c.mask)
		if s := c.spill.Peek(); s != nil {
			limit = min(limit, max(c.cur, s.At>>c.shift))
		}
		abs := c.scan(limit)
		if abs < 0 {
			// None: the ring's first event is later than t (and than the
			// spill heap's first, if any).
			if limit > c.cur {
				c.cur = limit
				c.migrate()
			}
			return c.spill.Peek()
		}
		c.cur = abs
		c.migrate()
		i = abs & c.mask
		first = &c.slots[int(i)<<c.kshift+int(c.meta[i].head)]
	}
	if s := c.spill.Peek(); s != nil && s.before(first) {
		return s
	}
	return first
}

// scan returns the absolute index of the first non-empty bucket after the
// current one and up to limit (≥ cur), or −1.
func (c *Calendar) scan(limit int64) int64 {
	for abs := c.cur + 1; abs <= limit; {
		pos := abs & c.mask
		w := c.bitmap[pos>>6] >> uint(pos&63)
		if w != 0 {
			if found := abs + int64(bits.TrailingZeros64(w)); found <= limit {
				return found
			}
			return -1
		}
		abs += 64 - (pos & 63)
	}
	return -1
}

// peek guesses the next event: the head of the current bucket or of the
// next non-empty one in the same bitmap word (nil beyond that). It ignores
// the spill heap: it is a prefetch hint, not an answer.
func (c *Calendar) peek() *Event {
	i := c.cur & c.mask
	if m := c.meta[i]; m.n > 0 {
		return &c.slots[int(i)<<c.kshift+int(m.head)]
	}
	pos := (i + 1) & c.mask
	w := c.bitmap[pos>>6] >> uint(pos&63)
	if w == 0 {
		return nil
	}
	j := pos + int64(bits.TrailingZeros64(w))
	return &c.slots[int(j)<<c.kshift+int(c.meta[j].head)]
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
