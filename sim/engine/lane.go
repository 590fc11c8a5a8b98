package engine

import (
	"fmt"
	"unsafe"

	"github.com/lpictl/lpictl/sim/internal/cache"
)

// A lane is a FIFO of events that is always in (At, Seq) order: an event
// joins it only if it is not earlier than the lane's last one (its Seq is
// larger than every pending one's, so ties keep their order). A model
// gives a lane to the event kinds it schedules at one nearly constant
// delay from now — a packet's arrival one propagation delay after it
// leaves, the end of a transmission one serialisation time after it starts
// — and such events, most of a packet-level model's, then cost a
// ring-buffer append and a read instead of a sorted insertion: the lane is
// sorted by construction. One that would break the order goes to the queue instead,
// and the engine runs the earliest of the queue's and the lanes' heads, so
// the order of the run is exactly the queue's alone (see Engine.UseLane).
type lane struct {
	buf  []Event // ring, a power of two long
	head int     // index of the first event
	n    int     // events in the lane
	last int64   // At of the last event pushed
}

// grow doubles the ring, keeping the order.
func (l *lane) grow() {
	buf := make([]Event, max(256, 2*len(l.buf)))
	if l.n > 0 {
		k := copy(buf, l.buf[l.head:])
		copy(buf[k:], l.buf[:l.head])
	}
	l.buf, l.head = buf, 0
}

// prefetchAhead is how many events ahead of its head a lane is prefetched.
const prefetchAhead = 8

// maxLanes bounds the kinds that can have a lane (a power of two).
const maxLanes = 16

// laneSet is the engine's lanes: which kind has which, and the non-empty
// lanes in a small binary heap by their first events, so that the
// earliest is at hand and a pop reorders a few entries, not all lanes.
type laneSet struct {
	lanes [maxLanes]lane
	heap  [maxLanes]laneKey // the non-empty lanes, by first event
	busy  int               // non-empty lanes (entries of heap)
	used  int               // lanes given to kinds
	n     int               // events in all lanes
	of    [256]uint8        // event kind → its lane + 1 (0: none)
}

// laneKey orders a non-empty lane by its first event: its At, then its
// Seq, shifted to leave the low bits for the lane's number (Seq is
// unique, so the lane never decides).
type laneKey struct {
	at  int64
	seq uint64 // Seq << laneBits | lane
}

const (
	laneBits = 4
	// maxSeq is the last sequence number a laned event may have.
	maxSeq = 1<<(64-laneBits) - 1
)

func (k *laneKey) before(o *laneKey) bool {
	return k.at < o.at || (k.at == o.at && k.seq < o.seq)
}

func (k *laneKey) lane() int { return int(k.seq & (maxLanes - 1)) }

func keyOf(e *Event, lane int) laneKey {
	return laneKey{e.At, e.Seq<<laneBits | uint64(lane)}
}

// add gives kinds a lane.
func (s *laneSet) add(kinds []uint8) {
	if s.used == maxLanes {
		panic("engine: more than sixteen lanes")
	}
	s.used++
	for _, k := range kinds {
		if s.of[k] != 0 {
			panic(fmt.Sprintf("engine: kind %d has a lane already", k))
		}
		s.of[k] = uint8(s.used)
	}
}

// push adds ev to its kind's lane if it has one and that keeps the lane in
// order, and reports whether it did.
func (s *laneSet) push(ev *Event) bool {
	i := int(s.of[ev.Kind]) - 1
	if i < 0 {
		return false
	}
	l := &s.lanes[i&(maxLanes-1)]
	// An event past maxSeq has no room for the lane's number in its key:
	// the queue keeps it (after 2^60 events).
	if (l.n > 0 && ev.At < l.last) || ev.Seq > maxSeq {
		return false
	}
	if l.n == len(l.buf) {
		l.grow()
	}
	l.buf[(l.head+l.n)&(len(l.buf)-1)] = *ev
	l.n++
	l.last = ev.At
	s.n++
	if l.n == 1 {
		s.up(keyOf(ev, i))
	}
	return true
}

// first is the earliest first event of the lanes (nil if all are empty).
func (s *laneSet) first() *Event {
	if s.busy == 0 {
		return nil
	}
	l := &s.lanes[s.heap[0].lane()]
	return &l.buf[l.head]
}

// pop removes the earliest first event of the lanes (there must be one)
// and returns it.
func (s *laneSet) pop() Event {
	i := s.heap[0].lane()
	l := &s.lanes[i]
	ev := l.buf[l.head]
	l.head = (l.head + 1) & (len(l.buf) - 1)
	if l.head&1 == 0 {
		// The lane was written long ago: start loading its line
		// prefetchAhead events on (two events to a line).
		cache.Prefetch(uintptr(unsafe.Pointer(&l.buf[(l.head+prefetchAhead)&(len(l.buf)-1)])))
	}
	l.n--
	s.n--
	if l.n > 0 {
		s.replaceTop(keyOf(&l.buf[l.head], i))
		return ev
	}
	s.busy--
	s.replaceTop(s.heap[s.busy&(maxLanes-1)])
	return ev
}

// up adds x to the heap of lane keys.
func (s *laneSet) up(x laneKey) {
	j := s.busy
	s.busy++
	for j > 0 {
		p := (j - 1) / 2
		if !x.before(&s.heap[p&(maxLanes-1)]) {
			break
		}
		s.heap[j&(maxLanes-1)] = s.heap[p&(maxLanes-1)]
		j = p
	}
	s.heap[j&(maxLanes-1)] = x
}

// replaceTop replaces the heap's root by x: the hole goes down to a leaf
// along the earlier children, then x rises from there (a popped lane's
// next event usually belongs near the bottom, so this compares about half
// as often as sifting x down).
func (s *laneSet) replaceTop(x laneKey) {
	h, n := &s.heap, s.busy
	j := 0
	for {
		c := 2*j + 1
		if c >= n {
			break
		}
		if c+1 < n && h[(c+1)&(maxLanes-1)].before(&h[c&(maxLanes-1)]) {
			c++
		}
		h[j&(maxLanes-1)] = h[c&(maxLanes-1)]
		j = c
	}
	for j > 0 {
		p := (j - 1) / 2
		if !x.before(&h[p&(maxLanes-1)]) {
			break
		}
		h[j&(maxLanes-1)] = h[p&(maxLanes-1)]
		j = p
	}
	h[j&(maxLanes-1)] = x
}
