package replay

import (
	"time"

	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/predictor"
)

// Timing is the low-power state the port enters after t_PDT.
type Timing struct {
	Wake  time.Duration // t_w: wake-up time a packet pays on a miss
	Sleep time.Duration // t_s: time to go down (0: instantaneous)
}

// Step is what happened during one idle period.
type Step struct {
	Index  int           // 1-based
	Start  time.Duration // when the queue emptied
	Gap    time.Duration // idle period length
	PDT    time.Duration // t_PDT armed at Start
	Missed bool          // the port had started going down when the packet came
	Asleep time.Duration // time in the low-power state
	Delay  time.Duration // wake-up delay the next packet paid
}

// Result sums a replay.
type Result struct {
	IdlePeriods uint64        `json:"idle_periods"`
	Hits        uint64        `json:"hits"`
	Misses      uint64        `json:"misses"`
	IdleTime    time.Duration `json:"-"`
	Asleep      time.Duration `json:"-"`
	Delay       time.Duration `json:"-"`
	MinPDT      time.Duration `json:"-"`
	MaxPDT      time.Duration `json:"-"`
	MeanPDT     time.Duration `json:"-"` // mean over idle periods of the t_PDT armed
	Port        controller.Stats
}

// Replayer simulates one port's PDT timer over a sequence of gaps.
//
// Model (SPEC §1.1): when the output queue empties the port arms t_PDT =
// port.Decide(now). If the next packet comes within t_PDT (gap ≤ t_PDT) it
// is a hit and costs nothing. Otherwise the port starts going down at
// t_PDT, taking t_s, and stays in low power until the packet comes; the
// packet pays t_w, or if it arrives while the port is still going down,
// the rest of t_s plus t_w. With t_s = 0 a miss simply sleeps gap − t_PDT
// and pays t_w. Transmission times are not in a gap file, so the next gap
// starts when the delayed packet is sent.
type Replayer struct {
	port   *controller.Port
	timing Timing
	now    time.Duration
	res    Result
	sumPDT float64
}

// New returns a replayer over port, starting at time 0.
func New(port *controller.Port, timing Timing) *Replayer {
	return &Replayer{port: port, timing: timing}
}

// Gap replays one idle period.
func (r *Replayer) Gap(gap time.Duration) Step {
	st := Step{Index: int(r.res.IdlePeriods) + 1, Start: r.now, Gap: gap}
	st.PDT = r.port.Decide(r.now)
	if gap > st.PDT {
		st.Missed = true
		down := st.PDT + r.timing.Sleep // when the port is fully down
		if gap >= down {
			st.Asleep = gap - down
			st.Delay = r.timing.Wake
		} else {
			st.Delay = down - gap + r.timing.Wake
		}
	}
	end := r.now + gap
	r.port.IdleEnded(predictor.IdlePeriod{End: end, Length: gap, Missed: st.Missed, PDT: st.PDT})
	r.now = end + st.Delay

	res := &r.res
	if res.IdlePeriods == 0 || st.PDT < res.MinPDT {
		res.MinPDT = st.PDT
	}
	res.MaxPDT = max(res.MaxPDT, st.PDT)
	res.IdlePeriods++
	if st.Missed {
		res.Misses++
	} else {
		res.Hits++
	}
	res.IdleTime += gap
	res.Asleep += st.Asleep
	res.Delay += st.Delay
	r.sumPDT += float64(st.PDT)
	return st
}

// Now is the replay's current time.
func (r *Replayer) Now() time.Duration { return r.now }

// Result returns the totals so far.
func (r *Replayer) Result() Result {
	res := r.res
	if res.IdlePeriods > 0 {
		res.MeanPDT = time.Duration(r.sumPDT / float64(res.IdlePeriods))
	}
	res.Port = r.port.Stats(r.now)
	return res
}
