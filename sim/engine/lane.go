package engine

import (
	"fmt"
	"math"
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

// laneSet is the engine's lanes: which kind has which, and a winner tree
// over the lanes' first events, so that the earliest is at hand and a
// change of one lane's first event replays a fixed few matches (log2 of
// the lanes), with no data-dependent loop to mispredict.
type laneSet struct {
	lanes [maxLanes]lane
	key   [maxLanes]laneKey   // each lane's first event (noKey if empty)
	win   [2 * maxLanes]uint8 // win[1] wins; win[j] the winner below node j; leaves from size
	size  int                 // leaves: a power of two ≥ used
	used  int                 // lanes given to kinds
	n     int                 // events in all lanes
	of    [256]uint8          // event kind → its lane + 1 (0: none)
}

// laneKey orders lanes by their first events: At, then Seq.
type laneKey struct {
	at  int64
	seq uint64
}

// noKey is an empty lane's key: after any event's.
var noKey = laneKey{math.MaxInt64, math.MaxUint64}

func (k *laneKey) before(o *laneKey) bool {
	if k.at != o.at {
		return k.at < o.at
	}
	return k.seq < o.seq
}

// add gives kinds a lane.
func (s *laneSet) add(kinds []uint8) {
	if s.used == maxLanes {
		panic("engine: more than sixteen lanes")
	}
	for _, k := range kinds {
		if s.of[k] != 0 {
			panic(fmt.Sprintf("engine: kind %d has a lane already", k))
		}
		s.of[k] = uint8(s.used + 1)
	}
	s.key[s.used] = noKey
	s.used++
	// Rebuild the tree for the new number of leaves.
	s.size = 1
	for s.size < s.used {
		s.size *= 2
	}
	for i := 0; i < s.size; i++ {
		s.key[i] = noKey
		s.win[s.size+i] = uint8(i)
	}
	for j := s.size - 1; j >= 1; j-- {
		s.win[j] = s.win[2*j]
	}
}

// replay updates the matches above lane i's leaf after its key changed.
func (s *laneSet) replay(i int) {
	for j := (s.size + i) >> 1; j >= 1; j >>= 1 {
		a, b := s.win[(2*j)&(2*maxLanes-1)], s.win[(2*j+1)&(2*maxLanes-1)]
		w := a
		if s.key[b&(maxLanes-1)].before(&s.key[a&(maxLanes-1)]) {
			w = b
		}
		s.win[j&(2*maxLanes-1)] = w
	}
}

// push adds the event to its kind's lane if it has one and that keeps the
// lane in order, and reports whether it did.
func (s *laneSet) push(at int64, seq uint64, kind uint8, obj, arg, aux int32) bool {
	i := int(s.of[kind]) - 1
	if i < 0 {
		return false
	}
	l := &s.lanes[i&(maxLanes-1)]
	if l.n > 0 && at < l.last {
		return false
	}
	if l.n == len(l.buf) {
		l.grow()
	}
	p := &l.buf[(l.head+l.n)&(len(l.buf)-1)]
	p.At, p.Seq, p.Obj, p.Arg, p.Aux, p.Kind = at, seq, obj, arg, aux, kind
	l.n++
	l.last = at
	s.n++
	if l.n == 1 {
		s.key[i&(maxLanes-1)] = laneKey{at, seq}
		s.replay(i)
	}
	return true
}

// first is the earliest first event of the lanes (nil if all are empty).
func (s *laneSet) first() *Event {
	if s.n == 0 {
		return nil
	}
	l := &s.lanes[s.win[1]&(maxLanes-1)]
	return &l.buf[l.head]
}

// pop removes the earliest first event of the lanes (there must be one)
// and returns it.
func (s *laneSet) pop() Event {
	i := int(s.win[1] & (maxLanes - 1))
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
		h := &l.buf[l.head]
		s.key[i] = laneKey{h.At, h.Seq}
	} else {
		s.key[i] = noKey
	}
	s.replay(i)
	return ev
}
