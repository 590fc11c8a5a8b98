package network

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// Traffic is the synthetic workload (until trace workloads land).
type Traffic struct {
	// Pattern is "uniform" (each message to a uniformly random other node)
	// or "permutation" (each node always sends to one fixed other node,
	// from a seeded random permutation without fixed points).
	Pattern string
	// MessageBytes is each message's size.
	MessageBytes int64
	// Load is the offered load per node as a fraction of the link rate.
	Load float64
	// Arrivals is "poisson" or "onoff" (exponential ON and OFF periods of
	// mean OnTime and OffTime; during ON, messages arrive as a Poisson
	// process at Load × (OnTime+OffTime)/OnTime so the mean is Load).
	Arrivals        string
	OnTime, OffTime int64 // ps
	// Sync makes every node share one ON/OFF schedule (bulk-synchronous
	// phases: all compute, then all communicate); otherwise each node
	// draws its own.
	Sync bool
	// Messages per node (0 = no limit) and Duration (ps, 0 = no limit): a
	// node stops generating at whichever comes first. One must be set.
	Messages int64
	Duration int64
	// Start is when generation starts (ps).
	Start int64
}

// Validate checks the workload; errors name the scenario key.
func (t *Traffic) Validate() error {
	switch t.Pattern {
	case "uniform", "permutation":
	default:
		return fmt.Errorf("workload.pattern: unknown pattern %q (want uniform or permutation)", t.Pattern)
	}
	switch t.Arrivals {
	case "poisson":
	case "onoff":
		if t.OnTime <= 0 || t.OffTime < 0 {
			return errors.New("workload.on_time: must be > 0 (and off_time ≥ 0) for onoff arrivals")
		}
	default:
		return fmt.Errorf("workload.arrivals: unknown arrival process %q (want poisson or onoff)", t.Arrivals)
	}
	if t.MessageBytes <= 0 {
		return fmt.Errorf("workload.message_size: must be > 0, got %d", t.MessageBytes)
	}
	if !(t.Load > 0) || math.IsInf(t.Load, 0) {
		return fmt.Errorf("workload.load: must be > 0, got %v", t.Load)
	}
	if t.Messages < 0 {
		return fmt.Errorf("workload.messages: must be ≥ 0, got %d", t.Messages)
	}
	if t.Duration < 0 {
		return errors.New("workload.duration: must be ≥ 0")
	}
	if t.Messages == 0 && t.Duration == 0 {
		return errors.New("workload: set messages (per node) or duration, or the run never ends")
	}
	return nil
}

// generator is one node's message source.
type generator struct {
	pcg     rand.PCG   // rng's source, kept inline with the generator
	src     rand.Rand  // rng's value (rng points here)
	rng     *rand.Rand // arrival times and destinations
	phase   *rand.Rand // ON/OFF period lengths (shared seed when Sync)
	left    int64      // messages still to send (−1: unlimited)
	dest    int32      // permutation destination
	onUntil int64      // end of the current ON period (onoff)
}

func (n *Network) setupTraffic(tr *Traffic, seed uint64) {
	n.traffic = *tr
	nodes := n.t.Nodes()
	n.gens = make([]generator, nodes)
	// Mean inter-arrival (ps) at the offered load, during ON periods.
	bits := float64(tr.MessageBytes) * 8
	rate := tr.Load * n.p.RateBps
	if tr.Arrivals == "onoff" {
		rate *= float64(tr.OnTime+tr.OffTime) / float64(tr.OnTime)
	}
	n.meanGap = bits / rate * 1e12
	var perm []int
	if tr.Pattern == "permutation" && nodes > 1 {
		r := rand.New(rand.NewPCG(seed, math.MaxUint64))
		perm = r.Perm(nodes)
		for i := range perm {
			if perm[i] == i {
				j := (i + 1) % nodes
				perm[i], perm[j] = perm[j], perm[i]
			}
		}
	}
	for i := range n.gens {
		g := &n.gens[i]
		g.pcg.Seed(seed, uint64(i))
		g.src = *rand.New(&g.pcg)
		g.rng = &g.src
		g.phase = g.rng
		if tr.Sync {
			g.phase = rand.New(rand.NewPCG(seed, math.MaxUint64-1))
		}
		g.left = tr.Messages
		if g.left == 0 {
			g.left = -1
		}
		if perm != nil {
			g.dest = int32(perm[i])
		}
		if nodes < 2 {
			continue
		}
		at := tr.Start
		if tr.Arrivals == "onoff" {
			// Start in ON with probability on/(on+off), else in OFF.
			if g.phase.Float64()*float64(tr.OnTime+tr.OffTime) >= float64(tr.OnTime) {
				at += int64(g.phase.ExpFloat64() * float64(tr.OffTime))
			}
			g.onUntil = at + int64(g.phase.ExpFloat64()*float64(tr.OnTime))
		}
		if next, ok := n.nextArrival(g, at); ok {
			n.eng.Schedule(next+n.p.NICLatency, evMsg, int32(i), 0)
		}
	}
}

// nextArrival draws the next message time after t, or false when the node
// is done.
func (n *Network) nextArrival(g *generator, t int64) (int64, bool) {
	if g.left == 0 {
		return 0, false
	}
	next := t + int64(g.rng.ExpFloat64()*n.meanGap)
	if n.traffic.Arrivals == "onoff" {
		for next >= g.onUntil {
			// Memoryless: the rest of the draw starts after the OFF period.
			rest := next - g.onUntil
			on := g.onUntil + int64(g.phase.ExpFloat64()*float64(n.traffic.OffTime))
			g.onUntil = on + max(1, int64(g.phase.ExpFloat64()*float64(n.traffic.OnTime)))
			next = on + rest
		}
	}
	if d := n.traffic.Duration; d > 0 && next >= n.traffic.Start+d {
		return 0, false
	}
	return next, true
}

// generate runs node i's message event (at creation + NIC latency).
func (n *Network) generate(i int32, now int64) {
	g := &n.gens[i]
	created := now - n.p.NICLatency
	var dst int32
	if n.traffic.Pattern == "permutation" {
		dst = g.dest
	} else {
		dst = int32(g.rng.IntN(len(n.gens) - 1))
		if dst >= i {
			dst++
		}
	}
	n.sendMessage(now, created, i, dst, n.traffic.MessageBytes)
	if g.left > 0 {
		g.left--
	}
	if next, ok := n.nextArrival(g, created); ok {
		n.eng.Schedule(next+n.p.NICLatency, evMsg, i, 0)
	}
}
