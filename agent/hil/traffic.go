package hil

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"net"
	"net/netip"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/lpictl/lpictl/hwlink/observe"
)

// Datagram layout (little endian): magic, flow index, sequence number, the
// sender's send time and, in a probe's response, the responder's send time
// (CLOCK_MONOTONIC ns: every namespace shares the kernel's clock, so one-way
// latencies are exact up to when the receiving thread runs).
const (
	magic     = 0x3148504C // "LPH1"
	headerLen = 32
)

// Wire overheads, for the VEF trace's message sizes: Ethernet 14 + IPv4 20
// + UDP 8; a TCP segment adds 14 + 20 + 32 (timestamps) to at most 1448
// payload bytes.
const (
	udpOverhead = 42
	tcpOverhead = 66
	tcpMSS      = 1448
)

// basePort is the first UDP/TCP port; flow i uses basePort + i.
const basePort = 47000

// Msg is one message the generator sent, for the VEF trace: a datagram, a
// TCP write or a probe's request or response.
type Msg struct {
	Src, Dst int32 // host: 0 = a, 1 = b
	// Sender is the thread on Src that sent it: 0 the host's kernel
	// (captured frames: TCP segments and ACKs, ARP), i+1 flow i's sender
	// (a probe's responder is flow i's sender on the other host). Under
	// the spin delay a thread's send returns only after its packet has
	// crossed the line, so each sender is one VEF task that sends one
	// message at a time (WriteVEF, docs/hil.md "Limits").
	Sender int32
	Bytes  int64 // on the wire
	// At is when it was sent, since the traffic started.
	At time.Duration
	// Due is when a scheduled send was due, since the traffic started,
	// if the sender's previous send had not yet returned then (the spin
	// delay held the sender, so it left at At, late); 0 otherwise.
	// unblockSends gives the simulator the send with the previous
	// message's wake-ups taken out (its blocking senders add their own).
	Due time.Duration
	// ReplyTo is the index of the request a probe response answers (-1:
	// none); Delay is the responder's time from the request's receipt to
	// the response's send.
	ReplyTo int
	Delay   time.Duration
}

// FlowResult is what one flow sent and received.
type FlowResult struct {
	Index int    `json:"index"`
	Kind  string `json:"kind"`
	From  string `json:"from"`
	To    string `json:"to"`
	// Sent counts datagrams (probe requests), TCP writes or iperf3's
	// data segments (captured); Received the datagrams (probe responses)
	// that arrived, Lost the difference. Segments counts the TCP data
	// segments the sender's egress port carried (tcp, iperf3; captured).
	Sent          uint64  `json:"sent"`
	Segments      uint64  `json:"segments"`
	Received      uint64  `json:"received"`
	Lost          uint64  `json:"lost"`
	BytesSent     int64   `json:"bytes_sent"`
	BytesReceived int64   `json:"bytes_received"`
	ThroughputBps float64 `json:"throughput_bps"` // at the receiver: bits over its first to last receipt
	RTT           Dist    `json:"rtt"`            // probes
	Latency       Dist    `json:"latency"`        // one way, every datagram
	// Skipped says why the flow did not run ("" if it did).
	Skipped string `json:"skipped"`

	rtts, lats []time.Duration
	msgs       []Msg
}

// TrafficResult is a run's traffic.
type TrafficResult struct {
	Flows   []FlowResult `json:"flows"`
	RTT     Dist         `json:"rtt"`     // every probe
	Latency Dist         `json:"latency"` // one way, every datagram
	// DurationS is the traffic phase; ThroughputBps every byte received
	// (all flows) over it.
	DurationS     float64 `json:"duration_s"`
	ThroughputBps float64 `json:"throughput_bps"`
	// T0 is when the traffic started (CLOCK_MONOTONIC); Msgs every message
	// sent, in send order, ReplyTo naming indices of Msgs.
	T0   time.Duration `json:"-"`
	Msgs []Msg         `json:"-"`
	// Captured counts the frames the hosts sent that are not the
	// generator's datagrams (TCP segments and ACKs, iperf3, ARP), taken
	// from their egress ports into Msgs (capture.go); CaptureError says
	// why there are none ("" when the capture ran).
	Captured     int    `json:"captured_frames"`
	CaptureError string `json:"capture_error"`
	// CapturedHeld counts the captured frames a wake-up of their port held
	// (the agents' traces show it), given to the simulator at the time
	// they reached the port rather than when they left (unholdCaptured).
	CapturedHeld int `json:"captured_held"`
	// SendsUnblocked counts the datagrams whose sender a wake-up on the
	// way of its previous one held past their due time, given to the
	// simulator that much earlier (unblockSends).
	SendsUnblocked int `json:"sends_unblocked"`
}

func mono() time.Duration { return observe.MonotonicNow() }

// pace locks the calling goroutine to its OS thread with a timer slack of
// 1 ns, so that waitUntil's sleeps end within tens of µs (Go's own timers
// overshoot sub-millisecond sleeps by up to a millisecond). The returned
// function undoes it.
func pace() func() {
	runtime.LockOSThread()
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	return func() {
		_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 0, 0, 0, 0) // the thread's default again
		runtime.UnlockOSThread()
	}
}

// waitUntil returns at the monotonic time due (within tens of µs on a
// thread from pace), or when ctx ends. It sleeps, never spins: a spinning
// sender would take a CPU from the traffic it measures.
func waitUntil(ctx context.Context, due time.Duration) error {
	for {
		d := due - mono()
		if d <= 0 || ctx.Err() != nil {
			return ctx.Err()
		}
		ts := unix.NsecToTimespec(int64(min(d, 10*time.Millisecond)))
		_ = unix.Nanosleep(&ts, nil)
	}
}

// rxClock converts the kernel's receive timestamps (SO_TIMESTAMPNS,
// CLOCK_REALTIME) to CLOCK_MONOTONIC: a datagram's receipt is when the
// kernel took it, not when a receiving thread got to run.
type rxClock struct{ off time.Duration } // realtime − monotonic

func newRxClock() rxClock {
	best, off := time.Duration(math.MaxInt64), time.Duration(0)
	for range 5 {
		var rt unix.Timespec
		a := mono()
		_ = unix.ClockGettime(unix.CLOCK_REALTIME, &rt)
		b := mono()
		if b-a < best {
			best, off = b-a, time.Duration(rt.Nano())-(a+(b-a)/2)
		}
	}
	return rxClock{off: off}
}

// at is the receipt time in the control message oob, or fallback.
func (c rxClock) at(oob []byte, fallback time.Duration) time.Duration {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return fallback
	}
	for _, m := range msgs {
		if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SCM_TIMESTAMPNS && len(m.Data) >= int(unsafe.Sizeof(unix.Timespec{})) {
			ts := *(*unix.Timespec)(unsafe.Pointer(&m.Data[0]))
			return time.Duration(ts.Nano()) - c.off
		}
	}
	return fallback
}

// timestamped asks the kernel for receive timestamps on c.
func timestamped(c *net.UDPConn) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	}); err != nil {
		return err
	}
	return serr
}

// oobLen holds one timestamp control message.
var oobLen = unix.CmsgSpace(int(unsafe.Sizeof(unix.Timespec{})))

type header struct {
	flow     uint32
	seq      uint64
	sent     time.Duration
	echoSent time.Duration
}

func putHeader(b []byte, h header) {
	binary.LittleEndian.PutUint32(b[0:], magic)
	binary.LittleEndian.PutUint32(b[4:], h.flow)
	binary.LittleEndian.PutUint64(b[8:], h.seq)
	binary.LittleEndian.PutUint64(b[16:], uint64(h.sent))
	binary.LittleEndian.PutUint64(b[24:], uint64(h.echoSent))
}

func getHeader(b []byte) (header, bool) {
	if len(b) < headerLen || binary.LittleEndian.Uint32(b) != magic {
		return header{}, false
	}
	return header{flow: binary.LittleEndian.Uint32(b[4:]), seq: binary.LittleEndian.Uint64(b[8:]),
		sent: time.Duration(binary.LittleEndian.Uint64(b[16:])), echoSent: time.Duration(binary.LittleEndian.Uint64(b[24:]))}, true
}

// endpoint is a host of the line, for traffic.
type endpoint struct {
	role string
	ns   netns.NsHandle
	addr netip.Addr
	task int32
}

// generator runs a run's flows.
type generator struct {
	cfg  *Config
	ends map[string]endpoint
	t0   time.Duration
	end  time.Duration
	seed uint64
	rx   rxClock
}

// taskOf is the VEF task of a host (a 0, b 1).
func taskOf(role string) int {
	if role == "b" {
		return 1
	}
	return 0
}

func other(role string) string {
	if role == "a" {
		return "b"
	}
	return "a"
}

// RunTraffic sends the configuration's flows between hosts a and b of
// line, all starting from one instant, and returns what was sent and
// received. Every flow stops at its end (or when ctx ends); the
// randomness of each flow is seeded from seed and its index. atStart and
// atEnd, if not nil, are called when the traffic phase starts (before the
// first packet) and when it ends (traffic.duration later; packets may
// still be in flight).
func RunTraffic(ctx context.Context, cfg *Config, line *Line, seed uint64, atStart, atEnd func()) (*TrafficResult, error) {
	g := &generator{cfg: cfg, seed: seed, rx: newRxClock(), ends: map[string]endpoint{
		"a": {role: "a", ns: line.Hosts["a"].Handle, addr: line.Addr("a"), task: 0},
		"b": {role: "b", ns: line.Hosts["b"].Handle, addr: line.Addr("b"), task: 1},
	}}
	flows := cfg.Traffic.Flows
	runs := make([]*flowRun, len(flows))
	var errs []error
	for i := range flows {
		r, err := g.open(i, flows[i])
		if err != nil {
			errs = append(errs, fmt.Errorf("traffic.flows[%d] %s: %w", i, flows[i].Kind, err))
		}
		runs[i] = r
	}
	if err := errors.Join(errs...); err != nil {
		for _, r := range runs {
			if r != nil {
				r.close()
			}
		}
		return nil, err
	}
	// Taps on the hosts' egress ports: every frame they send that is not
	// the generator's own datagram reaches the VEF trace (capture.go).
	var taps []*tap
	var tapErr error
	stopTaps := make(chan struct{})
	for _, h := range []struct {
		role, dev string
		task      int32
	}{{"a", "a0", 0}, {"b", "b0", 1}} {
		t, err := openTap(line.Hosts[h.role], h.dev, h.task, g.rx)
		if err != nil {
			tapErr = errors.Join(tapErr, err)
			continue
		}
		taps = append(taps, t)
		go t.run(stopTaps)
	}
	// Every socket exists: start together, a little ahead.
	g.t0 = mono() + 5*time.Millisecond
	g.end = g.t0 + cfg.Traffic.Duration.D()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer pace()()
		for _, m := range []struct {
			at time.Duration
			fn func()
		}{{g.t0, atStart}, {g.end, atEnd}} {
			// The end is marked even after a cancellation.
			_ = waitUntil(ctx, m.at)
			if m.fn != nil {
				m.fn()
			}
		}
	}()
	for i, r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.run(ctx, g, i)
		}()
	}
	wg.Wait()
	// The last frames (ACKs, responses) leave within a few ms.
	_ = sleepCtx(ctx, 20*time.Millisecond)
	close(stopTaps)
	var frames [2][]tapFrame
	for _, t := range taps {
		f, err := t.close()
		frames[t.task] = f
		tapErr = errors.Join(tapErr, err)
	}
	if tapErr == nil && len(taps) != 2 {
		tapErr = errors.New("no capture")
	}
	res := &TrafficResult{T0: g.t0, DurationS: cfg.Traffic.Duration.D().Seconds(), Flows: make([]FlowResult, len(runs))}
	var rtts, lats []time.Duration
	var rx int64
	for i, r := range runs {
		fr := r.result()
		fr.Index, fr.Kind, fr.From, fr.To = i, flows[i].Kind, flows[i].From, other(flows[i].From)
		rtts = append(rtts, fr.rtts...)
		lats = append(lats, fr.lats...)
		rx += fr.BytesReceived
		res.Flows[i] = fr
	}
	res.RTT, res.Latency = NewDist(rtts), NewDist(lats)
	if res.DurationS > 0 {
		res.ThroughputBps = float64(rx) * 8 / res.DurationS
	}
	if tapErr != nil {
		res.CaptureError = tapErr.Error()
		res.Msgs = mergeMsgs(res.Flows)
		return res, ctx.Err()
	}
	// TCP and iperf3 reach the trace as the segments and ACKs the hosts
	// sent, not as the generator's writes.
	merge := make([]FlowResult, 0, len(res.Flows)+1)
	for i, fr := range res.Flows {
		switch fr.Kind {
		case KindTCP, KindIperf3:
			port := uint16(basePort + i)
			var segs uint64
			for _, f := range frames[taskOf(fr.From)] {
				if f.tcp && f.data && f.at >= g.t0 && (f.ports[0] == port || f.ports[1] == port) {
					segs++
				}
			}
			res.Flows[i].Segments = segs
			if fr.Kind == KindIperf3 {
				res.Flows[i].Sent = segs
			}
			fr.msgs = nil
		}
		merge = append(merge, fr)
	}
	var captured FlowResult
	for task := range frames {
		m := capturedMsgs(frames[task], int32(task), g.t0)
		res.Captured += len(m)
		captured.msgs = append(captured.msgs, m...)
	}
	res.Msgs = mergeMsgs(append(merge, captured))
	return res, ctx.Err()
}

// mergeMsgs orders every flow's messages by send time and maps replies to
// the merged indices.
func mergeMsgs(flows []FlowResult) []Msg {
	type ref struct{ flow, idx int }
	var refs []ref
	for f := range flows {
		for i := range flows[f].msgs {
			refs = append(refs, ref{f, i})
		}
	}
	slices.SortStableFunc(refs, func(x, y ref) int {
		return cmp.Compare(flows[x.flow].msgs[x.idx].At, flows[y.flow].msgs[y.idx].At)
	})
	index := make([]map[int]int, len(flows))
	for f := range index {
		index[f] = map[int]int{}
	}
	for id, r := range refs {
		index[r.flow][r.idx] = id
	}
	out := make([]Msg, len(refs))
	for id, r := range refs {
		m := flows[r.flow].msgs[r.idx]
		if m.ReplyTo >= 0 {
			m.ReplyTo = index[r.flow][m.ReplyTo]
		}
		out[id] = m
	}
	return out
}

// flowRun is one flow's sockets and state.
type flowRun struct {
	f        Flow
	index    int // in the configuration's flows
	from, to endpoint
	port     int
	mu       sync.Mutex
	res      FlowResult
	// UDP
	tx, rx *net.UDPConn
	rxDone chan struct{}
	first  time.Duration
	last   time.Duration
	// probe: responses seen by the responder (request seq → receipt, send)
	resp map[uint64][2]time.Duration
	// TCP
	ln     *net.TCPListener
	conn   *net.TCPConn
	accept chan *net.TCPConn
	// iperf3
	iperf string
}

func (g *generator) open(i int, f Flow) (*flowRun, error) {
	r := &flowRun{f: f, index: i, from: g.ends[f.From], to: g.ends[other(f.From)], port: basePort + i,
		rxDone: make(chan struct{}), resp: map[uint64][2]time.Duration{}}
	switch f.Kind {
	case KindProbe, KindOnOff, KindPoisson:
		if err := inNS(r.to.ns, func() error {
			var err error
			r.rx, err = net.ListenUDP("udp4", &net.UDPAddr{IP: r.to.addr.AsSlice(), Port: r.port})
			return err
		}); err != nil {
			return nil, fmt.Errorf("receiver in %s: %w", r.to.role, err)
		}
		if err := inNS(r.from.ns, func() error {
			var err error
			r.tx, err = net.DialUDP("udp4", &net.UDPAddr{IP: r.from.addr.AsSlice()}, &net.UDPAddr{IP: r.to.addr.AsSlice(), Port: r.port})
			return err
		}); err != nil {
			r.rx.Close()
			return nil, fmt.Errorf("sender in %s: %w", r.from.role, err)
		}
		_ = r.rx.SetReadBuffer(4 << 20)
		for _, c := range []*net.UDPConn{r.rx, r.tx} {
			if err := timestamped(c); err != nil {
				r.close()
				return nil, fmt.Errorf("receive timestamps: %w", err)
			}
		}
	case KindTCP:
		if err := inNS(r.to.ns, func() error {
			var err error
			r.ln, err = net.ListenTCP("tcp4", &net.TCPAddr{IP: r.to.addr.AsSlice(), Port: r.port})
			return err
		}); err != nil {
			return nil, fmt.Errorf("listener in %s: %w", r.to.role, err)
		}
		r.accept = make(chan *net.TCPConn, 1)
		go func() {
			c, err := r.ln.AcceptTCP()
			if err != nil {
				close(r.accept)
				return
			}
			r.accept <- c
		}()
	case KindIperf3:
		path, err := exec.LookPath("iperf3")
		if err != nil {
			r.res.Skipped = "iperf3 is not installed"
			return r, nil
		}
		r.iperf = path
	}
	return r, nil
}

func (r *flowRun) close() {
	if r.tx != nil {
		r.tx.Close()
	}
	if r.rx != nil {
		r.rx.Close()
	}
	if r.ln != nil {
		r.ln.Close()
	}
	if r.conn != nil {
		r.conn.Close()
	}
}

func (r *flowRun) run(ctx context.Context, g *generator, i int) {
	defer r.close()
	start := g.t0 + r.f.Start.D()
	end := start + r.f.Duration.D()
	rng := rand.New(rand.NewPCG(g.seed, uint64(i)+1))
	defer pace()()
	switch r.f.Kind {
	case KindProbe:
		go r.echo(g, uint32(i))
		r.probe(ctx, g, uint32(i), start, end, rng)
	case KindOnOff, KindPoisson:
		go r.sink(g, uint32(i))
		r.stream(ctx, g, uint32(i), start, end, rng)
	case KindTCP:
		r.tcp(ctx, g, start, end)
		return
	case KindIperf3:
		if r.iperf != "" {
			r.runIperf(ctx, start, end)
		}
		return
	}
	// Let the last datagrams arrive before the receiver closes.
	t := time.NewTimer(20 * time.Millisecond)
	select {
	case <-ctx.Done():
	case <-t.C:
	}
	r.rx.Close()
	<-r.rxDone
}

// echo answers a probe flow's requests (at the responder).
func (r *flowRun) echo(g *generator, flow uint32) {
	defer close(r.rxDone)
	buf := make([]byte, 2048)
	oob := make([]byte, oobLen)
	for {
		n, oobn, _, from, err := r.rx.ReadMsgUDP(buf, oob)
		if err != nil {
			return
		}
		recv := g.rx.at(oob[:oobn], mono())
		h, ok := getHeader(buf[:n])
		if !ok || h.flow != flow {
			continue
		}
		r.appendLat(recv - h.sent)
		h.echoSent = mono()
		putHeader(buf, h)
		if _, err := r.rx.WriteToUDP(buf[:n], from); err != nil {
			continue
		}
		r.mu.Lock()
		r.resp[h.seq] = [2]time.Duration{recv - g.t0, h.echoSent - g.t0}
		r.mu.Unlock()
	}
}

// lats is the one-way latencies, guarded by mu (receivers append).
func (r *flowRun) appendLat(d time.Duration) {
	r.mu.Lock()
	r.res.lats = append(r.res.lats, d)
	r.mu.Unlock()
}

// probe sends requests on its schedule (open loop: the same requests in
// every run, whatever the round trips) and takes the responses as they
// come; a response later than the timeout after the last request is lost.
func (r *flowRun) probe(ctx context.Context, g *generator, flow uint32, start, end time.Duration, rng *rand.Rand) {
	f := r.f
	replies := make(chan struct{})
	go r.replies(g, flow, replies)
	buf := make([]byte, f.Size)
	next := start
	var returned time.Duration // when the last send returned
	for seq := uint64(0); f.Count == 0 || seq < uint64(f.Count); seq++ {
		if next >= end || waitUntil(ctx, next) != nil {
			break
		}
		sent := mono()
		putHeader(buf, header{flow: flow, seq: seq, sent: sent})
		_, err := r.tx.Write(buf)
		due := heldSince(next, returned, g.t0)
		returned = mono()
		if err != nil {
			break
		}
		r.mu.Lock()
		r.res.Sent++
		r.res.BytesSent += int64(f.Size)
		r.res.msgs = append(r.res.msgs, Msg{Src: r.from.task, Dst: r.to.task, Sender: r.sender(), Bytes: int64(f.Size + udpOverhead), At: sent - g.t0, Due: due, ReplyTo: -1})
		r.mu.Unlock()
		gap := f.Interval.D()
		if f.Spacing == "exponential" {
			gap = time.Duration(rng.ExpFloat64() * float64(gap))
		}
		next += gap
	}
	_ = sleepCtx(ctx, f.Timeout.D())
	r.tx.Close()
	<-replies
}

// replies takes a probe flow's responses at the requester.
func (r *flowRun) replies(g *generator, flow uint32, done chan struct{}) {
	defer close(done)
	in := make([]byte, 2048)
	oob := make([]byte, oobLen)
	seen := map[uint64]bool{}
	for {
		n, oobn, _, _, err := r.tx.ReadMsgUDP(in, oob)
		if err != nil {
			return
		}
		now := g.rx.at(oob[:oobn], mono())
		h, ok := getHeader(in[:n])
		if !ok || h.flow != flow || seen[h.seq] || now-h.sent > r.f.Timeout.D() {
			continue
		}
		seen[h.seq] = true
		r.mu.Lock()
		r.res.Received++
		r.res.BytesReceived += int64(n)
		r.res.rtts = append(r.res.rtts, now-h.sent)
		r.res.lats = append(r.res.lats, now-h.echoSent)
		if r.first == 0 {
			r.first = now
		}
		r.last = now
		r.mu.Unlock()
	}
}

// stream sends an on/off or Poisson flow's datagrams.
func (r *flowRun) stream(ctx context.Context, g *generator, flow uint32, start, end time.Duration, rng *rand.Rand) {
	f := r.f
	buf := make([]byte, f.Size)
	next := start
	var returned time.Duration // when the last send returned
	onUntil := time.Duration(math.MaxInt64)
	if f.Kind == KindOnOff {
		onUntil = start + time.Duration(rng.ExpFloat64()*float64(f.OnTime))
	}
	for seq := uint64(0); f.Count == 0 || seq < uint64(f.Count); seq++ {
		if f.Kind == KindOnOff {
			for next >= onUntil { // an off period, then the next burst
				next = onUntil + time.Duration(rng.ExpFloat64()*float64(f.OffTime))
				onUntil = next + time.Duration(rng.ExpFloat64()*float64(f.OnTime))
			}
		}
		if next >= end || waitUntil(ctx, next) != nil {
			break
		}
		sent := mono()
		putHeader(buf, header{flow: flow, seq: seq, sent: sent})
		_, err := r.tx.Write(buf)
		due := heldSince(next, returned, g.t0)
		returned = mono()
		if err != nil {
			continue // e.g. ENOBUFS: not sent
		}
		r.res.Sent++
		r.res.BytesSent += int64(f.Size)
		r.res.msgs = append(r.res.msgs, Msg{Src: r.from.task, Dst: r.to.task, Sender: r.sender(), Bytes: int64(f.Size + udpOverhead), At: sent - g.t0, Due: due, ReplyTo: -1})
		if f.Kind == KindOnOff {
			next += f.Interval.D()
		} else {
			next += time.Duration(rng.ExpFloat64() * float64(time.Second) / f.Rate)
		}
	}
}

// sink receives a stream's datagrams.
func (r *flowRun) sink(g *generator, flow uint32) {
	defer close(r.rxDone)
	buf := make([]byte, 2048)
	oob := make([]byte, oobLen)
	for {
		n, oobn, _, _, err := r.rx.ReadMsgUDP(buf, oob)
		if err != nil {
			return
		}
		now := g.rx.at(oob[:oobn], mono())
		h, ok := getHeader(buf[:n])
		if !ok || h.flow != flow {
			continue
		}
		r.mu.Lock()
		r.res.Received++
		r.res.BytesReceived += int64(n)
		r.res.lats = append(r.res.lats, now-h.sent)
		if r.first == 0 {
			r.first = now
		}
		r.last = now
		r.mu.Unlock()
	}
}

// tcp sends a bulk transfer and receives it at the other host.
func (r *flowRun) tcp(ctx context.Context, g *generator, start, end time.Duration) {
	f := r.f
	if waitUntil(ctx, start) != nil {
		return
	}
	var c *net.TCPConn
	if err := inNS(r.from.ns, func() error {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: r.from.addr.AsSlice()}, Timeout: 2 * time.Second}
		conn, err := d.DialContext(ctx, "tcp4", netip.AddrPortFrom(r.to.addr, uint16(r.port)).String())
		if err == nil {
			c = conn.(*net.TCPConn)
		}
		return err
	}); err != nil {
		r.res.Skipped = "connect: " + err.Error()
		return
	}
	r.conn = c
	var rc *net.TCPConn
	select {
	case rc = <-r.accept:
	case <-time.After(2 * time.Second):
	}
	if rc == nil {
		r.res.Skipped = "no connection accepted"
		return
	}
	recvDone := make(chan struct{})
	go func() {
		defer close(recvDone)
		defer rc.Close()
		buf := make([]byte, 256<<10)
		_ = rc.SetReadDeadline(time.Now().Add(end - mono() + 3*time.Second))
		for {
			n, err := rc.Read(buf)
			if n > 0 {
				now := mono()
				r.mu.Lock()
				r.res.BytesReceived += int64(n)
				if r.first == 0 {
					r.first = now
				}
				r.last = now
				r.mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}()
	stop := context.AfterFunc(ctx, func() { _ = c.SetWriteDeadline(time.Now()) })
	defer stop()
	_ = c.SetWriteDeadline(time.Now().Add(end - mono()))
	buf := make([]byte, f.Size)
	for r.res.BytesSent < f.Bytes && mono() < end && ctx.Err() == nil {
		chunk := buf[:min(int64(len(buf)), f.Bytes-r.res.BytesSent)]
		at := mono()
		n, err := c.Write(chunk)
		if n > 0 {
			r.res.Sent++
			r.res.BytesSent += int64(n)
			segs := (int64(n) + tcpMSS - 1) / tcpMSS
			r.res.msgs = append(r.res.msgs, Msg{Src: r.from.task, Dst: r.to.task, Sender: r.sender(), Bytes: int64(n) + segs*tcpOverhead, At: at - g.t0, ReplyTo: -1})
		}
		if err != nil {
			break
		}
	}
	_ = c.CloseWrite()
	<-recvDone
}

// runIperf runs iperf3 (server at the receiver, client at the sender)
// in the namespaces, bounded by the flow's duration.
func (r *flowRun) runIperf(ctx context.Context, start, end time.Duration) {
	f := r.f
	port := strconv.Itoa(r.port)
	sctx, cancel := context.WithTimeout(ctx, end-mono()+5*time.Second)
	defer cancel()
	srv := exec.CommandContext(sctx, r.iperf, "-s", "-1", "-B", r.to.addr.String(), "-p", port)
	if err := inNS(r.to.ns, srv.Start); err != nil {
		r.res.Skipped = "iperf3 server: " + err.Error()
		return
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	if waitUntil(ctx, start) != nil {
		return
	}
	secs := max(1, int((end - mono()).Seconds()))
	args := []string{"-c", r.to.addr.String(), "-B", r.from.addr.String(), "-p", port, "-J"}
	if f.Bytes > 0 {
		args = append(args, "-n", strconv.FormatInt(f.Bytes, 10))
	} else {
		args = append(args, "-t", strconv.Itoa(secs))
	}
	cctx, ccancel := context.WithTimeout(ctx, end-mono()+3*time.Second)
	defer ccancel()
	cl := exec.CommandContext(cctx, r.iperf, args...)
	var out []byte
	err := inNS(r.from.ns, func() error {
		var err error
		out, err = cl.Output()
		return err
	})
	var doc struct {
		End struct {
			Sent struct {
				Bytes float64 `json:"bytes"`
			} `json:"sum_sent"`
			Received struct {
				Bytes         float64 `json:"bytes"`
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if jerr := json.Unmarshal(out, &doc); jerr != nil || err != nil {
		r.res.Skipped = fmt.Sprintf("iperf3 client: %v", errors.Join(err, jerr))
		return
	}
	r.res.BytesSent = int64(doc.End.Sent.Bytes)
	r.res.BytesReceived = int64(doc.End.Received.Bytes)
	r.res.ThroughputBps = doc.End.Received.BitsPerSecond
}

// heldSince is the Msg.Due of a send due at due when the sender's
// previous send returned at prevReturned (both monotonic): due − t0 if
// that send was still under way then (the spin delay held the sender),
// else 0 (a flow's first send, never held, is the only one due at t0).
func heldSince(due, prevReturned, t0 time.Duration) time.Duration {
	if prevReturned > due {
		return due - t0
	}
	return 0
}

// sender is the flow's Msg.Sender on either host.
func (r *flowRun) sender() int32 { return int32(r.index) + 1 }

func (r *flowRun) result() FlowResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	res := r.res
	switch r.f.Kind {
	case KindProbe:
		// Responses the responder sent, as messages replying to their
		// requests (request seq = index in msgs).
		seqs := slices.Sorted(maps.Keys(r.resp))
		for _, seq := range seqs {
			t := r.resp[seq]
			if int(seq) >= len(res.msgs) {
				continue
			}
			res.msgs = append(res.msgs, Msg{Src: r.to.task, Dst: r.from.task, Sender: r.sender(), Bytes: res.msgs[seq].Bytes,
				At: t[1], ReplyTo: int(seq), Delay: t[1] - t[0]})
		}
		res.Lost = res.Sent - res.Received
		res.RTT = NewDist(res.rtts)
	case KindOnOff, KindPoisson:
		res.Lost = res.Sent - min(res.Sent, res.Received)
	}
	res.Latency = NewDist(res.lats)
	if r.last > r.first && res.ThroughputBps == 0 {
		res.ThroughputBps = float64(res.BytesReceived) * 8 / (r.last - r.first).Seconds()
	}
	if res.rtts == nil {
		res.rtts = []time.Duration{}
	}
	return res
}
