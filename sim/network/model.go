package network

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"time"
	"unsafe"

	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/eee"
	"github.com/lpictl/lpictl/sim/engine"
	"github.com/lpictl/lpictl/sim/internal/cache"
	"github.com/lpictl/lpictl/sim/internal/hugepage"
	"github.com/lpictl/lpictl/sim/topo"
)

// Event kinds.
const (
	evArrive   uint8 = iota // Obj receiving port, Arg packet: first bit arrives
	evArb                   // Obj switch input port, Arg its head packet, Aux the packet's output port: the head requests the crossbar
	evOarb                  // Obj switch output port: its crossbar port is free again
	evOutq                  // Obj output port, Arg packet: packet enters the output queue
	evTxEnd                 // Obj port: last bit of the packet being sent leaves (Aux: the queue's head then, a prefetch hint)
	evKick                  // Obj port: the link is awake, try to transmit
	evPFC                   // Obj port (sender), Arg 1 PAUSE / 0 resume
	evInject                // Obj its source node, Arg injected message
	evWSend                 // Obj source node, Arg workload message (workload.go): enters the NIC queue
	evWDeliver              // Arg workload message: its last packet is in
	evWTimer                // Obj, Arg: a workload timer's tag (high, low 32 bits)

	// Second kinds of the same events, scheduled from another place at
	// another delay, so that each joins the engine lane of its delay (see
	// New); they are handled as the first kinds.
	evArbNext  // evArb for an input's next head, after a grant
	evArbReady // evArbNext for a head whose last bit is not in yet
	evOarbBusy // evOarb while the crossbar port is still busy
	evOutqLate // evOutq for a packet that waited for the crossbar

	evTCEP // Obj, Arg: a consolidation event (consolidation.go)

	evPOWARRetry // as evArb: a head whose POWAR decision found no free port retries (routing.go)

	// evArriveFrom is evArrive from another partition of a parallel run
	// (parallel.go, importPackets): those come in a batch as a window
	// starts, in time order, and get a lane of their own, where the local
	// arrivals of the same times would push them out of evArrive's.
	evArriveFrom
)

// A port is one end of a link: a NIC or a switch port. A switch port has an
// input side (buffer fed by the link) and an output side (buffer feeding
// it). Its state is laid out so that an event touches as few cache lines as
// possible: port is 128 bytes, its first line what every packet the port
// sends touches, its second what the start and end of an idle period (and
// the results) need, with the hop counts of the packets sent since the
// last decision, which the link's other end may have to report (decide);
// the hardware fetches the pair together. inPort (half a line, another
// array) is what every packet the port receives touches.
type port struct {
	// Output side: one 64-byte line.
	head, tail int32   // output queue: list of packets linked by packet.next (−1: empty)
	xbarFree   int64   // crossbar port busy until
	readyAt    int64   // the link carries bits from (set when the busy period starts)
	waitMask   uint64  // inputs waiting for this output's crossbar port
	_          [8]byte // free
	peer       int32   // port at the other end (−1: unconnected)
	link       int32
	sw         int32 // switch, or −1 for a NIC
	bytes      int32 // output buffer bytes (reserved at crossbar grant)
	txSize     int32 // size of the packet being sent
	local      uint8 // port number on its switch
	end        uint8 // 0 or 1: which end of the link
	rr         uint8 // round-robin pointer among equally old inputs
	flags      uint8 // txBusy, paused, kickPending, oarbPending, watched, extPDT

	// Idle periods and reporting: the second line.
	ctl *controller.Port // built on first use (see ctlFor)
	// pred is the predictor's struct when it is built apart, nil in a
	// ctlSlot (predictor.Layout), only for Prefetch: it is a cache miss
	// at the decision otherwise, whatever the predictor.
	pred      unsafe.Pointer
	idleStart int64  // when the output queue last emptied (−1: never sent)
	pdt       int64  // t_PDT in force (ps)
	sent      uint64 // packets sent (reported to the controller)
	class     uint8  // reporting class: 0 NIC, then switch roles
	// undecided: the output queue emptied at idleStart and the port's
	// controller has not yet been asked for that idle period's t_PDT. It
	// is asked lazily, with idleStart as the time (see decide), so that a
	// packet entering the queue in the same picosecond leaves no idle
	// period and no decision (docs/model.md §1.1). Not a bit of flags:
	// the link's other end reads and clears it (linkOwner, decide), and
	// flags is written by this switch's other ports (oarb), which a
	// parallel run does not order against that end (parallel.go).
	undecided bool
	// watching is flags&watched, for flushSent, which the other end may
	// run (decide) and which then reads only this line.
	watching bool
	// floor is the controller's SleepFloor, copied after each call that
	// may change it (Decide, IdleEnded, ChargeDelay), so that the link's
	// other end reads this line rather than two of the controller's
	// (peerFloor); n.initReady while the controller is not built.
	floor time.Duration
	// pendHops holds the hop counts (one byte each, oldest lowest) of up to
	// eight packets sent but not yet reported to the controller: they are
	// reported, in order, before its next decision (see flushSent). In
	// this line, which the other end reads when it makes that decision.
	pendHops uint64
}

// A port is two whole lines (the index fails to compile otherwise).
var _ = [1]struct{}{}[unsafe.Sizeof(port{})-128]

// ctlSlot is a port's controller and its predictor (a PerfBoundCorrect or
// a PerfBound: predictor.Slot) in one place, each starting on a cache
// line, so that the decision's lines are neighbours. Slots are numbered in the order ports are first used and
// stored in chunks of slotChunk slots, allocated as they fill (from slabs
// on huge pages on a large network: newSlotChunk): memory goes only to
// ports that send (on a large network at low load most never do), and
// Prefetch finds a port's slot from one int32 (portHints.slot).
type ctlSlot struct {
	ctl  controller.Port
	_    [(64 - unsafe.Sizeof(controller.Port{})%64) % 64]byte
	pred predictor.Slot // a PerfBoundCorrect or a PerfBound
	// No padding field after pred: one of size 0 would still add 8 bytes.
	// The predictor is whole cache lines (the index below fails to compile
	// otherwise).
}

var _ = [1]struct{}{}[unsafe.Sizeof(ctlSlot{})%64]

// slotChunk is the number of slots per chunk of ctlSlots: 128 slots of
// 960 B are 15 whole 8 KiB pages (the runtime rounds a large allocation up
// to whole pages).
const (
	slotShift = 7
	slotChunk = 1 << slotShift
)

// Hot lines of a ctlSlot that prefetchIdle loads: the controller's first
// three (its decision and observation fields, and its delay ledger, which
// every decision checks) and the predictor's but its last: a
// PerfBoundCorrect's log FIFO (read only when the misses in its register
// change; the predictor's TestLogFIFOLastLine keeps it there), past the
// end of a PerfBound.
const (
	slotCtlLines  = 3
	slotPredLines = int(unsafe.Sizeof(predictor.Slot{}))/64 - 1
)

// inPort is the input side of a port.
type inPort struct {
	head, tail int32 // input queue (packet list, −1: empty)
	xbarFree   int64 // crossbar port busy until
	bytes      int32 // input buffer bytes (counted from the first bit)
	sw         int32 // switch, or −1 for a NIC
	peer       int32 // port at the other end
	local      uint8 // port number on its switch
	flags      uint8 // pauseSent, arbPending
}

// What Prefetch needs of a port without loading its lines: whether its
// output queue is empty (a bit per port, so that the bitmap stays in the
// cache: an idle period may start or end), and then its link.
type portHints struct {
	empty []uint64 // bit i: port i's output queue is empty
	// Bit i: the other end of port i's link transmitted last and has its
	// t_PDT still to decide, which the end of port i's idle period then
	// asks for (linkOwner). Read when empty, so that Prefetch loads that
	// end's controller only when it will decide. A parallel run's
	// partitions each keep their own bits, for their ports.
	peerUndecided []uint64
	port          []portHint // read when port i's queue is empty
}

// portHint is what Prefetch reads of a port whose idle period starts or
// ends, together: one load, at most two lines.
type portHint struct {
	link int32 // the port's link (−1: unconnected)
	slot int32 // its ctlSlot (−1: none yet, or not slotted)
	peer int32 // the link's other end (−1: none)
}

func (h *portHints) isEmpty(i int32) bool { return h.empty[i>>6]&(1<<(uint(i)&63)) != 0 }
func (h *portHints) setEmpty(i int32)     { h.empty[i>>6] |= 1 << (uint(i) & 63) }
func (h *portHints) clearEmpty(i int32)   { h.empty[i>>6] &^= 1 << (uint(i) & 63) }

// setUndecided sets (on) or clears bit q of peerUndecided (nothing for
// q < 0, an unconnected port's peer).
func (h *portHints) setUndecided(q int32, on bool) {
	if q < 0 {
		return
	}
	if on {
		h.peerUndecided[q>>6] |= 1 << (uint(q) & 63)
	} else {
		h.peerUndecided[q>>6] &^= 1 << (uint(q) & 63)
	}
}

// port flags.
const (
	txBusy uint8 = 1 << iota
	paused
	kickPending
	oarbPending
	watched // idle periods and hops go to the external controller or the port trace (external.go)
	extPDT  // t_PDT comes from SetPDT, not from the port's controller (external.go)
)

// inPort flags.
const (
	pauseSent uint8 = 1 << iota
	arbPending
)

// packet is one MTU-sized (or smaller, last) segment of a message.
type packet struct {
	created int64 // message generation time
	ready   int64 // last bit in at the current switch (its age)
	msg     int32 // workload message record (workload.go), or −1 − src for other traffic
	tag     int32 // the message's driver tag, in part (packTag): what its delivery's prefetch needs
	dst     int32
	out     int32 // output port at the current switch
	size    int32
	next    int32 // next packet in the queue holding this one
	hops    uint8 // links still to cross, counting the next one
	last    bool  // last segment of its message
	only    bool  // its message's only segment
	detour  bool  // PAL: at an intermediate of its current dimension (consolidation.go)
	vc      uint8 // traffic class (two classes only) on the link it crossed or will cross (vc.go)
	vcNext  uint8 // class on its next link, taken at the crossbar grant
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
	in      []inPort
	hints   portHints  // what Prefetch reads instead of the port
	links   []eee.Link // per link, or per direction (eee.PerDirection: 2·link + end)
	txPS    []int64    // per entry of links, time its ends transmitted (ps); only with Power.IdleFraction < 1 (model §1.3)
	nLinks  int        // the topology's links
	swBase  []int32
	classes []string
	pkts    []packet
	free    []int32
	// slots holds the ports' controllers and predictors, slot k in
	// slots[k>>slotShift][k&(slotChunk-1)], numbered in the order the
	// ports are first used (hints.port), when the predictor is
	// PerfBoundCorrect or PerfBound; otherwise slots is nil and
	// controllers are allocated one by one (newApart).
	slots  []*[slotChunk]ctlSlot
	nSlots int32 // slots in use
	// predLines is how many lines of a predictor built apart (port.pred)
	// prefetchIdle loads: one predictor configuration per network, so
	// one size, the prototype's (startPrototype).
	predLines int
	// slab holds the slots allocated and not yet in a chunk, and
	// slabNext the chunks of the last slab (newSlotChunk).
	slab     []ctlSlot
	slabNext int
	// ctlCfg is the controller configuration every port's controller
	// shares (unless EEE is off), and slotInit builds the slots'
	// predictors (set with slots).
	ctlCfg   *controller.Shared
	slotInit *predictor.SlotBuilder

	ecmp    ecmp            // ECMP routing's state (routing.go); ecmp.mp is nil with minimal routing
	pw      *powarState     // POWAR routing's state (routing.go; it uses ecmp's multipath view); nil otherwise
	portTx  []int64         // per port, the time it transmitted (ps): the powar_model block's ideal; nil without it
	tc      *tcepState      // the consolidation and PAL routing (consolidation.go); nil without
	vc      []vcSide        // per port, the second traffic class (vc.go); nil with one class
	cls     topo.HopClasser // the hop classes without PAL (HopClasses); nil otherwise
	palQ    []int32         // per port, packets PAL routed to it not yet sent (routing.go); nil without PAL
	palSeq  uint64          // PAL's per-packet random choices so far (routing.go)
	wl      workloadState   // an attached workload (workload.go)
	ext     external        // external control of chosen ports (external.go)
	injects []injected
	parts   []*Network // the partitions of a parallel run, after it (parallel.go)
	// partition: n is a parallel run's partition (partCopy). A port then
	// builds its controller when its first idle period starts (txEnd),
	// in its own partition, rather than when first asked: the link's
	// other end, perhaps in another partition, may ask first.
	partition bool

	psPerByte, xbarPsPerByte float64
	handshake                int64
	initPDT                  int64
	initReady                time.Duration // controller.Port.SleepAllowedAt of a port not yet used

	// statistics
	latency      *logHist
	latSamples   []int64    // every latency (ps) while exact percentiles are kept
	latInexact   bool       // more than latencyExactCap packets: bucketed percentiles
	idle         []*logHist // per class
	histPort     int32      // port with its own idle histogram (−1: none)
	portIdle     *logHist
	trace        *portTrace // the traced port's idle periods (trace.go)
	created      uint64
	delivered    uint64
	msgsSent     uint64
	msgsDone     uint64
	lastDelivery int64
	overflows    uint64
	pauses       uint64
	wall         time.Duration
	finished     bool
	// fellBack: a parallel run went on on one thread from fellBackAt
	// (simulated ps), other processes having taken its cores (parallel.go).
	fellBack    bool
	fellBackAt  int64
	interrupted bool // Run stopped by its context, or deadlocked: results up to then
	deadlocked  bool // Run ended with packets left and no event (deadlock.go)
	endTime     int64
}

// New builds the network t with parameters p. Traffic comes from an
// attached workload (AttachWorkload) or from Inject.
func New(t topo.Topology, p Params) (*Network, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	p.EEE.Prepare()
	n := &Network{p: p, t: t, latency: newLogHist(), histPort: -1}
	n.deriveTiming()
	slotted, err := n.startPrototype()
	if err != nil {
		return nil, err
	}
	total, err := n.layoutPorts()
	if err != nil {
		return nil, err
	}
	if slotted {
		n.slots = make([]*[slotChunk]ctlSlot, 0, 16)
	}
	if err := n.cableLinks(); err != nil {
		return nil, err
	}
	if err := n.setupRouting(total); err != nil {
		return nil, err
	}
	n.initQueues(total)
	if err := n.startEngine(total); err != nil {
		return nil, err
	}
	if p.TCEP.Enabled || p.Routing == RoutingUGAL {
		// PAL routing: with the consolidation, or over every link
		// (routing ugal: no epoch ever runs, every link stays Active).
		if n.p.TCEP.Config, err = palConfig(t, &p); err != nil {
			return nil, err
		}
		n.vc = newVC(total)
		n.palQ = make([]int32, total)
		if n.tc, err = newTCEP(n); err != nil {
			return nil, err
		}
		if p.TCEP.Enabled {
			n.tcepSchedule(p.TCEP.ActivationEpoch, tcepTick, 0, 0)
		}
	} else if n.cls = HopClasses(t, p.Routing); n.cls != nil {
		n.vc = newVC(total)
	}
	return n, nil
}

// deriveTiming sets the serialisation rates, the power-down handshake, the
// end-to-end gate and the ledger's miss cost from the parameters.
func (n *Network) deriveTiming() {
	p := &n.p
	n.psPerByte = 8e12 / p.RateBps
	n.xbarPsPerByte = n.psPerByte / p.Speedup
	n.handshake = Ser(int64(p.ControlBytes), p.RateBps) + p.Propagation
	p.EEE.Handshake = n.handshake
	if p.EEE.LPI == eee.PerDirection {
		// Each transmitter decides alone: no power-down handshake.
		p.EEE.Handshake = 0
	}
	if b := p.EndToEnd.Bound; b > 0 && p.EEE.Mode != eee.AlwaysOn {
		h := p.EndToEnd.Headroom
		if h == 0 {
			h = p.EEE.Cycle()
		}
		p.EEE.Gate = eee.NewGate(b/(1+b), h)
	}
	if p.Controller.MissCost == 0 {
		// The ledger's miss cost: one whole power-down cycle of the mode.
		p.Controller.MissCost = predictor.Duration(controller.ChargePS(p.EEE.Cycle()))
	}
}

// startPrototype builds the controller prototype, which validates the
// configuration and gives the t_PDT every port starts with (never with
// EEE off). slotted: the predictor keeps per-port slots (PerfBoundCorrect,
// PerfBound: predictor.Slotted).
func (n *Network) startPrototype() (slotted bool, err error) {
	n.initPDT = eee.Never
	if n.p.EEE.Mode == eee.AlwaysOn {
		return false, nil
	}
	ctl, err := newController(&n.p)
	if err != nil {
		return false, err
	}
	// Decide at 0: under the ledger a link may not go down before the
	// budget covers one wake-up, not even in the idle period every
	// link starts with.
	n.initPDT = toPS(ctl.Decide(0))
	// A port whose controller is not built yet has the prototype's
	// ledger: the peer rule reads this rather than building it.
	n.initReady = ctl.SleepAllowedAt(0)
	_, size := predictor.Layout(ctl.Predictor())
	n.predLines = min(int(size+63)/64, maxPredLines)
	if n.ctlCfg, err = controller.NewShared(n.p.Controller); err != nil {
		return false, err
	}
	if slotted = predictor.Slotted(ctl.Predictor().Kind()); slotted {
		if n.slotInit, err = predictor.NewSlotBuilder(n.p.Predictor); err != nil {
			return false, err
		}
	}
	return slotted, nil
}

// layoutPorts numbers the ports (the nodes' first, then each switch's from
// swBase), gives each switch port its switch, local index and the class of
// the switch's role, and returns the number of ports.
func (n *Network) layoutPorts() (total int, err error) {
	t := n.t
	nodes, switches := t.Nodes(), t.Switches()
	n.swBase = make([]int32, switches+1)
	total = nodes
	for s := 0; s < switches; s++ {
		n.swBase[s] = int32(total)
		r := t.Radix(s)
		if r > 64 {
			return 0, fmt.Errorf("topology.radix: the simulator's crossbar supports up to 64 ports per switch, switch %d has %d", s, r)
		}
		total += r
	}
	n.swBase[switches] = int32(total)
	if total > math.MaxInt32/2 {
		return 0, fmt.Errorf("topology: %d ports is too many", total)
	}
	n.ports = hugepage.Make[port](total)
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
	return total, nil
}

// cableLinks joins the ports of each link, one eee.Link per link (both
// ends share its power state) or per direction (eee.PerDirection), starts
// the links with the initial t_PDT, gives it every port, and checks that
// every node is cabled.
func (n *Network) cableLinks() error {
	links := n.t.Links()
	n.nLinks = len(links)
	perDirection := n.p.EEE.LPI == eee.PerDirection
	if perDirection {
		n.links = hugepage.Make[eee.Link](2 * len(links))
	} else {
		n.links = hugepage.Make[eee.Link](len(links))
	}
	if f := n.p.Power.IdleFraction; f > 0 && f < 1 {
		n.txPS = make([]int64, len(n.links))
	}
	for li, l := range links {
		a, b := n.portOf(l.A), n.portOf(l.B)
		if n.ports[a].peer >= 0 || n.ports[b].peer >= 0 {
			return fmt.Errorf("topology: port cabled twice (link %d)", li)
		}
		if perDirection {
			// One eee.Link per direction (model §1.2): port a transmits
			// on 2·li, port b on 2·li+1, each as that link's only end (0).
			n.ports[a].peer, n.ports[a].link, n.ports[a].end = b, int32(2*li), 0
			n.ports[b].peer, n.ports[b].link, n.ports[b].end = a, int32(2*li+1), 0
			n.links[2*li].Start(0, n.initPDT)
			n.links[2*li+1].Start(0, n.initPDT)
			continue
		}
		n.ports[a].peer, n.ports[a].link, n.ports[a].end = b, int32(li), 0
		n.ports[b].peer, n.ports[b].link, n.ports[b].end = a, int32(li), 1
		n.links[li].Start(0, n.initPDT)
	}
	nodes := n.t.Nodes()
	for i := range n.ports {
		if i < nodes && n.ports[i].peer < 0 {
			return fmt.Errorf("topology: node %d is not cabled", i)
		}
		n.ports[i].pdt = n.initPDT
	}
	return nil
}

// setupRouting builds the routing tables ECMP and POWAR need.
func (n *Network) setupRouting(total int) error {
	var err error
	if n.p.Routing == RoutingECMP || n.p.Routing == RoutingPOWAR {
		if n.ecmp, err = newECMP(n.t); err != nil {
			return err
		}
	}
	if n.p.Routing == RoutingPOWAR {
		if n.pw, err = newPOWAR(n.t, &n.p, total); err != nil {
			return err
		}
	}
	if n.p.Routing == RoutingPOWAR || n.p.POWAR.Report {
		n.portTx = make([]int64, total) // the powar_model block's ideal
	}
	return nil
}

// initQueues empties every port's output and input queues, marks every
// port's queue empty in the hints, and makes the idle histograms.
func (n *Network) initQueues(total int) {
	n.in = hugepage.Make[inPort](total)
	n.hints = portHints{empty: make([]uint64, (total+63)/64), peerUndecided: make([]uint64, (total+63)/64),
		port: hugepage.Make[portHint](total)}
	for i := range n.ports {
		pt := &n.ports[i]
		pt.head, pt.tail = -1, -1
		n.hints.port[i] = portHint{link: pt.link, slot: -1, peer: pt.peer}
		pt.floor = n.initReady
		n.hints.setEmpty(int32(i))
		n.in[i] = inPort{head: -1, tail: -1, sw: pt.sw, peer: pt.peer, local: pt.local}
	}
	n.idle = make([]*logHist, len(n.classes))
	for i := range n.idle {
		n.idle[i] = newLogHist()
	}
}

// startEngine makes the event queue (its calendar sized for total ports
// unless engine.queue's bucket and buckets are set) and the engine, and
// gives the event kinds their lanes.
func (n *Network) startEngine(total int) error {
	p := &n.p
	bucket, buckets := p.CalendarBucketPS, p.CalendarBuckets
	if bucket == 0 {
		// 16 MTU serialisation times per port: near the present a bucket
		// then holds tens of events at peak (the calendar's runs of slots
		// grow to hold them); wider and fewer buckets keep the ring small
		// and inserts local (measured better than narrower ones).
		ser := Ser(int64(p.MTU), p.RateBps)
		bucket = max(1, 16*ser/int64(max(1, total)))
		bucket = min(bucket, 4*engine.Nanosecond)
	}
	if buckets == 0 {
		// A year of two MTU serialisation times plus a switch traversal.
		year := 2*Ser(int64(p.MTU), p.RateBps) + p.SwitchLatency + p.Propagation
		buckets = int(min(1<<20, max(1024, year/bucket)))
	}
	q, err := engine.NewQueue(p.Queue, bucket, buckets)
	if err != nil {
		return fmt.Errorf("engine.queue: %w", err)
	}
	n.eng = engine.New(q, n)
	// Kinds scheduled at a nearly constant delay from now get a lane
	// (engine.UseLane), kinds at the same delay the same lane: one
	// propagation delay after a send (an arrival); one serialisation
	// time after a send or an arrival (the end of a transmission, a
	// crossbar request, a delivery); one crossbar time after a grant (the
	// output's next arbitration, the input's next request, the output
	// queue entry of a packet that waited); a switch latency after the
	// arrival (the output queue entry of one that did not); a handshake
	// after the crossing of a PFC threshold; one NIC latency after a
	// message is sent (its entry into the NIC queue). Workload timers
	// come in time order; a head's request when its last bit is in is on
	// its own; so are POWAR's retries, one retry period after a failed
	// decision, and only with POWAR: a lane no event joins still costs
	// every run event a match of the engine's loser tree once the lanes
	// are more than eight (docs/simulator.md "Engine"). Arrivals from
	// another partition have a lane in the partitions' engines only
	// (runParallel).
	lanes := [][]uint8{
		{evArrive}, {evTxEnd, evArb, evWDeliver}, {evArbNext, evOarb, evOutqLate},
		{evOutq}, {evPFC}, {evWSend}, {evWTimer}, {evArbReady},
	}
	if p.Routing == RoutingPOWAR {
		lanes = append(lanes, []uint8{evPOWARRetry})
	}
	for _, kinds := range lanes {
		n.eng.UseLane(kinds...)
	}
	// The objects that run the events, which order the events of the same
	// picosecond (engine doc, "Event order"): port Obj runs the port kinds
	// (the engine's default, object 1 + Obj; a message's injection and
	// its entry into the NIC queue are its source node's, whose port has
	// the node's index), the workload's replayer its deliveries and
	// timers, the consolidation its events.
	wl, tc := uint32(total)+1, uint32(total)+2
	if tc > engine.MaxSource {
		return fmt.Errorf("topology: %d ports, more than the engine's %d event sources", total, engine.MaxSource-2)
	}
	n.eng.SetOwner(evTCEP, tc, false) // first, the highest: the engine sizes its counts once
	for _, k := range []uint8{evWDeliver, evWTimer} {
		n.eng.SetOwner(k, wl, false)
	}
	// The workload's events run after the network's of the same
	// picosecond (engine.SetLate), so that a parallel run can run them
	// apart (parallel.go). It changes no result: the replayer only
	// schedules events a NIC latency or more ahead and timers for itself,
	// and no network event reads what it changes in the same picosecond,
	// so its events keep their order among themselves and the network's
	// theirs.
	n.eng.SetLate(evWDeliver, evWTimer)
	return nil
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
		n.buildCtl(i)
	}
	return pt.ctl
}

// buildCtl builds port i's controller: in its ctlSlot, or apart.
func (n *Network) buildCtl(i int32) {
	pt := &n.ports[i]
	pt.ctl, pt.pred = n.makeCtl(i)
	pt.floor = pt.ctl.SleepFloor()
}

// makeCtl makes a controller for port i (in a ctlSlot, which Prefetch
// then finds, or apart) and returns it with its predictor's struct when
// that is built apart (predictor.Layout; prefetchIdle reads predLines of it).
func (n *Network) makeCtl(i int32) (*controller.Port, unsafe.Pointer) {
	if n.slots != nil {
		k := n.nSlots
		n.nSlots++
		if int(k>>slotShift) == len(n.slots) {
			n.slots = append(n.slots, n.newSlotChunk())
		}
		n.hints.port[i].slot = k
		s := n.slot(k)
		n.initSlot(s)
		return &s.ctl, nil
	}
	ctl := n.newApart()
	at, _ := predictor.Layout(ctl.Predictor())
	return ctl, at
}

// newApart builds a controller and its predictor apart (not in a slot).
// The controller points at the network's configuration (ctlCfg), as the
// slots' do, rather than at a copy of its own: one more line a decision
// would read, and miss, per port.
func (n *Network) newApart() *controller.Port {
	pred, err := predictor.New(n.p.Predictor)
	if err != nil {
		panic(err) // validated by the prototype in New
	}
	ctl := new(controller.Port)
	n.ctlCfg.InitPort(ctl, pred, 0)
	return ctl
}

// maxPredLines caps the lines prefetchIdle loads of a predictor built
// apart: as many as of a ctlSlot's. Larger ones (NextGap, 2.3 KB) load
// their first lines only.
const maxPredLines = slotPredLines

// Slot chunks are allocated in slabs (newSlotChunk) on a network with at
// least slabFirst chunks' worth of ports: the first slab holds slabFirst
// chunks (16 chunks of 120 KiB are just under one huge page), each next
// one twice as many, up to slabMax chunks (120 MiB), and never more than
// the ports without a slot need. In slabs the slots can be on huge pages
// (hugepage.Make), which chunk by chunk they could not. Slabs that grow
// keep small what a lightly loaded network allocates and never uses;
// large ones keep few the fronts of up to 2 MiB that hugepage.Make adds
// to each (address space, which the garbage collector counts as heap).
const (
	slabFirst = 16
	slabMax   = 1024
)

// newSlotChunk returns a chunk for the next slotChunk slots: the next one
// of the current slab, or one alone on a small network.
func (n *Network) newSlotChunk() *[slotChunk]ctlSlot {
	if len(n.ports) < slabFirst*slotChunk {
		return new([slotChunk]ctlSlot)
	}
	if len(n.slab) == 0 {
		n.slabNext = min(max(2*n.slabNext, slabFirst), slabMax)
		// At least one chunk: the port asking has no slot, even when
		// nSlots says every port has one. After a parallel run went on
		// on one thread it overcounts: the partitions' last chunks keep
		// unused slots (mergeSlots).
		need := max(1, (len(n.ports)-int(n.nSlots)+slotChunk-1)/slotChunk)
		n.slab = hugepage.Make[ctlSlot](min(n.slabNext, need) * slotChunk)
	}
	c := (*[slotChunk]ctlSlot)(n.slab)
	n.slab = n.slab[slotChunk:]
	return c
}

// slot is controller slot k.
func (n *Network) slot(k int32) *ctlSlot { return &n.slots[k>>slotShift][k&(slotChunk-1)] }

// initSlot builds a controller and its predictor in slot s.
func (n *Network) initSlot(s *ctlSlot) {
	n.ctlCfg.InitPort(&s.ctl, n.slotInit.Init(&s.pred), 0)
}

// newCtl returns a new controller built as buildCtl builds a port's, owned
// by no port.
func (n *Network) newCtl() *controller.Port {
	if n.slots != nil {
		s := new(ctlSlot)
		n.initSlot(s)
		return &s.ctl
	}
	return n.newApart()
}

// Engine returns the event engine.
func (n *Network) Engine() *engine.Engine { return n.eng }

// Topology returns the network's topology.
func (n *Network) Topology() topo.Topology { return n.t }

// Inject schedules a message of bytes from node src to node dst generated
// at time at (it enters src's NIC queue after the NIC latency).
func (n *Network) Inject(at int64, src, dst int, bytes int64) {
	n.injects = append(n.injects, injected{created: at, src: int32(src), dst: int32(dst), bytes: bytes})
	n.eng.Schedule(at+n.p.NICLatency, evInject, int32(src), int32(len(n.injects)-1))
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

// sendMessage segments a message at the MTU into src's NIC output queue;
// msg is its workload message record, or −1 − src for other traffic
// (ECMP hashes the source and destination of those, routing.go), and tag
// the record's driver tag, packed (packTag; 0 for other traffic), which
// its packets carry to the delivery.
func (n *Network) sendMessage(now, created int64, src, dst int32, bytes int64, msg, tag int32) {
	if src == dst || bytes <= 0 {
		return
	}
	hops := uint8(min(255, topo.Hops(n.t, int(src), int(dst))))
	n.msgsSent++
	for rem := bytes; rem > 0; {
		size := int32(min(rem, int64(n.p.MTU)))
		rem -= int64(size)
		k := n.alloc()
		n.pkts[k] = packet{created: created, msg: msg, tag: tag, dst: dst, size: size, hops: hops, last: rem == 0, only: rem == 0 && size == int32(bytes)}
		n.created++
		n.enqueueOut(src, k, now)
	}
}

// Handle runs one event.
func (n *Network) Handle(e engine.Event) {
	now := e.At
	switch e.Kind {
	case evArrive, evArriveFrom:
		n.arrive(e.Obj, e.Arg, now)
	case evArb, evArbNext, evArbReady, evPOWARRetry:
		// The input's head is still e.Arg (it only leaves when granted,
		// after this request) and its output e.Aux, unless POWAR decides
		// it only now (routing.go, decidePOWAR; it may have to wait).
		o := e.Aux
		if n.pw != nil && n.pw.wait {
			if e.Kind == evPOWARRetry && !n.retryDue(e.Obj, e.Arg) {
				return
			}
			if n.pkts[e.Arg].out < 0 {
				var ok bool
				if o, ok = n.decidePOWAR(e.Obj, e.Arg, now, e.Kind == evPOWARRetry); !ok {
					return
				}
			}
			n.pw.pending[o]++
			if n.pw.pending1 != nil && n.pkts[e.Arg].vcNext == 1 {
				n.pw.pending1[o]++
			}
		}
		if n.vc != nil && n.pkts[e.Arg].vc == 1 {
			n.vc[o].wait |= 1 << n.in[e.Obj].local
		} else {
			n.ports[o].waitMask |= 1 << n.in[e.Obj].local
		}
		n.oarb(o, now)
	case evOarb, evOarbBusy:
		n.ports[e.Obj].flags &^= oarbPending
		n.oarb(e.Obj, now)
	case evOutq, evOutqLate:
		n.enqueueOut(e.Obj, e.Arg, now)
	case evTxEnd:
		n.txEnd(e.Obj, now)
		if n.pw != nil {
			n.powarRelease(e.Obj, now)
		}
	case evKick:
		n.ports[e.Obj].flags &^= kickPending
		n.tryStart(e.Obj, now)
	case evPFC:
		if e.Arg >= pfcResume1 {
			n.vcPFC(e.Obj, e.Arg == pfcPause1, now)
			if n.pw != nil && e.Arg == pfcResume1 {
				n.powarRelease(e.Obj, now)
			}
			break
		}
		po := &n.ports[e.Obj]
		if n.tc != nil {
			n.tc.pfc(e.Obj, e.Arg == 1, now)
		}
		if e.Arg == 1 {
			po.flags |= paused
		} else {
			po.flags &^= paused
			n.tryStart(e.Obj, now)
			if n.pw != nil {
				n.powarRelease(e.Obj, now)
			}
		}
	case evInject:
		m := n.injects[e.Arg]
		n.sendMessage(now, m.created, m.src, m.dst, m.bytes, -1-m.src, 0)
	case evWSend, evWDeliver, evWTimer:
		n.workloadEvent(e)
	case evTCEP:
		n.tcepEvent(now, e.Obj, e.Arg)
	}
}

// Prefetch starts loading the port (and packet) the next event will need,
// so that its cache misses overlap the current event (engine.Prefetcher).
// Addresses known without a load are prefetched (prefetch never stalls);
// what needs a pointer or index from another line loads that line first.
func (n *Network) Prefetch(e *engine.Event) {
	switch e.Kind {
	case evArrive, evArriveFrom:
		cache.Prefetch2(addr(&n.in[e.Obj]), addr(&n.pkts[e.Arg]))
	case evArb, evArbNext, evArbReady, evPOWARRetry:
		cache.Prefetch3(addr(&n.in[e.Obj]), addr(&n.pkts[e.Arg]), addr(&n.ports[e.Aux]))
	case evOutq, evOutqLate, evTxEnd:
		// Both may end or start an idle period: the controller and the
		// link are needed too when the output queue is empty.
		k := e.Arg
		if e.Kind == evTxEnd {
			k = max(e.Aux, 0)
		}
		cache.Prefetch2(addr(&n.pkts[k]), addr(&n.ports[e.Obj]))
		if n.hints.isEmpty(e.Obj) {
			if e.Kind == evTxEnd {
				n.prefetchIdleStart(e.Obj, &n.hints.port[e.Obj])
			} else {
				h := &n.hints.port[e.Obj]
				n.prefetchIdle(e.Obj, h)
				n.prefetchPeer(e.Obj, h)
			}
		}
	case evOarb, evOarbBusy, evKick, evPFC:
		cache.Prefetch(addr(&n.ports[e.Obj]))
	case evWSend:
		// The message's record, its source NIC's port (in Obj), and its
		// controller if the port is idle.
		cache.Prefetch2(addr(n.wl.msg(e.Arg)), addr(&n.ports[e.Obj]))
		if n.hints.isEmpty(e.Obj) {
			h := &n.hints.port[e.Obj]
			n.prefetchIdle(e.Obj, h)
			n.prefetchPeer(e.Obj, h)
		}
	case evWDeliver:
		// The message's record and the driver's state for it, found from
		// the part of its tag the event carries (the record is cold: it
		// was written when the message was sent).
		cache.Prefetch(addr(n.wl.msg(e.Arg)))
		if n.wl.pf != nil {
			n.wl.pf.PrefetchDelivered(unpackTag(e.Aux))
		}
	case evWTimer:
		if n.wl.pf != nil {
			n.wl.pf.PrefetchTimer(uint64(uint32(e.Obj))<<32 | uint64(uint32(e.Arg)))
		}
	}
}

// prefetchBin starts loading the line of port i's histogram bins where its
// idle period of that length will be counted, when the bins are out of the
// predictor (predictor.PerfBound.BinAddr): the load overlaps the decision
// that comes first (on LAMMPS, where most histograms are out of line, that
// miss was the largest single cost of a run).
func (n *Network) prefetchBin(i int32, length int64) {
	if n.slots == nil || n.p.EEE.Mode == eee.AlwaysOn {
		return
	}
	if k := n.hints.port[i].slot; k >= 0 {
		if a := n.slot(k).pred.BinAddr(toDur(length)); a != 0 {
			cache.Prefetch(a)
		}
	}
}

// prefetchPeer starts loading what the end of port i's idle period reads
// of the link's other end (linkOwner, peerFloor): its second line, with
// its undecided flag and its copy of its ledger's floor; and, when that
// end transmitted last and has its t_PDT to decide (peerUndecided), the
// controller and predictor the decision reads. Per-direction LPI reads
// nothing of the peer.
func (n *Network) prefetchPeer(i int32, h *portHint) {
	q := h.peer
	if q < 0 || n.p.EEE.Mode == eee.AlwaysOn || n.p.EEE.LPI == eee.PerDirection {
		return
	}
	cache.Prefetch(addr(&n.ports[q]) + 64)
	if n.slots == nil || n.hints.peerUndecided[i>>6]&(1<<(uint(i)&63)) == 0 {
		return
	}
	if k := n.hints.port[q].slot; k >= 0 && int(k>>slotShift) < len(n.slots) {
		s := n.slot(k)
		cache.PrefetchLines(uintptr(unsafe.Pointer(&s.ctl)), slotCtlLines)
		cache.PrefetchLines(uintptr(unsafe.Pointer(&s.pred)), slotPredLines)
	}
}

// addr is p's address, for a prefetch.
func addr[T any](p *T) uintptr { return uintptr(unsafe.Pointer(p)) }

// prefetchIdleStart starts loading what the start of port i's idle period
// needs: its second line and its link. Not its controller: it hears of
// the packets sent only when it decides (txEnd).
func (n *Network) prefetchIdleStart(i int32, h *portHint) {
	// The link's 120 bytes may straddle two lines: the hardware need not
	// fetch a line's neighbour.
	l := addr(&n.links[h.link])
	cache.Prefetch3(addr(&n.ports[i])+64, l, l+unsafe.Sizeof(eee.Link{})-1)
}

// prefetchIdle starts loading what the end of port i's idle period needs:
// what its start does (its second line and its link) and its controller
// and predictor.
func (n *Network) prefetchIdle(i int32, h *portHint) {
	n.prefetchIdleStart(i, h)
	if n.slots != nil {
		if k := h.slot; k >= 0 {
			s := n.slot(k)
			cache.PrefetchLines(uintptr(unsafe.Pointer(&s.ctl)), slotCtlLines)
			cache.PrefetchLines(uintptr(unsafe.Pointer(&s.pred)), slotPredLines)
		}
		return
	}
	pt := &n.ports[i]
	if pt.ctl == nil {
		return
	}
	cache.PrefetchLines(uintptr(unsafe.Pointer(pt.ctl)), int(unsafe.Sizeof(controller.Port{})+63)/64)
	if pt.pred != nil {
		cache.PrefetchLines(uintptr(pt.pred), n.predLines)
	}
}

// enqueueOut puts packet k into port i's output queue at now.
func (n *Network) enqueueOut(i, k int32, now int64) {
	po := &n.ports[i]
	if n.vc != nil && n.pkts[k].vc == 1 {
		n.vcEnqueueOut(i, k, now)
		return
	}
	n.pkts[k].next = -1
	if po.head < 0 {
		if po.flags&txBusy == 0 && n.vcOutEmpty(i) {
			n.needed(i, now)
		}
		po.head = k
		n.hints.clearEmpty(i)
	} else {
		n.pkts[po.tail].next = k
	}
	po.tail = k
	n.tryStart(i, now)
}

// needed: a packet needs port i, whose output queue was empty: the port's
// idle period ends and the link wakes if it must (docs/model.md §1.1). A packet in
// the picosecond the queue emptied (back-to-back) ends no idle period:
// nothing is decided, recorded or counted.
func (n *Network) needed(i int32, now int64) {
	n.eng.Sync() // the link and its other end (parallel.go)
	pt := &n.ports[i]
	l := &n.links[pt.link]
	if owner := n.linkOwner(i); owner >= 0 && now > l.IdleFrom() {
		// The link's timer matters: its t_PDT is needed now. The other
		// end owns it only on a link of both ends (per-link LPI).
		if owner == i {
			n.decideAt(i, pt.peer, pt.link, pt.end)
		} else {
			n.decideAt(owner, i, pt.link, 1-pt.end)
		}
	}
	ready, missed := l.Need(&n.p.EEE, now, pt.end)
	// The link's ReadyAt cannot change while this end is busy (it only
	// changes when both ends are idle), so the port keeps a copy.
	pt.readyAt = ready
	if start := pt.idleStart; start >= 0 && now > start {
		n.prefetchBin(i, now-start)
		if pt.undecided {
			n.decide(i)
		}
		length := now - start
		n.idle[pt.class].add(length)
		if i == n.histPort {
			n.portIdle.add(length)
		}
		if pt.flags&watched != 0 {
			n.extIdleEnded(i, now, length, missed, ready)
		} else if n.p.EEE.Mode != eee.AlwaysOn {
			ctl := n.ctlFor(i)
			ctl.IdleEnded(predictor.IdlePeriod{
				End: toDur(now), Length: toDur(length), Missed: missed, PDT: toDur(pt.pdt),
				Delay: controller.ChargePS(ready - now),
			})
			pt.floor = ctl.SleepFloor()
		}
	}
	if pt.idleStart < 0 && n.p.EEE.Mode != eee.AlwaysOn {
		// The port's first packet: the idle period it started with is
		// not the port's, but its ledger pays the wait if the packet
		// found the link asleep (override.go).
		n.firstPacket(i, now, ready)
	}
	if pt.undecided {
		pt.undecided = false
		n.hints.setUndecided(pt.peer, false)
	}
	pt.idleStart = -1
	if ready > now && n.pw != nil && n.pw.waiting != nil {
		// The link wakes up: both its ends stop being busy for POWAR's
		// wait if they hold packets (portBusy).
		n.powarRelease(i, now)
		if pt.peer >= 0 {
			n.powarRelease(pt.peer, now)
		}
	}
}

// linkOwner returns the port whose PDT timer runs on port i's link while
// the link is idle and that port's t_PDT is still to be decided; −1
// otherwise.
func (n *Network) linkOwner(i int32) int32 {
	pt := &n.ports[i]
	l := &n.links[pt.link]
	if l.Busy() {
		return -1
	}
	o := i
	if l.Owner() != pt.end {
		o = pt.peer
	}
	if !n.ports[o].undecided {
		return -1
	}
	return o
}

// decide asks port i's controller for the t_PDT of the idle period that
// began at idleStart (the controller sees the time the queue emptied, as
// if asked then: nothing else reaches it in between) and arms it on the
// link if the port owns the link's timer.
func (n *Network) decide(i int32) {
	pt := &n.ports[i]
	n.decideAt(i, pt.peer, pt.link, pt.end)
}

// decideAt is decide(i) with i's link's other end q, its link and its end
// of it given: the other end that asks for i's decision (needed) knows
// them, and i's first line, where they are, is cold then (only the second
// is read).
func (n *Network) decideAt(i, q, link int32, end uint8) {
	n.eng.Sync()
	pt := &n.ports[i]
	if !pt.undecided {
		return
	}
	pt.undecided = false
	n.hints.setUndecided(q, false)
	n.flushSent(i) // the packets of the busy period before (txEnd)
	ctl := n.ctlFor(i)
	pdt := ctl.Decide(toDur(pt.idleStart))
	pt.floor = ctl.SleepFloor()
	l := &n.links[link]
	owns := !l.Busy() && l.Owner() == end && l.IdleFrom() == pt.idleStart
	if owns && ctl.Guarded() {
		pdt = n.peerFloor(pt, q, pdt)
	}
	pt.pdt = toPS(pdt)
	if owns {
		l.SetPDT(pt.pdt)
		if n.p.EEE.Mode == eee.Hybrid {
			if h, ok := ctl.Hold(); ok {
				l.SetHold(toPS(h))
			}
		}
	}
}

// peerFloor raises the owner's t_PDT so that the link goes down only when
// the peer's ledger allows it too: a packet of either end pays the
// wake-up, and each end's ledger holds what its own packets wait
// (docs/predictors.md "The delay ledger"). An externalized peer's
// controller lives outside the simulator and is not consulted; a port that
// is only watched (traced) keeps its controller here, and its ledger counts.
func (n *Network) peerFloor(pt *port, q int32, pdt time.Duration) time.Duration {
	if q < 0 || n.p.EEE.LPI == eee.PerDirection || n.ext.pdts > 0 && n.ports[q].flags&extPDT != 0 {
		return pdt
	}
	start := toDur(pt.idleStart)
	if verifyFloors {
		n.verifyFloor(q)
	}
	at := max(n.ports[q].floor, start)
	if at-start > pdt {
		return at - start
	}
	return pdt
}

// verifyFloors makes peerFloor check each copy it reads against the
// controller's SleepFloor (verifyFloor); set by tests.
var verifyFloors bool

// verifyFloor panics if port q's copy of its controller's SleepFloor is
// not the controller's (or n.initReady while it has none).
func (n *Network) verifyFloor(q int32) {
	want := n.initReady
	if c := n.ports[q].ctl; c != nil {
		want = c.SleepFloor()
	}
	if got := n.ports[q].floor; got != want {
		panic(fmt.Sprintf("network: port %d's floor copy %d, its controller's %d", q, got, want))
	}
}

// settle makes every pending decision (before the run's end is accounted,
// or before a caller outside the event loop reads a t_PDT or a link).
func (n *Network) settle() {
	for i := range n.ports {
		if n.ports[i].undecided {
			n.decide(int32(i))
		}
	}
}

// tryStart starts the next transmission of port i if it can.
func (n *Network) tryStart(i int32, now int64) {
	po := &n.ports[i]
	var k int32
	if n.vc != nil {
		if po.flags&txBusy != 0 || !n.vcCanSend(i) {
			return
		}
	} else if po.flags&(txBusy|paused) != 0 || po.head < 0 {
		return
	}
	if po.readyAt > now {
		if po.flags&kickPending == 0 {
			po.flags |= kickPending
			n.eng.Schedule(po.readyAt, evKick, i, 0)
		}
		return
	}
	if n.vc != nil {
		k = n.vcNext(i)
		if po.sw >= 0 && n.palQ != nil {
			n.palQ[i]-- // routed here (arrive), now sent
		}
	} else {
		k = po.head
		po.head = n.pkts[k].next
		if po.head < 0 {
			n.hints.setEmpty(i)
		}
	}
	pk := &n.pkts[k]
	po.flags |= txBusy
	po.txSize = pk.size
	// Sent(hops) is reported to the controller later, in order, before
	// anything reads what it changes (flushSent): same calls, fewer cache
	// misses.
	if po.pendHops>>56 != 0 || pk.hops == 0 {
		n.flushSent(i)
	}
	if pk.hops == 0 { // not with minimal routing; a zero byte cannot be queued
		n.reportSent(i, 0)
	} else {
		po.pendHops |= uint64(pk.hops) << ((bits.Len64(po.pendHops) + 7) &^ 7)
	}
	pk.hops--
	ser := n.ser(pk.size)
	if n.txPS != nil {
		n.eng.Sync() // per link, both ends add to it
		n.txPS[po.link] += ser
	}
	if n.portTx != nil {
		n.portTx[i] += ser
	}
	n.eng.Schedule(now+n.p.Propagation, evArrive, po.peer, k)
	n.eng.ScheduleAux(now+ser, evTxEnd, i, 0, po.head)
}

// flushSent reports port i's pending sent packets to its controller
// (Sent(hops, 1) per packet, in sending order) and counts them. The
// controller reads what Sent changes only when it decides, so reporting
// late but before Decide (and before the results) is exact.
func (n *Network) flushSent(i int32) {
	pt := &n.ports[i]
	h := pt.pendHops
	if h == 0 {
		return
	}
	pt.pendHops = 0
	if pt.watching {
		n.extSent(i, h)
		return
	}
	if n.p.EEE.Mode == eee.AlwaysOn {
		pt.sent += uint64(bits.Len64(h)+7) / 8
		return
	}
	ctl := n.ctlFor(i)
	for ; h != 0; h >>= 8 {
		pt.sent++
		ctl.Sent(int(h&0xff), 1)
	}
}

// reportSent reports one packet sent by port i at once.
func (n *Network) reportSent(i int32, hops uint8) {
	if n.ports[i].flags&watched != 0 {
		n.extSentOne(i, hops)
		return
	}
	n.ports[i].sent++
	if n.p.EEE.Mode != eee.AlwaysOn {
		n.ctlFor(i).Sent(int(hops), 1)
	}
}

// txEnd: the last bit of port i's packet has left.
func (n *Network) txEnd(i int32, now int64) {
	po := &n.ports[i]
	po.flags &^= txBusy
	if po.sw >= 0 {
		if n.vc != nil && n.vc[i].outFlags&vcTx != 0 {
			n.vc[i].outBytes -= po.txSize
		} else {
			po.bytes -= po.txSize
		}
		if po.waitMask != 0 || (n.vc != nil && n.vc[i].wait != 0) {
			n.oarb(i, now)
		}
	}
	if po.head >= 0 || !n.vcOutEmpty(i) {
		n.tryStart(i, now)
		return
	}
	// Output queue empty after the last bit: the PDT timer is armed, with
	// the controller's decision made when first needed (decide). The
	// link's other end may ask this controller to decide, and reads its
	// ledger (linkOwner, peerFloor), from now until the next needed: both
	// sync here (parallel.go). While the port is busy the other end leaves
	// its controller alone (the link is busy), so flushSent and reportSent
	// in tryStart need not. The controller hears of the packets sent when
	// it decides (decide flushes them first): nothing reads what they
	// change before, and the idle period starts without touching its
	// lines, cold by the time it ends. An external controller, a port
	// trace and an always-on port's count take them now.
	n.eng.Sync()
	if n.p.EEE.Mode == eee.AlwaysOn || po.flags&(watched|extPDT) != 0 {
		n.flushSent(i)
	}
	if n.p.EEE.Mode == eee.AlwaysOn {
		po.pdt = eee.Never
	} else if po.flags&extPDT != 0 {
		po.pdt = n.extPDTFor(i)
	} else {
		if n.partition && po.ctl == nil {
			// The other end may ask this controller to decide from now
			// (decideAt): it is built here, on this port's partition's
			// goroutine and in its slots, where Prefetch finds it.
			// Exact: a controller built before its first use is in the
			// state it would be built in then, and the floor's copy the
			// other end reads (peerFloor) bounds the sleep as initReady,
			// the copy without it, does (docs/simulator.md "Parallel
			// runs").
			n.buildCtl(i)
		}
		po.undecided = true
		n.hints.setUndecided(po.peer, true)
	}
	n.hints.setUndecided(i, false) // this end transmitted last: its timer runs
	po.idleStart = now
	n.links[po.link].Release(now, po.end, po.pdt)
}

// arrive: the first bit of packet k reaches port i from the link.
func (n *Network) arrive(i, k int32, now int64) {
	pi := &n.in[i]
	pk := &n.pkts[k]
	if pk.dst < 0 { // a consolidation control packet (consolidation_ctl.go)
		n.ctlArrive(k, now)
		return
	}
	done := now + n.ser(pk.size)
	if pi.sw < 0 { // a NIC: delivered when the last bit is in
		n.delivered++
		if n.tc != nil {
			n.tc.bytes += int64(pk.size)
		}
		n.latencyOf(done - pk.created)
		if pk.last {
			n.msgsDone++
		}
		n.lastDelivery = max(n.lastDelivery, done)
		if pk.msg >= 0 {
			if pk.only { // the message is in (packetIn without its record)
				n.eng.ScheduleAux(done, evWDeliver, 0, pk.msg, pk.tag)
			} else {
				n.packetIn(pk.msg, done, pk.tag)
			}
		}
		n.free = append(n.free, k)
		return
	}
	pk.ready = done
	if n.vc != nil {
		// Two classes (vc.go). PAL: the class of the next link is 1 after
		// the intermediate of the current dimension. Otherwise the
		// topology's hop class (HopClasses: a torus's dateline, a
		// dragonfly's destination group, a 2-D HyperX's last hop under
		// ECMP) of the port the routing chose.
		if n.tc != nil {
			if n.ports[pi.peer].sw >= 0 {
				n.tcepCrossed(pi.peer)
			}
			second := pk.detour
			pk.out = n.routePAL(pi.sw, pk)
			pk.vcNext = vcBit(second)
			n.palQ[pk.out]++
		} else {
			pk.out = n.route(pi.sw, pk, now)
			pk.vcNext = uint8(n.cls.HopClass(int(pi.sw), int(pk.dst), int(outPort(pk.out)-n.swBase[pi.sw])))
		}
		if pk.vc == 1 {
			n.vcArrive(i, k, pk, now, done)
			return
		}
	}
	pi.bytes += pk.size
	if pi.bytes > n.p.QueueBytes {
		n.overflows++
	}
	if pi.flags&pauseSent == 0 && pi.bytes >= n.p.PFCStop {
		pi.flags |= pauseSent
		n.pauses++
		n.eng.Schedule(now+n.handshake, evPFC, pi.peer, 1)
	}
	if n.vc == nil {
		pk.out = n.route(pi.sw, pk, now)
	}
	pk.next = -1
	if pi.head < 0 {
		pi.head, pi.tail = k, k
		if pi.flags&arbPending == 0 {
			pi.flags |= arbPending
			n.eng.ScheduleAux(max(done, pi.xbarFree), evArb, i, k, outPort(pk.out))
		}
		return
	}
	n.pkts[pi.tail].next = k
	pi.tail = k
}

// route returns packet pk's output port (global index) at switch sw at
// now under the routing of one class or the topology's hop classes (PAL
// routes in arrive).
func (n *Network) route(sw int32, pk *packet, now int64) int32 {
	switch {
	case n.ecmp.mp == nil:
		return n.swBase[sw] + int32(n.t.Route(int(sw), int(pk.dst)))
	case n.pw == nil:
		return n.routeECMP(sw, pk)
	}
	return n.routePOWAR(sw, pk, now)
}

// oarb arbitrates output port o's crossbar port among waiting inputs:
// oldest head packet first, round-robin among equals (aging).
func (n *Network) oarb(o int32, now int64) {
	if n.vc != nil {
		n.vcOarb(o, now)
		return
	}
	po := &n.ports[o]
	if po.waitMask == 0 {
		return
	}
	if po.xbarFree > now {
		if po.flags&oarbPending == 0 {
			po.flags |= oarbPending
			n.eng.Schedule(po.xbarFree, evOarbBusy, o, 0)
		}
		return
	}
	base := n.swBase[po.sw]
	best := bits.TrailingZeros64(po.waitMask)
	if po.waitMask&(po.waitMask-1) != 0 {
		// Several inputs wait (one alone wins without reading its age).
		best = -1
		var bestAge int64
		m := bits.RotateLeft64(po.waitMask, -int(po.rr))
		for m != 0 {
			j := (bits.TrailingZeros64(m) + int(po.rr)) & 63
			m &= m - 1
			age := n.pkts[n.in[base+int32(j)].head].ready
			if best < 0 || age < bestAge {
				best, bestAge = j, age
			}
		}
	}
	in := base + int32(best)
	pi := &n.in[in]
	k := pi.head
	pk := &n.pkts[k]
	if po.bytes+pk.size > n.p.QueueBytes {
		return // txEnd frees space and calls back
	}
	po.waitMask &^= 1 << uint(best)
	po.rr = uint8(best + 1)
	// Grant: move the packet across the crossbar.
	pi.head = pk.next
	pi.bytes -= pk.size
	if pi.flags&pauseSent != 0 && pi.bytes <= n.p.PFCGo {
		pi.flags &^= pauseSent
		n.eng.Schedule(now+n.handshake, evPFC, pi.peer, 0)
	}
	x := n.xbar(pk.size)
	pi.xbarFree = now + x
	po.xbarFree = now + x
	po.bytes += pk.size
	if n.pw != nil {
		n.pw.pending[o]-- // routed here (routePOWAR), now past the crossbar
	}
	if at := pk.ready + n.p.SwitchLatency; at >= now+x {
		n.eng.Schedule(at, evOutq, o, k)
	} else {
		n.eng.Schedule(now+x, evOutqLate, o, k)
	}
	if pi.head >= 0 {
		h := &n.pkts[pi.head]
		if h.ready > now+x {
			n.eng.ScheduleAux(h.ready, evArbReady, in, pi.head, outPort(h.out))
		} else {
			n.eng.ScheduleAux(now+x, evArbNext, in, pi.head, outPort(h.out))
		}
	} else {
		pi.flags &^= arbPending
	}
	if po.waitMask != 0 {
		po.flags |= oarbPending
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

// Run runs the simulation to completion. progress, if not nil, is called
// about every chunk events. The context cancels the run between chunks:
// Run then returns ctx's error, and the results (Result, Ports, …) cover
// the run up to the simulated time reached (Interrupted reports it).
func (n *Network) Run(ctx context.Context, chunk uint64, progress func(Progress)) error {
	if n.finished {
		return errors.New("network: already run")
	}
	if chunk == 0 {
		chunk = 1 << 20
	}
	start := time.Now()
	n.start()
	parallel := n.p.Threads > 1 && n.ParallelBlocker() == ""
	if parallel {
		// Until no event is left, the workload fails, ctx is done or
		// other processes take the cores (then it goes on below).
		n.runParallel(ctx, n.p.Threads, chunk, progress)
		if err := ctx.Err(); err != nil && n.eng.Pending() > 0 && !n.workloadFailed() {
			n.wall = time.Since(start)
			n.interrupted = true
			n.finish()
			return err
		}
	}
	if !parallel || n.fellBack && !n.workloadFailed() {
		for n.eng.Run(engine.Forever, chunk) && !n.workloadFailed() {
			if err := ctx.Err(); err != nil {
				n.wall = time.Since(start)
				n.interrupted = true
				n.finish()
				return err
			}
			if progress != nil {
				progress(Progress{Now: n.eng.Now(), Events: n.eng.Events(), Created: n.created, Delivered: n.delivered})
			}
		}
	}
	n.wall = time.Since(start)
	if n.delivered != n.created && !n.workloadFailed() {
		// No event left and packets in the network: a deadlock (docs/
		// simulator.md "Deadlocks"). The results cover the run up to the
		// last event, marked as an interrupted run's.
		d := n.deadlock()
		n.interrupted, n.deadlocked = true, true
		n.finish()
		return d
	}
	n.finish()
	return n.workloadErr()
}

// Deadlocked reports whether Run ended in a deadlock (its error is a
// *DeadlockError); Interrupted reports it too: the results cover the run
// up to the last event.
func (n *Network) Deadlocked() bool { return n.deadlocked }

// Interrupted reports whether Run was stopped by its context before the
// workload ended: the results cover the simulated time up to then.
func (n *Network) Interrupted() bool { return n.interrupted }

// finish accounts every link's states up to the end of the run.
func (n *Network) finish() {
	n.finished = true
	end := max(n.lastDelivery, n.eng.Now())
	if n.tc != nil {
		// The consolidation's epochs run on after the last packet (up to
		// an epoch, and a shadow link's expiry): they are not the run.
		end = n.lastDelivery
	}
	if n.wl.rep != nil {
		end = n.workloadEnd()
	}
	if n.interrupted {
		// Up to the last event: the workload has not ended.
		end = n.eng.Now()
	}
	n.endTime = end
	for i := range n.ports {
		n.flushSent(int32(i))
	}
	n.settle()
	for i := range n.links {
		n.links[i].Finish(&n.p.EEE, end)
	}
}
