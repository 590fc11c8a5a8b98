package network

import (
	"fmt"

	"github.com/lpictl/lpictl/sim/eee"
	"github.com/lpictl/lpictl/sim/tcep"
	"github.com/lpictl/lpictl/sim/topo"
)

// TCEP configures power.consolidation: tcep (paper 004): the consolidation
// controller (package sim/tcep) on every subnetwork of a HyperX or
// flattened butterfly, with PAL routing. The per-port EEE controllers keep
// running underneath: a link routing avoids gets no traffic and sleeps.
type TCEP struct {
	Enabled bool
	tcep.Config
}

// Event kinds of the consolidation (Obj: subnetwork for tcepExpire, Arg
// the link as a·K+b).
const (
	tcepTick       = iota // an activation-epoch boundary (and a deactivation one when due)
	tcepDeRespond         // deactivation requests arrive: answered
	tcepDeComplete        // their ACKs arrive: shadow
	tcepAcRespond         // activation requests arrive (over two hops): answered
	tcepAcComplete        // their ACKs arrive: active
	tcepExpire            // a shadow link's epoch is over: gated once drained
	tcepAwake             // an activated link is back from off: active
	tcepCtl               // a control packet is in at a switch (Arg: its message, consolidation_ctl.go)
)

// tcepState is the network's consolidation: the subnetworks, per switch
// port its link's state (a copy for routing) and its epoch counters, and
// the requests in flight.
type tcepState struct {
	cfg    tcep.Config
	h      *topo.HyperX
	dims   []int
	stride []int
	off    []int // first port of each dimension
	perSw  int
	subs   []*tcep.Subnet
	subOf  []int32 // [s·D + i]: subnetwork of switch s in dimension i
	// subDim and subBase: a subnetwork's dimension and the switch of its
	// member 0 (member a is subBase + a·stride[subDim]).
	subDim, subBase []int
	swBase          []int32
	// Per switch port (global index): state of its link, bytes routed
	// to it in the current activation and deactivation epochs (minimal,
	// non-minimal, virtual), packets routed to it not yet across.
	state  []tcep.State
	act    [][3]int64
	deact  [][3]int64
	routed []int32
	// det: per switch port g (the direct link r→t), the bytes r sent
	// towards t over a detour in the current activation epoch (indirect
	// activation); vias: each detour's choice is recorded in its
	// subnetwork (tcep.Subnet.Detoured: with epochs and indirect
	// activation on).
	det  []int64
	vias bool
	// ema, with a measurement window longer than the activation epoch
	// (tcep.Config.Window): per switch port, the exponentially weighted
	// average of its activation epochs' readings (Min, NonMin, Virt,
	// Detour) that every rule reads; alpha its weight of a new epoch.
	ema   [][5]float64
	alpha float64
	// pausedFrom: per switch port, since when PFC holds it (−1: it does
	// not); actPaused, deactPaused: the time it was held in the current
	// activation and deactivation epochs (Use.Paused).
	pausedFrom             []int64
	actPaused, deactPaused []int64
	// ugalOffset: PAL's adaptive choice keeps the Active minimal port
	// while q_min ≤ 2·q_nm + ugalOffset (packets: half an output buffer,
	// ⌊queue_size / MTU⌋ / 2, at least 1; routing.go).
	ugalOffset int32
	// uses per subnetwork, snapshots of the last epochs.
	acUse, deUse     [][]tcep.Use
	acReqs, deReqs   [][]tcep.Request
	ctl              int64 // one control message's delay
	nextDeact        int64
	pending          int // consolidation events queued
	stopped          bool
	cand             []int32
	lastT            int64
	active, shadow   int
	activeT, shadowT float64 // link·ps
	inactiveT        float64
	links            int
	nonMinimal       uint64 // packets routed non-minimally in a dimension
	adaptive         uint64 // of which with the minimal port Active (PAL's adaptive choice, Table I row 1)
	palReactivations uint64 // shadow minimal ports reactivated by PAL (Table I row 2)
	rerouted         uint64 // at an intermediate whose direct link was gated: via the hub
	violations       uint64 // packets that crossed an Inactive link
	drainWaits       uint64
	bytes            int64 // delivered to the nodes (the carried load)
	one              [1]tcep.Request
	// Control packets (consolidation_ctl.go): the messages in flight and
	// free slots; per subnetwork the requests of its batch still in
	// flight and a copy of the activation batch as sent.
	msgs           []ctlMsg
	msgFree        []int32
	acWait, deWait []int
	acSent         [][]tcep.Request
	// trace, if set (tests), sees every link-state change.
	trace func(at int64, si, a, b int, st tcep.State)
}

func newTCEP(n *Network) (*tcepState, error) {
	h, ok := n.t.(*topo.HyperX)
	if !ok {
		return nil, fmt.Errorf("power.consolidation: tcep needs topology.kind hyperx or fbfly (fully connected subnetworks), not %s", n.t.Name())
	}
	cfg := n.p.TCEP.Config
	if n.p.EEE.WakeOff <= 0 {
		return nil, fmt.Errorf("power.consolidation: tcep needs the power preset's off state (a wake time to come back from off)")
	}
	tc := &tcepState{cfg: cfg, h: h, dims: h.Dims(), ctl: n.handshake, nextDeact: cfg.DeactivationEpoch, swBase: n.swBase}
	if 4*tc.ctl >= cfg.ActivationEpoch {
		return nil, fmt.Errorf("power.consolidation.activation_epoch: %d ps is not longer than an activation handshake (4 control messages, %d ps)", cfg.ActivationEpoch, 4*tc.ctl)
	}
	D := len(tc.dims)
	tc.stride, tc.off = make([]int, D), make([]int, D)
	tc.perSw = h.Nodes() / h.Switches()
	st, p := 1, tc.perSw
	for i, k := range tc.dims {
		tc.stride[i], tc.off[i] = st, p
		st *= k
		p += k - 1
	}
	S := h.Switches()
	tc.subOf = make([]int32, S*D)
	rows := map[[2]int]int32{}
	for s := range S {
		for i, k := range tc.dims {
			key := [2]int{i, s - tc.coord(s, i)*tc.stride[i]}
			id, ok := rows[key]
			if !ok {
				id = int32(len(tc.subs))
				rows[key] = id
				sub := tcep.NewSubnet(k)
				sub.NoIndirect = tc.cfg.NoIndirect
				sub.InnerMin = tc.cfg.InnerMin
				if w, e := cfg.Window, cfg.ActivationEpoch; w > e {
					sub.Settle = int((w + e - 1) / e)
				}
				tc.subs = append(tc.subs, sub)
				tc.subDim = append(tc.subDim, i)
				tc.subBase = append(tc.subBase, key[1])
				tc.acUse = append(tc.acUse, make([]tcep.Use, k*k))
				tc.deUse = append(tc.deUse, make([]tcep.Use, k*k))
				tc.acReqs = append(tc.acReqs, nil)
				tc.deReqs = append(tc.deReqs, nil)
				tc.links += k * (k - 1) / 2
			}
			tc.subOf[s*D+i] = id
		}
	}
	total := len(n.ports)
	tc.state = make([]tcep.State, total)
	tc.act, tc.deact = make([][3]int64, total), make([][3]int64, total)
	tc.routed = make([]int32, total)
	tc.det = make([]int64, total)
	tc.vias = n.p.TCEP.Enabled && !cfg.NoIndirect
	tc.pausedFrom, tc.actPaused, tc.deactPaused = make([]int64, total), make([]int64, total), make([]int64, total)
	for i := range tc.pausedFrom {
		tc.pausedFrom[i] = -1
	}
	if cfg.Window > cfg.ActivationEpoch {
		tc.ema = make([][5]float64, total)
		tc.alpha = float64(cfg.ActivationEpoch) / float64(cfg.Window)
	}
	tc.ugalOffset = max(1, n.p.QueueBytes/n.p.MTU/2)
	tc.cand = make([]int32, 0, 64)
	tc.acWait, tc.deWait = make([]int, len(tc.subs)), make([]int, len(tc.subs))
	tc.acSent = make([][]tcep.Request, len(tc.subs))
	tc.active = tc.links
	// Check the port layout against the topology's cabling.
	for s := range S {
		for i, k := range tc.dims {
			c := tc.coord(s, i)
			for to := range k {
				if to == c {
					continue
				}
				peer, ok := h.PortPeer(s, tc.port(i, c, to))
				if !ok || int(peer.ID) != s+(to-c)*tc.stride[i] {
					return nil, fmt.Errorf("power.consolidation: switch %d dimension %d: unexpected port layout", s, i)
				}
			}
		}
	}
	return tc, nil
}

func (tc *tcepState) coord(s, i int) int { return s / tc.stride[i] % tc.dims[i] }

func (tc *tcepState) port(i, own, to int) int {
	if to < own {
		return tc.off[i] + to
	}
	return tc.off[i] + to - 1
}

// schedule queues a consolidation event.
func (n *Network) tcepSchedule(at int64, kind, obj, arg int32) {
	n.tc.pending++
	n.eng.Schedule(at, evTCEP, obj, arg<<3|kind)
}

// routePAL returns packet pk's output port (global index) at switch sw:
// PAL routing (paper 004 §1.8, Table I) over the links' logical states.
//
// In the current dimension, from router c towards cd (the packet's
// coordinate there), with g the direct port c→cd and m an intermediate
// chosen at random per packet among the available ones (palIntermediate,
// routing.go: any other router of the row with both links Active; the hub
// always is one when neither end is the hub):
//   - g Active (row 1): UGAL. With q(p) the packets routed to port p at
//     this switch and not yet sent (routing.go, "history window"), H_min =
//     1 and H_nm = 2: minimal if q(g) ≤ 2·q(c→m) + ugalOffset, else the
//     detour.
//   - g Shadow (row 2): the detour if its first port has room (credits:
//     not PFC-paused by the next switch, and its output buffer can take
//     the packet); else the shadow link is reactivated (logical, at once)
//     and taken.
//   - g Inactive (row 3): the detour.
//
// At the intermediate the packet goes to cd (the second hop).
func (n *Network) routePAL(sw int32, pk *packet) int32 {
	tc := n.tc
	s := int(sw)
	ds := int(pk.dst) / tc.perSw
	dim, c, cd := -1, 0, 0
	for i := range tc.dims {
		if c, cd = tc.coord(s, i), tc.coord(ds, i); c != cd {
			dim = i
			break
		}
	}
	if dim < 0 {
		return n.swBase[sw] + pk.dst%int32(tc.perSw)
	}
	base := n.swBase[sw]
	g := base + int32(tc.port(dim, c, cd))
	if pk.detour {
		// At the intermediate: the direct link was Active when chosen;
		// Shadow still carries it. If it was gated meanwhile, via the hub
		// (whose links are root links).
		pk.detour = false
		if st := tc.state[g]; st == tcep.Active || st == tcep.Shadow {
			return tc.count(g, 1, pk.size)
		}
		tc.rerouted++
		pk.detour, pk.hops = true, pk.hops+1
		return tc.count(base+int32(tc.port(dim, c, 0)), 1, pk.size)
	}
	st := tc.state[g]
	if st == tcep.Active && n.palQ[g] <= tc.ugalOffset {
		// The minimal port wins whatever the detour's queue.
		return tc.count(g, 0, pk.size)
	}
	si := tc.subOf[s*len(tc.dims)+dim]
	m := n.palIntermediate(tc.subs[si], c, cd)
	if m < 0 {
		if st != tcep.Active { // cannot happen: the hub is always one
			tc.violations++
		}
		return tc.count(g, 0, pk.size)
	}
	gm := base + int32(tc.port(dim, c, m))
	switch st {
	case tcep.Active:
		if n.palQ[g] <= 2*n.palQ[gm]+tc.ugalOffset {
			return tc.count(g, 0, pk.size)
		}
		tc.adaptive++
	case tcep.Shadow:
		if n.ports[gm].flags&paused != 0 {
			tc.subs[si].Reactivate(c, cd)
			tc.palReactivations++
			n.tcepSync(int(si), n.eng.Now())
			return tc.count(g, 0, pk.size)
		}
		fallthrough
	default:
		tc.act[g][2] += int64(pk.size)
		tc.deact[g][2] += int64(pk.size)
	}
	tc.nonMinimal++
	tc.det[g] += int64(pk.size)
	if tc.vias {
		tc.subs[si].Detoured(c, cd, m) // indirect activation's "output link chosen"
	}
	pk.detour, pk.hops = true, pk.hops+1
	return tc.count(gm, 1, pk.size)
}

// count adds a packet of size bytes routed to port g (kind 0 minimal, 1
// non-minimal) and returns g.
func (tc *tcepState) count(g int32, kind int, size int32) int32 {
	tc.act[g][kind] += int64(size)
	tc.deact[g][kind] += int64(size)
	tc.routed[g]++
	return g
}

// tcepCrossed: a packet sent by switch port from has arrived at the other
// end of its link.
func (n *Network) tcepCrossed(from int32) {
	tc := n.tc
	tc.routed[from]--
	if st := tc.state[from]; st == tcep.Inactive || st == tcep.Waking {
		tc.violations++
	}
}

// tcepEvent handles a consolidation event.
func (n *Network) tcepEvent(now int64, obj, arg int32) {
	tc := n.tc
	tc.pending--
	kind := arg & 7
	arg >>= 3
	switch kind {
	case tcepTick:
		n.tcepTick(now)
	case tcepAcRespond:
		for si, sub := range tc.subs {
			tc.acReqs[si] = sub.RespondActivation(tc.acReqs[si])
		}
		n.tcepSchedule(now+2*tc.ctl, tcepAcComplete, 0, 0)
	case tcepAcComplete:
		// The ACKs have arrived: the links are switched on and come back
		// after the off state's wake time (routed as Inactive meanwhile).
		for si, sub := range tc.subs {
			if len(tc.acReqs[si]) > 0 {
				sub.BeginActivation(tc.acReqs[si])
				for _, q := range tc.acReqs[si] {
					if sub.State(q.From, q.To) != tcep.Waking {
						continue
					}
					ga, gb := tc.portsOf(si, q.From, q.To)
					ready := n.linkOn(ga, gb, now)
					n.tcepSchedule(ready, tcepAwake, int32(si), int32(q.From*sub.K+q.To))
				}
				n.tcepSync(si, now)
			}
			tc.acReqs[si] = tc.acReqs[si][:0]
		}
	case tcepCtl:
		n.ctlDone(arg, now)
	case tcepAwake:
		sub := tc.subs[obj]
		tc.one[0] = tcep.Request{From: int(arg) / sub.K, To: int(arg) % sub.K}
		sub.CompleteActivation(tc.one[:])
		n.tcepSync(int(obj), now)
	case tcepDeRespond:
		for si, sub := range tc.subs {
			tc.deReqs[si] = sub.RespondDeactivation(tc.deReqs[si], tc.deUse[si], tc.cfg.Hwm)
		}
		n.tcepSchedule(now+tc.ctl, tcepDeComplete, 0, 0)
	case tcepDeComplete:
		for si, sub := range tc.subs {
			if len(tc.deReqs[si]) == 0 {
				continue
			}
			sub.CompleteDeactivation(tc.deReqs[si])
			for _, q := range tc.deReqs[si] {
				if sub.State(q.From, q.To) == tcep.Shadow {
					n.tcepSchedule(now+tc.cfg.DeactivationEpoch, tcepExpire, int32(si), int32(q.From*sub.K+q.To))
				}
			}
			tc.deReqs[si] = tc.deReqs[si][:0]
			n.tcepSync(si, now)
		}
	case tcepExpire:
		sub := tc.subs[obj]
		a, b := int(arg)/sub.K, int(arg)%sub.K
		if sub.State(a, b) != tcep.Shadow {
			return
		}
		ga, gb := n.tcepPorts(int(obj), a, b)
		if tc.routed[ga]+tc.routed[gb] > 0 || n.links[n.ports[ga].link].Busy() || n.links[n.ports[gb].link].Busy() {
			// Packets routed to it are still to cross: drain first
			// (unless nothing else can happen: a deadlock, Run reports it).
			if n.eng.Pending() == tc.pending {
				return
			}
			tc.drainWaits++
			n.tcepSchedule(now+tc.ctl, tcepExpire, obj, arg)
			return
		}
		sub.Expire(a, b)
		n.linkOff(ga, gb, now)
		n.tcepSync(int(obj), now)
	}
}

// linkOff switches off the link of switch ports ga and gb, both idle
// (docs/model.md §1.3): each direction's pending t_PDT is decided first so
// that the link's states up to now resolve, then the link is Off. The
// idle period in progress is cut there: the controllers never see it.
func (n *Network) linkOff(ga, gb int32, now int64) {
	for _, i := range [2]int32{ga, gb} {
		if o := n.linkOwner(i); o >= 0 {
			n.decide(o)
		}
		n.links[n.ports[i].link].PowerOff(&n.p.EEE, now)
	}
}

// linkOn switches on the Off link of switch ports ga and gb at now and
// returns when it carries bits again. Each port starts an idle period
// then, its t_PDT decided when first needed (as after a transmission).
func (n *Network) linkOn(ga, gb int32, now int64) (ready int64) {
	ready = now
	for _, i := range [2]int32{ga, gb} {
		po := &n.ports[i]
		switch {
		case n.p.EEE.Mode == eee.AlwaysOn:
			po.pdt = eee.Never
		case po.flags&extPDT != 0:
			po.pdt = n.extPDTFor(i)
		default:
			po.undecided = true
			n.hints.setUndecided(po.peer, true)
		}
	}
	for _, i := range [2]int32{ga, gb} {
		po := &n.ports[i]
		owner := i
		if n.p.EEE.LPI != eee.PerDirection && po.end != 0 {
			owner = po.peer
		}
		if l := &n.links[po.link]; l.IsOff() {
			ready = max(ready, l.PowerOn(&n.p.EEE, now, n.ports[owner].pdt))
		}
	}
	for _, i := range [2]int32{ga, gb} {
		n.ports[i].idleStart = ready
	}
	return ready
}

// tcepTick runs the epoch boundaries due at now and schedules the next
// tick, unless nothing but the consolidation's events is left.
func (n *Network) tcepTick(now int64) {
	tc := n.tc
	ac, de := n.tcepEpoch(now)
	if ac {
		n.tcepSchedule(now+2*tc.ctl, tcepAcRespond, 0, 0)
	}
	if de {
		n.tcepSchedule(now+tc.ctl, tcepDeRespond, 0, 0)
	}
	// Only the consolidation's events left: the run is over (or, with
	// packets still in flight, deadlocked: Run reports it).
	if n.eng.Pending() == tc.pending {
		tc.stopped = true
		return
	}
	n.tcepSchedule(now+tc.cfg.ActivationEpoch, tcepTick, 0, 0)
}

// tcepEpoch reads every subnetwork's counters at the activation-epoch
// boundary now (and at the deactivation one when due) and runs the
// rules; it reports whether activation and deactivation requests were
// sent (answered one and two control messages later).
func (n *Network) tcepEpoch(now int64) (ac, de bool) {
	tc := n.tc
	capA := float64(tc.cfg.ActivationEpoch) * n.p.RateBps / 8e12
	for g, from := range tc.pausedFrom {
		if from >= 0 {
			tc.actPaused[g] += now - from
			tc.deactPaused[g] += now - from
			tc.pausedFrom[g] = now
		}
	}
	for si, sub := range tc.subs {
		tc.uses(si, tc.act, tc.det, tc.actPaused, tc.acUse[si], capA, tc.cfg.ActivationEpoch)
		tc.smooth(si, tc.acUse[si])
		if tc.acWait[si] > 0 {
			continue // control packets: the last batch is still in flight
		}
		tc.acReqs[si] = sub.ActivationEpoch(tc.acUse[si], tc.cfg.Hwm, tc.acReqs[si][:0])
		ac = ac || len(tc.acReqs[si]) > 0
		n.tcepSync(si, now) // shadow reactivations
		if tc.cfg.ControlPackets {
			n.ctlSendBatches(si, true, false, now)
		}
	}
	if now >= tc.nextDeact {
		tc.nextDeact += tc.cfg.DeactivationEpoch
		capD := float64(tc.cfg.DeactivationEpoch) * n.p.RateBps / 8e12
		for si, sub := range tc.subs {
			tc.uses(si, tc.deact, nil, tc.deactPaused, tc.deUse[si], capD, tc.cfg.DeactivationEpoch)
			if tc.ema != nil {
				// Over the window: the average the activation epochs keep.
				copy(tc.deUse[si], tc.acUse[si])
			}
			if tc.deWait[si] > 0 {
				continue // control packets: the last batch is still in flight
			}
			tc.deReqs[si] = sub.DeactivationEpoch(tc.deUse[si], tc.cfg.Hwm, tc.deReqs[si][:0])
			de = de || len(tc.deReqs[si]) > 0
			if tc.cfg.ControlPackets {
				n.ctlSendBatches(si, false, true, now)
			}
		}
	}
	if tc.cfg.ControlPackets {
		return false, false // the packets carry them
	}
	return ac, de
}

// pfc: switch port g was paused (on) or resumed by PFC at now.
func (tc *tcepState) pfc(g int32, on bool, now int64) {
	if from := tc.pausedFrom[g]; from >= 0 {
		tc.actPaused[g] += now - from
		tc.deactPaused[g] += now - from
	}
	tc.pausedFrom[g] = -1
	if on {
		tc.pausedFrom[g] = now
	}
}

// uses fills subnetwork si's uses from the counters cnt, the paused
// times paused and, if not nil, the detour counters det (clearing them)
// over an epoch of capacity bytes and length ps.
func (tc *tcepState) uses(si int, cnt [][3]int64, det, paused []int64, u []tcep.Use, capacity float64, length int64) {
	k := tc.subs[si].K
	for a := range k {
		for b := range k {
			if a == b {
				continue
			}
			g, _ := tc.portsOf(si, a, b)
			c := &cnt[g]
			u[a*k+b] = tcep.Use{Min: float64(c[0]) / capacity, NonMin: float64(c[1]) / capacity, Virt: float64(c[2]) / capacity,
				Paused: float64(paused[g]) / float64(length)}
			*c = [3]int64{}
			paused[g] = 0
			if det != nil {
				u[a*k+b].Detour = float64(det[g]) / capacity
				det[g] = 0
			}
		}
	}
}

// smooth replaces subnetwork si's activation-epoch uses u by their
// exponentially weighted averages over the measurement window (nothing
// without one).
func (tc *tcepState) smooth(si int, u []tcep.Use) {
	if tc.ema == nil {
		return
	}
	k, a := tc.subs[si].K, tc.alpha
	for i := range k {
		for j := range k {
			if i == j {
				continue
			}
			g, _ := tc.portsOf(si, i, j)
			e, x := &tc.ema[g], &u[i*k+j]
			e[0] += a * (x.Min - e[0])
			e[1] += a * (x.NonMin - e[1])
			e[2] += a * (x.Virt - e[2])
			e[3] += a * (x.Detour - e[3])
			e[4] += a * (x.Paused - e[4])
			*x = tcep.Use{Min: e[0], NonMin: e[1], Virt: e[2], Detour: e[3], Paused: e[4]}
		}
	}
}

// tcepPorts returns the global ports of the link a–b of subnetwork si
// (at a, at b).
func (n *Network) tcepPorts(si, a, b int) (int32, int32) { return n.tc.portsOf(si, a, b) }

// portsOf returns the global port indices of the link a–b of subnetwork
// si at a and at b.
func (tc *tcepState) portsOf(si, a, b int) (int32, int32) {
	dim, base := tc.subDim[si], tc.subBase[si]
	sa, sb := base+a*tc.stride[dim], base+b*tc.stride[dim]
	return tc.swBase[sa] + int32(tc.port(dim, a, b)), tc.swBase[sb] + int32(tc.port(dim, b, a))
}

// tcepSync copies subnetwork si's link states to its ports at now,
// accounting the link-state times up to now.
func (n *Network) tcepSync(si int, now int64) {
	tc := n.tc
	tc.account(now)
	sub := tc.subs[si]
	for a := range sub.K {
		for b := a + 1; b < sub.K; b++ {
			ga, gb := tc.portsOf(si, a, b)
			old, st := tc.state[ga], sub.State(a, b)
			if old == st {
				continue
			}
			tc.active -= b2i(old == tcep.Active) - b2i(st == tcep.Active)
			tc.shadow -= b2i(old == tcep.Shadow) - b2i(st == tcep.Shadow)
			tc.state[ga], tc.state[gb] = st, st
			if tc.trace != nil {
				tc.trace(now, si, a, b, st)
			}
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// account adds the link-state times up to now.
func (tc *tcepState) account(now int64) {
	if now <= tc.lastT {
		return
	}
	from := max(tc.lastT, tc.cfg.Warmup)
	tc.lastT = now
	if now <= from {
		return
	}
	dt := float64(now - from)
	tc.activeT += float64(tc.active) * dt
	tc.shadowT += float64(tc.shadow) * dt
	tc.inactiveT += float64(tc.links-tc.active-tc.shadow) * dt
}

// Consolidation is the summary's consolidation block (power.consolidation:
// tcep): the switch-switch links' logical states over the run, TCEP's
// changes and control messages, and PAL's routing.
type Consolidation struct {
	Links int `json:"links"`
	// Active, Shadow and Inactive are the time-weighted mean numbers of
	// links in each state; ActiveRatio = Active / Links (shadow links
	// are physically on: PhysicalRatio = (Active + Shadow) / Links).
	Active        float64 `json:"active_mean"`
	Shadow        float64 `json:"shadow_mean"`
	Inactive      float64 `json:"inactive_mean"`
	ActiveRatio   float64 `json:"active_ratio"`
	PhysicalRatio float64 `json:"physical_ratio"`
	// FinalActive is the number of Active links at the end of the run.
	FinalActive   int    `json:"final_active"`
	Activations   uint64 `json:"activations"`
	Deactivations uint64 `json:"deactivations"`
	Reactivations uint64 `json:"shadow_reactivations"`
	Gated         uint64 `json:"gated"`
	// ControlMessages counts requests, ACKs/NACKs, shadow reactivations
	// and link-state broadcasts.
	ControlMessages uint64 `json:"control_messages"`
	// IndirectRequests counts the indirect activation requests sent.
	IndirectRequests uint64 `json:"indirect_requests"`
	// NonMinimal counts the routing decisions that took a detour through
	// an intermediate (one per packet and dimension), Adaptive those of
	// them taken with the minimal port Active (PAL's UGAL choice, Table I
	// row 1); PALReactivations counts the shadow minimal ports PAL
	// reactivated for want of room on the detour (Table I row 2, also in
	// Reactivations); Rerouted counts the decisions of
	// packets whose direct link was gated while they were on their way
	// (sent via the hub); DrainWaits the expiries delayed by packets still
	// routed to a shadow link.
	NonMinimal       uint64 `json:"non_minimal"`
	Adaptive         uint64 `json:"adaptive_non_minimal"`
	PALReactivations uint64 `json:"pal_reactivations"`
	Rerouted         uint64 `json:"rerouted"`
	DrainWaits       uint64 `json:"drain_waits"`
	// Violations counts packets that crossed an Inactive link: always 0.
	Violations uint64 `json:"violations"`
	// CarriedLoad is the traffic delivered per node over the run, as a
	// fraction of the link rate; LowerBound, on a 1-D network, paper 004
	// §VI-A's lower bound on ActiveRatio at that load under uniform
	// traffic (tcep.LowerBound; Fig. 12).
	CarriedLoad float64 `json:"carried_load"`
	LowerBound  float64 `json:"lower_bound_ratio,omitempty"`
}

// consolidation computes the consolidation block for a run ending at end.
func (n *Network) consolidation(end int64) *Consolidation {
	tc := n.tc
	tc.account(end)
	c := &Consolidation{Links: tc.links, FinalActive: tc.active, NonMinimal: tc.nonMinimal, Adaptive: tc.adaptive,
		PALReactivations: tc.palReactivations, Rerouted: tc.rerouted, DrainWaits: tc.drainWaits, Violations: tc.violations}
	for _, s := range tc.subs {
		c.Activations += s.Stats.Activations
		c.Deactivations += s.Stats.Deactivations
		c.Reactivations += s.Stats.Reactivations
		c.Gated += s.Stats.Gated
		c.ControlMessages += s.Stats.Messages
		c.IndirectRequests += s.Stats.Indirect
	}
	// The states are accounted up to the last consolidation event, which
	// may be after the run's end (the epochs that noticed it).
	if span := max(end, tc.lastT) - tc.cfg.Warmup; span > 0 {
		c.Active, c.Shadow, c.Inactive = tc.activeT/float64(span), tc.shadowT/float64(span), tc.inactiveT/float64(span)
	} else {
		c.Active = float64(tc.links)
	}
	if tc.links > 0 {
		c.ActiveRatio, c.PhysicalRatio = c.Active/float64(tc.links), (c.Active+c.Shadow)/float64(tc.links)
	}
	if end > 0 {
		c.CarriedLoad = float64(tc.bytes) * 8e12 / (float64(end) * n.p.RateBps * float64(n.t.Nodes()))
		if len(tc.dims) == 1 {
			c.LowerBound = tcep.LowerBound(n.t.Nodes(), tc.dims[0], c.CarriedLoad)
		}
	}
	return c
}
