package eee

import "testing"

const (
	ns = int64(1000)
	us = 1000 * ns
)

func params(m Mode) *Params {
	p := &Params{Mode: m, SleepFW: 200 * ns, WakeFW: 375 * ns, SleepDS: 2 * us, WakeDS: 4480 * ns, HybridHold: 10 * us, Handshake: 11280}
	p.Prepare()
	return p
}

func TestNeed(t *testing.T) {
	const pdt = 1 * us
	H := int64(11280)
	expire := 5*us + pdt
	down := expire + 2*H
	for _, c := range []struct {
		name   string
		mode   Mode
		end    uint8
		at     int64
		ready  int64
		missed bool
	}{
		{"awake", DeepSleep, 0, expire - 1, expire - 1, false},
		{"always-on", AlwaysOn, 0, 1e12, 1e12, false},
		{"peer refuses", DeepSleep, 1, expire + H - 1, expire + H - 1, false},
		{"owner committed", DeepSleep, 0, expire, down + 2*us + 4480*ns, true},
		{"peer committed", DeepSleep, 1, expire + H, down + 2*us + 4480*ns, true},
		{"going down", DeepSleep, 0, down + us/4, down + 2*us + 4480*ns, true},
		{"deep sleep", DeepSleep, 1, down + 3*us, down + 3*us + 4480*ns, true},
		{"fast wake", FastWake, 0, down + 3*us, down + 3*us + 375*ns, true},
		{"hybrid in FW", Hybrid, 0, down + 200*ns + 10*us - 1, down + 200*ns + 10*us - 1 + 375*ns, true},
		{"hybrid in DS", Hybrid, 0, down + 200*ns + 10*us, down + 200*ns + 10*us + 4480*ns, true},
	} {
		p := params(c.mode)
		var l Link
		l.Start(0, Never)
		l.Need(p, 0, 0)
		l.Release(5*us, 0, pdt)
		ready, missed := l.Need(p, c.at, c.end)
		if ready != c.ready || missed != c.missed {
			t.Errorf("%s: ready %d missed %v, want %d %v", c.name, ready, missed, c.ready, c.missed)
		}
		var sum int64
		for _, v := range l.Times {
			sum += v
		}
		if sum != l.Accounted() || l.Accounted() != max(ready, c.at) {
			t.Errorf("%s: times sum %d, accounted %d, want %d", c.name, sum, l.Accounted(), ready)
		}
		// The other end joins while the link wakes: it waits for the same instant.
		r2, m2 := l.Need(p, c.at, 1-c.end)
		if r2 != ready || m2 != (ready > c.at) {
			t.Errorf("%s: second end ready %d missed %v", c.name, r2, m2)
		}
	}
}

func TestFinish(t *testing.T) {
	p := params(Hybrid)
	var l Link
	l.Start(0, us)
	l.Finish(p, 100*us)
	var sum int64
	for _, v := range l.Times {
		sum += v
	}
	if sum != 100*us || l.Downs != 1 || l.Deepens != 1 || l.Ups != 0 {
		t.Errorf("sum %d downs %d deepens %d ups %d", sum, l.Downs, l.Deepens, l.Ups)
	}
	if l.Times[Wake] != us+2*p.Handshake || l.Times[GoingDown] != 200*ns || l.Times[LowFastWake] != 10*us {
		t.Errorf("times %v", l.Times)
	}
}

// TestNoIdlePeriodInTheSamePicosecond: a packet needing the link in the
// picosecond it became idle (back-to-back traffic) finds no timer, even
// with t_PDT 0: no transition, no wait (docs/model.md §1.1).
func TestNoIdlePeriodInTheSamePicosecond(t *testing.T) {
	p := Params{Mode: DeepSleep, SleepDS: 2000, WakeDS: 4480, Handshake: 11}
	p.Prepare()
	var l Link
	l.Start(0, 0)
	l.Need(&p, 5000, 0) // wakes the link that went down at 0
	l.Release(7000, 0, 0)
	if ready, missed := l.Need(&p, 7000, 1); missed || ready != 7000 || l.Downs != 1 {
		t.Errorf("same picosecond: ready %d, missed %v, %d downs; want 7000, a hit, still 1", ready, missed, l.Downs)
	}
	l.Release(9000, 1, 0)
	if _, missed := l.Need(&p, 9001, 1); !missed {
		t.Error("1 ps after the queue emptied with t_PDT 0: want a miss")
	}
}

// TestPerDirection: with PerDirection a Link is one direction, used by
// end 0 alone, with no handshake (Handshake 0): the transmitter goes down
// at T = I + t_PDT itself, and a packet pays that direction's wake-up.
// Hand calculation, Deep Sleep t_s 2 µs, t_w 4.48 µs; FW t_s 200 ns, t_w
// 375 ns; hold 10 µs; I = 5 µs, t_PDT = 1 µs, so T = 6 µs.
func TestPerDirection(t *testing.T) {
	const T = 6 * us
	for _, c := range []struct {
		name   string
		mode   Mode
		at     int64
		ready  int64
		missed bool
		low    int64 // time in Fast Wake + Deep Sleep
	}{
		{"before expiry", DeepSleep, T - 1, T - 1, false, 0},
		{"at expiry: going down at once", DeepSleep, T, T + 2*us + 4480*ns, true, 0},
		{"going down", DeepSleep, T + us, T + 2*us + 4480*ns, true, 0},
		{"low", DeepSleep, T + 5*us, T + 5*us + 4480*ns, true, 3 * us},
		{"fast wake", FastWake, T + 5*us, T + 5*us + 375*ns, true, 5*us - 200*ns},
		{"hybrid deep", Hybrid, T + 200*ns + 12*us, T + 200*ns + 12*us + 4480*ns, true, 12 * us},
	} {
		p := params(c.mode)
		p.LPI, p.Handshake = PerDirection, 0
		if got := p.Cycle(); c.mode == DeepSleep && got != 2*us+4480*ns {
			t.Errorf("%s: cycle %d, want t_s + t_w", c.name, got)
		}
		var l Link
		l.Start(0, Never)
		l.Need(p, 0, 0)
		l.Release(5*us, 0, us)
		ready, missed := l.Need(p, c.at, 0)
		if ready != c.ready || missed != c.missed {
			t.Errorf("%s: ready %d missed %v, want %d %v", c.name, ready, missed, c.ready, c.missed)
		}
		if low := l.Times[LowFastWake] + l.Times[LowDeepSleep]; low != c.low {
			t.Errorf("%s: low for %d ps, want %d", c.name, low, c.low)
		}
		if c.missed && (l.Downs != 1 || l.Ups != 1 || l.Times[Wake] != T) {
			t.Errorf("%s: downs %d ups %d wake %d, want 1, 1, %d", c.name, l.Downs, l.Ups, l.Times[Wake], T)
		}
	}
	if PerLink.String() != "per-link" || PerDirection.String() != "per-direction" {
		t.Error("LPI names")
	}
}
