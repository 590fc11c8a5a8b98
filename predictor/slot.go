package predictor

import (
	"fmt"
	"time"
)

// Slot is storage in which a SlotBuilder builds a PerfBound or a
// PerfBoundCorrect in place, for a caller that keeps one predictor per
// port in arrays (the simulator: next to the port's controller, so that a
// decision touches neighbouring cache lines, which it prefetches). A
// PerfBound is built in the PerfBound a PerfBoundCorrect holds, so that
// it starts in the slot's first line and its hot fields are in the same
// lines as a PerfBoundCorrect's. A Slot in use must not be copied.
type Slot struct{ pbc PerfBoundCorrect }

// SlotBuilder builds the predictor of one configuration, a PerfBound or
// a PerfBoundCorrect, defaulted and validated once, in Slots.
type SlotBuilder struct {
	cfg Config
}

// NewSlotBuilder fills cfg's defaults and validates it; its kind must be
// perfbound or perfboundcorrect.
func NewSlotBuilder(cfg Config) (*SlotBuilder, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if !Slotted(cfg.Kind) {
		return nil, fmt.Errorf("predictor.kind: %q is not %s or %s", cfg.Kind, KindPerfBound, KindPerfBoundCorrect)
	}
	return &SlotBuilder{cfg: cfg}, nil
}

// Slotted reports whether a predictor of kind k can be built in a Slot.
func Slotted(k Kind) bool { return k == KindPerfBound || k == KindPerfBoundCorrect }

// Init builds the builder's predictor in s, which must not be in use, and
// returns it: the same predictor New returns for the configuration.
func (b *SlotBuilder) Init(s *Slot) Predictor {
	if b.cfg.Kind == KindPerfBound {
		s.pbc = PerfBoundCorrect{} // its own fields stay unused
		s.pbc.pb.init(b.cfg)
		return &s.pbc.pb
	}
	s.pbc.init(b.cfg)
	return &s.pbc
}

// BinAddr is the PerfBound's (PerfBound.BinAddr) for either kind.
func (s *Slot) BinAddr(v time.Duration) uintptr { return s.pbc.pb.BinAddr(v) }

// OutOfLineBytes is what the predictor in s holds outside the slot
// (PerfBoundCorrect.OutOfLineBytes; a PerfBound's register parts are
// never allocated).
func (s *Slot) OutOfLineBytes() int64 { return s.pbc.OutOfLineBytes() }
