package workload

import "errors"

// Host is what a workload needs from the network simulator. Time is int64
// picoseconds. Send and Schedule may be called from inside Start, Delivered
// and Timer.
type Host interface {
	// Now is the current simulated time, ps.
	Now() int64
	// Send injects a message of bytes (≥ 0; a 0-byte message still travels
	// as one minimum-size packet) from node src to node dst (src ≠ dst)
	// now; the host calls Replayer.Delivered(tag) when its last byte
	// arrives at dst.
	Send(src, dst int, bytes int64, tag uint64)
	// Schedule asks the host to call Replayer.Timer(tag) at time at (≥ Now).
	Schedule(at int64, tag uint64)
}

// Default IdealHost parameters: the link rate of docs/model.md §3 (400 Gb/s) and a
// nominal end-to-end latency (NIC 100 ns + 4 switches × 100 ns + cables).
const (
	DefaultIdealLatency   = 550_000 // ps
	DefaultIdealBandwidth = 400e9   // bit/s
)

// IdealHost is a contention-free network: each message takes Latency plus
// bytes/Bandwidth. It has its own event heap and drives a Replayer to the
// end (tests, `lpictl workload describe`, benchmarks).
type IdealHost struct {
	Latency   int64   // ps per message
	Bandwidth float64 // bit/s; 0 = infinite

	now  int64
	seq  uint64
	heap []idealEvent
}

type idealEvent struct {
	at    int64
	seq   uint64
	tag   uint64
	timer bool
}

// NewIdealHost returns a host with the default latency and bandwidth.
func NewIdealHost() *IdealHost {
	return &IdealHost{Latency: DefaultIdealLatency, Bandwidth: DefaultIdealBandwidth}
}

// Now implements Host.
func (h *IdealHost) Now() int64 { return h.now }

// Send implements Host.
func (h *IdealHost) Send(_, _ int, bytes int64, tag uint64) {
	d := h.Latency
	if h.Bandwidth > 0 {
		d += int64(float64(bytes) * 8 / h.Bandwidth * 1e12)
	}
	h.push(idealEvent{at: h.now + d, tag: tag})
}

// Schedule implements Host.
func (h *IdealHost) Schedule(at int64, tag uint64) {
	if at < h.now {
		at = h.now
	}
	h.push(idealEvent{at: at, tag: tag, timer: true})
}

func (h *IdealHost) push(e idealEvent) {
	e.seq = h.seq
	h.seq++
	h.heap = append(h.heap, e)
	i := len(h.heap) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h.heap[i].less(&h.heap[p]) {
			break
		}
		h.heap[i], h.heap[p] = h.heap[p], h.heap[i]
		i = p
	}
}

func (e *idealEvent) less(o *idealEvent) bool {
	return e.at < o.at || (e.at == o.at && e.seq < o.seq)
}

func (h *IdealHost) pop() idealEvent {
	top := h.heap[0]
	n := len(h.heap) - 1
	h.heap[0] = h.heap[n]
	h.heap = h.heap[:n]
	i := 0
	for {
		l, m := 2*i+1, i
		if l < n && h.heap[l].less(&h.heap[m]) {
			m = l
		}
		if r := l + 1; r < n && h.heap[r].less(&h.heap[m]) {
			m = r
		}
		if m == i {
			return top
		}
		h.heap[i], h.heap[m] = h.heap[m], h.heap[i]
		i = m
	}
}

// Run starts the driver r on this host and delivers events until none is left; it
// returns r's error, or an error if r is not done when the events run out.
func (h *IdealHost) Run(r Driver) error {
	h.now, h.seq, h.heap = 0, 0, h.heap[:0]
	r.Start(h)
	for len(h.heap) > 0 && r.Err() == nil {
		e := h.pop()
		h.now = e.at
		if e.timer {
			r.Timer(e.tag)
		} else {
			r.Delivered(e.tag)
		}
	}
	if err := r.Err(); err != nil {
		return err
	}
	if !r.Done() {
		return errors.New("workload: replay stopped before the end with no event left")
	}
	return nil
}
