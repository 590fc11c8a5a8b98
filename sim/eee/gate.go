package eee

import (
	"math"
	"sort"
)

// Gate is the application-level delay budget of the end-to-end bound
// (docs/predictors.md "End-to-end bound"): one ledger shared by every link
// of a network, on top of the per-port predictors.
//
// It charges the union of the wake-up stalls of all links: the time during
// which at least one packet somewhere waited for a link to wake. An
// application's critical path can only be delayed while it is stalled, so
// with contention unchanged its slowdown is at most that union, U(t). The
// gate is open at time t when U(t) + Headroom ≤ Rate·t: a link whose
// t_PDT expires while the gate is closed stays awake until it reopens, and
// when the gate closes every link that is low or going down is woken at
// once. A stall charged while open is at most Headroom (one wake-up cycle),
// so U(t) ≤ Rate·t whenever the gate opens or a stall begins, and at most
// Rate·t + Headroom in between.
//
// Links evaluate their states lazily (doc.go), so the gate keeps its whole
// history: the closed intervals, disjoint and in time order. Charges come
// in time order (the event loop's), so the history before the time of the
// latest charge is final.
type Gate struct {
	rate     float64 // budget per ps of elapsed time
	headroom int64   // ps
	spent    int64   // U: the union of the stalls charged so far, ps
	covered  int64   // stalls are merged up to here
	closed   []span
	// Closures counts the times the gate closed (each wakes every low
	// link); Charged the stalls charged.
	Closures, Charged uint64
}

// span is a closed interval [from, to) of the gate.
type span struct{ from, to int64 }

// NewGate returns a gate with budget rate (ps of stall per ps of elapsed
// time, in (0, 1)) and headroom (ps, ≥ 0), starting at time 0 with nothing
// spent: closed until rate·t reaches the headroom.
func NewGate(rate float64, headroom int64) *Gate {
	g := &Gate{rate: rate, headroom: headroom}
	if headroom > 0 {
		g.closed = append(g.closed, span{0, g.reopen(0)})
		g.Closures++
	}
	return g
}

// reopen is the first ps at which Rate·t ≥ spent + headroom.
func (g *Gate) reopen(spent int64) int64 {
	t := math.Ceil(float64(spent+g.headroom) / g.rate)
	if t >= float64(Never) {
		return Never
	}
	return int64(t)
}

// Charge records a stall: a packet that needed a link at now can use it
// at ready. Overlapping stalls count once.
func (g *Gate) Charge(now, ready int64) {
	if ready <= now {
		return
	}
	g.Charged++
	if from := max(now, g.covered); ready > from {
		g.spent += ready - from
		g.covered = ready
	}
	if float64(g.spent+g.headroom) <= g.rate*float64(now) {
		return
	}
	r := g.reopen(g.spent)
	if k := len(g.closed); k > 0 && g.closed[k-1].to >= now {
		g.closed[k-1].to = max(g.closed[k-1].to, r)
		return
	}
	g.closed = append(g.closed, span{now, r})
	g.Closures++
}

// Spent is the union of the stalls charged so far (ps).
func (g *Gate) Spent() int64 { return g.spent }

// Headroom is the stall the gate keeps in reserve (ps).
func (g *Gate) Headroom() int64 { return g.headroom }

// after returns the index of the first closed interval that ends after t.
func (g *Gate) after(t int64) int {
	return sort.Search(len(g.closed), func(i int) bool { return g.closed[i].to > t })
}

// OpenAt returns the first instant ≥ t at which the gate is open.
func (g *Gate) OpenAt(t int64) int64 {
	if i := g.after(t); i < len(g.closed) && g.closed[i].from <= t {
		return g.closed[i].to // intervals never touch: to is open
	}
	return t
}

// ClosesAfter returns the first instant > t at which the gate closes.
func (g *Gate) ClosesAfter(t int64) (int64, bool) {
	i := g.after(t)
	if i < len(g.closed) && g.closed[i].from <= t {
		i++ // t is inside this one
	}
	if i < len(g.closed) {
		return g.closed[i].from, true
	}
	return 0, false
}

// gatedExpiry walks the idle period through the gate's history up to now.
// A t_PDT that expires while the gate is closed takes effect when it
// reopens; a closure while the link is going down or low wakes it (it
// finishes going down first), and after that wake-up the owner's timer
// starts again. It accounts every such cycle that a packet at now does not
// interrupt and returns when the current sleep attempt starts (expire),
// or, when a packet at now finds a gate-forced wake-up in progress, when
// that wake-up ends (waking > now; the cycle is accounted up to its start
// of going up). A closure while the power-down handshake is under way at
// now is left to Need's own rules: the packet and the gate want the same.
func (l *Link) gatedExpiry(p *Params, now int64) (expire, waking int64) {
	g := p.Gate
	from := l.idleFrom
	for {
		expire = g.OpenAt(from + l.pdt)
		down := expire + 2*p.Handshake
		if now < down {
			return expire, 0
		}
		c, ok := g.ClosesAfter(expire)
		if !ok || c >= now {
			return expire, 0
		}
		// The gate closed at c while the link was going down or low.
		downEnd := down + p.firstS
		start := max(c, downEnd)
		l.account(Wake, down)
		l.account(GoingDown, downEnd)
		l.Downs++
		l.Ups++
		ready := start + l.wakeFrom(p, downEnd, start)
		if now < ready {
			return expire, ready
		}
		l.account(GoingUp, ready)
		from = ready
		if l.pdt >= Never-from-4*p.Handshake {
			return Never / 2, 0
		}
	}
}
