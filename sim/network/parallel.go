package network

import (
	"context"
	"runtime"
	"slices"
	"time"

	"github.com/lpictl/lpictl/sim/eee"
	"github.com/lpictl/lpictl/sim/engine"
	"github.com/lpictl/lpictl/sim/topo"
)

// A parallel run (docs/simulator.md "Parallel runs") splits the network
// into partitions — whole switches with their nodes' NICs, by groups of
// the topology where it has them (a Megafly's, a dragonfly's), else by
// runs of switch numbers — and runs each on a goroutine of its own with a
// copy of the Network that shares the ports, links and routing but has
// its own engine, packet pool, controller slots and statistics, which the
// run adds up at its end. Packets cross partitions by value: the sender
// copies one out as it sends it, the receiver copies it in as its next
// window starts (crossing). What each partition's events share with
// another's with no delay is the power state of the links between them
// (per-link LPI): both ends' events are ordered as in the sequential run
// (engine.Plan.Conflict). The workload's replayer runs its events apart,
// after each window (engine.SetLate).

// ParallelBlocker returns why the network runs on one thread whatever
// Params.Threads says ("" if it can run on several).
func (n *Network) ParallelBlocker() string {
	switch {
	case n.tc != nil:
		return "the consolidation (TCEP) and PAL routing act on the whole network at once"
	case n.pw != nil:
		return "POWAR releases waiting packets on the other end of a link with no delay"
	case n.p.EEE.Gate != nil:
		return "power.end_to_end keeps one delay budget for every link"
	case n.ext.pdts > 0:
		return "ports are controlled from outside the simulator"
	case n.p.Propagation <= 0:
		return "links with no propagation delay leave no lookahead"
	case n.wl.rep != nil && n.p.NICLatency <= 0:
		return "network.nic_latency 0: the workload reacts with no delay"
	case n.t.Switches() < 2:
		return "one switch"
	}
	return ""
}

// Threads is the number of goroutines the run used (1 unless it ran in
// parallel).
func (n *Network) Threads() int { return max(1, len(n.parts)) }

// partitionPorts gives each port a partition: whole switches, a node's NIC
// with its switch. A topology with groups (topo.Grouped) has its groups
// dealt to the partitions in turn, each to the one with the fewest ports so
// far (NICs included; the lowest-numbered on a tie): its groups reach one
// another alike (a Megafly's and a dragonfly's every pair of groups by
// global links, a fat tree's pods through the top), so that which groups
// go together does not change how many links the partitions share, and an
// application's ranks, placed in order, talk mostly to nearby groups at
// any one moment: dealt, nearby groups run on different goroutines, which
// then have about equal work in each window. In runs of groups instead,
// LAMMPS's steps on the Megafly-4160 left one partition with 62 % of a
// window's events on average (docs/simulator.md "Parallel runs"). Other
// topologies have their switches in runs of about equal ports: a torus's
// neighbours are its neighbouring numbers, so that runs cut the fewest
// links.
func (n *Network) partitionPorts(parts int) []uint8 {
	t := n.t
	S := t.Switches()
	group, groups := func(s int) int { return s }, S
	gt, grouped := t.(topo.Grouped)
	if grouped {
		group, groups = gt.SwitchGroup, gt.Groups()
	}
	weight := make([]int64, groups)
	for s := range S {
		weight[group(s)] += int64(t.Radix(s))
	}
	for node := range t.Nodes() {
		sw, _ := t.Attach(node)
		weight[group(sw)]++
	}
	groupPart := make([]uint8, groups)
	if grouped {
		load := make([]int64, parts)
		for g, w := range weight {
			q := 0
			for j := range load {
				if load[j] < load[q] {
					q = j
				}
			}
			groupPart[g] = uint8(q)
			load[q] += w
		}
	} else {
		var total int64
		for _, w := range weight {
			total += w
		}
		var acc int64
		for g, w := range weight {
			// The partition of the switch's middle: runs of about total/parts.
			groupPart[g] = uint8(min(int64(parts-1), (2*acc+w)*int64(parts)/(2*max(1, total))))
			acc += w
		}
	}
	part := make([]uint8, len(n.ports))
	for i := range n.ports {
		sw := n.ports[i].sw
		if sw < 0 {
			s, _ := t.Attach(i)
			sw = int32(s)
		}
		part[i] = groupPart[group(int(sw))]
	}
	return part
}

// parallelPlan is the engine's plan for parts partitions: each port's
// object in its partition, the ends of a link shared by two partitions
// (per-link LPI) conflicting, the lookahead the least delay of an event
// between partitions: a propagation delay (an arrival; a PFC frame takes
// longer), and a NIC latency from the workload's replayer.
func (n *Network) parallelPlan(parts int) (engine.Plan, []uint8) {
	portPart := n.partitionPorts(parts)
	total := len(n.ports)
	// Only arrivals and PFC frames go to another switch's port; every
	// other event is for a port of the switch (or NIC) that schedules it.
	plan := engine.Plan{Parts: parts, Part: make([]uint8, total+3), Lookahead: n.p.Propagation, Crossing: []uint8{evArrive, evPFC}}
	if n.wl.rep != nil {
		// The replayer's messages enter their NIC a NIC latency after
		// it sends them.
		plan.Lookahead = min(plan.Lookahead, n.p.NICLatency)
		plan.LateLookahead = n.p.NICLatency
	}
	for i, q := range portPart {
		plan.Part[1+i] = q
	}
	if n.p.EEE.LPI != eee.PerDirection {
		plan.Conflict = make([]uint64, total+3)
		for i := range n.ports {
			if q := n.ports[i].peer; q >= 0 && portPart[q] != portPart[i] {
				plan.Conflict[1+i] |= 1 << portPart[q]
			}
		}
	}
	return plan, portPart
}

// partCopy is the network a partition runs: n's shared state, its own
// engine, packet pool, controller slots, hints of empty queues and
// statistics.
func (n *Network) partCopy(e *engine.Engine) *Network {
	c := *n
	c.eng = e
	c.pkts, c.free = nil, nil
	if n.slots != nil {
		c.slots, c.nSlots, c.slab, c.slabNext = make([]*[slotChunk]ctlSlot, 0, 16), 0, nil, 0
	}
	c.hints.empty = slices.Clone(n.hints.empty)
	c.hints.peerUndecided = slices.Clone(n.hints.peerUndecided)
	c.ecmp.cand = make([]int, 0, cap(n.ecmp.cand))
	c.latency, c.latSamples, c.latInexact = newLogHist(), nil, false
	c.idle = make([]*logHist, len(n.idle))
	for i := range c.idle {
		c.idle[i] = newLogHist()
	}
	c.created, c.delivered, c.msgsSent, c.msgsDone, c.lastDelivery, c.overflows, c.pauses = 0, 0, 0, 0, 0, 0, 0
	c.parts = nil
	c.partition = true
	return &c
}

// crossing is the packets on their way from one partition to another:
// box[from*parts+to][buf], filled by the sender as it sends them
// (exportPacket) and emptied by the receiver as its next window starts
// (importPackets), in the engine's two buffers.
type crossing struct {
	parts int
	box   [][2][]packet
}

// exportPacket copies the packet of an arrival partition from sends to
// partition to into the crossing and frees it in from's pool: the sender
// is done with it once its first bit leaves (tryStart).
func (x *crossing) exportPacket(parts []*Network, from, to, buf int, ev engine.Event) engine.Event {
	if ev.Kind != evArrive {
		return ev
	}
	src := parts[from]
	b := &x.box[from*x.parts+to][buf]
	*b = append(*b, src.pkts[ev.Arg])
	src.free = append(src.free, ev.Arg)
	ev.Arg = int32(len(*b) - 1)
	return ev
}

// importPackets moves the packets of the arrivals from sent to into to's
// pool, and gives the arrivals their own lane (evArriveFrom).
func (x *crossing) importPackets(parts []*Network, from, to, buf int, evs []engine.Event) {
	dst := parts[to]
	b := &x.box[from*x.parts+to][buf]
	for i := range evs {
		if ev := &evs[i]; ev.Kind == evArrive {
			k := dst.alloc()
			dst.pkts[k] = (*b)[ev.Arg]
			ev.Arg, ev.Kind = k, evArriveFrom
		}
	}
	*b = (*b)[:0]
}

// runParallel runs the network on threads partitions (Run's loop when
// ParallelBlocker has nothing against it).
func (n *Network) runParallel(ctx context.Context, threads int, chunk uint64, progress func(Progress)) {
	plan, portPart := n.parallelPlan(threads)
	parts := make([]*Network, threads)
	main := n.eng
	p, err := engine.NewParallel(main, plan)
	if err != nil {
		panic(err) // a plan of our own making
	}
	for i := range parts {
		parts[i] = n.partCopy(p.Part(i))
		p.Part(i).SetHandler(parts[i])
		p.Part(i).UseLane(evArriveFrom) // the imported arrivals' (importPackets)
	}
	// The ports whose controller slots are n's own (≥ 0), should the run
	// go on on one thread (mergeSlots); nil: none.
	var ownSlots []int32
	if n.nSlots > 0 {
		ownSlots = make([]int32, len(n.hints.port))
		for i, h := range n.hints.port {
			ownSlots[i] = h.slot
		}
	}
	// The replayer's events run on n, with the late events' engine.
	n.eng = p.Late()
	p.Late().SetHandler(n)
	x := &crossing{parts: threads, box: make([][2][]packet, threads*threads)}
	p.Export = func(from, to, buf int, ev engine.Event) engine.Event { return x.exportPacket(parts, from, to, buf, ev) }
	p.Import = func(from, to, buf int, evs []engine.Event) { x.importPackets(parts, from, to, buf, evs) }
	var rejoinOff []int32 // the partitions' packet offsets once merged, at the first event rejoined
	p.Rejoin = func(part int, ev engine.Event) engine.Event {
		if rejoinOff == nil {
			rejoinOff = n.poolOffsets(parts)
		}
		return rejoin(ev, rejoinOff[part])
	}
	busy := newCoreWatch(threads, n.p.fallbackAfter)
	next, windows := chunk, 0
	p.AfterWindow = func() bool {
		// Written only when the replayer's Send added chunks (the
		// directory only grows): a write takes the line from the
		// partition's core.
		for _, c := range parts {
			if len(c.wl.msgs) != len(n.wl.msgs) {
				c.wl.msgs = n.wl.msgs
			}
		}
		if n.workloadFailed() || ctx.Err() != nil {
			return true
		}
		// The partitions' counts, every 64 windows (a few hundred events
		// each): reading them takes their lines too.
		if windows++; windows%64 != 0 {
			return false
		}
		if busy.starved(windows) {
			n.fellBack, n.fellBackAt = true, p.Now()
			return true // Run goes on on one thread (rejoin, mergeParts, mergeSlots)
		}
		if ev := p.Events(); ev >= next {
			next = ev + chunk
			if progress != nil {
				var created, delivered uint64
				for _, c := range parts {
					created, delivered = created+c.created, delivered+c.delivered
				}
				progress(Progress{Now: p.Now(), Events: main.Events() + ev, Created: n.created + created, Delivered: n.delivered + delivered})
			}
		}
		return false
	}
	p.Run(engine.Forever)
	n.eng = main
	n.parts = parts
	n.mergeParts(portPart)
	if n.fellBack {
		n.mergeSlots(portPart, ownSlots)
	}
}

// mergeSlots moves the partitions' controller slots into n's, for a run
// that goes on on one thread: their chunks join n's list and the ports'
// slot numbers (which Prefetch reads) follow them; slots made from now on
// start a new chunk. ownSlots is the ports' slot numbers before the
// parallel run (n's own; nil when n had none).
func (n *Network) mergeSlots(portPart []uint8, ownSlots []int32) {
	if n.slots == nil {
		return
	}
	off := make([]int32, len(n.parts))
	for pi, c := range n.parts {
		off[pi] = int32(len(n.slots)) << slotShift
		n.slots = append(n.slots, c.slots...)
		c.slots, c.nSlots = nil, 0
	}
	n.nSlots = int32(len(n.slots)) << slotShift
	for i := range n.hints.port {
		if k := n.hints.port[i].slot; k >= 0 && (ownSlots == nil || ownSlots[i] < 0) {
			n.hints.port[i].slot = k + off[portPart[i]]
		}
	}
}

// rejoin gives an event left in a partition's queue the packet indices it
// has once mergeParts has appended that partition's pool to n's at off,
// so that the run can go on on one thread.
func rejoin(ev engine.Event, off int32) engine.Event {
	switch ev.Kind {
	case evArrive, evArriveFrom, evArb, evArbNext, evArbReady, evOutq, evOutqLate:
		ev.Arg += off // the packet
	case evTxEnd:
		if ev.Aux >= 0 {
			ev.Aux += off // the next packet's, a hint for Prefetch
		}
	}
	return ev
}

// poolOffsets is where mergeParts puts each partition's packets in n's
// pool: after n's own, in partition order.
func (n *Network) poolOffsets(parts []*Network) []int32 {
	off := make([]int32, len(parts))
	at := int32(len(n.pkts))
	for pi, c := range parts {
		off[pi] = at
		at += int32(len(c.pkts))
	}
	return off
}

// coreWatch tells when a parallel run does not have its cores: its
// goroutines spin while they wait for one another, so on cores of their
// own the process uses about threads cores of CPU time per second of wall
// time; when other processes take the cores it uses much less, and waits
// for its descheduled goroutines (docs/simulator.md "Parallel runs").
type coreWatch struct {
	threads int // the cores it would use: its threads, at most GOMAXPROCS
	after   int // windows: fall back after this many (tests); 0: by the CPU time
	wall    time.Time
	cpu     time.Duration
	strikes int
}

func newCoreWatch(threads, after int) *coreWatch {
	// More goroutines than Go runs at once share GOMAXPROCS cores.
	cores := min(threads, runtime.GOMAXPROCS(0))
	return &coreWatch{threads: cores, after: after, wall: time.Now(), cpu: processCPU()}
}

// coreWatchPeriod is how much wall time one look at the CPU time covers;
// coreWatchStrikes looks in a row short of coreWatchShare × threads make
// the run go on on one thread.
const (
	coreWatchPeriod  = 200 * time.Millisecond
	coreWatchStrikes = 3
	coreWatchShare   = 0.75
)

// starved reports, after windows windows, whether the run should go on on
// one thread.
func (w *coreWatch) starved(windows int) bool {
	if w.after > 0 {
		return windows >= w.after
	}
	now := time.Now()
	wall := now.Sub(w.wall)
	if wall < coreWatchPeriod {
		return false
	}
	cpu := processCPU()
	if cpu > 0 && float64(cpu-w.cpu) < coreWatchShare*float64(w.threads)*float64(wall) {
		w.strikes++
	} else {
		w.strikes = 0
	}
	w.wall, w.cpu = now, cpu
	return w.strikes >= coreWatchStrikes
}

// mergeParts adds the partitions' statistics to n's and moves their
// packets into n's pool (the queues' links rewritten), so that what reads
// the network after the run (deadlock, Memory) sees one network.
func (n *Network) mergeParts(portPart []uint8) {
	off := n.poolOffsets(n.parts)
	for pi, c := range n.parts {
		n.created += c.created
		n.delivered += c.delivered
		n.msgsSent += c.msgsSent
		n.msgsDone += c.msgsDone
		n.lastDelivery = max(n.lastDelivery, c.lastDelivery)
		n.overflows += c.overflows
		n.pauses += c.pauses
		n.latency.merge(c.latency)
		for i, h := range c.idle {
			n.idle[i].merge(h)
		}
		n.latSamples = append(n.latSamples, c.latSamples...)
		n.latInexact = n.latInexact || c.latInexact
		for _, k := range c.free {
			n.free = append(n.free, k+off[pi])
		}
		n.pkts = append(n.pkts, c.pkts...)
		c.pkts, c.free = nil, nil
	}
	// The sequential run keeps exact latencies up to latencyExactCap
	// packets in all.
	if n.latInexact || len(n.latSamples) > latencyExactCap {
		n.latSamples, n.latInexact = nil, true
	}
	move := func(k *int32, pi uint8) {
		if *k >= 0 {
			*k += off[pi]
		}
	}
	for i, pi := range portPart {
		move(&n.ports[i].head, pi)
		move(&n.ports[i].tail, pi)
		move(&n.in[i].head, pi)
		move(&n.in[i].tail, pi)
		if n.vc != nil {
			v := &n.vc[i]
			move(&v.inHead, pi)
			move(&v.inTail, pi)
			move(&v.outHead, pi)
			move(&v.outTail, pi)
		}
		if c := n.parts[pi]; c.hints.isEmpty(int32(i)) {
			n.hints.setEmpty(int32(i))
		} else {
			n.hints.clearEmpty(int32(i))
		}
	}
	for pi := range n.parts {
		end := int32(len(n.pkts))
		if pi+1 < len(n.parts) {
			end = off[pi+1]
		}
		for k := off[pi]; k < end; k++ {
			move(&n.pkts[k].next, uint8(pi))
		}
	}
}
