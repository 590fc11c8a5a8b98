package engine

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/lpictl/lpictl/sim/internal/cache"
)

// A lane is a FIFO of events that is always in (At, Seq) order: an event
// joins it only if it comes after the lane's last one in that order (a
// later At, or the same At and a larger key), or if it has the last one's
// At and its place among the last events of that At is in the lane's
// tail chunk (a short insertion, see insertTie). A model
// gives a lane to the event kinds it schedules at one nearly constant
// delay from now — a packet's arrival one propagation delay after it
// leaves, the end of a transmission one serialisation time after it starts
// — and such events, most of a packet-level model's, then cost an append
// and a read instead of a sorted insertion: the lane is sorted by
// construction. One that would break the order goes to the queue instead,
// and the engine runs the earliest of the queue's and the lanes' heads, so
// the order of the run is exactly the queue's alone (see Engine.UseLane).
type lane struct {
	head, tail *laneChunk // the chunk read from and the chunk written to
	hi, ti     int        // next event to read in head, to write in tail
	n          int        // events in the lane
	last       int64      // At of the last event pushed
	lastSeq    uint64     // and its key
}

// A laneChunk holds a run of a lane's events. Chunks a lane has read are
// reused last-freed-first, so a lane writes into memory it has just read,
// still in the cache, instead of into a ring's slot last touched a whole
// ring ago.
type laneChunk struct {
	ev   [chunkEvents]Event
	next *laneChunk
}

// chunkEvents is a chunk's size: 4 KiB of events.
const chunkEvents = 128

// prefetchAhead is how many events ahead of its head a lane is prefetched
// (written long ago, it is no longer in the cache).
const prefetchAhead = 8

// maxLanes bounds the kinds that can have a lane (a power of two).
const maxLanes = 16

// laneSet is the engine's lanes: which kind has which, and a loser tree
// over the lanes' first events, so that the earliest is at hand. When the
// winning lane's first event is run, its next one replays the matches on
// its path, a fixed few (log2 of the lanes), with no data-dependent loop
// to mispredict; the winner travels in a register and each match loads
// only the loser stored at its node (a winner tree would load both
// players, each from the match below: a chain of dependent loads). A lane
// whose first event gets earlier without winning (an empty lane's first
// event, a tie inserted at its head: rare) rebuilds the tree.
type laneSet struct {
	lanes [maxLanes]lane
	key   [maxLanes]laneKey // each lane's first event (noKey if empty)
	loser [maxLanes]uint8   // loser[j]: the loser of node j's match (nodes 1 to size − 1; leaves from size)
	top   uint8             // the winner: the lane with the earliest first event
	size  int               // leaves: a power of two ≥ used
	moved bool              // set when a lane's first event gets earlier (rebuild; the engine clears it)
	used  int               // lanes given to kinds
	n     int               // events in all lanes
	of    [256]uint8        // event kind → its lane + 1 (0: none)
	free  *laneChunk        // chunks read, last freed first
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
	if s.n > 0 {
		panic("engine: lanes must be set before events are scheduled")
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
	}
	s.rebuild()
}

// rebuild replays every match, after a lane's first event got earlier.
//
//go:noinline
func (s *laneSet) rebuild() {
	var win [2 * maxLanes]uint8 // win[j]: the winner of node j; leaves from size
	for i := 0; i < s.size; i++ {
		win[s.size+i] = uint8(i)
	}
	for j := s.size - 1; j >= 1; j-- {
		a, b := win[2*j], win[2*j+1]
		if s.key[b&(maxLanes-1)].before(&s.key[a&(maxLanes-1)]) {
			a, b = b, a
		}
		win[j], s.loser[j&(maxLanes-1)] = a, b
	}
	s.top = win[1]
	s.moved = true
}

// push adds the event to its kind's lane if it has one and that keeps the
// lane in order, and reports whether it did.
func (s *laneSet) push(at int64, seq uint64, kind uint8, obj, arg, aux int32) bool {
	i := int(s.of[kind]) - 1
	if i < 0 {
		return false
	}
	l := &s.lanes[i&(maxLanes-1)]
	if l.n > 0 && at <= l.last {
		if at < l.last {
			return false
		}
		if seq < l.lastSeq {
			return s.insertTie(i, at, seq, kind, obj, arg, aux)
		}
	}
	if l.tail == nil || l.ti == chunkEvents {
		c := s.chunk()
		if l.tail == nil {
			l.head, l.hi = c, 0
		} else {
			l.tail.next = c
		}
		l.tail, l.ti = c, 0
	}
	p := &l.tail.ev[l.ti&(chunkEvents-1)]
	p.At, p.Seq, p.Obj, p.Arg, p.Aux, p.Kind = at, seq, obj, arg, aux, kind
	l.ti++
	l.n++
	l.last, l.lastSeq = at, seq
	s.n++
	if l.n == 1 {
		s.key[i&(maxLanes-1)] = laneKey{at, seq}
		s.rebuild()
	}
	return true
}

// insertTie inserts an event of the same time as lane i's last and a
// smaller key among the lane's last events of that time, if they are all
// in its tail chunk and the chunk has room, and reports whether it did
// (if not, the event goes to the queue). Events of the same picosecond
// from several objects, scheduled by a common cause at one delay, come
// with their keys in any order.
func (s *laneSet) insertTie(i int, at int64, seq uint64, kind uint8, obj, arg, aux int32) bool {
	l := &s.lanes[i&(maxLanes-1)]
	if l.ti == chunkEvents {
		return false
	}
	lo := 0
	if l.head == l.tail {
		lo = l.hi
	}
	ev := &l.tail.ev
	j := l.ti
	for j > lo && ev[(j-1)&(chunkEvents-1)].At == at && ev[(j-1)&(chunkEvents-1)].Seq > seq {
		j--
	}
	if j == 0 && l.head != l.tail {
		return false // the run of that time may go on in an earlier chunk
	}
	copy(ev[j+1:l.ti+1], ev[j:l.ti])
	p := &ev[j&(chunkEvents-1)]
	p.At, p.Seq, p.Obj, p.Arg, p.Aux, p.Kind = at, seq, obj, arg, aux, kind
	l.ti++
	l.n++
	s.n++
	if j == lo && l.head == l.tail {
		// A new first event.
		s.key[i&(maxLanes-1)] = laneKey{at, seq}
		s.rebuild()
	}
	return true
}

// chunk returns a chunk for writing: the last one freed, or a new one.
func (s *laneSet) chunk() *laneChunk {
	c := s.free
	if c == nil {
		return new(laneChunk)
	}
	s.free, c.next = c.next, nil
	return c
}

// first is the earliest first event of the lanes (nil if all are empty).
func (s *laneSet) first() *Event {
	if s.n == 0 {
		return nil
	}
	l := &s.lanes[s.top&(maxLanes-1)]
	return &l.head.ev[l.hi&(chunkEvents-1)]
}

// pop removes the earliest first event of the lanes (there must be one)
// and returns it.
func (s *laneSet) pop() Event {
	ev := *s.first()
	s.drop()
	return ev
}

// drop removes the earliest first event of the lanes (there must be one;
// the engine has copied it from first).
func (s *laneSet) drop() {
	i := int(s.top & (maxLanes - 1))
	l := &s.lanes[i]
	c := l.head
	l.hi++
	l.n--
	s.n--
	if l.hi&1 == 0 {
		if j := l.hi + prefetchAhead; j < chunkEvents {
			cache.Prefetch(uintptr(unsafe.Pointer(&c.ev[j&(chunkEvents-1)])))
		} else if c.next != nil {
			cache.Prefetch(uintptr(unsafe.Pointer(&c.next.ev[(j-chunkEvents)&(chunkEvents-1)])))
		}
	}
	if l.hi == chunkEvents {
		// The chunk is read: free it, unless it is also the one written.
		if c == l.tail {
			l.hi, l.ti = 0, 0
		} else {
			l.head, l.hi = c.next, 0
			c.next, s.free = s.free, c
		}
	}
	at, seq := noKey.at, noKey.seq
	if l.n > 0 {
		h := &l.head.ev[l.hi&(chunkEvents-1)]
		at, seq = h.At, h.Seq
	}
	s.key[i] = laneKey{at, seq}
	// Replay the matches on lane i's path (it was the winner): the winner
	// and its key travel in registers, each match loads its loser.
	w := uint8(i)
	for j := (s.size + i) >> 1; j >= 1; j >>= 1 {
		o := s.loser[j&(maxLanes-1)]
		if ok := &s.key[o&(maxLanes-1)]; ok.at < at || ok.at == at && ok.seq < seq {
			s.loser[j&(maxLanes-1)], w, at, seq = w, o, ok.at, ok.seq
		}
	}
	s.top = w
}
