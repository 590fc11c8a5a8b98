package network

import (
	"errors"
	"fmt"
	"math"

	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/eee"
	"github.com/lpictl/lpictl/sim/engine"
)

// Params are the model's parameters in simulator units (ps, bytes, W).
// Package scenario fills them from a scenario file.
type Params struct {
	// fallbackAfter (tests): a parallel run goes on on one thread after
	// this many windows (a multiple of 64), as when other processes take
	// its cores (parallel.go, coreWatch).
	fallbackAfter int

	RateBps       float64 // link rate
	MTU           int32   // bytes; messages are split into packets of at most MTU
	Propagation   int64   // ps per link (cable)
	SwitchLatency int64   // ps: minimum time from a packet's last bit in to its output queue
	NICLatency    int64   // ps: from message generation to the NIC's output queue
	QueueBytes    int32   // per input and per output buffer of a switch port
	PFCGo         int32   // resume when an input buffer drains to this many bytes
	PFCStop       int32   // pause when an input buffer fills to this many bytes
	Speedup       float64 // crossbar speed over the link rate
	ControlBytes  int32   // EEE and PFC control messages

	EEE   eee.Params
	Power Power

	Predictor  predictor.Config // WakeTime must be set
	Controller controller.Config
	// EndToEnd is the application-level bound (eee.Gate); zero = off.
	EndToEnd EndToEnd

	// Routing is minimal (the zero value, the topology's Route), ECMP or
	// POWAR (routing.go).
	Routing Routing
	// POWAR configures routing POWAR and the powar_model summary block.
	POWAR POWAR
	// TCEP is the consolidation (power.consolidation: tcep) with PAL
	// routing (consolidation.go).
	TCEP TCEP
	// Seed seeds the model's own random choices (PAL's intermediates,
	// routing.go); the scenario's seed.
	Seed uint64

	Queue            engine.QueueKind
	CalendarBucketPS int64 // 0 = derived from the network
	CalendarBuckets  int   // 0 = derived
	// Threads is how many goroutines run the network (parallel.go): 0 or
	// 1 runs it on one; more splits it into that many partitions, with
	// the same results, unless ParallelBlocker says why it cannot.
	Threads int
}

// EndToEnd configures the end-to-end bound: a delay budget shared by every
// link (eee.Gate), so that the bound holds for the application rather than
// per port (docs/predictors.md "End-to-end bound").
type EndToEnd struct {
	// Bound is the tolerated execution-time overhead (0 = off). The gate's
	// rate is Bound/(1+Bound): a stall budget of Rate × the run's time is
	// Bound × the time without stalls.
	Bound float64
	// Headroom is the stall kept in reserve (ps); 0 = one wake-up cycle
	// of the mode: 2 handshakes + t_s + the deepest t_w.
	Headroom int64
}

// Power is the energy model (docs/model.md §3.3). The state powers are a port's
// (one end of a link): a link draws twice its state's power.
type Power struct {
	WakeW, FastWakeW, DeepSleepW float64
	// OffW is a port's power while its link is switched off by
	// consolidation (model §1.3); IdleFraction what an awake port draws
	// while it does not transmit, as a fraction of WakeW (0 or 1: WakeW).
	OffW, IdleFraction float64
	SwitchW            float64
	NodeMinW, NodeMaxW float64
	NodeUtilisation    float64 // fraction of time nodes compute, without a workload (Inject only)
}

// StateW returns the power one port (one end of a link) draws in state s.
func (p *Power) StateW(s eee.State) float64 {
	switch s {
	case eee.LowFastWake:
		return p.FastWakeW
	case eee.LowDeepSleep:
		return p.DeepSleepW
	case eee.Off:
		return p.OffW
	}
	return p.WakeW
}

// Ser is the serialisation time of n bytes at rate bps, in ps (rounded).
func Ser(n int64, rateBps float64) int64 {
	return int64(math.Round(float64(n) * 8e12 / rateBps))
}

// Validate checks the parameters; errors name the scenario key.
func (p *Params) Validate() error {
	pos := func(v float64) bool { return v > 0 && !math.IsInf(v, 0) }
	switch {
	case !pos(p.RateBps):
		return fmt.Errorf("network.link_rate: must be > 0, got %v", p.RateBps)
	case p.MTU <= 0:
		return fmt.Errorf("network.mtu: must be > 0, got %d", p.MTU)
	case p.Propagation < 0:
		return fmt.Errorf("network.propagation: must be ≥ 0")
	case p.SwitchLatency < 0:
		return fmt.Errorf("network.switch_latency: must be ≥ 0")
	case p.NICLatency < 0:
		return fmt.Errorf("network.nic_latency: must be ≥ 0")
	case !pos(p.Speedup) || p.Speedup < 1:
		return fmt.Errorf("network.speedup: must be ≥ 1, got %v", p.Speedup)
	case p.Routing > RoutingUGAL:
		return fmt.Errorf("routing.kind: unknown routing %v", p.Routing)
	case p.ControlBytes <= 0:
		return fmt.Errorf("network.control_bytes: must be > 0, got %d", p.ControlBytes)
	case p.Threads < 0 || p.Threads > engine.MaxParts:
		return fmt.Errorf("engine.threads: must be in [0, %d], got %d", engine.MaxParts, p.Threads)
	case p.QueueBytes < p.MTU:
		return fmt.Errorf("network.queue_size: %d B cannot hold one MTU (%d B)", p.QueueBytes, p.MTU)
	case p.PFCGo < 0 || p.PFCGo >= p.PFCStop:
		return fmt.Errorf("network.pfc_go: must be ≥ 0 and below pfc_stop (%d B), got %d", p.PFCStop, p.PFCGo)
	case p.PFCStop > p.QueueBytes:
		return fmt.Errorf("network.pfc_stop: must be ≤ queue_size (%d B), got %d", p.QueueBytes, p.PFCStop)
	}
	// Lossless headroom: above STOP the buffer must absorb the packet that
	// crossed it and what the sender starts before the PAUSE arrives.
	rtt := 2*p.Propagation + Ser(int64(p.ControlBytes), p.RateBps)
	inflight := int64(math.Ceil(float64(rtt) * p.RateBps / 8e12))
	if Ser(int64(p.MTU), p.RateBps) <= rtt {
		inflight += int64(p.MTU) // a second packet may start before the PAUSE lands
	}
	if need := int64(p.PFCStop) + int64(p.MTU) + inflight - 1; need > int64(p.QueueBytes) {
		return fmt.Errorf("network.pfc_stop: %d B leaves too little headroom in a %d B queue for an MTU of %d B and %d B in flight (PFC would drop packets); lower pfc_stop or raise queue_size",
			p.PFCStop, p.QueueBytes, p.MTU, inflight)
	}
	if err := p.POWAR.validate(p); err != nil {
		return err
	}
	if p.TCEP.Enabled {
		if err := p.TCEP.Validate(); err != nil {
			return err
		}
		if p.Routing != RoutingMinimal {
			return fmt.Errorf("power.consolidation: tcep routes with PAL and needs routing.kind minimal, got %v", p.Routing)
		}
	}
	pw := p.Power
	for _, f := range []struct {
		name string
		v    float64
	}{{"wake", pw.WakeW}, {"fast_wake", pw.FastWakeW}, {"deep_sleep", pw.DeepSleepW}, {"switch", pw.SwitchW}, {"node_min", pw.NodeMinW}, {"node_max", pw.NodeMaxW}} {
		if !(f.v >= 0) || math.IsInf(f.v, 0) {
			return fmt.Errorf("power: %s power must be ≥ 0, got %v", f.name, f.v)
		}
	}
	if !(pw.NodeUtilisation >= 0 && pw.NodeUtilisation <= 1) {
		return fmt.Errorf("power: node utilisation must be in [0, 1], got %v", pw.NodeUtilisation)
	}
	e := p.EEE
	if e.Mode != eee.AlwaysOn {
		if e.Mode == eee.FastWake || e.Mode == eee.Hybrid {
			if e.SleepFW <= 0 || e.WakeFW <= 0 {
				return errors.New("power.preset: the mode needs fast_wake times > 0")
			}
		}
		if e.Mode == eee.DeepSleep || e.Mode == eee.Hybrid {
			if e.SleepDS <= 0 || e.WakeDS <= 0 {
				return errors.New("power.preset: the mode needs deep_sleep times > 0")
			}
		}
		if b := p.EndToEnd.Bound; !(b >= 0 && b < 1) {
			return fmt.Errorf("power.end_to_end.bound: must be in [0, 1), got %v", b)
		}
		if p.EndToEnd.Headroom < 0 {
			return errors.New("power.end_to_end.headroom: must be ≥ 0")
		}
		if e.HybridHold < 0 {
			return errors.New("power.hybrid_hold: must be ≥ 0")
		}
	}
	return nil
}
