package estimate

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/power"
)

const us = time.Microsecond

func load(t testing.TB, name string) *power.Preset {
	t.Helper()
	p, err := power.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// period is one observed idle period [start, end] in µs.
type period struct{ start, end float64 }

func dur(v float64) time.Duration { return time.Duration(math.Round(v * 1e3)) }

// want is a hand-computed Result (times in µs, energy in µJ).
type want struct {
	hits, misses, wakeUps, absorbed uint64
	low, delay                      float64 // µs
	energyUJ, savedUJ               float64 // µJ
	meanPDT                         float64 // µs
}

func check(t *testing.T, r Result, w want, elapsed time.Duration) {
	t.Helper()
	if r.Hits != w.hits || r.Misses != w.misses || r.WakeUps != w.wakeUps || r.Absorbed != w.absorbed || r.IdlePeriods != w.hits+w.misses {
		t.Errorf("%s/%s: hits %d misses %d wake-ups %d absorbed %d idle %d, want %d %d %d %d",
			r.Policy, r.Mode, r.Hits, r.Misses, r.WakeUps, r.Absorbed, r.IdlePeriods, w.hits, w.misses, w.wakeUps, w.absorbed)
	}
	if r.LowPower != dur(w.low) || r.AddedDelay != dur(w.delay) || r.MeanPDT != dur(w.meanPDT) {
		t.Errorf("%s/%s: low %v delay %v mean t_PDT %v, want %v %v %v", r.Policy, r.Mode, r.LowPower, r.AddedDelay, r.MeanPDT,
			dur(w.low), dur(w.delay), dur(w.meanPDT))
	}
	if r.Elapsed != elapsed {
		t.Errorf("%s/%s: elapsed %v, want %v", r.Policy, r.Mode, r.Elapsed, elapsed)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	if !near(r.EnergyJ*1e6, w.energyUJ) || !near(r.SavedJ*1e6, w.savedUJ) ||
		!near(r.AlwaysOnEnergyJ, r.EnergyJ+r.SavedJ) ||
		!near(r.SavedPct, 100*w.savedUJ/(r.AlwaysOnEnergyJ*1e6)) || !near(r.SavedW, w.savedUJ*1e-6/elapsed.Seconds()) {
		t.Errorf("%s/%s: energy %v µJ saved %v µJ (%v %%, %v W), want %v µJ saved %v µJ",
			r.Policy, r.Mode, r.EnergyJ*1e6, r.SavedJ*1e6, r.SavedPct, r.SavedW, w.energyUJ, w.savedUJ)
	}
}

// TestHandCalculated: eee-400g (Deep Sleep t_s 2 µs, t_w 4.48 µs, 2.4 W;
// Fast Wake t_s 200 ns, t_w 375 ns, 9.6 W; Wake 24 W), no handshake.
// Observed idle periods of 1, 3, 10 and 50 µs with 10 µs busy between:
// [10,11] [21,24] [34,44] [54,104] µs, results at 110 µs (always-on
// energy 24 W × 110 µs = 2640 µJ).
func TestHandCalculated(t *testing.T) {
	periods := []period{{10, 11}, {21, 24}, {34, 44}, {54, 104}}
	pred := predictor.Duration(3 * us)
	e, err := New(Config{
		Preset: load(t, "eee-400g"),
		Policies: []Policy{
			{Kind: AlwaysOn}, {Kind: PlainEEE}, {Kind: Fixed, PDT: 10 * us},
			{Kind: DriverDefault, PDT: 3 * us},
			{Kind: Predictor}, // a fixed predictor of 3 µs: the same as driver-default 3 µs
		},
		Predictor: predictor.Config{Kind: predictor.KindFixed, PDT: &pred},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range periods {
		e.Idle(dur(p.end), dur(p.end-p.start))
		e.Idle(dur(p.end), 0) // a gap of 0 is no idle period
	}
	// Deep sleep, fixed 10 µs: 1 and 3 hit; 10 is exactly t_PDT, a miss:
	// going down 44–46, the packet at 44 waits 2 + 4.48 = 6.48 µs; 50
	// misses: going down 64–66, asleep 66–104 = 38 µs, waits 4.48.
	// Energy 24 × (110 − 38) + 2.4 × 38 = 1819.2 µJ, saved 21.6 × 38 = 820.8.
	fixedDS := want{hits: 2, misses: 2, wakeUps: 2, low: 38, delay: 6.48 + 4.48, energyUJ: 1819.2, savedUJ: 820.8, meanPDT: 10}
	// Fast wake, fixed 10 µs: 10 → going down 44–44.2, waits 0.2 + 0.375;
	// 50 → asleep 64.2–104 = 39.8 µs, waits 0.375. Saved 14.4 × 39.8.
	fixedFW := want{hits: 2, misses: 2, wakeUps: 2, low: 39.8, delay: 0.575 + 0.375, energyUJ: 2640 - 14.4*39.8, savedUJ: 14.4 * 39.8, meanPDT: 10}
	// Deep sleep, eee (t_PDT 0): every period misses. [10,11]: going down
	// 10–12, waits 1 + 4.48; [21,24]: asleep 23–24 = 1; [34,44]: 36–44 = 8;
	// [54,104]: 56–104 = 48; each waits 4.48. Asleep 57 µs.
	eeeDS := want{misses: 4, wakeUps: 4, low: 57, delay: 5.48 + 3*4.48, energyUJ: 2640 - 21.6*57, savedUJ: 21.6 * 57}
	// Fast wake, eee: going down 200 ns, asleep 0.8 + 2.8 + 9.8 + 49.8 =
	// 63.2 µs, each waits 0.375.
	eeeFW := want{misses: 4, wakeUps: 4, low: 63.2, delay: 4 * 0.375, energyUJ: 2640 - 14.4*63.2, savedUJ: 14.4 * 63.2}
	// Deep sleep, 3 µs: 1 hits; 3 = t_PDT misses: going down 24–26, waits
	// 2 + 4.48; [34,44]: down 37–39, asleep 39–44 = 5; [54,104]: down
	// 57–59, asleep 59–104 = 45; both wait 4.48. Asleep 50 µs.
	pdt3DS := want{hits: 1, misses: 3, wakeUps: 3, low: 50, delay: 6.48 + 2*4.48, energyUJ: 2640 - 21.6*50, savedUJ: 21.6 * 50, meanPDT: 3}
	// Fast wake, 3 µs: [21,24] going down 24–24.2, waits 0.2 + 0.375;
	// asleep 37.2–44 = 6.8 and 57.2–104 = 46.8, each waits 0.375.
	pdt3FW := want{hits: 1, misses: 3, wakeUps: 3, low: 53.6, delay: 0.575 + 2*0.375, energyUJ: 2640 - 14.4*53.6, savedUJ: 14.4 * 53.6, meanPDT: 3}
	on := want{hits: 4, energyUJ: 2640}

	now := 110 * us
	res := e.Results(now)
	wants := []struct {
		policy string
		mode   power.Mode
		w      want
	}{
		{"always-on", power.FastWake, on}, {"always-on", power.DeepSleep, on},
		{"eee", power.FastWake, eeeFW}, {"eee", power.DeepSleep, eeeDS},
		{"fixed-10µs", power.FastWake, fixedFW}, {"fixed-10µs", power.DeepSleep, fixedDS},
		{"driver-default", power.FastWake, pdt3FW}, {"driver-default", power.DeepSleep, pdt3DS},
		{"predictor", power.FastWake, pdt3FW}, {"predictor", power.DeepSleep, pdt3DS},
	}
	if len(res) != len(wants) {
		t.Fatalf("%d results, want %d", len(res), len(wants))
	}
	for i, w := range wants {
		if res[i].Policy != w.policy || res[i].Mode != w.mode {
			t.Fatalf("result %d is %s/%s, want %s/%s", i, res[i].Policy, res[i].Mode, w.policy, w.mode)
		}
		check(t, res[i], w.w, now)
	}

	// An idle period in progress counts as idle up to now: queue empty at
	// 106 µs; fixed 10 µs deep sleep is ready again at 108.48 (the last
	// wake-up), so its timer runs from there: going down 118.48–120.48,
	// asleep 120.48–130 = 9.52 µs more.
	e.IdleStart(106 * us)
	now = 130 * us
	r := e.Results(now)[5]
	check(t, r, want{hits: 2, misses: 2, wakeUps: 2, low: 47.52, delay: 10.96,
		energyUJ: 24*130 - 21.6*47.52, savedUJ: 21.6 * 47.52, meanPDT: 10}, now)
	// Results does not change the estimator; ending the period at 130 µs
	// adds a miss and its wake-up (4.48 µs).
	e.Idle(130*us, 24*us)
	r = e.Results(now)[5]
	check(t, r, want{hits: 2, misses: 3, wakeUps: 3, low: 47.52, delay: 10.96 + 4.48,
		energyUJ: 24*130 - 21.6*47.52, savedUJ: 21.6 * 47.52, meanPDT: 10}, now)
}

// TestAbsorbed: a gap file's periods follow each other with no busy time.
// eee deep sleep on eee-400g: [0,1] misses (going down 0–2, ready at 6.48
// µs after waiting 1 + 4.48); [1,3] ends while the port is still waking:
// absorbed, its packet waits 6.48 − 3 = 3.48; [3,13] starts at 6.48:
// going down 6.48–8.48, asleep 8.48–13 = 4.52, waits 4.48.
func TestAbsorbed(t *testing.T) {
	e, err := New(Config{Preset: load(t, "eee-400g"), Modes: []power.Mode{power.DeepSleep}, Policies: []Policy{{Kind: PlainEEE}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []period{{0, 1}, {1, 3}, {3, 13}} {
		e.Idle(dur(p.end), dur(p.end-p.start))
	}
	now := 20 * us
	check(t, e.Results(now)[0], want{misses: 2, wakeUps: 2, absorbed: 1, low: 4.52, delay: 5.48 + 3.48 + 4.48,
		energyUJ: 24*20 - 21.6*4.52, savedUJ: 21.6 * 4.52}, now)
}

// TestHandshake: with H = 5 ns, fixed 1 µs deep sleep goes down at
// 1 µs + 2H; a 1.005 µs gap (inside the handshake) waits 1.01 − 1.005 + 2 +
// 4.48 µs.
func TestHandshake(t *testing.T) {
	e, err := New(Config{Preset: load(t, "eee-400g"), Modes: []power.Mode{power.DeepSleep},
		Policies: []Policy{{Kind: Fixed, PDT: us}}, Handshake: 5 * time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	e.Idle(2005*time.Nanosecond, 1005*time.Nanosecond)
	r := e.Results(10 * us)[0]
	if r.Misses != 1 || r.AddedDelay != 6485*time.Nanosecond {
		t.Errorf("misses %d delay %v, want 1 and 6.485µs", r.Misses, r.AddedDelay)
	}
}

func TestDefaultsAndErrors(t *testing.T) {
	e, err := New(Config{Preset: load(t, "eee-1000base-t")}) // deep sleep only
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range e.Results(0) {
		got = append(got, r.Policy+"/"+string(r.Mode))
	}
	if s := strings.Join(got, " "); s != "always-on/deep-sleep eee/deep-sleep fixed-10µs/deep-sleep predictor/deep-sleep" {
		t.Errorf("default policies × modes: %s", s)
	}
	p400 := load(t, "eee-400g")
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "preset: required"},
		{Config{Preset: p400, Modes: []power.Mode{power.Hybrid}}, "modes[0]"},
		{Config{Preset: p400, Modes: []power.Mode{power.DeepSleep, power.DeepSleep}}, "modes[1]"},
		{Config{Preset: load(t, "eee-1000base-t"), Modes: []power.Mode{power.FastWake}}, "modes[0]"},
		{Config{Preset: p400, Policies: []Policy{{Kind: "sometimes"}}}, "policies[0].kind"},
		{Config{Preset: p400, Policies: []Policy{{Kind: DriverDefault}}}, "policies[0].pdt"},
		{Config{Preset: p400, Policies: []Policy{{Kind: Fixed, PDT: -1}}}, "policies[0].pdt"},
		{Config{Preset: p400, Policies: []Policy{{Kind: PlainEEE, PDT: us}}}, "policies[0].pdt"},
		{Config{Preset: p400, Policies: []Policy{{Kind: PlainEEE}, {Name: "eee", Kind: Fixed}}}, "policies[1].name"},
		{Config{Preset: p400, Handshake: -1}, "handshake"},
		{Config{Preset: p400, Start: -1}, "start"},
		{Config{Preset: p400, Predictor: predictor.Config{Kind: "oracle"}}, "predictor"},
	} {
		if _, err := New(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one naming %q", c.cfg.Policies, err, c.want)
		}
	}
}

func TestPresetForSpeed(t *testing.T) {
	for mbps, name := range map[int]string{100: "eee-100base-tx", 1000: "eee-1000base-t", 10000: "eee-10gbase-t",
		25000: "eee-25g", 40000: "eee-40g", 100000: "eee-100g", 400000: "eee-400g"} {
		p, err := PresetForSpeed(mbps)
		if err != nil || p.Name != name {
			t.Errorf("%d Mb/s: %v, %v; want %s", mbps, p, err, name)
		}
	}
	if _, err := PresetForSpeed(2500); err == nil || !strings.Contains(err.Error(), "2500 Mb/s") {
		t.Errorf("2500 Mb/s: %v", err)
	}
	// 25G is interpolated between 10G and 40G (configs/presets/eee-25g.yaml).
	p, _ := PresetForSpeed(25000)
	if p.DeepSleep.WakeTime.D() != 2970*time.Nanosecond || p.DeepSleep.SleepTime.D() != 1610*time.Nanosecond {
		t.Errorf("eee-25g deep sleep %+v", p.DeepSleep)
	}
}

// BenchmarkEstimatorIdle: one idle period through every default policy ×
// both modes of eee-400g (8 ports, 2 of them PerfBoundCorrect
// predictors). interval: the predictor's controller recomputes every
// 100 ms, as a host agent does (docs/model.md §2.2 step 4, configs/agent.yaml);
// queue-empty: at every idle period, as a switch does — then the two
// predictors' Predict (predictor package) take most of the time.
func BenchmarkEstimatorIdle(b *testing.B) {
	for _, c := range []struct {
		name string
		ctl  controller.Config
	}{
		{"interval", controller.Config{Recompute: controller.OnInterval}},
		{"queue-empty", controller.Config{Recompute: controller.OnQueueEmpty}},
	} {
		b.Run(c.name, func(b *testing.B) {
			e, err := New(Config{Preset: load(b, "eee-400g"), Controller: c.ctl})
			if err != nil {
				b.Fatal(err)
			}
			if n := len(e.Results(0)); n != 8 {
				b.Fatalf("%d policies × modes, want 8", n)
			}
			// Gaps from 100 ns to 1 ms (log-uniform), 5 µs busy between.
			gaps := make([]time.Duration, 1024)
			x := uint64(1)
			for i := range gaps {
				x = x*6364136223846793005 + 1442695040888963407
				gaps[i] = time.Duration(100 * math.Pow(10, float64(x>>11)/float64(1<<53)*4))
			}
			now := time.Duration(0)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				g := gaps[i&1023]
				i++
				now += 5*us + g
				e.Idle(now, g)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(i), "ns/idle_period")
		})
	}
}
