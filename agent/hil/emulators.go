package hil

import (
	"context"
	"errors"
	"fmt"

	"github.com/lpictl/lpictl/agent/hwbackend"
	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/emulate"
	"github.com/lpictl/lpictl/hwlink/observe"
	"github.com/lpictl/lpictl/sim/power"
)

// emulators are the emulated EEE ports of one run, in LinePorts order.
type emulators struct {
	line  *Line
	ports []*emulate.Port
}

// attachEmulators makes every egress port of the line an emulated EEE port
// in mode (the experiment's preset, scale, rate, driver and initial
// timer); with port.lpi per-link, the two egress ports of each cable are
// the two ends of one emulated link, named after the cable, with the
// simulator's handshake at the simulated rate. On error the ports
// attached so far are detached.
func attachEmulators(ctx context.Context, cfg *Config, line *Line, mode emulate.Mode, delay emulate.Delay) (*emulators, error) {
	e := &emulators{line: line}
	for _, p := range LinePorts {
		ec := cfg.emulateConfig(p.Dev, mode, delay)
		ec.NetNS = hwlink.NetNS(line.Hosts[p.Host].Name)
		ec.BPFFS = line.BPFFS
		ec.Attach = observe.AttachAuto
		if cfg.PortLPI() == power.PerLink {
			ec.LPI, ec.Link, ec.Handshake = emulate.PerLink, cableName(p), hwbackend.LinkHandshake(cfg.SimRateBps())
		}
		ep, err := emulate.Attach(ctx, ec)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("emulate %s in %s: %w", p.Dev, line.Hosts[p.Host].Name, err), e.detach())
		}
		e.ports = append(e.ports, ep)
	}
	return e, nil
}

// portLPINote says which link model the emulated ports run (the report's
// notes).
func portLPINote(cfg *Config) string {
	if cfg.PortLPI() == power.PerLink {
		return fmt.Sprintf("the two egress ports of each cable are one emulated link: it goes down when both are idle, after the owner's t_PDT and a handshake of %v, and either end's packet wakes it", hwbackend.LinkHandshake(cfg.SimRateBps()))
	}
	return "each egress port decides alone, no handshake"
}

// cableName names the cable a port transmits on: its two hosts, in order
// (a0 and s0 are both on cable a-s).
func cableName(p Port) string {
	if p.Host < p.Peer {
		return p.Host + "-" + p.Peer
	}
	return p.Peer + "-" + p.Host
}

// status reads every port's status at one instant.
func (e *emulators) status() ([]emulate.Status, error) {
	now := observe.MonotonicNow()
	out := make([]emulate.Status, 0, len(e.ports))
	for _, p := range e.ports {
		s, err := p.Status(now)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// detach removes every emulator (program, pins, qdiscs it added).
func (e *emulators) detach() error {
	var errs []error
	for _, p := range e.ports {
		if err := p.Detach(); err != nil {
			errs = append(errs, err)
		}
		p.Close()
	}
	e.ports = nil
	return errors.Join(errs...)
}
