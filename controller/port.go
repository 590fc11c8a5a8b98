package controller

import (
	"time"

	"github.com/lpictl/lpictl/predictor"
)

// Stats are a port's counters and its t_PDT figures.
type Stats struct {
	IdlePeriods uint64 `json:"idle_periods"`
	Hits        uint64 `json:"hits"`
	Misses      uint64 `json:"misses"`
	Decisions   uint64 `json:"decisions"`    // predictor consultations
	Changes     uint64 `json:"changes"`      // t_PDT in force changed
	Clamps      uint64 `json:"clamps"`       // answers cut by the register range
	Suppressed  uint64 `json:"suppressed"`   // changes held back by hysteresis
	RateLimited uint64 `json:"rate_limited"` // changes held back by min_change_interval
	// Current is the t_PDT in force, Recommended the predictor's last raw
	// answer, Mean the time-weighted mean of t_PDT since the port started.
	Current     time.Duration `json:"current_pdt_ns"`
	Recommended time.Duration `json:"recommended_pdt_ns"`
	Mean        time.Duration `json:"mean_pdt_ns"`
	StateBytes  int           `json:"state_bytes"`
}

// Port controls the t_PDT of one link end.
type Port struct {
	cfg   Config
	pred  predictor.Predictor
	stats Stats

	trafficSince bool // an observation arrived since the last computation
	lastCompute  time.Duration
	lastChange   time.Duration
	changed      bool

	start, since time.Duration // port start; when Current took effect
	weighted     float64       // ∫ t_PDT dt before since, in ns²
}

// NewPort returns a port that starts at now with the predictor's first answer.
func NewPort(cfg Config, pred predictor.Predictor, now time.Duration) (*Port, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p := &Port{cfg: cfg, pred: pred, start: now, since: now, lastCompute: now}
	v := p.consult(now)
	p.stats.Current = v
	return p, nil
}

// Config returns the port's configuration with defaults filled.
func (p *Port) Config() Config { return p.cfg }

// Predictor returns the port's predictor.
func (p *Port) Predictor() predictor.Predictor { return p.pred }

// IdleEnded records an ended idle period: a hit if the port was still awake
// when the next packet came, a miss otherwise.
func (p *Port) IdleEnded(ip predictor.IdlePeriod) {
	p.stats.IdlePeriods++
	if ip.Missed {
		p.stats.Misses++
	} else {
		p.stats.Hits++
	}
	p.pred.Observe(ip)
	p.trafficSince = true
}

// Sent records packets sent that travel hops hops to their destination.
func (p *Port) Sent(hops int, packets uint64) {
	p.pred.ObserveHops(hops, packets)
	p.trafficSince = true
}

// PDT returns the t_PDT in force.
func (p *Port) PDT() time.Duration { return p.stats.Current }

// Decide returns the t_PDT to arm now, recomputing it when the policy says
// so: with OnQueueEmpty (call it when the output queue empties) if there was
// traffic since the last computation; with OnInterval once Interval has
// passed since the last computation.
func (p *Port) Decide(now time.Duration) time.Duration {
	switch p.cfg.Recompute {
	case OnInterval:
		if now-p.lastCompute >= p.cfg.Interval.D() {
			p.Recompute(now)
		}
	default:
		if p.trafficSince {
			p.Recompute(now)
		}
	}
	return p.stats.Current
}

// Recompute consults the predictor now and applies its answer, subject to
// the register, hysteresis and the minimum change interval.
func (p *Port) Recompute(now time.Duration) time.Duration {
	v := p.consult(now)
	cur := p.stats.Current
	if v == cur {
		return cur
	}
	if p.changed && now-p.lastChange < p.cfg.MinChangeInterval.D() {
		p.stats.RateLimited++
		return cur
	}
	if h := p.cfg.Hysteresis; h > 0 && float64(absDiff(v, cur)) <= h*float64(cur) {
		p.stats.Suppressed++
		return cur
	}
	p.weighted += float64(cur) * float64(now-p.since)
	p.since = now
	p.stats.Current = v
	p.stats.Changes++
	p.lastChange, p.changed = now, true
	return v
}

// consult asks the predictor and fits the answer to the register.
func (p *Port) consult(now time.Duration) time.Duration {
	p.stats.Decisions++
	p.trafficSince = false
	p.lastCompute = now
	raw := p.pred.Predict(now)
	p.stats.Recommended = raw
	v, clamped := p.cfg.Register.Apply(raw)
	if clamped {
		p.stats.Clamps++
	}
	return v
}

// Stats returns the counters and t_PDT figures at now.
func (p *Port) Stats(now time.Duration) Stats {
	s := p.stats
	s.StateBytes = p.pred.StateBytes()
	s.Mean = s.Current
	if span := now - p.start; span > 0 {
		w := p.weighted + float64(s.Current)*float64(now-p.since)
		s.Mean = time.Duration(w / float64(span))
	}
	return s
}

func absDiff(a, b time.Duration) time.Duration {
	if a > b {
		return a - b
	}
	return b - a
}
