package controller

import (
	"time"

	"github.com/lpictl/lpictl/predictor"
)

// rounds is the state of a port driven by a host agent (Config.Rounds):
// what the agent wrote, when it writes next, and the port's own ledger.
type rounds struct {
	interval time.Duration
	next     time.Duration // the next round
	// written is the timer the port arms from its next idle period on;
	// seen the controller's t_PDT as of the last ended idle period (what
	// the agent writes at a round: it decides only on ended periods).
	written, seen time.Duration
	// ledgerOn: the port applies the ledger (from the agent's first
	// write, which programs it and resets its account).
	ledgerOn bool
	// decided is the controller's decision for the idle period in
	// progress, armed what the port armed for it (written, or longer
	// where the ledger held it).
	decided, armed time.Duration
	// idleFrom is when the port's first idle period began (Rounds.Idle);
	// openIdle says it is still to be observed.
	idleFrom time.Duration
	openIdle bool
}

// initRounds sets up Config.Rounds at the port's start now: the agent
// opened the port Lead earlier, so its controller (the interval policy)
// and the ledger's budget start then, and its first round falls then.
func (p *Port) initRounds(cfg *Rounds, now time.Duration) {
	start := now - cfg.Lead.D()
	r := &rounds{interval: cfg.Interval.D(), next: start, written: p.current, seen: p.current}
	if cfg.Initial != nil {
		r.written = cfg.Initial.D()
	}
	r.decided, r.armed = r.written, r.written
	r.idleFrom, r.openIdle = now-cfg.Idle.D(), cfg.Idle > 0
	p.rounds = r
	p.hasRounds = true
	p.lastCompute = start
	p.led.start = start
	if p.led.rated != nil {
		p.led.settle()
	}
}

// roundsUntil runs the agent's rounds at or before t. Rounds between two
// observations write the same value (the agent has seen nothing new), so
// a run of them is one write.
func (p *Port) roundsUntil(t time.Duration) {
	r := p.rounds
	if r.next > t {
		return
	}
	if r.seen != r.written {
		r.written = r.seen
		if p.led.rated != nil && !r.ledgerOn {
			r.ledgerOn = true
			p.led.spent = 0
		}
	}
	if r.ledgerOn {
		p.led.settle() // the agent gives the port its rate once per round
	}
	r.next += ((t-r.next)/r.interval + 1) * r.interval
}

// decideRounds is Decide for a port driven by an agent: the controller
// decides as the agent's does (no ledger of its own), and the port arms
// what the agent last wrote, held awake per idle period by its ledger
// until S + c ≤ l·(t − start), as an emulated port does
// (bpf/eeeemu.c "Delay ledger").
func (p *Port) decideRounds(now time.Duration) time.Duration {
	r := p.rounds
	p.roundsUntil(now)
	if p.onInterval {
		if now-p.lastCompute >= p.sh.cfg.Interval.D() {
			p.Recompute(now)
		}
	} else if p.trafficSince {
		p.Recompute(now)
	}
	r.decided = p.current
	armed := r.written
	if r.ledgerOn && armed < Never {
		if allow := p.led.readyAt; allow >= Never {
			p.led.held++
			armed = Never
		} else if allow > now && allow-now > armed {
			p.led.held++
			armed = allow - now
		}
	}
	r.armed = armed
	return armed
}

// idleEndedRounds is IdleEnded for a port driven by an agent: the port's
// ledger charges the wait (once it applies), and the predictor learns
// what the agent feeds it: the port's outcome when the port ran the
// decision unchanged, else the decision's own (length ≥ t_PDT).
func (p *Port) idleEndedRounds(ip predictor.IdlePeriod) {
	r := p.rounds
	r.openIdle = false
	p.roundsUntil(ip.End) // a round at End has not seen this period yet
	if r.ledgerOn {
		p.led.charge(ip, true)
	}
	if ip.PDT != r.decided || r.armed != r.decided {
		ip.Missed = ip.Length >= r.decided
		ip.Delay = 0
	}
	ip.PDT = r.decided
	p.pred.Observe(ip)
	p.trafficSince = true
	r.seen = p.current
}

// OpenIdle is the idle period a port driven by an agent had before its
// first packet (Rounds.Idle): when it began and the timer the port armed
// for it (its initial timer). ok is false without one, and once the port
// has observed an idle period. The caller measures the period's outcome
// (missed, the wait of the packet that ended it) and gives it to IdleEnded
// with End the first packet's arrival.
func (p *Port) OpenIdle() (start, armed time.Duration, ok bool) {
	r := p.rounds
	if r == nil || !r.openIdle {
		return 0, 0, false
	}
	return r.idleFrom, r.armed, true
}
