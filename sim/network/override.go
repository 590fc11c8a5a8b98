package network

import (
	"errors"
	"fmt"

	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/eee"
)

// SetPortController gives port p a controller configuration of its own in
// place of the network's (Params.Controller), with the network's
// predictor: e.g. the rounds of the host agent that drives that port
// (controller.Rounds, whose phase differs from agent to agent). Call it
// after New and before the run starts; the other ports are not affected.
// The port's timer at time 0 becomes the override's first answer, on its
// link where it owns the link's timer. An unset MissCost is filled as the
// network's.
func (n *Network) SetPortController(p PortID, cfg controller.Config) error {
	if err := n.checkPort(p); err != nil {
		return err
	}
	if n.ext.started || n.finished {
		return errors.New("network: SetPortController after the run started")
	}
	if cfg.MissCost == 0 {
		cfg.MissCost = predictor.Duration(controller.ChargePS(n.p.EEE.Cycle()))
	}
	build := func() (*controller.Port, error) {
		pred, err := predictor.New(n.p.Predictor)
		if err != nil {
			return nil, err
		}
		return controller.NewPort(cfg, pred, 0)
	}
	// The first answer, from a throw-away copy (Decide changes the
	// controller's state), as startPrototype does.
	proto, err := build()
	if err != nil {
		return fmt.Errorf("port %s: %w", n.DeviceName(p), err)
	}
	ctl, _ := build()
	i := int32(p)
	pt := &n.ports[i]
	pt.ctl = ctl
	pt.pred, _ = predictor.Layout(ctl.Predictor())
	pt.floor = ctl.SleepFloor()
	if n.p.EEE.Mode == eee.AlwaysOn {
		return nil
	}
	pt.pdt = toPS(proto.Decide(0))
	if l := &n.links[pt.link]; !l.Busy() && l.Owner() == pt.end {
		l.SetPDT(pt.pdt)
	}
	return nil
}

// firstPacket is port i's first packet, at now, which may transmit from
// ready: a port whose controller says it was idle since before its start
// (controller.Port.OpenIdle) observes that idle period, with the outcome
// its initial timer would have had on a port idle since then; any other
// port's ledger pays the wait, if the packet found the link asleep in the
// idle period every port starts with (a watched port's does not).
func (n *Network) firstPacket(i int32, now, ready int64) {
	pt := &n.ports[i]
	c := pt.ctl
	if r := n.p.Controller.Rounds; c == nil && r != nil && r.Idle > 0 {
		c = n.ctlFor(i)
	}
	if c != nil && pt.flags&extPDT == 0 {
		if start, armed, ok := c.OpenIdle(); ok {
			length := now - toPS(start)
			missed, wait := n.openWait(c, length, toPS(armed))
			c.IdleEnded(predictor.IdlePeriod{End: toDur(now), Length: toDur(length), Missed: missed,
				PDT: armed, Delay: controller.ChargePS(wait)})
			pt.floor = c.SleepFloor()
			return
		}
	}
	if ready > now && pt.flags&watched == 0 {
		c = n.ctlFor(i)
		c.ChargeDelay(toDur(now), controller.ChargePS(ready-now))
		pt.floor = c.SleepFloor()
	}
}

// openWait is the outcome of an idle period of length with timer pdt
// (ps) on a link idle all along: the link model's own answer (eee.Link.Need
// on a link idle since length ago, with the port's hybrid hold), without
// the end-to-end gate, which this period before the run never charged.
func (n *Network) openWait(c *controller.Port, length, pdt int64) (missed bool, wait int64) {
	p := n.p.EEE
	p.Gate = nil
	var l eee.Link
	l.Start(0, pdt) // the period's start as the origin: times stay far from Never
	if h, ok := c.Hold(); ok {
		l.SetHold(toPS(h))
	}
	ready, missed := l.Need(&p, length, 0)
	return missed, ready - length
}
