package controller

import (
	"strings"
	"testing"
	"time"

	"github.com/lpictl/lpictl/predictor"
)

const us = time.Microsecond

func pd(d time.Duration) predictor.Duration { return predictor.Duration(d) }

// scripted answers a fixed sequence of t_PDT values, one per decision.
type scripted struct {
	answers []time.Duration
	next    int
	idle    []predictor.IdlePeriod
	hops    map[int]uint64
}

func (s *scripted) Observe(p predictor.IdlePeriod) { s.idle = append(s.idle, p) }
func (s *scripted) ObserveHops(h int, n uint64) {
	if s.hops == nil {
		s.hops = map[int]uint64{}
	}
	s.hops[h] += n
}
func (s *scripted) Predict(time.Duration) time.Duration {
	v := s.answers[min(s.next, len(s.answers)-1)]
	s.next++
	return v
}
func (s *scripted) StateBytes() int      { return 42 }
func (s *scripted) Kind() predictor.Kind { return "scripted" }

func TestRegisterRoundingAndClamping(t *testing.T) {
	r16 := Register{WidthBits: 16, Resolution: pd(us), Rounding: RoundNearest}
	up16 := Register{WidthBits: 16, Resolution: pd(us)}
	r32 := Register{WidthBits: 32, Resolution: pd(time.Nanosecond)}
	mvneta := Register{WidthBits: 8, Resolution: pd(us), Min: pd(us)}
	tests := []struct {
		name    string
		r       Register
		in      time.Duration
		want    time.Duration
		clamped bool
	}{
		{"16b×1µs rounds down", r16, 1499 * time.Nanosecond, us, false},
		{"16b×1µs rounds half up", r16, 1500 * time.Nanosecond, 2 * us, false},
		{"16b×1µs max 65.535ms (Table 5: 66ms)", r16, 70 * time.Millisecond, 65535 * us, true},
		{"16b×1µs exact max", r16, 65535 * us, 65535 * us, false},
		{"16b×1µs rounding up past max clamps", r16, 65535*us + 600*time.Nanosecond, 65535 * us, true},
		{"32b×1ns max 4.295s (Table 5)", r32, 5 * time.Second, 4294967295, true},
		{"zero stays zero", r32, 0, 0, false},
		{"8b×1µs with min 1µs: 0 → 1µs", mvneta, 0, us, true},
		{"8b×1µs max 255µs", mvneta, time.Millisecond, 255 * us, true},
		{"up (default): 1.499µs → 2µs", up16, 1499 * time.Nanosecond, 2 * us, false},
		{"up: 300.1µs → 301µs, never below the gap it covers", up16, 300100 * time.Nanosecond, 301 * us, false},
		{"up: exact step stays", up16, 300 * us, 300 * us, false},
		{"up past max clamps", up16, 65535*us + 1, 65535 * us, true},
		{"explicit max below width's", Register{WidthBits: 32, Resolution: pd(us), Max: pd(100 * us)}, 150 * us, 100 * us, true},
	}
	for _, tc := range tests {
		r := Config{Register: tc.r}.WithDefaults().Register
		got, clamped := r.Apply(tc.in)
		if got != tc.want || clamped != tc.clamped {
			t.Errorf("%s: Apply(%v) = %v, %v; want %v, %v", tc.name, tc.in, got, clamped, tc.want, tc.clamped)
		}
	}
}

func TestPortCountsClamps(t *testing.T) {
	s := &scripted{answers: []time.Duration{time.Second, 10 * us, time.Hour}}
	p, err := NewPort(Config{Register: Register{WidthBits: 16, Resolution: pd(us)}}, s, 0)
	if err != nil {
		t.Fatal(err)
	}
	if p.PDT() != 65535*us {
		t.Errorf("first t_PDT %v, want clamped 65.535ms", p.PDT())
	}
	p.IdleEnded(predictor.IdlePeriod{End: us, Length: us})
	p.Decide(2 * us)
	p.IdleEnded(predictor.IdlePeriod{End: 3 * us, Length: us})
	p.Decide(4 * us)
	st := p.Stats(4 * us)
	if st.Clamps != 2 || st.Decisions != 3 || st.Changes != 2 || st.Recommended != time.Hour {
		t.Errorf("stats %+v, want 2 clamps, 3 decisions, 2 changes", st)
	}
}

func TestQueueEmptyRecomputesOnlyAfterTraffic(t *testing.T) {
	s := &scripted{answers: []time.Duration{10 * us, 20 * us, 30 * us}}
	p, err := NewPort(Config{}, s, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Decide(us); got != 10*us {
		t.Errorf("no traffic since start: %v, want 10µs kept", got)
	}
	p.Sent(3, 2)
	if got := p.Decide(2 * us); got != 20*us {
		t.Errorf("after packets: %v, want 20µs", got)
	}
	if got := p.Decide(3 * us); got != 20*us {
		t.Errorf("repeated empty queue without traffic: %v, want 20µs kept", got)
	}
	p.IdleEnded(predictor.IdlePeriod{End: 4 * us, Length: us, Missed: true, PDT: 0})
	if got := p.Decide(5 * us); got != 30*us {
		t.Errorf("after an idle period: %v, want 30µs", got)
	}
	if s.hops[3] != 2 || len(s.idle) != 1 {
		t.Errorf("observations not forwarded: hops %v idle %v", s.hops, s.idle)
	}
	st := p.Stats(5 * us)
	if st.Decisions != 3 || st.IdlePeriods != 1 || st.Misses != 1 || st.Hits != 0 || st.StateBytes != 42 {
		t.Errorf("stats %+v", st)
	}
}

func TestIntervalRecompute(t *testing.T) {
	s := &scripted{answers: []time.Duration{1 * us, 2 * us, 3 * us}}
	p, err := NewPort(Config{Recompute: OnInterval, Interval: pd(100 * us)}, s, 0)
	if err != nil {
		t.Fatal(err)
	}
	p.Sent(1, 1)
	if got := p.Decide(99 * us); got != us {
		t.Errorf("before the interval: %v, want 1µs", got)
	}
	if got := p.Decide(100 * us); got != 2*us {
		t.Errorf("at the interval: %v, want 2µs", got)
	}
	if got := p.Decide(150 * us); got != 2*us {
		t.Errorf("mid-interval: %v", got)
	}
	if got := p.Decide(200 * us); got != 3*us {
		t.Errorf("next interval (no traffic needed): %v, want 3µs", got)
	}
}

func TestHysteresisAndMinInterval(t *testing.T) {
	s := &scripted{answers: []time.Duration{100 * us, 105 * us, 150 * us, 300 * us, 310 * us}}
	p, err := NewPort(Config{Hysteresis: 0.1, MinChangeInterval: pd(time.Millisecond)}, s, 0)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		at   time.Duration
		want time.Duration
	}{
		{us, 100 * us},                      // 105 within 10 % of 100: suppressed
		{2 * us, 150 * us},                  // 150: applied (first change, no rate limit yet)
		{3 * us, 150 * us},                  // 300: rate limited (< 1 ms since last change)
		{time.Millisecond + 2*us, 310 * us}, // 310: applied
	}
	for i, st := range steps {
		p.Sent(1, 1)
		if got := p.Decide(st.at); got != st.want {
			t.Errorf("step %d: %v, want %v", i, got, st.want)
		}
	}
	got := p.Stats(time.Millisecond + 2*us)
	if got.Suppressed != 1 || got.RateLimited != 1 || got.Changes != 2 {
		t.Errorf("stats %+v, want 1 suppressed, 1 rate limited, 2 changes", got)
	}
}

func TestTimeWeightedMean(t *testing.T) {
	s := &scripted{answers: []time.Duration{10 * us, 30 * us}}
	p, err := NewPort(Config{}, s, 0)
	if err != nil {
		t.Fatal(err)
	}
	p.Sent(1, 1)
	p.Decide(100 * us) // 10 µs for 100 µs, then 30 µs
	if m := p.Stats(200 * us).Mean; m != 20*us {
		t.Errorf("mean %v, want 20µs", m)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Recompute: "sometimes"}, "controller.recompute"},
		{Config{Register: Register{WidthBits: 65}}, "controller.register.width_bits"},
		{Config{Register: Register{Min: pd(10), Max: pd(5)}}, "controller.register.max"},
		{Config{Hysteresis: -1}, "controller.hysteresis"},
	} {
		_, err := NewPort(tc.cfg, &scripted{answers: []time.Duration{0}}, 0)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewPort(%+v) = %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

func TestWithRealPredictor(t *testing.T) {
	pred, err := predictor.New(predictor.Config{Kind: predictor.KindPerfBoundCorrect, WakeTime: pd(4480)})
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPort(Config{Register: Register{WidthBits: 16, Resolution: pd(us)}}, pred, 0)
	if err != nil {
		t.Fatal(err)
	}
	if p.PDT() != 10*us {
		t.Errorf("initial %v, want the predictor's initial 10µs", p.PDT())
	}
}
