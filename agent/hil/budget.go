package hil

import (
	"time"

	"github.com/lpictl/lpictl/hwlink/emulate"
)

// Budget check verdicts.
const (
	VerdictWithinBudget    = "within budget"    // S ≤ l·T
	VerdictWithinGuarantee = "within guarantee" // l·T < S ≤ l·T + c
	VerdictOver            = "OVER"             // S > l·T + c: the guarantee failed
	// Without a ledger (a fixed t_PDT, ledger off) the spent delay is
	// compared with bound × T, for information.
	VerdictNoLedgerWithin = "within (no ledger)"
	VerdictNoLedgerOver   = "over (no ledger)"
)

// BudgetCheck is one port's delay budget at the end of a run's traffic:
// what its packets waited for wake-ups since the agent started the port's
// ledger (S), against the budget l·T and the guarantee l·T + c that the
// port's own ledger, applied per idle period, gives.
type BudgetCheck struct {
	// Enforcement: port (the emulated port's ledger, per idle period) or
	// none (no ledger: S accounted since the port was attached, against
	// bound × T).
	Enforcement string  `json:"enforcement"`
	Rate        float64 `json:"rate"`   // l
	SpanS       float64 `json:"span_s"` // T
	SpentS      float64 `json:"spent_s"`
	BudgetS     float64 `json:"budget_s"`    // l·T
	ReserveS    float64 `json:"reserve_s"`   // c
	GuaranteeS  float64 `json:"guarantee_s"` // l·T + c (none: l·T)
	Held        uint64  `json:"held"`
	Overruns    uint64  `json:"overruns"`
	Verdict     string  `json:"verdict"`
}

// Within reports whether the port kept its guarantee (or, without a
// ledger, the bound).
func (b *BudgetCheck) Within() bool {
	switch b.Verdict {
	case VerdictWithinBudget, VerdictWithinGuarantee, VerdictNoLedgerWithin:
		return true
	}
	return false
}

// budgetCheck reads a port's ledger from its emulator status at the end
// of the traffic (end); attachedAt is when the port was attached (the
// start of S when no ledger ran) and bound the run's predictor bound, the
// rate to compare with when the port had no ledger (0: no check).
func budgetCheck(end emulate.Status, attachedAt time.Duration, bound float64) *BudgetCheck {
	l := end.Ledger
	if l.On && l.Rate > 0 {
		b := &BudgetCheck{Enforcement: "port", Rate: l.Rate, SpanS: (end.Now - l.Start).Seconds(), SpentS: l.Spent.Seconds(),
			BudgetS: l.Budget.Seconds(), ReserveS: l.Reserve.Seconds(), Held: l.Held, Overruns: l.Overruns}
		b.GuaranteeS = b.BudgetS + b.ReserveS
		switch {
		case l.Spent <= l.Budget:
			b.Verdict = VerdictWithinBudget
		case l.Spent <= l.Budget+l.Reserve:
			b.Verdict = VerdictWithinGuarantee
		default:
			b.Verdict = VerdictOver
		}
		return b
	}
	if !(bound > 0) {
		return nil
	}
	span := end.Now - attachedAt
	if l.Start > 0 {
		span = end.Now - l.Start
	}
	b := &BudgetCheck{Enforcement: "none", Rate: bound, SpanS: span.Seconds(), SpentS: l.Spent.Seconds(),
		BudgetS: bound * span.Seconds(), Held: l.Held, Overruns: l.Overruns}
	b.GuaranteeS = b.BudgetS
	b.Verdict = VerdictNoLedgerWithin
	if b.SpentS > b.BudgetS {
		b.Verdict = VerdictNoLedgerOver
	}
	return b
}
