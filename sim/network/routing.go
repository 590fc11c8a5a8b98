package network

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/lpictl/lpictl/sim/eee"
	"github.com/lpictl/lpictl/sim/powar"
	"github.com/lpictl/lpictl/sim/tcep"
	"github.com/lpictl/lpictl/sim/topo"
)

// Routing selects how a switch picks a packet's output port.
type Routing uint8

// Routing kinds (scenario key routing.kind).
const (
	// RoutingMinimal is the topology's deterministic minimal routing
	// (topo.Topology.Route): the default.
	RoutingMinimal Routing = iota
	// RoutingECMP hashes each flow onto one of the equal-cost minimal
	// paths, as htsim's ecmp_host does: at every switch the output port is
	// one of topo.MultiPath's MinimalPorts, chosen by a hash of the flow
	// and the switch, so all packets of a flow take the same path. A flow
	// is a workload message (its record, unique among the messages in
	// flight), or for traffic without a workload (Inject) a (source,
	// destination) pair.
	RoutingECMP
	// RoutingPOWAR is paper 002's power-aware selection function (package
	// sim/powar): at a switch with more than one minimal port, Algorithm 1
	// picks among the selectable ones (awake before sleeping, round-robin),
	// and Algorithm 2 grows and shrinks the selectable prefix of the
	// switch's up ports with their utilisation (fat trees, the Megafly), or
	// Algorithm 3 the selectable prefix of every aggregated link of a
	// torus3d (powar_torus.go). POWAR field of Params; docs/simulator.md
	// "POWAR".
	RoutingPOWAR
	// RoutingUGAL is paper 004's baseline routing UGAL_p on a HyperX or
	// flattened butterfly: PAL's progressive UGAL choice per dimension
	// (routePAL) over every link, without consolidation (no link is ever
	// deactivated), with its two traffic classes (vc.go).
	RoutingUGAL
)

// String returns the scenario name of the kind.
func (r Routing) String() string {
	switch r {
	case RoutingMinimal:
		return "minimal"
	case RoutingECMP:
		return "ecmp"
	case RoutingPOWAR:
		return "powar"
	case RoutingUGAL:
		return "ugal"
	}
	return fmt.Sprintf("routing(%d)", uint8(r))
}

// ParseRouting parses a scenario's routing.kind; "" is minimal.
func ParseRouting(s string) (Routing, error) {
	switch s {
	case "", "minimal":
		return RoutingMinimal, nil
	case "ecmp":
		return RoutingECMP, nil
	case "powar":
		return RoutingPOWAR, nil
	case "ugal":
		return RoutingUGAL, nil
	}
	return 0, fmt.Errorf("unknown routing %q (want minimal, ecmp, powar or ugal)", s)
}

// ecmp is the network's ECMP state: the topology's multipath view and a
// buffer for the candidate ports (nothing is allocated per decision).
type ecmp struct {
	mp   topo.MultiPath
	cand []int
}

func newECMP(t topo.Topology) (ecmp, error) {
	mp, ok := t.(topo.MultiPath)
	if !ok {
		return ecmp{}, fmt.Errorf("routing.kind: ecmp needs a topology that lists its minimal paths; %s does not", t.Name())
	}
	r := 0
	for s := range t.Switches() {
		r = max(r, t.Radix(s))
	}
	return ecmp{mp: mp, cand: make([]int, 0, r)}, nil
}

// mix64 is the SplitMix64 finaliser (Steele, Lea and Flood, OOPSLA 2014):
// a bijection of 64-bit words whose output bits each depend on every
// input bit.
func mix64(x uint64) uint64 {
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// flowKey identifies a packet's flow: its workload message record, or for
// other traffic (msg = −1 − src, see sendMessage) its source and
// destination, in a disjoint range of keys.
func flowKey(msg, dst int32) uint64 {
	if msg >= 0 {
		return uint64(msg)
	}
	return 1<<63 | uint64(uint32(-1-msg))<<32 | uint64(uint32(dst))
}

// ecmpPick returns the index among n candidate ports of flow key at
// switch sw: a hash of both, reduced to [0, n) by a multiply-high.
func ecmpPick(key uint64, sw int32, n int) int {
	h := mix64(mix64(key) ^ uint64(uint32(sw)))
	hi, _ := bits.Mul64(h, uint64(n))
	return int(hi)
}

// routeECMP returns packet pk's output port (global index) at switch sw.
func (n *Network) routeECMP(sw int32, pk *packet) int32 {
	c := n.ecmp.mp.MinimalPorts(int(sw), int(pk.dst), n.ecmp.cand)
	p := c[0]
	if len(c) > 1 {
		p = c[ecmpPick(flowKey(pk.msg, pk.dst), sw, len(c))]
	}
	return n.swBase[sw] + int32(p)
}

// POWAR is the configuration of routing.kind: powar (and of the
// powar_model summary block, which any routing may report).
type POWAR struct {
	// Thresholds are Algorithm 2's Ton and Toff.
	Thresholds powar.Thresholds
	// Cycle is the checking cycle (ps): a switch's selectable set changes
	// at most once per cycle.
	Cycle int64
	// FirstOn makes every adaptive port selectable (no Algorithm 2): the
	// paper's "First-On" configuration.
	FirstOn bool
	// RoundRobin is the paper's power-oblivious "Round-Robin" selection:
	// every adaptive port selectable, the first free one in round-robin
	// order, awake or not (no Algorithm 2, no preference for awake
	// ports). Fat trees and the Megafly's minimal paths.
	RoundRobin bool
	// Alonso is the paper's "Alonso" configuration (Alonso et al.'s
	// dynamic on/off links on fat trees): the selectable up ports are the
	// switched-on ones, managed by Algorithm 2's thresholds, the routing is
	// unchanged (round-robin among them, no preference for awake ports),
	// and no link uses LPI (power.mode always-on; the links Alonso switches
	// off are charged as off in the powar_model block, each up link on for
	// the time it was in its switch's selectable set). Fat trees only.
	Alonso bool
	// Initial is the selectable count every switch (every aggregate of a
	// torus) starts with, lowered to the group's size: 1, or AllSelectable
	// (the default) for every port. The paper leaves it open.
	Initial int
	// Queue, when no selectable adaptive port is free (Algorithm 1's
	// NULL), queues the packet on the first selectable port in
	// round-robin order at once (lpictl's earlier reading). False (the
	// default) is the paper's: the packet waits at the head of its input
	// buffer and the selection is retried (Retry) until a selectable
	// port is free (fat trees and the Megafly's minimal paths; a torus
	// queues unless TorusWait).
	Queue bool
	// Retry is the period (ps) of the retries of a waiting packet; 0 (the
	// default) retries it when it can succeed instead: when a port of its
	// candidate set is released (its transmission ends, its pause is
	// lifted, its link starts waking up) or a checking cycle begins (a
	// port may become selectable): powarRelease, waitFor.
	Retry int64
	// TorusWait applies the wait on a torus3d too (default false: a torus
	// decides at arrival and queues). A waiting packet blocks its traffic
	// class's input buffer (one of two with topology.dateline, else the
	// whole input), where the paper's blocks one of four VCs: measured,
	// the wait makes the paper's torus all-to-all slower
	// (docs/reproducing.md, "POWAR on the paper's setting").
	TorusWait bool
	// NonMinimal adds non-minimal candidates on the Megafly (paths through
	// an intermediate group, powar_megafly.go).
	NonMinimal bool
	// TorusAdaptive (torus3d) makes the adaptive set P every member of
	// every minimal aggregate (the paper's fully adaptive minimal routing);
	// false restricts it to the members of the dimension-order aggregate,
	// which adds no channel dependency to DOR's (lpictl has no escape
	// virtual channels). Default false.
	TorusAdaptive bool
	// Model is the normalised power model of the powar_model block.
	Model powar.Params
	// Report adds the powar_model block to the summary with any routing
	// (it is always there with routing POWAR).
	Report bool
}

// AllSelectable as POWAR.Initial starts every switch with all its
// adaptive ports selectable (a switch has at most 64 ports).
const AllSelectable = 64

// DefaultPOWAR is the paper's thresholds (0.5, 0.25) and power model, with
// our 10 µs checking cycle, every port selectable at the start, and a
// waiting packet retried as soon as it can succeed.
func DefaultPOWAR() POWAR {
	return POWAR{Thresholds: powar.DefaultThresholds(), Cycle: 10_000_000, Model: powar.DefaultParams(),
		Initial: AllSelectable}
}

// validate checks the configuration of routing p.
func (c *POWAR) validate(p *Params) error {
	if p.Routing == RoutingPOWAR {
		if err := c.Thresholds.Validate(); err != nil {
			return err
		}
		if c.Cycle <= 0 {
			return fmt.Errorf("routing.powar.cycle: must be > 0, got %d ps", c.Cycle)
		}
		if c.Initial < 1 {
			return fmt.Errorf("routing.powar.initial_selectable: must be ≥ 1, got %d", c.Initial)
		}
		if c.Retry < 0 {
			return fmt.Errorf("routing.powar.retry: must be ≥ 0, got %d ps", c.Retry)
		}
		if c.RoundRobin && c.FirstOn {
			return errors.New("routing.powar.round_robin: cannot be combined with routing.powar.first_on (two selection functions); choose one")
		}
		if c.Alonso && (c.RoundRobin || c.FirstOn) {
			return errors.New("routing.powar.alonso: cannot be combined with routing.powar.round_robin or first_on (another selection function); choose one")
		}
		if c.Alonso && p.EEE.Mode != eee.AlwaysOn {
			return fmt.Errorf("routing.powar.alonso: needs power.mode always-on (Alonso's links are switched on and off by its thresholds, without LPI), got %s", p.EEE.Mode)
		}
		if p.EndToEnd.Bound > 0 && p.EEE.Mode != eee.AlwaysOn {
			return errors.New("routing.kind: powar cannot be combined with power.end_to_end.enabled (POWAR's awake test does not model the end-to-end gate); disable one of them")
		}
	}
	if p.Routing == RoutingPOWAR || c.Report {
		return c.Model.Validate()
	}
	return nil
}

// powarState is the network's POWAR state: a switch's selectable set,
// round-robin pointer and checking-cycle counter (powar.Switch), and per
// port the packets routed to it that have not crossed the crossbar yet
// (part of "busy").
type powarState struct {
	sw       []powar.Switch
	pending  []int32
	th       powar.Thresholds
	cycle    int64
	capacity float64 // bytes a port forwards in a checking cycle
	firstOn  bool
	rr       bool // no preference for awake ports (POWAR.RoundRobin, POWAR.Alonso)
	// wait: decisions at the head of the input buffer, and with no free
	// selectable port (NULL) the packet waits and retries (not
	// POWAR.Queue; on a torus only with POWAR.TorusWait); pending then
	// counts the packets that requested the crossbar, else those routed to
	// the port at arrival.
	wait  bool
	retry int64 // retry period (ps); 0: woken by events (waitFor)
	// The waiting heads (retry 0), keyed by switch and input-queue class
	// (sw*2+c): waiting, the inputs (local bits) whose class-c head waits;
	// woken, those of them with a retry scheduled at a port's release. Per
	// input and class (in*2+c): wset, the head's candidate ports (local
	// bits), and wnext and wpk, the checking-cycle boundary its retry is
	// scheduled for and the head it retries. cand is the candidate set of
	// the last decision.
	waiting, woken []uint64
	wset           []uint64
	wnext          []int64
	wpk            []int32
	cand           uint64
	// pending1: with wait and two traffic classes (a torus3d with the
	// dateline), the part of pending whose next class is 1; nil otherwise.
	pending1 []int32
	// alonso: POWAR.Alonso's on-time per port (ps, up ports only: the time
	// in the selectable set up to its switch's last decision) and per
	// switch its up ports (first, count; count < 2: none adaptive).
	alonso  bool
	on      []int64
	upFirst []int32
	upCount []uint8
	mf      *powarMegafly // Megafly with non-minimal candidates, else nil
	tr      *powarTorus   // torus3d (Algorithm 3), else nil
	stats   POWARRouting
}

func newPOWAR(t topo.Topology, p *Params, ports int) (*powarState, error) {
	switch t.(type) {
	case *topo.FatTree, *topo.Megafly, *topo.Torus:
	default:
		return nil, fmt.Errorf("routing.kind: powar needs a fat tree (fattree, rlft), a megafly or a torus3d; %s is none of them", t.Name())
	}
	c := p.POWAR
	s := &powarState{
		sw: make([]powar.Switch, t.Switches()), pending: make([]int32, ports),
		th: c.Thresholds, cycle: c.Cycle, capacity: float64(c.Cycle) * p.RateBps / 8e12, firstOn: c.FirstOn || c.RoundRobin,
		rr: c.RoundRobin || c.Alonso, retry: c.Retry, alonso: c.Alonso,
	}
	for i := range s.sw {
		s.sw[i] = powar.NewSwitch(c.Initial)
	}
	if c.Alonso {
		if err := s.alonsoPorts(t, ports); err != nil {
			return nil, err
		}
	}
	if m, ok := t.(*topo.Megafly); ok && c.NonMinimal {
		mf, err := newPOWARMegafly(m, p)
		if err != nil {
			return nil, err
		}
		s.mf = mf
	}
	if tt, ok := t.(*topo.Torus); ok {
		if c.TorusAdaptive && tt.Dateline() {
			return nil, errors.New("routing.powar.torus_adaptive: cannot be combined with topology.dateline, whose deadlock freedom needs dimension order")
		}
		s.tr = newPOWARTorus(tt, &c)
	}
	// The paper's wait: fat trees and the Megafly's minimal paths, the
	// torus with TorusWait (non-minimal paths decide at arrival and queue).
	s.wait = !c.Queue && s.mf == nil && (s.tr == nil || c.TorusWait)
	if s.wait && topo.Classes(t, true) != nil {
		s.pending1 = make([]int32, ports)
	}
	if s.wait && s.retry == 0 {
		s.waiting, s.woken = make([]uint64, 2*t.Switches()), make([]uint64, 2*t.Switches())
		s.wset, s.wnext, s.wpk = make([]uint64, 2*ports), make([]int64, 2*ports), make([]int32, 2*ports)
	}
	return s, nil
}

// alonsoPorts finds every switch's up ports (its minimal candidates
// towards the farthest of a few nodes; they must be consecutive, as a fat
// tree's are) for POWAR.Alonso's on-times.
func (s *powarState) alonsoPorts(t topo.Topology, ports int) error {
	ft, ok := t.(*topo.FatTree)
	if !ok {
		return fmt.Errorf("routing.powar.alonso: needs a fat tree (fattree, rlft); %s is not one", t.Name())
	}
	s.on = make([]int64, ports)
	s.upFirst, s.upCount = make([]int32, t.Switches()), make([]uint8, t.Switches())
	buf := make([]int, 0, 64)
	for sw := range t.Switches() {
		for _, dst := range []int{0, t.Nodes() / 2, t.Nodes() - 1} {
			c := ft.MinimalPorts(sw, dst, buf)
			if len(c) <= int(s.upCount[sw]) {
				continue
			}
			if c[len(c)-1]-c[0] != len(c)-1 {
				return fmt.Errorf("routing.powar.alonso: switch %d's up ports %v are not consecutive", sw, c)
			}
			s.upFirst[sw], s.upCount[sw] = int32(c[0]), uint8(len(c))
		}
	}
	return nil
}

// POWARRouting counts POWAR's adaptive decisions (summary powar_routing).
type POWARRouting struct {
	// Adaptive counts decisions among more than one minimal port.
	Adaptive uint64 `json:"adaptive_decisions"`
	// Sleeping counts those that chose a port whose link was not awake
	// (no selectable awake port was free).
	Sleeping uint64 `json:"chose_sleeping"`
	// Fallback counts those with no free selectable port (the paper's
	// NULL) that queued the packet at the first selectable port in
	// round-robin order (routing.powar.queue, and the torus).
	Fallback uint64 `json:"fallback_busy"`
	// Waited counts the packets that found no free selectable port and
	// waited at the head of their input buffer (the paper's NULL, retried);
	// Retries the retries that found none free again.
	Waited  uint64 `json:"waited"`
	Retries uint64 `json:"retries"`
	// MeanSelectable is the mean number of selectable ports seen by the
	// adaptive decisions.
	MeanSelectable float64 `json:"mean_selectable"`
	selSum         uint64
}

// routePOWAR returns packet pk's output port (global index) at switch sw
// at time now.
func (n *Network) routePOWAR(sw int32, pk *packet, now int64) int32 {
	if n.pw.mf != nil {
		return n.routePOWARMegafly(sw, pk, now)
	}
	if n.pw.tr != nil {
		return n.routePOWARTorus(sw, pk, now)
	}
	c := n.ecmp.mp.MinimalPorts(int(sw), int(pk.dst), n.ecmp.cand)
	p := c[0]
	if n.pw.wait {
		g := n.swBase[sw] + int32(p)
		if len(c) > 1 {
			// Decided when the packet heads its input buffer and requests
			// the crossbar (decidePOWAR), as the paper's input-queued
			// switch does; until then c[0] stands in (a valid port for
			// the request's event), marked undecided.
			return ^g
		}
		// Counted in pending when it requests the crossbar (Handle):
		// packets queued behind a waiting head must not make ports busy,
		// or the head would wait for what waits for it.
		return g
	}
	if len(c) > 1 {
		p, _ = n.selectPOWAR(sw, c, now, pk.size, false)
	}
	g := n.swBase[sw] + int32(p)
	n.pw.pending[g]++
	return g
}

// outPort is the port a packet's out field names: out itself, or for a
// packet whose POWAR decision is still to be made (out < 0) the stand-in.
func outPort(out int32) int32 {
	if out < 0 {
		return ^out
	}
	return out
}

// decidePOWAR makes the decision of packet k, at the head of switch input
// in and requesting the crossbar at now, if it is still to be made: the
// output port, or ok false if no selectable port was free (the paper's
// NULL), in which case the request is repeated after the retry period, or
// without one when it can succeed (waitFor). retry says the request is a
// retry (evPOWARRetry).
func (n *Network) decidePOWAR(in, k int32, now int64, retry bool) (out int32, ok bool) {
	pk := &n.pkts[k]
	if pk.out >= 0 {
		return pk.out, true
	}
	sw := n.in[in].sw
	var g int32
	if n.pw.tr != nil {
		g, ok = n.selectPOWARTorus(sw, pk, now, n.pw.tr.t.RouteAggregate(int(sw), int(pk.dst)), true)
	} else {
		c := n.ecmp.mp.MinimalPorts(int(sw), int(pk.dst), n.ecmp.cand)
		var p int
		p, ok = n.selectPOWAR(sw, c, now, pk.size, true)
		g = n.swBase[sw] + int32(p)
		if !ok && n.pw.retry == 0 {
			var set uint64
			for _, q := range c {
				set |= uint64(1) << uint(q)
			}
			n.pw.cand = set
		}
	}
	if !ok {
		if retry {
			n.pw.stats.Retries++
		} else {
			n.pw.stats.Waited++
		}
		if n.pw.retry > 0 {
			n.eng.ScheduleAux(now+n.pw.retry, evPOWARRetry, in, k, ^pk.out)
		} else {
			n.waitFor(in, k, now)
		}
		return 0, false
	}
	pk.out = g
	return g, true
}

// waitFor registers the head k of input in (its input-queue class's) as
// waiting for a port of its candidate set (pw.cand) and schedules its
// retry at the next checking-cycle boundary, where a port may become
// selectable (Algorithm 2 or 3; not with every port selectable). A port's
// release retries it earlier (powarRelease).
func (n *Network) waitFor(in, k int32, now int64) {
	s := n.pw
	pk := &n.pkts[k]
	c := int32(pk.vc)
	sw := n.in[in].sw
	s.waiting[2*sw+c] |= uint64(1) << n.in[in].local
	s.wset[2*in+c] = s.cand
	if s.firstOn {
		return
	}
	// One retry per boundary and head (a retry that finds another head
	// is stale: retryDue).
	if b := (now/s.cycle + 1) * s.cycle; s.wnext[2*in+c] != b || s.wpk[2*in+c] != k {
		s.wnext[2*in+c], s.wpk[2*in+c] = b, k
		n.eng.ScheduleAux(b, evPOWARRetry, in, k, ^pk.out)
	}
}

// powarRelease: switch port g may have been released (its transmission
// ended, its pause was lifted) at now. Each head waiting for it (retry 0)
// that finds it free gets a retry at now, once, oldest head first (the
// output arbitration's order: the one that arrived first, then the lower
// input and class), so the first to retry takes the port.
func (n *Network) powarRelease(g int32, now int64) {
	s := n.pw
	sw := n.ports[g].sw
	if s.waiting == nil || sw < 0 {
		return
	}
	base := n.swBase[sw]
	bit := uint64(1) << uint(g-base)
	var due [2]uint64
	for c := int32(0); c < 2; c++ {
		for w := s.waiting[2*sw+c] &^ s.woken[2*sw+c]; w != 0; w &= w - 1 {
			j := int32(bits.TrailingZeros64(w))
			if in := base + j; s.wset[2*in+c]&bit != 0 && !n.portBusy(g, now, n.nextClass(n.waitHead(in, c))) {
				due[c] |= w & -w
			}
		}
	}
	for due[0]|due[1] != 0 {
		bc, bj, bk := int32(-1), int32(0), int32(0)
		var age int64
		for c := int32(0); c < 2; c++ {
			for w := due[c]; w != 0; w &= w - 1 {
				j := int32(bits.TrailingZeros64(w))
				k := n.waitHead(base+j, c)
				if a := n.pkts[k].ready; bc < 0 || a < age {
					bc, bj, bk, age = c, j, k, a
				}
			}
		}
		due[bc] &^= uint64(1) << uint(bj)
		s.woken[2*sw+bc] |= uint64(1) << uint(bj)
		n.eng.ScheduleAux(now, evPOWARRetry, base+bj, bk, ^n.pkts[bk].out)
	}
}

// waitHead is the head of input in's class-c queue.
func (n *Network) waitHead(in, c int32) int32 {
	if c == 1 {
		return n.vc[in].inHead
	}
	return n.in[in].head
}

// nextClass is packet k's class on its next link (0 with one class).
func (n *Network) nextClass(k int32) uint8 {
	if n.vc == nil {
		return 0
	}
	return n.pkts[k].vcNext
}

// retryDue: a retry event of head k of input in is still wanted (retry 0:
// the head waits; a retry already made leaves the later ones stale), and
// the head is taken off the waiting heads for its retry.
func (n *Network) retryDue(in, k int32) bool {
	s := n.pw
	if s.waiting == nil {
		return true
	}
	c := int32(n.pkts[k].vc)
	sw := n.in[in].sw
	b := uint64(1) << n.in[in].local
	if n.waitHead(in, c) != k || s.waiting[2*sw+c]&b == 0 {
		return false
	}
	s.woken[2*sw+c] &^= b
	s.waiting[2*sw+c] &^= b
	return true
}

// selectPOWAR chooses among the adaptive ports c (ascending: the switch's
// up ports, whose first Sel are selectable) by Algorithm 1, after bringing
// the switch's selectable count to the current checking cycle, and counts
// the packet's bytes in the cycle. With none selectable free (the paper's
// NULL) it returns ok false if wait, else the first selectable port in
// round-robin order (the packet queues there). Round-robin (s.rr) is
// Algorithm 1 with every port selectable and awake ports not preferred.
func (n *Network) selectPOWAR(sw int32, c []int, now int64, size int32, wait bool) (int, bool) {
	s := n.pw
	st := &s.sw[sw]
	nsel := len(c)
	switch {
	case s.alonso:
		g := n.swBase[sw] + int32(c[0])
		st.AdvanceOn(s.th, now/s.cycle, len(c), s.capacity, s.cycle, s.on[g:g+int32(len(c))])
		nsel = min(int(st.Sel), len(c))
	case !s.firstOn:
		st.Advance(s.th, now/s.cycle, len(c), s.capacity)
		nsel = min(int(st.Sel), len(c))
	}
	var sel uint64
	for _, p := range c[:nsel] {
		sel |= uint64(1) << uint(p)
	}
	var eligible, awake uint64
	if s.rr {
		eligible = n.freePorts(sw, sel, now, 0)
		awake = eligible
	} else {
		eligible, awake = n.freeAwake(sw, sel, now, 0)
	}
	p, next, ok := powar.Select(eligible, awake, int(st.RRP))
	switch {
	case !ok && wait:
		return 0, false
	case !ok:
		p = powar.First(sel, int(st.RRP))
		next = p + 1
		s.stats.Fallback++
	case !s.rr && awake&(1<<uint(p)) == 0:
		s.stats.Sleeping++
	}
	st.RRP = uint8(next)
	st.Count += int64(size)
	s.stats.Adaptive++
	s.stats.selSum += uint64(nsel)
	return p, true
}

// freePorts is the subset of the ports set (bits: switch-local ports of switch
// sw) that are not busy for a packet going on in class c.
func (n *Network) freePorts(sw int32, set uint64, now int64, c uint8) uint64 {
	base := n.swBase[sw]
	var free uint64
	for r := set; r != 0; r &= r - 1 {
		if !n.portBusy(base+int32(bits.TrailingZeros64(r)), now, c) {
			free |= r & -r
		}
	}
	return free
}

// freeAwake splits the ports set (bits: switch-local ports of switch sw)
// into those that are not busy for a packet going on in class c and
// those of them whose link is awake at now, in ascending port order.
func (n *Network) freeAwake(sw int32, set uint64, now int64, c uint8) (free, awake uint64) {
	base := n.swBase[sw]
	for r := set; r != 0; r &= r - 1 {
		g := base + int32(bits.TrailingZeros64(r))
		if n.portBusy(g, now, c) {
			continue
		}
		b := r & -r
		free |= b
		if n.portAwake(g, now) {
			awake |= b
		}
	}
	return free, awake
}

// portBusy: switch port g transmits, has a queue, holds bytes past the
// crossbar, or has packets routed to it waiting for the crossbar.
//
// With the paper's wait (decisions at the head of the input buffer), busy
// is the paper's "currently transmitting a packet", with the flow control
// the paper's credits stand for: the port transmits or is paused, or it
// has packets (queued, past the crossbar or granted) while its link can
// carry them; a port whose packets wait for its link to wake up is not
// busy, so more packets join them and share the wake-up.
//
// With two traffic classes (pending1 not nil) the wait tests the class c
// the packet goes on in: its class's pause, queue and requests, and the
// link's transmission (which ends whatever the classes do). A packet
// waiting in one class then depends on nothing of the other, so the wait
// adds no channel dependency that the classes' routing does not have
// (vc.go); testing both classes, the head of a class-1 input waited for
// class-0 queues, and a torus with the dateline deadlocked
// (TestTorusDatelineNoDeadlock).
func (n *Network) portBusy(g int32, now int64, c uint8) bool {
	po := &n.ports[g]
	if !n.pw.wait {
		queued := n.pw.pending[g] > 0 || po.bytes > 0 || po.head >= 0 ||
			(n.vc != nil && (n.vc[g].outBytes > 0 || n.vc[g].outHead >= 0))
		return queued || po.flags&txBusy != 0
	}
	if po.flags&txBusy != 0 {
		return true
	}
	var queued bool
	switch {
	case n.pw.pending1 == nil:
		if po.flags&paused != 0 {
			return true
		}
		queued = n.pw.pending[g] > 0 || po.bytes > 0 || po.head >= 0 ||
			(n.vc != nil && (n.vc[g].outBytes > 0 || n.vc[g].outHead >= 0))
	case c == 0:
		if po.flags&paused != 0 {
			return true
		}
		queued = n.pw.pending[g] > n.pw.pending1[g] || po.bytes > 0 || po.head >= 0
	default:
		v := &n.vc[g]
		if v.outFlags&vcPaused != 0 {
			return true
		}
		queued = n.pw.pending1[g] > 0 || v.outBytes > 0 || v.outHead >= 0
	}
	return queued && n.links[po.link].ReadyAt <= now
}

// portAwake: port g's link would carry a packet now without waiting
// (eee.Link.AwakeAt). A t_PDT its owner has not decided yet (decided
// lazily, see decide) is decided first: exactly the decision it would
// make later, as nothing reaches its controller in between.
func (n *Network) portAwake(g int32, now int64) bool {
	pt := &n.ports[g]
	l := &n.links[pt.link]
	if owner := n.linkOwner(g); owner >= 0 && now > l.IdleFrom() {
		n.decide(owner)
	}
	return l.AwakeAt(&n.p.EEE, now, pt.end)
}

// PowarModel is the summary's powar_model block: paper 002's normalised
// power model (Eqs. 1–7, powar.Params) applied to the run. A switch port's
// on-time fraction U is the share of the run its link was not low (Wake,
// going down and going up count as on); only cabled switch ports enter
// (NICs are not in the model); U_cpu is the nodes' mean utilisation.
// Normalised energies against a reference run (always on: W_net = 1) are
// e_net_s / e_net_s(ref) and e_cluster_s / e_cluster_s(ref).
type PowarModel struct {
	RunTimeS float64 `json:"run_time_s"`
	// PortOn is the mean U over the cabled switch ports.
	PortOn float64 `json:"port_on"`
	// WNet is Eq. 3 with Eq. 1's sleep floor; WNetNoFloor the worked
	// example's reading (W_ports = U).
	WNet        float64 `json:"w_net"`
	WNetNoFloor float64 `json:"w_net_no_floor"`
	WNodes      float64 `json:"w_nodes"`
	// WCluster is Eq. 5 (with WNet), WClusterNoFloor with WNetNoFloor.
	WCluster        float64 `json:"w_cluster"`
	WClusterNoFloor float64 `json:"w_cluster_no_floor"`
	// ENetS and EClusterS are Eqs. 6 and 7: W × run time (s).
	ENetS     float64 `json:"e_net_s"`
	EClusterS float64 `json:"e_cluster_s"`
	// The paper's "ideal": each port on only while it transmits (U = its
	// transmit time over the run time; instant on and off), with Eq. 1's
	// floor. Of an always-on run it is the paper's ideal marker.
	PortOnIdeal    float64 `json:"port_on_ideal"`
	WNetIdeal      float64 `json:"w_net_ideal"`
	ENetIdealS     float64 `json:"e_net_ideal_s"`
	EClusterIdealS float64 `json:"e_cluster_ideal_s"`
}

// powarModel computes the powar_model block for a run of secs seconds
// whose nodes were busy util of the time.
func (n *Network) powarModel(secs, util float64) *PowarModel {
	m := n.p.POWAR.Model
	var floor, bare, ideal []float64
	var on, onIdeal float64
	ports := 0
	alonso := n.alonsoLinkOn(secs)
	for s := range n.t.Switches() {
		var sum, sumIdeal float64
		k := 0
		for g := n.swBase[s]; g < n.swBase[s+1]; g++ {
			li := n.ports[g].link
			if li < 0 {
				continue
			}
			if alonso != nil {
				sum += alonso[li]
			} else {
				sum += linkOn(&n.links[li])
			}
			if secs > 0 && n.portTx != nil {
				sumIdeal += min(1, float64(n.portTx[g])*psToS/secs)
			}
			k++
		}
		if k == 0 {
			continue
		}
		on += sum
		onIdeal += sumIdeal
		ports += k
		u := sum / float64(k)
		floor = append(floor, m.PortsPower(u, true))
		bare = append(bare, m.PortsPower(u, false))
		ideal = append(ideal, m.PortsPower(sumIdeal/float64(k), true))
	}
	r := &PowarModel{RunTimeS: secs, PortOn: 1, WNodes: m.NodesPower(util)}
	if ports > 0 {
		r.PortOn = on / float64(ports)
		r.PortOnIdeal = onIdeal / float64(ports)
	}
	r.WNet, r.WNetNoFloor = m.NetPower(floor), m.NetPower(bare)
	r.WCluster, r.WClusterNoFloor = m.ClusterPower(r.WNet, r.WNodes), m.ClusterPower(r.WNetNoFloor, r.WNodes)
	r.ENetS, r.EClusterS = r.WNet*secs, r.WCluster*secs
	r.WNetIdeal = m.NetPower(ideal)
	r.ENetIdealS, r.EClusterIdealS = r.WNetIdeal*secs, m.ClusterPower(r.WNetIdeal, r.WNodes)*secs
	return r
}

// alonsoLinkOn is, with POWAR.Alonso, each link's on fraction of the run:
// an up link (and so both its ends) the time it was in its switch's
// selectable set, brought to the end of the run here on copies of the
// state; every other link 1. Nil without Alonso.
func (n *Network) alonsoLinkOn(secs float64) []float64 {
	s := n.pw
	if s == nil || !s.alonso {
		return nil
	}
	u := make([]float64, len(n.links))
	for i := range u {
		u[i] = 1
	}
	end := n.endTime
	if secs <= 0 || end <= 0 {
		return u
	}
	for sw := range n.t.Switches() {
		k := int(s.upCount[sw])
		if k < 2 {
			continue
		}
		g := n.swBase[sw] + s.upFirst[sw]
		on := append([]int64(nil), s.on[g:g+int32(k)]...)
		st := s.sw[sw]
		st.AdvanceOn(s.th, end/s.cycle, k, s.capacity, s.cycle, on)
		for j := range min(int(st.Sel), k) {
			on[j] += end - end/s.cycle*s.cycle // the cycle under way
		}
		for j, t := range on {
			if li := n.ports[g+int32(j)].link; li >= 0 {
				u[li] = min(1, float64(t)/float64(end))
			}
		}
	}
	return u
}

// linkOn is the fraction of a link's accounted time it was not low.
func linkOn(l *eee.Link) float64 {
	var total, low int64
	for s, t := range l.Times {
		total += t
		if st := eee.State(s); st == eee.LowFastWake || st == eee.LowDeepSleep {
			low += t
		}
	}
	if total == 0 {
		return 1
	}
	return float64(total-low) / float64(total)
}

// palIntermediate returns PAL's intermediate from router c to router cd of
// subnetwork sub (paper 004 §IV-E: "a non-minimal path towards the
// destination position in the current subnetwork dimension is randomly
// chosen among available, active paths"): a uniform choice, per packet,
// among the routers m ≠ c, cd whose links c–m and m–cd are both Active, or
// −1 if there is none. The choice is a SplitMix64 stream seeded by the
// run's seed (Params.Seed), one draw per decision with candidates:
// deterministic, and nothing is allocated. Any intermediate is deadlock-free
// because the second hop travels in the other traffic class (vc.go).
func (n *Network) palIntermediate(sub *tcep.Subnet, c, cd int) int {
	cnt := 0
	for m := range sub.K {
		if m != c && m != cd && sub.State(c, m) == tcep.Active && sub.State(m, cd) == tcep.Active {
			cnt++
		}
	}
	switch cnt {
	case 0:
		return -1
	case 1:
	default:
		n.palSeq++
		hi, _ := bits.Mul64(mix64(n.p.Seed^mix64(n.palSeq)), uint64(cnt))
		cnt = int(hi) + 1
	}
	for m := range sub.K {
		if m != c && m != cd && sub.State(c, m) == tcep.Active && sub.State(m, cd) == tcep.Active {
			if cnt--; cnt == 0 {
				return m
			}
		}
	}
	return -1
}

// HopClasses returns the hop classes that routing r on t carries in the
// network's two traffic classes (vc.go), or nil for one class: the
// topology's (topo.Classes: a torus3d with topology.dateline, the
// dragonfly, and with ECMP or POWAR, which choose among MinimalPorts, a
// HyperX or fbfly of two dimensions) under every routing but PAL's,
// which has its own (ugal here; tcep's consolidation sets them in
// arrive). sim/scenario refuses the configurations that still deadlock.
func HopClasses(t topo.Topology, r Routing) topo.HopClasser {
	if r == RoutingUGAL {
		return nil
	}
	return topo.Classes(t, r == RoutingECMP || r == RoutingPOWAR)
}

// palConfig is the consolidation state's configuration for routing
// ugal: PAL over links that stay Active (nothing is ever deactivated: no
// epoch runs), or the error naming routing.kind on a topology without
// fully connected dimensions.
func palConfig(t topo.Topology, p *Params) (tcep.Config, error) {
	if p.TCEP.Enabled {
		return p.TCEP.Config, nil
	}
	if _, ok := t.(*topo.HyperX); !ok {
		return tcep.Config{}, fmt.Errorf("routing.kind: ugal needs topology.kind hyperx or fbfly (fully connected dimensions), not %s", t.Name())
	}
	return tcep.DefaultConfig(), nil
}

// UGALRouting is the summary's ugal block (routing.kind ugal): the
// routing decisions that took a detour through an intermediate (one per
// packet and dimension).
type UGALRouting struct {
	NonMinimal uint64 `json:"non_minimal"`
}
