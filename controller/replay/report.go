package replay

import (
	"bytes"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/lpictl/lpictl/predictor"
)

// Summary is what `lpictl predict` reports of a replay; times in seconds.
type Summary struct {
	Predictor       predictor.Kind `json:"predictor"`
	WakeTimeS       float64        `json:"wake_time_s"`
	SleepTimeS      float64        `json:"sleep_time_s"`
	HandshakeS      float64        `json:"handshake_s"`
	IdlePeriods     uint64         `json:"idle_periods"`
	ZeroGapsSkipped uint64         `json:"zero_gaps_skipped"`
	Hits            uint64         `json:"hits"`
	Misses          uint64         `json:"misses"`
	HitRate         float64        `json:"hit_rate"`
	// DeepMisses: hybrid mode only, the misses that woke the port from
	// Deep Sleep.
	DeepMisses         *uint64           `json:"deep_misses,omitempty"`
	IdleTimeS          float64           `json:"idle_time_s"`
	AsleepTimeS        float64           `json:"asleep_time_s"`
	AsleepShare        float64           `json:"asleep_share"`
	AddedDelayS        float64           `json:"added_delay_s"`
	AddedDelayPerIdleS float64           `json:"added_delay_per_idle_period_s"`
	PDTMeanS           float64           `json:"pdt_mean_s"`
	PDTMinS            float64           `json:"pdt_min_s"`
	PDTMaxS            float64           `json:"pdt_max_s"`
	Decisions          uint64            `json:"decisions"`
	Changes            uint64            `json:"changes"`
	Clamps             uint64            `json:"clamps"`
	StateBytes         int               `json:"state_bytes"`
	RoundedUp          uint64            `json:"rounded_up"`
	Ledger             *SummaryLedger    `json:"ledger,omitempty"`
	Agreement          *SummaryAgreement `json:"agreement,omitempty"`

	handshake PS // exact, for the text summary
}

// SummaryLedger is the port's delay ledger at the end of the replay
// (controller.LedgerStats; docs/predictors.md "The delay ledger").
type SummaryLedger struct {
	Rate     float64 `json:"rate"`
	BudgetS  float64 `json:"budget_s"`
	SpentS   float64 `json:"spent_s"`
	ReserveS float64 `json:"reserve_s"`
	Ratio    float64 `json:"spent_ratio"`
	Held     uint64  `json:"held"`
	Overruns uint64  `json:"overruns"`
}

// SummaryAgreement compares a port trace's decisions with the replay's.
type SummaryAgreement struct {
	Decisions     uint64           `json:"decisions"`
	Matching      uint64           `json:"matching"` // same t_PDT and outcome
	FirstMismatch *SummaryMismatch `json:"first_mismatch,omitempty"`
}

// SummaryMismatch is the first trace row decided differently; t_PDT in ps
// as in the trace (-1: never sleeps).
type SummaryMismatch struct {
	Line          int    `json:"line"`
	IdlePeriod    int    `json:"idle_period"`
	SimPDTPS      int64  `json:"sim_pdt_ps"`
	ReplayPDTPS   int64  `json:"replay_pdt_ps"`
	SimOutcome    string `json:"sim_outcome"`
	ReplayOutcome string `json:"replay_outcome"`
}

// NewSummary summarises a replay of predictor kind with timing t.
func NewSummary(kind predictor.Kind, t Timing, r Result) Summary {
	s := Summary{
		Predictor: kind, WakeTimeS: t.Wake.Seconds(), SleepTimeS: t.Sleep.Seconds(), HandshakeS: t.Handshake.Seconds(),
		IdlePeriods: r.IdlePeriods, ZeroGapsSkipped: r.ZeroGaps, Hits: r.Hits, Misses: r.Misses,
		IdleTimeS: r.IdleTime.Seconds(), AsleepTimeS: r.Asleep.Seconds(), AddedDelayS: r.Delay.Seconds(),
		PDTMeanS: r.MeanPDT.Seconds(), PDTMinS: r.MinPDT.Seconds(), PDTMaxS: r.MaxPDT.Seconds(),
		Decisions: r.Port.Decisions, Changes: r.Port.Changes, Clamps: r.Port.Clamps,
		StateBytes: r.Port.StateBytes, RoundedUp: r.Port.RoundedUp, handshake: t.Handshake,
	}
	if l := r.Port.Ledger; l != nil {
		s.Ledger = &SummaryLedger{Rate: l.Rate, BudgetS: l.Budget.Seconds(), SpentS: l.Spent.Seconds(),
			ReserveS: l.Reserve.Seconds(), Ratio: l.Ratio(), Held: l.Held, Overruns: l.Overruns}
	}
	if t.DeepWake > 0 {
		d := r.DeepMisses
		s.DeepMisses = &d
	}
	if r.IdlePeriods > 0 {
		s.HitRate = float64(r.Hits) / float64(r.IdlePeriods)
		s.AddedDelayPerIdleS = r.Delay.Seconds() / float64(r.IdlePeriods)
	}
	if r.IdleTime > 0 {
		s.AsleepShare = float64(r.Asleep) / float64(r.IdleTime)
	}
	if a := r.Agreement; a != nil {
		s.Agreement = &SummaryAgreement{Decisions: a.Decisions, Matching: a.Matching}
		if m := a.First; m != nil {
			s.Agreement.FirstMismatch = &SummaryMismatch{
				Line: m.Line, IdlePeriod: m.Index, SimPDTPS: int64(m.SimPDT), ReplayPDTPS: int64(m.PDT),
				SimOutcome: Outcome(m.SimMissed), ReplayOutcome: Outcome(m.Missed),
			}
		}
	}
	return s
}

// Print writes the summary as a table.
func (s Summary) Print(w io.Writer) {
	d := func(sec float64) time.Duration { return time.Duration(sec * 1e9).Round(time.Nanosecond) }
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	hs := ""
	if s.handshake > 0 {
		hs = fmt.Sprintf(", handshake %v", s.handshake)
	}
	fmt.Fprintf(tw, "predictor\t%s\t(t_w %v, t_s %v%s)\n", s.Predictor, d(s.WakeTimeS), d(s.SleepTimeS), hs)
	fmt.Fprintf(tw, "idle periods\t%d\n", s.IdlePeriods)
	if s.ZeroGapsSkipped > 0 {
		fmt.Fprintf(tw, "zero gaps skipped\t%d\t(back-to-back packets: no idle period)\n", s.ZeroGapsSkipped)
	}
	fmt.Fprintf(tw, "hits / misses\t%d / %d\t(hit rate %.1f %%)\n", s.Hits, s.Misses, 100*s.HitRate)
	if s.DeepMisses != nil {
		fmt.Fprintf(tw, "misses from deep sleep\t%d\t(hybrid: the others woke from fast wake)\n", *s.DeepMisses)
	}
	fmt.Fprintf(tw, "time asleep\t%v of %v idle\t(%.1f %%)\n", d(s.AsleepTimeS), d(s.IdleTimeS), 100*s.AsleepShare)
	fmt.Fprintf(tw, "added wake-up delay\t%v\t(%v per idle period)\n", d(s.AddedDelayS), d(s.AddedDelayPerIdleS))
	fmt.Fprintf(tw, "t_PDT mean / min / max\t%v / %v / %v\n", d(s.PDTMeanS), d(s.PDTMinS), d(s.PDTMaxS))
	fmt.Fprintf(tw, "decisions / changes / clamps\t%d / %d / %d\n", s.Decisions, s.Changes, s.Clamps)
	fmt.Fprintf(tw, "predictor state\t%d bytes\n", s.StateBytes)
	if s.RoundedUp > 0 {
		fmt.Fprintf(tw, "rounded up\t%d\t(answers the register raised rather than lowered below a gap)\n", s.RoundedUp)
	}
	if l := s.Ledger; l != nil {
		fmt.Fprintf(tw, "ledger\tspent %v of %v\t(%.3f of the budget l·T, l = %.4g; reserve %v; %d idle periods held)\n",
			d(l.SpentS), d(l.BudgetS), l.Ratio, l.Rate, d(l.ReserveS), l.Held)
	}
	if a := s.Agreement; a != nil {
		fmt.Fprintf(tw, "simulator agreement\t%d of %d decisions\t(same t_PDT and outcome)\n", a.Matching, a.Decisions)
		if m := a.FirstMismatch; m != nil {
			fmt.Fprintf(tw, "first mismatch\tline %d\t(idle period %d: sim t_PDT %s %s, replay %s %s)\n", m.Line, m.IdlePeriod,
				PDTString(PS(m.SimPDTPS)), m.SimOutcome, PDTString(PS(m.ReplayPDTPS)), m.ReplayOutcome)
		}
	}
	tw.Flush()
}

// Outcome names an idle period's outcome: hit or miss.
func Outcome(missed bool) string {
	if missed {
		return "miss"
	}
	return "hit"
}

// StepOutcome is a replayed idle period's outcome: hit, miss, or
// miss-deep for a hybrid port woken from Deep Sleep.
func StepOutcome(st Step) string {
	if st.Deep {
		return "miss-deep"
	}
	return Outcome(st.Missed)
}

// PDTString writes a t_PDT in ps, or "never" for a port that never sleeps.
func PDTString(p PS) string {
	if p == Never {
		return "never"
	}
	return p.String()
}

// ReplayInput replays a gap file or port trace (Read) read from in through
// r. row, if not nil, receives the per-decision trace table: a header row,
// then one row per idle period. Errors name the input and the line.
func ReplayInput(in io.Reader, name string, r *Replayer, row func(cells ...string)) (Result, error) {
	headed := false
	emit := func(header []string, cells ...string) {
		if row == nil {
			return
		}
		if !headed {
			row(header...)
			headed = true
		}
		row(cells...)
	}
	str := func(v any) string { return fmt.Sprint(v) }
	zeroLines := 0
	format, err := Read(in, name, func(line int, gap time.Duration) error {
		st, err := r.Gap(gap)
		if err != nil {
			return fmt.Errorf("%s:%d: %w", name, line, err)
		}
		if st.Skipped {
			zeroLines++
			return nil
		}
		emit([]string{"#", "line", "start", "gap", "t_PDT", "outcome", "asleep", "delay"},
			str(st.Index), str(line), st.Start.String(), st.Gap.String(), PDTString(st.PDTPS()), StepOutcome(st), st.Asleep.String(), st.Delay.String())
		return nil
	}, func(tr TraceRow) error {
		st, err := r.Row(tr)
		if err != nil {
			return fmt.Errorf("%s:%d: %w", name, tr.Line, err)
		}
		agree := "yes"
		if st.PDTPS() != tr.PDT || st.Missed != tr.Missed {
			agree = "NO"
		}
		emit([]string{"#", "line", "start", "gap", "t_PDT", "sim t_PDT", "outcome", "sim outcome", "asleep", "delay", "agree"},
			str(st.Index), str(tr.Line), st.Start.String(), st.Gap.String(), PDTString(st.PDTPS()), PDTString(tr.PDT),
			StepOutcome(st), Outcome(tr.Missed), st.Asleep.String(), st.Delay.String(), agree)
		return nil
	})
	if err != nil {
		return Result{}, err
	}
	res := r.Result()
	if res.IdlePeriods == 0 {
		switch {
		case format == FormatTrace:
			return res, fmt.Errorf("%s: no idle periods to replay: the port trace has no rows", name)
		case zeroLines > 0:
			return res, fmt.Errorf("%s: no idle periods to replay: all %d gaps are 0 (back-to-back packets leave no idle period)", name, zeroLines)
		}
		return res, fmt.Errorf("%s: no idle periods to replay: the gap file has no gaps", name)
	}
	return res, nil
}

// AgentTraceHeader finds the "# controller: …" line of a port trace
// written by lpictl agent in the first bytes of an input: a comment line
// of the header block, before the first content line, which must be the
// port trace header. Such a line anywhere else (in a gap file, or among a
// trace's rows) is a comment.
func AgentTraceHeader(head []byte) (line []byte, ok bool) {
	head = StripBOM(head)
	for len(head) > 0 {
		text := head
		if i := bytes.IndexByte(head, '\n'); i >= 0 {
			text, head = head[:i], head[i+1:]
		} else {
			head = nil
		}
		text = bytes.TrimRight(text, "\r")
		if bytes.HasPrefix(text, []byte("#")) {
			if line == nil && bytes.HasPrefix(text, []byte("# controller: ")) {
				line = text
			}
			continue
		}
		if i := bytes.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		if text = bytes.TrimSpace(text); len(text) == 0 {
			continue
		}
		return line, line != nil && string(text) == TraceHeader
	}
	return nil, false
}
