package network

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/eee"
)

// External control of chosen ports: another controller (the agent's sim
// backend, agent/simbackend) drives a port's t_PDT instead of the port's
// in-simulator controller.Port, and polls the port's idle periods and hop
// counts. Everything else about the port is unchanged (queueing, EEE
// states and handshake, energy). Nothing calls back into the external
// controller: it advances the simulation (RunUntil, Advance) and then
// drains what happened (DrainIdle, DrainHops). A network without watched
// ports pays one flag test per idle-period start and end (port.flags).

// PortID is a port of the network: node i's NIC is port i; the ports of
// switch s follow the nodes, switch by switch, in port order.
type PortID int32

// IdleObservation is one ended idle period of a watched port's transmit
// side (docs/model.md §1.1, §2.2): it ran from End−Length (the output queue emptied
// after the last bit) to End (a packet entered the empty queue).
type IdleObservation struct {
	End, Length int64 // ps
	// PDT is the t_PDT in force during the period (ps; eee.Never when the
	// port never sleeps).
	PDT int64
	// Missed: the packet ending the period had to wait for the link's
	// power state (it had started going down, was low or waking up).
	Missed bool
	// Delay is how long that packet waited for the power state (ps; 0 on
	// a hit).
	Delay int64
}

// extPort is the state of a watched port.
type extPort struct {
	pdt     int64 // t_PDT set by SetPDT (ps), used when controlled
	idle    []IdleObservation
	hops    [256]uint64 // packets sent per hop count, since the last DrainHops
	hopsAny bool
	// drain: an external controller watches the port (Watch), so idle
	// periods and hops are queued for it. A port that is only traced
	// (TracePort) queues nothing.
	drain bool
}

// external is the network's external-control state (zero when unused).
type external struct {
	ports   map[int32]*extPort
	pdts    int   // ports with extPDT (Externalize): none, and no event reads the flag
	reached int64 // simulated time RunUntil/Advance reached (ps)
	started bool  // the workload was started (by Run or Advance)
}

// NumPorts is the number of ports (cabled or not).
func (n *Network) NumPorts() int { return len(n.ports) }

// DeviceName names port p: "node<i>" for node i's NIC and "sw<s>p<j>" for
// port j of switch s (the numbering of the topology: docs/topologies.md).
func (n *Network) DeviceName(p PortID) string {
	pt := &n.ports[p]
	if pt.sw < 0 {
		return "node" + strconv.Itoa(int(p))
	}
	return "sw" + strconv.Itoa(int(pt.sw)) + "p" + strconv.Itoa(int(pt.local))
}

// PortClass is port p's reporting class: "nic", or its switch's role
// (leaf, spine, …).
func (n *Network) PortClass(p PortID) string { return n.classes[n.ports[p].class] }

// PortCabled reports whether port p has a link.
func (n *Network) PortCabled(p PortID) bool { return n.ports[p].link >= 0 }

// PortByName finds a port by the name DeviceName gives it.
func (n *Network) PortByName(name string) (PortID, error) {
	bad := fmt.Errorf("port %q: no such port (want node<i> or sw<s>p<j>)", name)
	switch {
	case strings.HasPrefix(name, "node"):
		i, err := strconv.Atoi(name[4:])
		if err != nil || i < 0 || i >= n.t.Nodes() || n.DeviceName(PortID(i)) != name { // signs, leading zeros
			return 0, bad
		}
		return PortID(i), nil
	case strings.HasPrefix(name, "sw"):
		s, j, ok := strings.Cut(name[2:], "p")
		if !ok {
			return 0, bad
		}
		si, err1 := strconv.Atoi(s)
		ji, err2 := strconv.Atoi(j)
		if err1 != nil || err2 != nil || si < 0 || si >= n.t.Switches() || ji < 0 || ji >= int(n.swBase[si+1]-n.swBase[si]) {
			return 0, bad
		}
		id := PortID(n.swBase[si] + int32(ji))
		if n.DeviceName(id) != name { // signs, leading zeros
			return 0, bad
		}
		return id, nil
	}
	return 0, bad
}

// Watch queues port p's idle periods and hop counts for DrainIdle and
// DrainHops; its in-simulator controller keeps deciding its t_PDT (and
// still sees every idle period and packet). Watching a watched port does
// nothing.
func (n *Network) Watch(p PortID) error {
	if err := n.checkPort(p); err != nil {
		return err
	}
	e := n.watch(int32(p))
	e.drain = true
	return nil
}

// watch sets port i's watched flag and returns its extPort.
func (n *Network) watch(i int32) *extPort {
	pt := &n.ports[i]
	if pt.flags&watched != 0 {
		return n.ext.ports[i]
	}
	n.flushSent(i) // hops sent before: to the controller
	n.decide(i)    // the t_PDT in force is read below
	if n.ext.ports == nil {
		n.ext.ports = map[int32]*extPort{}
	}
	e := &extPort{pdt: pt.pdt}
	n.ext.ports[i] = e
	pt.flags |= watched
	pt.watching = true
	return e
}

// Externalize watches port p and takes its t_PDT from the port's
// controller: from now on it is the value in force now (the controller's
// last decision, or the initial t_PDT of an unused port) until SetPDT
// changes it. The controller no longer runs for the port (its statistics
// in Result and Ports stop: the external controller has them).
func (n *Network) Externalize(p PortID) error {
	if err := n.Watch(p); err != nil {
		return err
	}
	pt := &n.ports[p]
	if pt.flags&extPDT == 0 {
		pt.flags |= extPDT
		n.ext.pdts++
		n.ext.ports[int32(p)].pdt = pt.pdt
	}
	return nil
}

// Release gives port p back to its in-simulator controller and forgets
// its undrained observations. The idle period in progress keeps the t_PDT
// it was armed with.
func (n *Network) Release(p PortID) {
	if int(p) < 0 || int(p) >= len(n.ports) || n.ports[p].flags&watched == 0 {
		return
	}
	n.flushSent(int32(p))
	if n.ports[p].flags&extPDT != 0 {
		n.ext.pdts--
	}
	if n.trace != nil && n.trace.port == int32(p) {
		e := n.ext.ports[int32(p)]
		*e = extPort{pdt: e.pdt} // still traced: queues nothing
		n.ports[p].flags &^= extPDT
		return
	}
	n.ports[p].flags &^= watched | extPDT
	n.ports[p].watching = false
	delete(n.ext.ports, int32(p))
}

// SetPDT sets the t_PDT (ps, eee.Never for none) of externalized port p.
// Like the power-down threshold timer it models (docs/model.md §1.1), the value is
// armed when the output queue next empties: an idle period in progress
// keeps the value it started with.
func (n *Network) SetPDT(p PortID, pdt int64) error {
	e, err := n.controlled(p)
	if err != nil {
		return err
	}
	if pdt < 0 {
		return fmt.Errorf("port %s: t_PDT must be ≥ 0, got %d ps", n.DeviceName(p), pdt)
	}
	if n.p.EEE.Mode == eee.AlwaysOn {
		return fmt.Errorf("port %s: power mode always-on: the port never sleeps", n.DeviceName(p))
	}
	e.pdt = pdt
	return nil
}

// PDT is the t_PDT port p arms at its next idle period (ps): SetPDT's value
// for an externalized port, its controller's current answer otherwise
// (eee.Never in mode always-on).
func (n *Network) PDT(p PortID) int64 {
	if n.p.EEE.Mode == eee.AlwaysOn {
		return eee.Never
	}
	if n.ports[p].flags&extPDT != 0 {
		return n.ext.ports[int32(p)].pdt
	}
	n.decide(int32(p))
	return toPS(n.ctlFor(int32(p)).PDT())
}

// DrainIdle moves up to len(dst) of port p's ended idle periods, oldest
// first, into dst and returns how many; the rest wait for the next call.
func (n *Network) DrainIdle(p PortID, dst []IdleObservation) int {
	e := n.ext.ports[int32(p)]
	if e == nil {
		return 0
	}
	k := copy(dst, e.idle)
	e.idle = e.idle[:copy(e.idle, e.idle[k:])]
	return k
}

// DrainHops calls f with the number of packets port p sent per hop count
// (links from the port to the destination) since the last call.
func (n *Network) DrainHops(p PortID, f func(hops int, packets uint64)) {
	e := n.ext.ports[int32(p)]
	if e == nil {
		return
	}
	n.flushSent(int32(p))
	if !e.hopsAny {
		return
	}
	for h, c := range e.hops {
		if c != 0 {
			f(h, c)
			e.hops[h] = 0
		}
	}
	e.hopsAny = false
}

// PortLink returns a copy of port p's link power state with its state
// times and transition counts accounted up to at (usually Reached; at
// least the time of the last event: the network accounts lazily,
// docs/model.md §1.1, and nothing changes a link between events). Both ends of a link
// share it.
func (n *Network) PortLink(p PortID, at int64) eee.Link {
	pt := &n.ports[p]
	if pt.link < 0 {
		return eee.Link{}
	}
	if o := n.linkOwner(int32(p)); o >= 0 {
		n.decide(o) // the link's t_PDT is read below
	}
	l := n.links[pt.link]
	l.Finish(&n.p.EEE, at)
	return l
}

// Reached is the simulated time (ps) the network has been advanced to: the
// last RunUntil/Advance target reached, or the last event's time.
func (n *Network) Reached() int64 { return max(n.ext.reached, n.eng.Now()) }

// Drained reports that no event is pending: the workload has ended and the
// network is empty (or deadlocked, as Run would report), so advancing
// further only lets time pass.
func (n *Network) Drained() bool { return n.eng.Pending() == 0 }

// RunUntil runs every event at or before t (ps) and leaves the network at
// time t; it can be called again with a later t, and Run completes the run
// afterwards. Running in steps gives exactly the events, and results, of
// running at once.
func (n *Network) RunUntil(t int64) error {
	_, err := n.Advance(t, 0)
	return err
}

// Advance is RunUntil with at most maxEvents events (0 = no limit): it
// reports whether time t was reached, so that a caller can bound the work
// of one call and continue later.
func (n *Network) Advance(t int64, maxEvents uint64) (bool, error) {
	if n.finished {
		return false, errors.New("network: already run")
	}
	n.start()
	if t <= n.Reached() {
		return true, nil
	}
	before := n.eng.Events()
	n.eng.Run(t, maxEvents)
	if n.workloadFailed() {
		return false, n.workloadErr()
	}
	if maxEvents != 0 && n.eng.Events()-before >= maxEvents {
		return false, nil
	}
	n.ext.reached = t
	return true, nil
}

// start starts the attached workload once (Run, Advance).
func (n *Network) start() {
	if !n.ext.started {
		n.ext.started = true
		n.startWorkload()
	}
}

func (n *Network) checkPort(p PortID) error {
	if int(p) < 0 || int(p) >= len(n.ports) {
		return fmt.Errorf("port %d: no such port (the network has %d)", p, len(n.ports))
	}
	if n.ports[p].link < 0 {
		return fmt.Errorf("port %s: not cabled", n.DeviceName(p))
	}
	return nil
}

func (n *Network) controlled(p PortID) (*extPort, error) {
	if int(p) < 0 || int(p) >= len(n.ports) || n.ports[p].flags&extPDT == 0 {
		return nil, fmt.Errorf("port %d: not externalized", p)
	}
	return n.ext.ports[int32(p)], nil
}

// extIdleEnded records watched port i's idle period that ended at now
// (from needed; the packet ending it may transmit from ready) and tells the
// port's controller unless it is externalized.
func (n *Network) extIdleEnded(i int32, now, length int64, missed bool, ready int64) {
	pt := &n.ports[i]
	e := n.ext.ports[i]
	if e.drain {
		e.idle = append(e.idle, IdleObservation{End: now, Length: length, PDT: pt.pdt, Missed: missed, Delay: max(ready-now, 0)})
	}
	if t := n.trace; t != nil && t.port == i {
		t.idleEnded(now-length, length, pt.pdt, missed, ready-now)
	}
	if pt.flags&extPDT == 0 && n.p.EEE.Mode != eee.AlwaysOn {
		ctl := n.ctlFor(i)
		ctl.IdleEnded(predictor.IdlePeriod{
			End: toDur(now), Length: toDur(length), Missed: missed, PDT: toDur(pt.pdt),
			Delay: controller.ChargePS(ready - now),
		})
		pt.floor = ctl.SleepFloor()
	}
}

// extPDTFor is the t_PDT externalized port i arms when its queue empties.
func (n *Network) extPDTFor(i int32) int64 { return n.ext.ports[i].pdt }

// extSent counts watched port i's sent packets (hop counts one byte each,
// oldest lowest, as in port.pendHops) and reports them to the port's
// controller unless it is externalized.
func (n *Network) extSent(i int32, h uint64) {
	for ; h != 0; h >>= 8 {
		n.extSentOne(i, uint8(h))
	}
}

// extSentOne counts one packet of watched port i sent with hops (reportSent).
func (n *Network) extSentOne(i int32, hops uint8) {
	pt := &n.ports[i]
	e := n.ext.ports[i]
	pt.sent++
	if e.drain {
		e.hops[hops]++
		e.hopsAny = true
	}
	if t := n.trace; t != nil && t.port == i {
		t.sent[hops]++
	}
	if pt.flags&extPDT == 0 && n.p.EEE.Mode != eee.AlwaysOn {
		n.ctlFor(i).Sent(int(hops), 1)
	}
}
