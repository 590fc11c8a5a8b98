package workload

// Driver is what a host runs: the VEF Replayer, or the executor of a
// schedule (package sched: SimGrid TI and GOAL traces). Timer tags a driver
// passes to Host.Schedule must be below 1<<62: the top two bits are the
// host side's (IntraNode's deliveries).
type Driver interface {
	// Start begins the replay on h at time h.Now().
	Start(h Host)
	// Delivered: the message sent with tag has arrived.
	Delivered(tag uint64)
	// Timer: the time asked for with Schedule(at, tag) has come.
	Timer(tag uint64)
	// Done reports the end of the replay (or a failure).
	Done() bool
	// Err is the replay's failure, if any.
	Err() error
	// Stats are the counters so far (complete once Done).
	Stats() Stats
	// Close releases the driver's input.
	Close() error
}

var _ Driver = (*Replayer)(nil)

// Prefetcher is implemented by a driver that can start loading what its
// Timer or Delivered will read first, so that the host can ask one event
// ahead (the network does, from its engine.Prefetcher): a replay window
// larger than the caches makes each message's slot cold by the time it
// is sent and delivered. Neither call changes anything. PrefetchDelivered
// may be given only the tag's top bit and low 31 bits (the bits between
// them 0): enough for a prefetch, which must not rely on more.
type Prefetcher interface {
	PrefetchTimer(tag uint64)
	PrefetchDelivered(tag uint64)
}

var (
	_ Prefetcher = (*Replayer)(nil)
	_ Prefetcher = (*IntraNode)(nil)
)

// intraBit marks IntraNode's timer tags.
const intraBit = uint64(1) << 62

// IntraNode makes the messages between ranks on the same node skip the
// network: they arrive after Latency + bytes/Bandwidth (shared memory),
// through host timers, and are counted in Stats.IntraMessages/IntraBytes
// instead of Messages/Bytes.
type IntraNode struct {
	Latency   int64   // ps
	Bandwidth float64 // bytes/s; 0 = infinite

	inner Driver
	h     Host
	tags  []uint64 // the inner driver's message tags, by slot
	free  []int32
	msgs  int64
	bytes int64
}

// Defaults of the intra-node path (ours: a shared-memory copy on a current
// server, docs/workloads.md).
const (
	DefaultIntraLatency   = 500_000 // ps: 0.5 µs
	DefaultIntraBandwidth = 10e9    // bytes/s
)

// WithIntraNode wraps d so that messages from a node to itself go the
// intra-node path.
func WithIntraNode(d Driver, latency int64, bandwidth float64) *IntraNode {
	return &IntraNode{inner: d, Latency: latency, Bandwidth: bandwidth}
}

// Start implements Driver.
func (x *IntraNode) Start(h Host) {
	x.h = h
	x.inner.Start(x)
}

// Now implements Host for the inner driver.
func (x *IntraNode) Now() int64 { return x.h.Now() }

// Send implements Host for the inner driver.
func (x *IntraNode) Send(src, dst int, bytes int64, tag uint64) {
	if src != dst {
		x.h.Send(src, dst, bytes, tag)
		return
	}
	var k int32
	if n := len(x.free); n > 0 {
		k = x.free[n-1]
		x.free = x.free[:n-1]
	} else {
		k = int32(len(x.tags))
		x.tags = append(x.tags, 0)
	}
	x.tags[k] = tag
	x.msgs++
	x.bytes += bytes
	d := x.Latency
	if x.Bandwidth > 0 {
		d += int64(float64(bytes) / x.Bandwidth * 1e12)
	}
	x.h.Schedule(x.h.Now()+d, intraBit|uint64(k))
}

// Schedule implements Host for the inner driver.
func (x *IntraNode) Schedule(at int64, tag uint64) { x.h.Schedule(at, tag) }

// Delivered implements Driver.
func (x *IntraNode) Delivered(tag uint64) { x.inner.Delivered(tag) }

// Timer implements Driver.
func (x *IntraNode) Timer(tag uint64) {
	if tag&intraBit == 0 {
		x.inner.Timer(tag)
		return
	}
	k := int32(tag &^ intraBit)
	t := x.tags[k]
	x.free = append(x.free, k)
	x.inner.Delivered(t)
}

// PrefetchTimer implements Prefetcher for an inner driver that does.
func (x *IntraNode) PrefetchTimer(tag uint64) {
	if p, ok := x.inner.(Prefetcher); ok && tag&intraBit == 0 {
		p.PrefetchTimer(tag)
	}
}

// PrefetchDelivered implements Prefetcher for an inner driver that does.
func (x *IntraNode) PrefetchDelivered(tag uint64) {
	if p, ok := x.inner.(Prefetcher); ok {
		p.PrefetchDelivered(tag)
	}
}

// Done implements Driver.
func (x *IntraNode) Done() bool { return x.inner.Done() }

// Err implements Driver.
func (x *IntraNode) Err() error { return x.inner.Err() }

// Close implements Driver.
func (x *IntraNode) Close() error { return x.inner.Close() }

// Stats implements Driver: the inner driver's, with the intra-node
// messages moved from Messages/Bytes to IntraMessages/IntraBytes.
func (x *IntraNode) Stats() Stats {
	s := x.inner.Stats()
	s.Messages -= x.msgs
	s.Bytes -= x.bytes
	s.IntraMessages += x.msgs
	s.IntraBytes += x.bytes
	return s
}
