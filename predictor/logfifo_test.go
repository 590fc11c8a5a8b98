package predictor

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
	"unsafe"
)

// refRegister is the outcome register and its miss ratios as a plain
// list, oldest first: the reference the predictor's rings (the register's
// bits, the miss-log FIFO inline, spilled or long) are checked against.
type refRegister struct {
	nR   int
	miss []bool
	logs []float64 // ln(ratio) of each outcome (0 for a hit)
}

func (r *refRegister) observe(ip IdlePeriod, wake time.Duration) {
	if len(r.miss) == r.nR {
		r.miss, r.logs = r.miss[1:], r.logs[1:]
	}
	l := 0.0
	if ip.Missed {
		ref := ip.PDT
		if ref <= 0 {
			ref = wake
		}
		l = math.Log(max(float64(ip.Length)/float64(ref), 1))
	}
	r.miss, r.logs = append(r.miss, ip.Missed), append(r.logs, l)
}

// cf is PerfBoundCorrect's correction factor, the logs summed oldest first.
func (r *refRegister) cf() (cf float64, misses int) {
	var sum float64
	for i, m := range r.miss {
		if m {
			sum += r.logs[i]
			misses++
		}
	}
	if misses == 0 {
		return 0, 0
	}
	return float64(misses) / float64(len(r.miss)) * math.Exp(sum/float64(misses)), misses
}

// weighted is PerfBoundCorrectWeighted's, with decay d.
func (r *refRegister) weighted(d float64) float64 {
	var all, missW, logW float64
	for i, m := range r.miss {
		all = all*d + 1
		if m {
			missW, logW = missW*d+1, logW*d+r.logs[i]
		} else {
			missW, logW = missW*d, logW*d
		}
	}
	if missW == 0 {
		return 0
	}
	return missW / all * math.Exp(logW/missW)
}

// TestLogFIFOMatchesReference checks by property that the correction
// factor is bit for bit that of the plain list, whichever storage holds
// the miss logs: inline (up to inlineLogCap misses), spilled to n_R
// entries (more, with n_R ≤ inlineHistory), or long (n_R > inlineHistory),
// over registers of every length around those edges and outcome
// sequences that swing between few and many misses, so that the inline
// ring wraps, spills in any position, and the spilled one wraps.
func TestLogFIFOMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 7))
	spilled := 0
	for trial := 0; trial < 600; trial++ {
		nR := []int{1, 2, 3, inlineLogCap - 1, inlineLogCap, inlineLogCap + 1, 12, inlineHistory - 1, inlineHistory, inlineHistory + 1, 100}[trial%11]
		cfg := pbConfig(Unbounded, 1)
		cfg.Kind = KindPerfBoundCorrect
		cfg.History = nR
		cfg.WakeTime = Duration(3 * us)
		p := newPerfBoundCorrect(cfg)
		wcfg := cfg
		wcfg.Kind, wcfg.Decay = KindPerfBoundCorrectWeighted, 0.75
		wp, err := New(wcfg)
		if err != nil {
			t.Fatal(err)
		}
		w := wp.(*PerfBoundCorrectWeighted)
		ref := refRegister{nR: nR}
		missP := rng.Float64()
		end := time.Duration(0)
		for step := 0; step < 400; step++ {
			if step%50 == 0 {
				missP = []float64{0, 0.05, 0.3, 0.9, 1}[rng.IntN(5)]
			}
			length := time.Duration(1 + rng.IntN(int(200*us)))
			end += length + us
			ip := IdlePeriod{End: end, Length: length, Missed: rng.Float64() < missP, PDT: time.Duration(rng.IntN(int(20 * us)))}
			p.Observe(ip)
			w.Observe(ip)
			ref.observe(ip, 3*us)
			want, misses := ref.cf()
			if got := p.CorrectionFactor(); got != want {
				t.Fatalf("n_R %d, step %d: cf %v, want %v (%d misses, spilled %v)", nR, step, got, want, misses, p.logSpill != nil)
			}
			if c, m := p.Outcomes(); c != len(ref.miss) || m != misses {
				t.Fatalf("n_R %d, step %d: register %d/%d, want %d/%d", nR, step, c, m, len(ref.miss), misses)
			}
			if got, want := w.CorrectionFactor(), ref.weighted(0.75); got != want {
				t.Fatalf("n_R %d, step %d: weighted cf %v, want %v", nR, step, got, want)
			}
			if p.logSpill != nil && (nR <= inlineLogCap || nR > inlineHistory) {
				t.Fatalf("n_R %d: the FIFO spilled", nR)
			}
		}
		if p.logSpill != nil {
			spilled++
		}
	}
	if spilled < 100 {
		t.Fatalf("only %d registers spilled their FIFO: too few to test it", spilled)
	}
}

// TestLogFIFOLastLine checks the layout the simulator's prefetch relies on
// (network.slotPBCLines): the predictor is whole cache lines and the
// FIFO's storage, read only when the misses change, is its last line.
func TestLogFIFOLastLine(t *testing.T) {
	var p PerfBoundCorrect
	if s := unsafe.Sizeof(p); s%64 != 0 || unsafe.Offsetof(p.logSpill) != s-64 || unsafe.Offsetof(p.inlineLogs)+unsafe.Sizeof(p.inlineLogs) != s {
		t.Fatalf("PerfBoundCorrect is %d B with its FIFO at %d..%d: want it to fill the last line", s, unsafe.Offsetof(p.logSpill), unsafe.Offsetof(p.inlineLogs)+unsafe.Sizeof(p.inlineLogs))
	}
}
