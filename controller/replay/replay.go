package replay

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/predictor"
)

// Timing is the low-power state the port enters after t_PDT, and the
// power-down handshake that precedes it (sim/eee's link model).
type Timing struct {
	Wake  time.Duration // t_w: wake-up time a packet pays on a miss
	Sleep time.Duration // t_s: time to go down (0: instantaneous)
	// Handshake is H, the one-way time of a power-down control message
	// (its serialisation at the link rate plus the link's propagation): the
	// port starts going down 2H after t_PDT expires (request and answer).
	// 0 makes going down start at t_PDT.
	Handshake PS
	// DeepWake > 0 makes the mode hybrid: Wake and Sleep are Fast Wake's,
	// and a port that stays low for the hold deepens to Deep Sleep, whose
	// t_w is DeepWake. The hold is the one the predictor chose with t_PDT
	// (controller.Port.Hold), else Hold.
	DeepWake time.Duration
	Hold     time.Duration
}

// Step is what happened during one idle period.
type Step struct {
	Index int // 1-based, over idle periods
	// Skipped marks a gap of 0, which is no idle period (docs/model.md §1.1):
	// nothing was decided or recorded and no other field is set.
	Skipped bool
	Start   PS            // when the queue emptied
	Gap     PS            // idle period length
	PDT     time.Duration // t_PDT armed at Start (the controller's answer)
	Missed  bool          // the timer expired: the packet found the port going down or asleep
	Asleep  PS            // time in the low-power state
	Delay   PS            // wake-up delay the next packet paid
	Deep    bool          // hybrid: the port had deepened to Deep Sleep

	// DeepAsleep is the part of Asleep spent in Deep Sleep (hybrid: Asleep
	// minus the hold when Deep; the rest was in Fast Wake).
	DeepAsleep PS
}

// Cycle is c, the longest delay one miss can add: two handshakes, t_s
// and the deepest t_w of the mode (the ledger's miss cost), rounded up
// to the nanosecond.
func (t Timing) Cycle() time.Duration {
	w := max(t.Wake, t.DeepWake)
	return CeilNS(2*max(t.Handshake, 0)) + t.Sleep + w
}

// CeilNS is ps rounded up to whole nanoseconds (controller.ChargePS).
func CeilNS(ps PS) time.Duration { return controller.ChargePS(int64(ps)) }

// PDTPS is the t_PDT armed in a port trace's notation: picoseconds, or
// Never when it is too long for the picosecond clock (the simulator arms
// no timer then).
func (s Step) PDTPS() PS {
	if s.PDT >= maxPDT {
		return Never
	}
	return PS(s.PDT) * 1000
}

// maxPDT is the shortest t_PDT the simulator cannot hold in picoseconds
// (sim/network's toPS gives eee.Never for it and above).
const maxPDT = time.Duration(math.MaxInt64 / 1000)

// Result sums a replay.
type Result struct {
	IdlePeriods uint64 `json:"idle_periods"`
	Hits        uint64 `json:"hits"`
	Misses      uint64 `json:"misses"`
	// DeepMisses counts the misses that woke the port from Deep Sleep
	// (hybrid mode).
	DeepMisses uint64 `json:"deep_misses"`
	// ZeroGaps counts the gaps of 0 skipped (back-to-back packets).
	ZeroGaps uint64        `json:"zero_gaps_skipped"`
	IdleTime PS            `json:"-"`
	Asleep   PS            `json:"-"`
	Delay    PS            `json:"-"`
	MinPDT   time.Duration `json:"-"`
	MaxPDT   time.Duration `json:"-"`
	MeanPDT  time.Duration `json:"-"` // mean over idle periods of the t_PDT armed
	Port     controller.Stats
	// Agreement compares the replay's decisions with a port trace's; nil
	// unless trace rows were replayed.
	Agreement *Agreement `json:"agreement,omitempty"`

	// DeepAsleep is the part of Asleep in Deep Sleep (hybrid mode).
	DeepAsleep PS `json:"-"`
}

// Agreement counts how many of a port trace's decisions the replay
// reproduced.
type Agreement struct {
	Decisions uint64 `json:"decisions"` // rows replayed
	Matching  uint64 `json:"matching"`  // rows with the same t_PDT and outcome
	// First is the first row whose t_PDT or outcome differs; nil if none.
	First *Mismatch `json:"first_mismatch,omitempty"`
}

// Mismatch is a trace row the replay decided differently.
type Mismatch struct {
	Line      int  // the row's line in the trace
	Index     int  // the idle period's number (Step.Index)
	SimPDT    PS   // the simulator's t_PDT (ps; Never: never sleeps)
	PDT       PS   // the replay's, in the same notation
	SimMissed bool // the simulator's outcome
	Missed    bool // the replay's
}

// Replayer simulates one port's PDT timer over a sequence of idle periods,
// with the simulator's link model (sim/eee Link.Need) for the port that
// owns the timer and whose peer stays idle.
//
// Model (docs/model.md §1.1): when the output queue empties at I the port arms
// t_PDT = P = port.Decide(I). A packet arriving at I + gap is a hit if
// gap < P: it costs nothing. Otherwise (gap ≥ P: an idle period of exactly
// t_PDT is a miss, the timer has expired) the port asks its peer to go
// down; both start going down at D = P + 2H (request and answer, H =
// Timing.Handshake) and are down at D + t_s. A packet arriving before
// D + t_s waits for that and then t_w: its delay is D + t_s − gap + t_w;
// later, it pays t_w and the port was in low power for gap − (D + t_s).
// A gap of 0 is no idle period: it is skipped. A t_PDT the picosecond
// clock cannot reach (as in the simulator: P ≥ MaxTime − I − 4H) never
// expires.
//
// Times are picoseconds, as in the simulator; the controller sees them
// truncated to nanoseconds (Decide(I/1000), IdleEnded{End: (I+gap)/1000,
// Length: gap/1000}), as the simulator's controller does.
type Replayer struct {
	port              *controller.Port
	timing            Timing
	wake, sleep, hand PS
	deepWake, hold    PS
	now               PS // a gap file's clock: when the next idle period starts
	end               PS // when the last idle period ended
	res               Result
	sumPDT            float64
	sent              uint64 // packets of the rows' sent columns so far
}

// New returns a replayer over port, starting at time 0.
func New(port *controller.Port, timing Timing) *Replayer {
	ps := func(d time.Duration) PS {
		if v, ok := FromDuration(d); ok {
			return v
		}
		return MaxTime // arithmetic with it reports an overflow
	}
	r := &Replayer{port: port, timing: timing, wake: ps(timing.Wake), sleep: ps(timing.Sleep), hand: max(timing.Handshake, 0)}
	if timing.DeepWake > 0 {
		r.deepWake, r.hold = ps(timing.DeepWake), ps(max(timing.Hold, 0))
	}
	return r
}

var errOverflow = errors.New("time overflows: the idle periods and wake-up delays so far add up to more than the picosecond clock holds (2^63 ps, about 106 days, as in the simulator)")

// Gap replays the next idle period of a gap file: it starts when the
// previous one's packet was sent (its end plus its wake-up delay). A gap
// of 0 is skipped (Step.Skipped, counted in Result.ZeroGaps). After an
// error the replayer must not be used.
func (r *Replayer) Gap(gap time.Duration) (Step, error) {
	if gap < 0 {
		return Step{}, fmt.Errorf("negative gap %v", gap)
	}
	if gap == 0 {
		r.res.ZeroGaps++
		return Step{Skipped: true}, nil
	}
	g, ok := FromDuration(gap)
	if !ok {
		return Step{}, fmt.Errorf("gap %v is longer than the picosecond clock holds (2^63 ps, about 106 days, as in the simulator)", gap)
	}
	end, ok := add(r.now, g)
	if !ok {
		return Step{}, errOverflow
	}
	st, err := r.period(r.now, g)
	if err != nil {
		return st, err
	}
	if r.now, ok = add(end, st.Delay); !ok {
		return st, errOverflow
	}
	r.end = end
	return st, nil
}

// MaxSent bounds the packets a port trace's sent columns may add up to
// (2^53: counts stay exact as float64 in the predictors' hop factor, and
// their sums cannot wrap).
const MaxSent uint64 = 1 << 53

// Row replays a port trace's row: the idle period starts at row.Start
// (absolute, not the replay's clock), after the controller has been told
// of row.Sent (Sent(hops, packets) per hop count). The sent counts of all
// rows may add up to at most MaxSent. The replay decides t_PDT and the
// outcome itself; Result.Agreement counts the rows where both equal the
// simulator's. Rows must come in order without overlapping. After an
// error the replayer must not be used.
func (r *Replayer) Row(row TraceRow) (Step, error) {
	if row.Gap <= 0 {
		return Step{}, fmt.Errorf("gap_ps must be > 0, got %d", row.Gap)
	}
	if row.Start < r.end {
		return Step{}, fmt.Errorf("start_ps %d is before the end of the previous idle period (%d)", row.Start, r.end)
	}
	end, ok := add(row.Start, row.Gap)
	if !ok {
		return Step{}, errOverflow
	}
	for _, hc := range row.Sent {
		if hc.Packets > MaxSent-r.sent {
			return Step{}, fmt.Errorf("sent: the trace's packet counts add up to more than %d (2^53), more than any run sends", uint64(MaxSent))
		}
		r.sent += hc.Packets
	}
	for _, hc := range row.Sent {
		// One call per hop count: the predictors count packets by hop
		// count (integers), so Sent(h, n) decides as n calls Sent(h, 1)
		// do, without a loop per packet.
		r.port.Sent(hc.Hops, hc.Packets)
	}
	st, err := r.period(row.Start, row.Gap)
	if err != nil {
		return st, err
	}
	after, ok := add(end, st.Delay)
	if !ok {
		return st, errOverflow
	}
	r.now, r.end = max(r.now, after), end

	a := r.res.Agreement
	if a == nil {
		a = new(Agreement)
		r.res.Agreement = a
	}
	a.Decisions++
	if pdt := st.PDTPS(); pdt == row.PDT && st.Missed == row.Missed {
		a.Matching++
	} else if a.First == nil {
		a.First = &Mismatch{Line: row.Line, Index: st.Index, SimPDT: row.PDT, PDT: pdt, SimMissed: row.Missed, Missed: st.Missed}
	}
	return st, nil
}

// period replays one idle period of length gap > 0 starting at start, with
// start + gap ≤ MaxTime.
func (r *Replayer) period(start, gap PS) (Step, error) {
	st := Step{Index: int(r.res.IdlePeriods) + 1, Start: start, Gap: gap}
	st.PDT = r.port.Decide(start.D())
	if pdt := st.PDTPS(); pdt != Never && gap >= pdt {
		// The simulator's guard: a timer that would expire (with the
		// handshake) beyond the clock's range never does.
		lim := MaxTime - start
		never := r.hand > lim/4 || pdt >= lim-4*r.hand
		if !never {
			st.Missed = true
			down, ok1 := add(pdt, 2*r.hand)
			downEnd, ok2 := add(down, r.sleep)
			if !ok1 || !ok2 {
				return st, errOverflow
			}
			if gap < downEnd {
				d, ok := add(downEnd-gap, r.wake)
				if !ok {
					return st, errOverflow
				}
				st.Delay = d
			} else {
				st.Asleep = gap - downEnd
				st.Delay = r.wake
				if r.deepWake > 0 {
					if hold := r.holdOf(); st.Asleep >= hold {
						st.Deep, st.Delay, st.DeepAsleep = true, r.deepWake, st.Asleep-hold
					}
				}
			}
		}
	}
	r.port.IdleEnded(predictor.IdlePeriod{
		End: (start + gap).D(), Length: gap.D(), Missed: st.Missed, PDT: min(st.PDT, maxPDT),
		Delay: CeilNS(st.Delay),
	})

	res := &r.res
	if res.IdlePeriods == 0 || st.PDT < res.MinPDT {
		res.MinPDT = st.PDT
	}
	res.MaxPDT = max(res.MaxPDT, st.PDT)
	res.IdlePeriods++
	if st.Deep {
		res.DeepMisses++
	}
	if st.Missed {
		res.Misses++
	} else {
		res.Hits++
	}
	res.IdleTime = satAdd(res.IdleTime, gap)
	res.Asleep = satAdd(res.Asleep, st.Asleep)
	res.DeepAsleep = satAdd(res.DeepAsleep, st.DeepAsleep)
	res.Delay = satAdd(res.Delay, st.Delay)
	r.sumPDT += float64(st.PDT)
	return st, nil
}

// holdOf is the hybrid hold of the idle period just decided (as the
// simulator's link takes it: Port.Hold after Decide, else Timing.Hold).
func (r *Replayer) holdOf() PS {
	if h, ok := r.port.Hold(); ok {
		if v, ok := FromDuration(h); ok {
			return v
		}
		return MaxTime
	}
	return r.hold
}

// satAdd adds totals that cannot overflow in a valid replay (they are
// bounded by the clock); it saturates rather than wrap.
func satAdd(a, b PS) PS {
	if s, ok := add(a, b); ok {
		return s
	}
	return MaxTime
}

// Now is the replay's current time: a gap file's clock (when the next
// idle period would start), or, after trace rows, when the last row's
// packet was sent by the replay's model.
func (r *Replayer) Now() PS { return r.now }

// Result returns the totals so far.
func (r *Replayer) Result() Result {
	return snapshot(r.res, r.sumPDT, r.port, r.now)
}

// ReplayTrace replays a whole port trace (e.g. from ParseTrace) through
// port, built at time 0, with timing: one Step per row, in order, and the
// totals, whose Agreement compares each row's t_PDT (Step.PDTPS) and
// outcome (Step.Missed) with the simulator's (TraceRow.PDT, .Missed).
func ReplayTrace(port *controller.Port, timing Timing, rows []TraceRow) ([]Step, Result, error) {
	r := New(port, timing)
	steps := make([]Step, 0, len(rows))
	for i, row := range rows {
		st, err := r.Row(row)
		if err != nil {
			return steps, r.Result(), fmt.Errorf("row %d (line %d): %w", i+1, row.Line, err)
		}
		steps = append(steps, st)
	}
	return steps, r.Result(), nil
}

// snapshot is res as a result to hand out: the mean t_PDT worked out from
// sumPDT, the agreement copied (the replay goes on changing its own), and
// the port's statistics at now.
func snapshot(res Result, sumPDT float64, port *controller.Port, now PS) Result {
	if res.IdlePeriods > 0 {
		res.MeanPDT = time.Duration(sumPDT / float64(res.IdlePeriods))
	}
	if a := res.Agreement; a != nil {
		c := *a
		if c.First != nil {
			m := *c.First
			c.First = &m
		}
		res.Agreement = &c
	}
	res.Port = port.Stats(now.D())
	return res
}
