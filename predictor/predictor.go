package predictor

import (
	"fmt"
	"time"
)

// IdlePeriod is one ended idle period of a port (SPEC §2.2): it ran from the
// end of the transmission that emptied the output queue to End, when the next
// packet needed the port.
type IdlePeriod struct {
	End    time.Duration // when the next packet needed the port
	Length time.Duration // t_inac
	// Missed reports that the port had started going down (or was asleep)
	// when the packet came: a misprediction (SPEC §2.3). The caller decides,
	// because a refused power-down handshake keeps a port awake past t_PDT.
	Missed bool
	PDT    time.Duration // the t_PDT that was in force during the period
}

// Predictor chooses t_PDT for one port. Implementations are deterministic
// and Predict allocates nothing.
type Predictor interface {
	// Observe records an ended idle period; periods arrive in End order.
	Observe(p IdlePeriod)
	// ObserveHops records packets sent by the port that travel hops hops to
	// their destination (for PerfBound's hop factor; others ignore it).
	ObserveHops(hops int, packets uint64)
	// Predict returns the t_PDT to use from now on.
	Predict(now time.Duration) time.Duration
	// StateBytes is the storage the predictor's state needs in hardware,
	// by the formulas of SPEC §2.2 "Storage" (not Go heap bytes).
	StateBytes() int
	// Kind names the predictor.
	Kind() Kind
}

// New builds the predictor that cfg describes, after filling defaults and
// validating it.
func New(cfg Config) (Predictor, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	switch cfg.Kind {
	case KindFixed:
		return NewFixed(cfg.PDT.D()), nil
	case KindPerfBound:
		return newPerfBound(cfg), nil
	case KindPerfBoundCorrect:
		return newPerfBoundCorrect(cfg), nil
	case KindNGram:
		return newNGram(cfg), nil
	case KindPerfBoundCorrectWeighted:
		return newWeighted(cfg), nil
	}
	return nil, fmt.Errorf("predictor.kind: unknown predictor %q", cfg.Kind)
}

// Fixed always answers the same t_PDT (SPEC §2.1).
type Fixed struct{ pdt time.Duration }

// NewFixed returns a predictor that always answers pdt.
func NewFixed(pdt time.Duration) *Fixed { return &Fixed{pdt: pdt} }

// Observe does nothing: a fixed threshold learns nothing.
func (f *Fixed) Observe(IdlePeriod) {}

// ObserveHops does nothing.
func (f *Fixed) ObserveHops(int, uint64) {}

// Predict returns the fixed threshold.
func (f *Fixed) Predict(time.Duration) time.Duration { return f.pdt }

// StateBytes is zero: the threshold lives in the port's PDT register.
func (f *Fixed) StateBytes() int { return 0 }

// Kind returns KindFixed.
func (f *Fixed) Kind() Kind { return KindFixed }
