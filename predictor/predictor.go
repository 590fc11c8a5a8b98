package predictor

import (
	"fmt"
	"reflect"
	"time"
	"unsafe"
)

// IdlePeriod is one ended idle period of a port (docs/model.md §2.2): it ran from the
// end of the transmission that emptied the output queue to End, when the next
// packet needed the port.
type IdlePeriod struct {
	End    time.Duration // when the next packet needed the port
	Length time.Duration // t_inac
	// Missed reports that the port had started going down (or was asleep)
	// when the packet came: a misprediction (docs/model.md §2.3). The caller decides,
	// because a refused power-down handshake keeps a port awake past t_PDT.
	Missed bool
	PDT    time.Duration // the t_PDT that was in force during the period
	// Delay is what the next packet waited for the port to wake (0 for a
	// hit), rounded up to the nanosecond. A miss with Delay 0 has an
	// unknown delay (a real NIC's): the port's ledger then charges the
	// worst case (controller.Config.MissCost).
	Delay time.Duration
}

// Rationed is a predictor that chooses what its port does while the ledger
// holds it awake: wait is how long from now the port may not go down.
// Held answers the t_PDT to arm for the idle period starting now; the
// controller arms at least wait. An answer of the largest duration keeps
// the port awake for the whole period (a late sleep costs a whole wake-up
// for a short rest).
type Rationed interface {
	Held(now, wait time.Duration) time.Duration
}

// Bounded is a predictor that works to a degradation bound. The port's
// ledger (controller, docs/predictors.md "The delay ledger") holds it to that
// bound whatever it answers.
type Bounded interface {
	// BudgetRate is l = bound × hop factor: the wake-up delay the port may
	// add per unit of elapsed time.
	BudgetRate() float64
	// WakeCost is the deepest t_w the predictor was configured with (0:
	// not known), the ledger's reserve when no miss cost is configured.
	WakeCost() time.Duration
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
	// by the formulas of docs/model.md §2.2 "Storage" (not Go heap bytes).
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
		f := NewFixed(cfg.PDT.D())
		f.rate, f.wake = cfg.Bound, max(cfg.WakeTime.D(), cfg.Hybrid.DeepWakeTime.D())
		if len(cfg.Hops) > 0 {
			f.rate *= StaticHopFactor(cfg.Hops)
		}
		return f, nil
	case KindPerfBound:
		return newPerfBound(cfg), nil
	case KindPerfBoundCorrect:
		return newPerfBoundCorrect(cfg), nil
	case KindNGram:
		return newNGram(cfg), nil
	case KindPerfBoundCorrectWeighted:
		return newWeighted(cfg), nil
	case KindNextGap:
		return newNextGap(cfg), nil
	}
	return nil, fmt.Errorf("predictor.kind: unknown predictor %q", cfg.Kind)
}

// Layout returns where p's own struct lies and its size, for a caller
// that prefetches it before a decision or a count (the simulator, one
// event ahead): a predictor built apart is a cache miss otherwise, even
// one that reads a single field (Fixed). Its out-of-line parts (spilled
// bins, rings, tables) are not included. nil and 0 for a predictor that
// is not a pointer to a struct. It asks reflect rather than listing the
// kinds, so that a new predictor is prefetched without a change here;
// callers ask once per port built, not per decision.
func Layout(p Predictor) (unsafe.Pointer, uintptr) {
	v := reflect.ValueOf(p)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Type().Elem().Kind() != reflect.Struct {
		return nil, 0
	}
	return v.UnsafePointer(), v.Type().Elem().Size()
}

// Fixed always answers the same t_PDT (docs/model.md §2.1).
type Fixed struct {
	pdt  time.Duration
	rate float64       // bound × hop factor, for a ledger the user asks for
	wake time.Duration // deepest t_w configured (WakeCost)
}

// NewFixed returns a predictor that always answers pdt, with the default
// bound (used only by a ledger set to "on").
func NewFixed(pdt time.Duration) *Fixed { return &Fixed{pdt: pdt, rate: DefaultBound} }

// BudgetRate is the configured bound × the static hop factor: a fixed
// t_PDT runs under a ledger only when asked (controller.LedgerOn).
func (f *Fixed) BudgetRate() float64 { return f.rate }

// WakeCost is the deepest t_w configured, if any.
func (f *Fixed) WakeCost() time.Duration { return f.wake }

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
