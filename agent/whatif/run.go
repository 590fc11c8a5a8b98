package whatif

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/lpictl/lpictl/configs"
	"github.com/lpictl/lpictl/hwlink/netdev"
	"github.com/lpictl/lpictl/hwlink/observe"
)

// Run observes the ports o selects among ports (those named by o.Ports,
// else those with carrier) for o.Duration, or until ctx is cancelled (the
// report then says Interrupted), and reports. A port named that is not
// among ports is bad input (configs.InputError).
func Run(ctx context.Context, o Options, ports []netdev.PortInfo) (Report, error) {
	sel, err := selectPorts(o, ports)
	if err != nil {
		return Report{}, err
	}
	start := observe.MonotonicNow()
	states := make([]*portState, 0, len(sel))
	defer func() {
		for _, s := range states {
			if s.obs != nil {
				s.obs.Close()
			}
		}
	}()
	for _, p := range sel {
		s, err := openPort(ctx, o, p, start)
		if err != nil {
			return Report{}, err
		}
		states = append(states, s)
	}
	for _, s := range states {
		if s.est != nil {
			// The observation starts with the port taken as idle: the
			// first gap (clipped to start) ends this period.
			s.est.IdleStart(start)
		}
	}
	interrupted := watch(ctx, o.Duration, states, start)
	now := observe.MonotonicNow()
	rep := Report{DurationS: (now - start).Seconds(), MaxDelayS: o.MaxDelay.Seconds(), FixedPDTS: o.FixedPDT.Seconds(),
		Ports: []Port{}, Assumptions: assumptions, Interrupted: interrupted}
	for _, s := range states {
		if s.est != nil && s.lastTxEnd > start && s.lastTxEnd < now {
			s.est.IdleStart(s.lastTxEnd) // the period in progress counts as idle up to now
		}
		s.finish(now, start, o.MaxDelay)
		rep.Ports = append(rep.Ports, s.out)
	}
	return rep, nil
}

// selectPorts picks the ports o.Ports names, else those with carrier.
func selectPorts(o Options, ports []netdev.PortInfo) ([]netdev.PortInfo, error) {
	var sel []netdev.PortInfo
	for _, p := range ports {
		if len(o.Ports) > 0 {
			if slices.Contains(o.Ports, p.Name) {
				sel = append(sel, p)
			}
			continue
		}
		if p.Carrier {
			sel = append(sel, p)
		}
	}
	for _, name := range o.Ports {
		if !slices.ContainsFunc(sel, func(p netdev.PortInfo) bool { return p.Name == name }) {
			return nil, configs.BadInput(fmt.Errorf("--port %q: no such port (see `lpictl ports`)", name))
		}
	}
	return sel, nil
}

// observe drains the observers every poll until d has passed or ctx is
// done (then it reports true), and once more at the end.
func watch(ctx context.Context, d time.Duration, states []*portState, start time.Duration) (interrupted bool) {
	buf := make([]observe.GapSample, 4096)
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(poll)
	defer tick.Stop()
	defer func() {
		for _, s := range states {
			s.drain(buf, start)
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return true
		case <-deadline.C:
			return false
		case <-tick.C:
			for _, s := range states {
				s.drain(buf, start)
			}
		}
	}
}

// drain feeds the port's observed egress gaps to its estimator.
func (s *portState) drain(buf []observe.GapSample, start time.Duration) {
	if s.obs == nil || s.est == nil {
		return
	}
	for {
		n, err := s.obs.DrainGaps(buf)
		if err != nil {
			if s.out.Error == "" {
				s.out.Error = "observe: " + err.Error()
			}
			return
		}
		for _, g := range buf[:n] {
			if g.Dir != observe.Egress || g.Length <= 0 || g.End <= start {
				continue
			}
			l := min(g.Length, g.End-start) // clip to the observation
			if !s.sawGap && g.End-l > start {
				// The first packet after attaching has no gap sample: it
				// ended the idle period the observation started with
				// (about when this gap starts, one transmission earlier).
				s.est.Idle(g.End-l, g.End-l-start)
				s.out.IdlePeriods++
			}
			s.sawGap = true
			s.est.Idle(g.End, l)
			s.out.IdlePeriods++
			// The packet's transmission ends about here; the idle period
			// after the last one is still open.
			s.lastTxEnd = g.End + time.Duration(float64(g.PacketLen)*8/s.rate*float64(time.Second))
		}
		if n < len(buf) {
			return
		}
	}
}
