package network

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"time"

	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/eee"
	"github.com/lpictl/lpictl/sim/engine"
	"github.com/lpictl/lpictl/sim/topo"
)

// Event kinds.
const (
	evMsg    uint8 = iota // Obj node: generate a message
	evArrive              // Obj receiving port, Arg packet: first bit arrives
	evArb                 // Obj switch input port: its head packet requests the crossbar
	evOarb                // Obj switch output port: its crossbar port is free again
	evOutq                // Obj output port, Arg packet: packet enters the output queue
	evTxEnd               // Obj port: last bit of the packet being sent leaves
	evKick                // Obj port: the link is awake, try to transmit
	evPFC                 // Obj port (sender), Arg 1 PAUSE / 0 resume
	evInject              // Arg injected message
)

// port is one end of a link: a NIC or a switch port. A switch port has an
// input side (buffer fed by the link) and an output side (buffer feeding it).
type port struct {
	outQ, inQ                                                       fifo
	ctl                                                             *controller.Port // built on first use (see ctlFor)
	xbarFree                                                        int64            // output side: crossbar port busy until
	inXbarFree                                                      int64            // input side: crossbar port busy until
	idleStart                                                       int64            // when the output queue last emptied (−1: never sent)
	pdt                                                             int64            // t_PDT in force (ps)
	waitMask                                                        uint64           // inputs waiting for this output's crossbar port
	sent                                                            uint64           // packets sent
	peer                                                            int32            // port at the other end (−1: unconnected)
	link                                                            int32
	sw                                                              int32 // switch, or −1 for a NIC
	outBytes                                                        int32 // output buffer bytes (reserved at crossbar grant)
	inBytes                                                         int32 // input buffer bytes (counted from the first bit)
	txSize                                                          int32 // size of the packet being sent
	local                                                           uint8 // port number on its switch
	end                                                             uint8 // 0 or 1: which end of the link
	class                                                           uint8 // reporting class: 0 NIC, then switch roles
	rr                                                              uint8 // round-robin pointer among equally old inputs
	txBusy, paused, kickPending, oarbPending, pauseSent, arbPending bool
}

// packet is one MTU-sized (or smaller, last) segment of a message.
type packet struct {
	created int64 // message generation time
	ready   int64 // last bit in at the current switch (its age)
	src     int32
	dst     int32
	out     int32 // output port at the current switch
	size    int32
	hops    uint8 // links still to cross, counting the next one
	last    bool  // last segment of its message
}

type injected struct {
	created  int64
	src, dst int32
	bytes    int64
}

// Network is a built model ready to run.
type Network struct {
	p       Params
	t       topo.Topology
	eng     *engine.Engine
	ports   []port
	links   []eee.Link
	swBase  []int32
	classes []string
	pkts    []packet
	free    []int32

	traffic Traffic
	gens    []generator
	meanGap float64
	injects []injected

	psPerByte, xbarPsPerByte float64
	handshake                int64
	initPDT                  int64

	// statistics
	latency      *logHist
	idle         []*logHist // per class
	created      uint64
	delivered    uint64
	msgsSent     uint64
	msgsDone     uint64
	lastDelivery int64
	overflows    uint64
	pauses       uint64
	wall         time.Duration
	finished     bool
	endTime      int64
}

// New builds the network t with parameters p; traffic may be nil (use
// Inject). seed seeds every random stream.
func New(t topo.Topology, p Params, traffic *Traffic, seed uint64) (*Network, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if traffic != nil {
		if err := traffic.Validate(); err != nil {
			return nil, err
		}
	}
	p.EEE.Prepare()
	n := &Network{p: p, t: t, latency: newLogHist()}
	n.psPerByte = 8e12 / p.RateBps
	n.xbarPsPerByte = n.psPerByte / p.Speedup
	n.handshake = Ser(int64(p.ControlBytes), p.RateBps) + p.Propagation
	n.p.EEE.Handshake = n.handshake

	// The controller prototype validates the configuration and gives the
	// t_PDT every port starts with.
	n.initPDT = eee.Never
	if p.EEE.Mode != eee.AlwaysOn {
		ctl, err := newController(&n.p)
		if err != nil {
			return nil, err
		}
		n.initPDT = toPS(ctl.PDT())
	}

	nodes, switches := t.Nodes(), t.Switches()
	n.swBase = make([]int32, switches+1)
	total := nodes
	for s := 0; s < switches; s++ {
		n.swBase[s] = int32(total)
		r := t.Radix(s)
		if r > 64 {
			return nil, fmt.Errorf("topology.radix: the simulator's crossbar supports up to 64 ports per switch, switch %d has %d", s, r)
		}
		total += r
	}
	n.swBase[switches] = int32(total)
	if total > math.MaxInt32/2 {
		return nil, fmt.Errorf("topology: %d ports is too many", total)
	}
	n.ports = make([]port, total)
	n.classes = []string{"nic"}
	roleClass := map[string]uint8{}
	for i := range n.ports {
		pt := &n.ports[i]
		pt.peer, pt.link, pt.sw, pt.idleStart = -1, -1, -1, -1
	}
	for s := 0; s < switches; s++ {
		role := t.SwitchRole(s)
		c, ok := roleClass[role]
		if !ok {
			c = uint8(len(n.classes))
			roleClass[role] = c
			n.classes = append(n.classes, role)
		}
		for j := int32(0); j < n.swBase[s+1]-n.swBase[s]; j++ {
			pt := &n.ports[n.swBase[s]+j]
			pt.sw, pt.local, pt.class = int32(s), uint8(j), c
		}
	}
	links := t.Links()
	n.links = make([]eee.Link, len(links))
	for li, l := range links {
		a, b := n.portOf(l.A), n.portOf(l.B)
		if n.ports[a].peer >= 0 || n.ports[b].peer >= 0 {
			return nil, fmt.Errorf("topology: port cabled twice (link %d)", li)
		}
		n.ports[a].peer, n.ports[a].link, n.ports[a].end = b, int32(li), 0
		n.ports[b].peer, n.ports[b].link, n.ports[b].end = a, int32(li), 1
		n.links[li].Start(0, n.initPDT)
	}
	for i := 0; i < nodes; i++ {
		if n.ports[i].peer < 0 {
			return nil, fmt.Errorf("topology: node %d is not cabled", i)
		}
		n.ports[i].pdt = n.initPDT
	}
	for i := nodes; i < total; i++ {
		n.ports[i].pdt = n.initPDT
	}
	n.idle = make([]*logHist, len(n.classes))
	for i := range n.idle {
		n.idle[i] = newLogHist()
	}

	bucket, buckets := p.CalendarBucketPS, p.CalendarBuckets
	if bucket == 0 {
		// About four pending events per bucket when every port is busy.
		ser := Ser(int64(p.MTU), p.RateBps)
		bucket = max(1, 4*ser/int64(max(1, total)))
		bucket = min(bucket, engine.Nanosecond)
	}
	if buckets == 0 {
		// A year of two MTU serialisation times plus a switch traversal.
		year := 2*Ser(int64(p.MTU), p.RateBps) + p.SwitchLatency + p.Propagation
		buckets = int(min(1<<20, max(1024, year/bucket)))
	}
	q, err := engine.NewQueue(p.Queue, bucket, buckets)
	if err != nil {
		return nil, fmt.Errorf("engine.queue: %w", err)
	}
	n.eng = engine.New(q, n)
	if traffic != nil {
		n.setupTraffic(traffic, seed)
	}
	return n, nil
}

func newController(p *Params) (*controller.Port, error) {
	pred, err := predictor.New(p.Predictor)
	if err != nil {
		return nil, err
	}
	return controller.NewPort(p.Controller, pred, 0)
}

func (n *Network) portOf(e topo.End) int32 {
	if e.Kind == topo.NodeEnd {
		return e.ID
	}
	return n.swBase[e.ID] + e.Port
}

// toPS converts the controller's time.Duration (ns) to ps.
func toPS(d time.Duration) int64 {
	if d >= time.Duration(eee.Never/1000) {
		return eee.Never
	}
	return int64(d) * 1000
}

// toDur converts ps to time.Duration (truncating below 1 ns).
func toDur(ps int64) time.Duration { return time.Duration(ps / 1000) }

// ctlFor returns port i's controller, building it on first use. Building
// it later than time 0 is exact: an unused predictor and controller are in
// their initial state, and the port is started at time 0 as if built then.
func (n *Network) ctlFor(i int32) *controller.Port {
	pt := &n.ports[i]
	if pt.ctl == nil {
		ctl, err := newController(&n.p)
		if err != nil {
			panic(err) // validated by the prototype in New
		}
		pt.ctl = ctl
	}
	return pt.ctl
}

// Engine returns the event engine.
func (n *Network) Engine() *engine.Engine { return n.eng }

// Topology returns the network's topology.
func (n *Network) Topology() topo.Topology { return n.t }

// Inject schedules a message of bytes from node src to node dst generated
// at time at (it enters src's NIC queue after the NIC latency).
func (n *Network) Inject(at int64, src, dst int, bytes int64) {
	n.injects = append(n.injects, injected{created: at, src: int32(src), dst: int32(dst), bytes: bytes})
	n.eng.Schedule(at+n.p.NICLatency, evInject, 0, int32(len(n.injects)-1))
}

func (n *Network) ser(size int32) int64 {
	return int64(float64(size)*n.psPerByte + 0.5)
}

func (n *Network) xbar(size int32) int64 {
	return int64(float64(size)*n.xbarPsPerByte + 0.5)
}

func (n *Network) alloc() int32 {
	if k := len(n.free); k > 0 {
		i := n.free[k-1]
		n.free = n.free[:k-1]
		return i
	}
	n.pkts = append(n.pkts, packet{})
	return int32(len(n.pkts) - 1)
}

// sendMessage segments a message at the MTU into src's NIC output queue.
func (n *Network) sendMessage(now, created int64, src, dst int32, bytes int64) {
	if src == dst || bytes <= 0 {
		return
	}
	hops := uint8(min(255, topo.Hops(n.t, int(src), int(dst))))
	n.msgsSent++
	for rem := bytes; rem > 0; {
		size := int32(min(rem, int64(n.p.MTU)))
		rem -= int64(size)
		k := n.alloc()
		n.pkts[k] = packet{created: created, src: src, dst: dst, size: size, hops: hops, last: rem == 0}
		n.created++
		n.enqueueOut(src, k, now)
	}
}

// Handle runs one event.
func (n *Network) Handle(e engine.Event) {
	now := e.At
	switch e.Kind {
	case evArrive:
		n.arrive(e.Obj, e.Arg, now)
	case evArb:
		pi := &n.ports[e.Obj]
		o := n.pkts[pi.inQ.front()].out
		n.ports[o].waitMask |= 1 << pi.local
		n.oarb(o, now)
	case evOarb:
		n.ports[e.Obj].oarbPending = false
		n.oarb(e.Obj, now)
	case evOutq:
		n.enqueueOut(e.Obj, e.Arg, now)
	case evTxEnd:
		n.txEnd(e.Obj, now)
	case evKick:
		n.ports[e.Obj].kickPending = false
		n.tryStart(e.Obj, now)
	case evPFC:
		pt := &n.ports[e.Obj]
		pt.paused = e.Arg == 1
		if !pt.paused {
			n.tryStart(e.Obj, now)
		}
	case evMsg:
		n.generate(e.Obj, now)
	case evInject:
		m := n.injects[e.Arg]
		n.sendMessage(now, m.created, m.src, m.dst, m.bytes)
	}
}

// enqueueOut puts packet k into port i's output queue at now.
func (n *Network) enqueueOut(i, k int32, now int64) {
	pt := &n.ports[i]
	if pt.outQ.n == 0 && !pt.txBusy {
		n.needed(i, now)
	}
	pt.outQ.push(k)
	n.tryStart(i, now)
}

// needed: a packet needs port i, whose output queue was empty: the port's
// idle period ends and the link wakes if it must (SPEC §1.1).
func (n *Network) needed(i int32, now int64) {
	pt := &n.ports[i]
	_, missed := n.links[pt.link].Need(&n.p.EEE, now, pt.end)
	if pt.idleStart >= 0 {
		length := now - pt.idleStart
		n.idle[pt.class].add(length)
		if n.p.EEE.Mode != eee.AlwaysOn {
			n.ctlFor(i).IdleEnded(predictor.IdlePeriod{
				End: toDur(now), Length: toDur(length), Missed: missed, PDT: toDur(pt.pdt),
			})
		}
	}
	pt.idleStart = -1
}

// tryStart starts the next transmission of port i if it can.
func (n *Network) tryStart(i int32, now int64) {
	pt := &n.ports[i]
	if pt.txBusy || pt.outQ.n == 0 || pt.paused {
		return
	}
	if ready := n.links[pt.link].ReadyAt; ready > now {
		if !pt.kickPending {
			pt.kickPending = true
			n.eng.Schedule(ready, evKick, i, 0)
		}
		return
	}
	k := pt.outQ.pop()
	pk := &n.pkts[k]
	pt.txBusy = true
	pt.txSize = pk.size
	pt.sent++
	if n.p.EEE.Mode != eee.AlwaysOn {
		n.ctlFor(i).Sent(int(pk.hops), 1)
	}
	pk.hops--
	n.eng.Schedule(now+n.p.Propagation, evArrive, pt.peer, k)
	n.eng.Schedule(now+n.ser(pk.size), evTxEnd, i, 0)
}

// txEnd: the last bit of port i's packet has left.
func (n *Network) txEnd(i int32, now int64) {
	pt := &n.ports[i]
	pt.txBusy = false
	if pt.sw >= 0 {
		pt.outBytes -= pt.txSize
		if pt.waitMask != 0 {
			n.oarb(i, now)
		}
	}
	if pt.outQ.n > 0 {
		n.tryStart(i, now)
		return
	}
	// Output queue empty after the last bit: the PDT timer is armed.
	pdt := eee.Never
	if n.p.EEE.Mode != eee.AlwaysOn {
		pdt = toPS(n.ctlFor(i).Decide(toDur(now)))
	}
	pt.pdt = pdt
	pt.idleStart = now
	n.links[pt.link].Release(now, pt.end, pdt)
}

// arrive: the first bit of packet k reaches port i from the link.
func (n *Network) arrive(i, k int32, now int64) {
	pt := &n.ports[i]
	pk := &n.pkts[k]
	done := now + n.ser(pk.size)
	if pt.sw < 0 { // a NIC: delivered when the last bit is in
		n.delivered++
		n.latency.add(done - pk.created)
		if pk.last {
			n.msgsDone++
		}
		n.lastDelivery = max(n.lastDelivery, done)
		n.free = append(n.free, k)
		return
	}
	pt.inBytes += pk.size
	if pt.inBytes > n.p.QueueBytes {
		n.overflows++
	}
	if !pt.pauseSent && pt.inBytes >= n.p.PFCStop {
		pt.pauseSent = true
		n.pauses++
		n.eng.Schedule(now+n.handshake, evPFC, pt.peer, 1)
	}
	pk.ready = done
	pk.out = n.swBase[pt.sw] + int32(n.t.Route(int(pt.sw), int(pk.dst)))
	pt.inQ.push(k)
	if pt.inQ.n == 1 && !pt.arbPending {
		pt.arbPending = true
		n.eng.Schedule(max(done, pt.inXbarFree), evArb, i, 0)
	}
}

// oarb arbitrates output port o's crossbar port among waiting inputs:
// oldest head packet first, round-robin among equals (aging).
func (n *Network) oarb(o int32, now int64) {
	po := &n.ports[o]
	if po.waitMask == 0 {
		return
	}
	if po.xbarFree > now {
		if !po.oarbPending {
			po.oarbPending = true
			n.eng.Schedule(po.xbarFree, evOarb, o, 0)
		}
		return
	}
	base := n.swBase[po.sw]
	best, bestAge := -1, int64(0)
	m := bits.RotateLeft64(po.waitMask, -int(po.rr))
	for m != 0 {
		j := (bits.TrailingZeros64(m) + int(po.rr)) & 63
		m &= m - 1
		age := n.pkts[n.ports[base+int32(j)].inQ.front()].ready
		if best < 0 || age < bestAge {
			best, bestAge = j, age
		}
	}
	in := base + int32(best)
	pi := &n.ports[in]
	k := pi.inQ.front()
	pk := &n.pkts[k]
	if po.outBytes+pk.size > n.p.QueueBytes {
		return // txEnd frees space and calls back
	}
	po.waitMask &^= 1 << uint(best)
	po.rr = uint8(best + 1)
	// Grant: move the packet across the crossbar.
	pi.inQ.pop()
	pi.inBytes -= pk.size
	if pi.pauseSent && pi.inBytes <= n.p.PFCGo {
		pi.pauseSent = false
		n.eng.Schedule(now+n.handshake, evPFC, pi.peer, 0)
	}
	x := n.xbar(pk.size)
	pi.inXbarFree = now + x
	po.xbarFree = now + x
	po.outBytes += pk.size
	n.eng.Schedule(max(now+x, pk.ready+n.p.SwitchLatency), evOutq, o, k)
	if pi.inQ.n > 0 {
		n.eng.Schedule(max(n.pkts[pi.inQ.front()].ready, now+x), evArb, in, 0)
	} else {
		pi.arbPending = false
	}
	if po.waitMask != 0 {
		po.oarbPending = true
		n.eng.Schedule(po.xbarFree, evOarb, o, 0)
	}
}

// Progress is what a progress callback sees.
type Progress struct {
	Now       int64 // simulated time (ps)
	Events    uint64
	Created   uint64 // packets created
	Delivered uint64
}

// ErrDeadlock reports packets left in the network when no event remains.
var ErrDeadlock = errors.New("network deadlocked")

// Run runs the simulation to completion. progress, if not nil, is called
// about every chunk events. The context cancels the run between chunks.
func (n *Network) Run(ctx context.Context, chunk uint64, progress func(Progress)) error {
	if n.finished {
		return errors.New("network: already run")
	}
	if chunk == 0 {
		chunk = 1 << 20
	}
	start := time.Now()
	for n.eng.Run(engine.Forever, chunk) {
		if err := ctx.Err(); err != nil {
			return err
		}
		if progress != nil {
			progress(Progress{Now: n.eng.Now(), Events: n.eng.Events(), Created: n.created, Delivered: n.delivered})
		}
	}
	n.wall = time.Since(start)
	n.finish()
	if n.delivered != n.created {
		return fmt.Errorf("%w: %d of %d packets undelivered at %d ps", ErrDeadlock, n.created-n.delivered, n.created, n.eng.Now())
	}
	return nil
}

// finish accounts every link's states up to the end of the run.
func (n *Network) finish() {
	n.finished = true
	end := n.lastDelivery
	if n.delivered == 0 {
		end = n.traffic.Start + n.traffic.Duration
	}
	end = max(end, n.eng.Now())
	n.endTime = end
	for i := range n.links {
		n.links[i].Finish(&n.p.EEE, end)
	}
}
