package predictor

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

const us = time.Microsecond

func dur(d time.Duration) *Duration { v := Duration(d); return &v }

// pbConfig is a PerfBound config whose budget is easy to compute by hand:
// t_w = 1µs and no hop information (l = bound), so N = bound × X/1µs.
func pbConfig(strategy Strategy, bound float64) Config {
	return Config{
		Kind:       KindPerfBound,
		Bound:      bound,
		WakeTime:   Duration(us),
		InitialPDT: dur(7 * us),
		Histogram:  HistogramConfig{Strategy: strategy, BinWidth: Duration(us), MaxValue: Duration(100 * us), TTL: Duration(time.Hour), MaxRecords: 1000, Search: SearchPopulated},
	}.WithDefaults()
}

func TestHopFactorWorkedExample(t *testing.T) {
	// docs/model.md §2.2: 70 % at 4 hops, 30 % at 6 hops, bound 1 % → l = 0.00225.
	cfg := pbConfig(Unbounded, 0.01)
	cfg.Hops = map[int]float64{4: 0.7, 6: 0.3}
	static := newPerfBound(cfg)
	observed := newPerfBound(pbConfig(Unbounded, 0.01))
	observed.ObserveHops(4, 7)
	observed.ObserveHops(6, 3)
	for name, p := range map[string]*PerfBound{"static": static, "observed": observed} {
		if l := p.HopFactor(); math.Abs(l-0.00225) > 1e-15 {
			t.Errorf("%s: hop factor = %v, want 0.00225", name, l)
		}
	}
	// No hop information: h = 1, l = bound.
	if l := newPerfBound(pbConfig(Unbounded, 0.01)).HopFactor(); l != 0.01 {
		t.Errorf("no hops: l = %v, want 0.01", l)
	}
	// Long paths (≥ 16 hops) count apart from the per-hop counters.
	far := newPerfBound(pbConfig(Unbounded, 1))
	far.ObserveHops(20, 2)
	far.ObserveHops(2, 2)
	far.ObserveHops(300, 1) // clamped to 255 hops
	if l, want := far.HopFactor(), (2.0/20+2.0/2+1.0/255)/5; math.Abs(l-want) > 1e-15 {
		t.Errorf("far hops: l = %v, want %v", l, want)
	}
	// Observed hops replace the static distribution.
	static.ObserveHops(2, 1)
	if l := static.HopFactor(); l != 0.005 {
		t.Errorf("observed over static: l = %v, want 0.005", l)
	}
}

// TestHopFactorLongestPath checks that the hop sum, which reads the
// counts only up to the longest path seen (hopMax), is bit for bit the sum
// over every count in hop order, over random interleavings of reports and
// decisions (short and long paths, paths over 15 hops counted apart).
func TestHopFactorLongestPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 4))
	for trial := range 2000 {
		p := newPerfBound(pbConfig(Unbounded, 0.01))
		for range 1 + rng.IntN(40) {
			hops := 1 + rng.IntN(8)
			switch rng.IntN(10) {
			case 0:
				hops = 1 + rng.IntN(300) // up to past the 255 clamp
			case 1:
				hops = 9 + rng.IntN(7) // the longest counted paths
			}
			p.ObserveHops(hops, uint64(1+rng.IntN(1000)))
			if rng.IntN(3) > 0 {
				continue
			}
			sum := p.farWeighted
			for h := 1; h <= len(p.hopCounts); h++ {
				if c := p.hopCounts[h-1]; c != 0 {
					sum += float64(c) / float64(h)
				}
			}
			if got, want := p.HopFactor(), p.bound*sum/float64(p.hopPackets); got != want {
				t.Fatalf("trial %d: hop factor %v, the full sum %v (hopMax %d)", trial, got, want, p.hopMax)
			}
		}
	}
}

func TestBudget(t *testing.T) {
	// N = l × X / t_w: l = 0.00225, X = 1 s, t_w = 4.48 µs → 502.232…
	cfg := pbConfig(Unbounded, 0.01)
	cfg.Hops = map[int]float64{4: 0.7, 6: 0.3}
	cfg.WakeTime = Duration(4480 * time.Nanosecond)
	p := newPerfBound(cfg)
	p.Observe(IdlePeriod{End: 10 * us, Length: 10 * us}) // covers from 0
	want := 0.00225 * 1e9 / 4480
	if got := p.Budget(time.Second); math.Abs(got-want) > 1e-9 {
		t.Errorf("N = %v, want %v", got, want)
	}
}

// fill records gaps (in µs) ending one after another from time 0.
func fill(p Predictor, gapsUS ...float64) time.Duration {
	var now time.Duration
	for _, g := range gapsUS {
		d := time.Duration(g * float64(us))
		now += d
		p.Observe(IdlePeriod{End: now, Length: d})
	}
	return now
}

func TestBinSearch(t *testing.T) {
	// Bins of 1 µs: 3 gaps in bin 2, 2 in bin 5, 1 in bin 9. Gaps total
	// 3×2.5+2×5.5+9.5 = 28 µs, so at now = 1000 µs, X = 1000 µs and
	// N = bound × 1000.
	gaps := []float64{2.5, 5.5, 2.5, 9.5, 5.5, 2.5}
	tests := []struct {
		name  string
		bound float64
		want  time.Duration
	}{
		{"N<1: upper edge of highest bin", 0.0005, 10 * us},
		{"N=1: top bin only", 0.001, 9500 * time.Nanosecond},
		{"N=2: next bin would exceed", 0.002, 9500 * time.Nanosecond},
		{"N=3 ties: accumulated count equal to N is accepted", 0.003, 5500 * time.Nanosecond},
		{"N=6: every record fits", 0.006, 2500 * time.Nanosecond},
		{"N=1000: lowest populated bin", 1, 2500 * time.Nanosecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newPerfBound(pbConfig(Unbounded, tc.bound))
			fill(p, gaps...)
			if got := p.Predict(1000 * us); got != tc.want {
				t.Errorf("t_PDT = %v, want %v (N = %v)", got, tc.want, p.Budget(1000*us))
			}
		})
	}
}

func TestBinSearchEdgeCases(t *testing.T) {
	p := newPerfBound(pbConfig(Unbounded, 1))
	if got := p.Predict(time.Second); got != 7*us {
		t.Errorf("empty histogram: %v, want initial 7µs", got)
	}
	// All mass in one bin (bin 3): N ≥ 10 → its middle; N < 10 → its upper edge.
	for _, c := range []struct {
		bound float64
		want  time.Duration
	}{{0.01, 3500 * time.Nanosecond}, {0.009, 4 * us}} {
		p := newPerfBound(pbConfig(Unbounded, c.bound))
		fill(p, 3, 3.1, 3.2, 3.3, 3.4, 3.5, 3.6, 3.7, 3.8, 3.999)
		if got := p.Predict(1000 * us); got != c.want {
			t.Errorf("one bin, bound %v: %v, want %v", c.bound, got, c.want)
		}
	}
	// Bin boundaries: exactly 2 µs is bin 2; values above h_maxval are clamped.
	p = newPerfBound(pbConfig(Unbounded, 1))
	fill(p, 2, 500)
	if p.PopulatedBins() != 2 || p.hist.bins[0].idx != 2 || p.hist.bins[1].idx != 100 {
		t.Errorf("bins = %+v, want bin 2 and the clamp bin 100", p.hist.bins)
	}
}

func TestClearingOnMaxRecords(t *testing.T) {
	cfg := pbConfig(Clearing, 1)
	cfg.Histogram.MaxRecords = 3
	p := newPerfBound(cfg)
	fill(p, 1.5, 2.5, 3.5)
	if p.Records() != 3 || p.hist.origin != 0 {
		t.Fatalf("after 3: records %d origin %v", p.Records(), p.hist.origin)
	}
	p.Observe(IdlePeriod{End: 20 * us, Length: 4500 * time.Nanosecond})
	// The 4th value finds h_maxN recorded in the window: a new window
	// begins at its start (15.5 µs) and counts it; the first window is
	// kept as the previous one, so the span still starts at 0.
	if p.Records() != 4 || p.PopulatedBins() != 4 || p.hist.prevN != 3 || len(p.hist.prev) != 3 {
		t.Errorf("after the window: records %d bins %+v prev %+v", p.Records(), p.hist.bins, p.hist.prev)
	}
	if p.hist.origin != 0 || p.hist.winStart != 15500*time.Nanosecond {
		t.Errorf("origin = %v window start %v, want 0 and 15.5µs", p.hist.origin, p.hist.winStart)
	}
	// Three more values end the second window: the first is forgotten.
	p.Observe(IdlePeriod{End: 30 * us, Length: 4500 * time.Nanosecond})
	p.Observe(IdlePeriod{End: 40 * us, Length: 1500 * time.Nanosecond})
	p.Observe(IdlePeriod{End: 50 * us, Length: 9500 * time.Nanosecond})
	// Window 2 holds 4.5, 4.5, 1.5 (bins 4, 4, 1); window 3 holds 9.5.
	want := []bin{{1, 1}, {4, 2}, {9, 1}}
	if p.Records() != 4 || len(p.hist.bins) != 3 || p.hist.bins[0] != want[0] || p.hist.bins[1] != want[1] || p.hist.bins[2] != want[2] {
		t.Errorf("after the second window: records %d bins %+v, want %+v", p.Records(), p.hist.bins, want)
	}
	if p.hist.origin != 15500*time.Nanosecond || p.hist.winStart != 40500*time.Nanosecond {
		t.Errorf("origin = %v window start %v, want 15.5µs and 40.5µs", p.hist.origin, p.hist.winStart)
	}
	// A bin populated in both windows is stored twice.
	p.Observe(IdlePeriod{End: 60 * us, Length: 4500 * time.Nanosecond})
	if got := p.StateBytes(); got != 4*(2+2) {
		t.Errorf("StateBytes = %d, want w_counter × (2 + 2 bins of the two windows) = 16", got)
	}
}

func TestClearingOnTTL(t *testing.T) {
	cfg := pbConfig(Clearing, 1)
	cfg.Histogram.TTL = Duration(10 * us)
	p := newPerfBound(cfg)
	fill(p, 1, 1, 1) // ends at 3 µs; origin 0
	if p.Records() != 3 {
		t.Fatalf("records %d", p.Records())
	}
	// A gap ending at 25 µs: TTL expired at 10 and 20 µs; the clear is dated 20 µs.
	p.Observe(IdlePeriod{End: 25 * us, Length: 2 * us})
	if p.Records() != 1 || p.hist.origin != 20*us {
		t.Errorf("records %d origin %v, want 1 and 20µs", p.Records(), p.hist.origin)
	}
	// Without new values, the TTL ends the window at decision time; it is
	// kept as the previous window for one more TTL, then forgotten.
	if p.Predict(31 * us); p.Records() != 1 || p.hist.origin != 20*us || p.hist.winStart != 30*us {
		t.Errorf("after one TTL: records %d origin %v window %v, want 1, 20µs, 30µs", p.Records(), p.hist.origin, p.hist.winStart)
	}
	if got := p.Predict(41 * us); got != 7*us || p.Records() != 0 {
		t.Errorf("after two TTLs: t_PDT %v records %d, want initial 7µs and 0", got, p.Records())
	}
	if p.hist.origin != 40*us {
		t.Errorf("origin %v, want 40µs", p.hist.origin)
	}
}

func TestCircularEviction(t *testing.T) {
	cfg := pbConfig(Circular, 1)
	cfg.Histogram.MaxRecords = 3
	p := newPerfBound(cfg)
	fill(p, 1.5, 2.5, 3.5, 4.5, 2.7) // starts 0, 1.5, 4, 7.5, 12
	// Ring holds 3.5, 4.5, 2.7: bins 2, 3, 4, one each; oldest starts at 4 µs.
	want := []bin{{2, 1}, {3, 1}, {4, 1}}
	if len(p.hist.bins) != 3 {
		t.Fatalf("bins %+v", p.hist.bins)
	}
	for i, b := range want {
		if p.hist.bins[i] != b {
			t.Errorf("bins %+v, want %+v", p.hist.bins, want)
			break
		}
	}
	if p.Records() != 3 || p.hist.origin != 4*us {
		t.Errorf("records %d origin %v, want 3 and 4µs", p.Records(), p.hist.origin)
	}
	// Evicting the only value of a bin removes the bin.
	p.Observe(IdlePeriod{End: 20 * us, Length: 4600 * time.Nanosecond})
	if p.PopulatedBins() != 2 || p.hist.bins[0] != (bin{2, 1}) || p.hist.bins[1] != (bin{4, 2}) {
		t.Errorf("after eviction: %+v", p.hist.bins)
	}
}

func TestUnboundedNeverClears(t *testing.T) {
	cfg := pbConfig(Unbounded, 1)
	cfg.Histogram.MaxRecords = 2
	cfg.Histogram.TTL = Duration(us)
	p := newPerfBound(cfg)
	fill(p, 1, 2, 3, 4, 5)
	p.Predict(time.Second)
	if p.Records() != 5 || p.hist.origin != 0 {
		t.Errorf("records %d origin %v", p.Records(), p.hist.origin)
	}
}

func TestStateBytes(t *testing.T) {
	p := newPerfBound(pbConfig(Clearing, 1))
	fill(p, 1, 2, 2, 3)
	if got := p.StateBytes(); got != 4*3 {
		t.Errorf("clearing: %d bytes, want w_counter×n_bins = 12", got)
	}
	cfg := pbConfig(Circular, 1)
	cfg.Histogram.MaxRecords = 100
	c := newPerfBound(cfg)
	fill(c, 1, 2)
	if got := c.StateBytes(); got != 4*2+100*4 {
		t.Errorf("circular: %d bytes, want 8+400", got)
	}
	pbc := newPerfBoundCorrect(pbConfig(Clearing, 1))
	if got := pbc.StateBytes(); got != 0+4+32*4 {
		t.Errorf("perfboundcorrect empty: %d bytes, want 132", got)
	}
}

func TestPerfBoundCorrectBookkeeping(t *testing.T) {
	cfg := pbConfig(Unbounded, 1)
	cfg.Kind = KindPerfBoundCorrect
	cfg.History = 4
	cfg.WakeTime = Duration(3 * us)
	p := newPerfBoundCorrect(cfg)
	hit := func(end time.Duration) IdlePeriod { return IdlePeriod{End: end, Length: 5 * us, PDT: 10 * us} }
	miss := func(end, length, pdt time.Duration) IdlePeriod {
		return IdlePeriod{End: end, Length: length, Missed: true, PDT: pdt}
	}
	steps := []struct {
		ip            IdlePeriod
		count, misses int
		cf            float64
		comment       string
	}{
		{hit(5 * us), 1, 0, 0, "H"},
		{miss(30*us, 20*us, 10*us), 2, 1, 0.5 * 2, "H M2: 1/2 × 2"},
		{miss(200*us, 80*us, 10*us), 3, 2, 2.0 / 3 * 4, "H M2 M8: 2/3 × √16"},
		{hit(210 * us), 4, 2, 0.5 * 4, "H M2 M8 H"},
		{hit(220 * us), 4, 2, 0.5 * 4, "M2 M8 H H (H shifted out)"},
		{hit(230 * us), 4, 1, 0.25 * 8, "M8 H H H (M2 shifted out, its ratio popped)"},
		{miss(240*us, 9*us, 0), 4, 1, 0.25 * 3, "H H H M3 (t_PDT 0: ratio against t_w = 3µs)"},
		{miss(250*us, 1*us, 0), 4, 2, 0.5 * math.Sqrt(3), "H H M3 M1 (ratio < 1 counts as 1)"},
	}
	for i, s := range steps {
		p.Observe(s.ip)
		count, misses := p.Outcomes()
		if count != s.count || misses != s.misses {
			t.Errorf("step %d (%s): register %d/%d, want %d/%d", i, s.comment, count, misses, s.count, s.misses)
		}
		if cf := p.CorrectionFactor(); math.Abs(cf-s.cf) > 1e-12 {
			t.Errorf("step %d (%s): cf = %v, want %v", i, s.comment, cf, s.cf)
		}
		tpb := p.PerfBound().Predict(300 * us)
		want := time.Duration(math.Round(float64(tpb) * (1 + s.cf)))
		if got := p.Predict(300 * us); got != min(want, 100*us) {
			t.Errorf("step %d: t_PDT %v, want %v (t_PB %v)", i, got, want, tpb)
		}
	}
}

func TestPerfBoundCorrectCap(t *testing.T) {
	cfg := pbConfig(Unbounded, 1)
	cfg.Kind = KindPerfBoundCorrect
	cfg.History = 2
	p := newPerfBoundCorrect(cfg)
	p.Observe(IdlePeriod{End: 90 * us, Length: 90 * us, Missed: true, PDT: us}) // ratio 90
	p.Observe(IdlePeriod{End: 180 * us, Length: 90 * us, Missed: true, PDT: us})
	if got := p.Predict(200 * us); got != 100*us {
		t.Errorf("t_PDT %v, want the h_maxval cap 100µs", got)
	}
}

func TestFixed(t *testing.T) {
	p, err := New(Config{Kind: KindFixed, PDT: dur(0)})
	if err != nil {
		t.Fatal(err)
	}
	p.Observe(IdlePeriod{End: us, Length: us, Missed: true})
	if p.Predict(time.Hour) != 0 || p.StateBytes() != 0 || p.Kind() != KindFixed {
		t.Errorf("fixed 0: %v", p.Predict(time.Hour))
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{Kind: "oracle"}, `predictor.kind: unknown predictor "oracle"`},
		{Config{Kind: KindFixed}, "predictor.pdt: required for kind fixed"},
		{Config{Kind: KindPerfBound}, "predictor.wake_time: t_w must be > 0"},
		{Config{Kind: KindPerfBound, WakeTime: 1, Bound: 2}, "predictor.bound: must be in (0, 1]"},
		{Config{Kind: KindPerfBound, WakeTime: 1, Hops: map[int]float64{0: 1}}, "predictor.hops: hop count 0"},
		{Config{Kind: KindPerfBound, WakeTime: 1, Hops: map[int]float64{3: -1}}, "predictor.hops: share of 3 hops"},
		{Config{Kind: KindPerfBound, WakeTime: 1, Histogram: HistogramConfig{Strategy: "lru"}}, "predictor.histogram.strategy"},
		{Config{Kind: KindPerfBound, WakeTime: 1, Histogram: HistogramConfig{BinWidth: 10, MaxValue: 5}}, "predictor.histogram.max_value"},
		{Config{Kind: KindPerfBound, WakeTime: 1, Histogram: HistogramConfig{MaxRecords: -1}}, "predictor.histogram.max_records"},
		{Config{Kind: KindPerfBoundCorrect, WakeTime: 1, History: -3}, "predictor.history"},
	}
	for _, kind := range []Kind{KindPerfBound, KindPerfBoundCorrect} {
		tests = append(tests, struct {
			cfg  Config
			want string
		}{Config{Kind: kind, WakeTime: 1, InitialPDT: dur(20 * time.Millisecond)},
			"predictor.initial_pdt: 20ms is above histogram.max_value (10ms)"})
	}
	for _, tc := range tests {
		_, err := New(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want error containing %q", tc.cfg, err, tc.want)
		}
	}
}

// TestConfigInitialPDTAboveMaxValue: an initial t_PDT above h_maxval was
// accepted, and PerfBound answered it while PerfBoundCorrect capped it
// (issue item 9). It is an error naming the key; equal to h_maxval is fine,
// and kind fixed does not use it.
func TestConfigInitialPDTAboveMaxValue(t *testing.T) {
	for _, kind := range []Kind{KindPerfBound, KindPerfBoundCorrect} {
		cfg := Config{Kind: kind, WakeTime: 1, InitialPDT: dur(time.Millisecond + 1),
			Histogram: HistogramConfig{MaxValue: Duration(time.Millisecond)}}
		if _, err := New(cfg); err == nil || !strings.HasPrefix(err.Error(), "predictor.initial_pdt: 1.000001ms is above histogram.max_value (1ms)") {
			t.Errorf("%s: %v", kind, err)
		}
		cfg.InitialPDT = dur(time.Millisecond)
		p, err := New(cfg)
		if err != nil {
			t.Fatalf("%s: initial_pdt = max_value: %v", kind, err)
		}
		if got := p.Predict(0); got != time.Millisecond {
			t.Errorf("%s: initial answer %v", kind, got)
		}
		// The default initial t_PDT (10µs) above a small max_value is
		// reported too: the default is no exception.
		cfg.InitialPDT = nil
		cfg.Histogram.MaxValue = Duration(5 * us)
		if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "predictor.initial_pdt: 10µs is above histogram.max_value (5µs)") {
			t.Errorf("%s, default initial_pdt: %v", kind, err)
		}
	}
	if _, err := New(Config{Kind: KindFixed, PDT: dur(us), InitialPDT: dur(time.Hour)}); err != nil {
		t.Errorf("fixed: %v", err)
	}
}

func TestParseDuration(t *testing.T) {
	good := map[string]time.Duration{
		"12.5us": 12500, "3ms": 3 * time.Millisecond, "2500": 2500, "12.4": 12, "4.48µs": 4480,
		" 1s ": time.Second, "0": 0, "1e3": 1000,
	}
	for in, want := range good {
		if got, err := ParseDuration(in); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1us", "-5", "abc", "1e300", "NaN", "10 us", "Inf"} {
		if _, err := ParseDuration(in); err == nil {
			t.Errorf("ParseDuration(%q): want an error", in)
		}
	}
}

// TestSearchMatchesNaiveWalk checks the two-ended search against the literal
// top-down walk of docs/model.md §2.2 on random histograms and budgets.
func TestSearchMatchesNaiveWalk(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 2000; trial++ {
		hc := Config{}.WithDefaults().Histogram
		hc.Search = SearchPopulated // the literal walk below is this reading's
		h := newHistogram(hc)
		h.strategy = unbounded
		for i, n := 0, 1+rng.IntN(60); i < n; i++ {
			v := time.Duration(rng.IntN(40)) * DefaultBinWidth
			h.add(v, 0, v, nil)
		}
		budget := rng.Float64() * float64(h.n+2)
		var cum uint64
		chosen := -1
		for i := len(h.bins) - 1; i >= 0; i-- {
			cum += uint64(h.bins[i].count)
			if float64(cum) > budget {
				break
			}
			chosen = i
		}
		want := time.Duration(h.bins[len(h.bins)-1].idx+1) * DefaultBinWidth
		if chosen >= 0 {
			want = h.middle(chosen)
		}
		if got := h.search(budget, nil); got != want {
			t.Fatalf("trial %d: bins %+v budget %v: got %v, want %v", trial, h.bins, budget, got, want)
		}
	}
}

// TestClearingOneWindowIsThePapers: histogram.windows 1 is the papers'
// self-clearing histogram, exactly as before the two-window fix (these
// are the earlier tests' expectations, kept for the figure sweeps).
func TestClearingOneWindowIsThePapers(t *testing.T) {
	cfg := pbConfig(Clearing, 1)
	cfg.Histogram.MaxRecords, cfg.Histogram.Windows = 3, 1
	p := newPerfBound(cfg)
	fill(p, 1.5, 2.5, 3.5)
	p.Observe(IdlePeriod{End: 20 * us, Length: 4500 * time.Nanosecond})
	// The 4th value finds h_maxN recorded: clear, then count it alone;
	// the clear is dated at its start (15.5 µs).
	if p.Records() != 1 || p.PopulatedBins() != 1 || p.hist.bins[0].idx != 4 || p.hist.origin != 15500*time.Nanosecond {
		t.Errorf("after clear: records %d bins %+v origin %v", p.Records(), p.hist.bins, p.hist.origin)
	}

	cfg = pbConfig(Clearing, 1)
	cfg.Histogram.TTL, cfg.Histogram.Windows = Duration(10*us), 1
	p = newPerfBound(cfg)
	fill(p, 1, 1, 1)
	// A gap ending at 25 µs: TTL expired at 10 and 20 µs; the clear is dated 20 µs.
	p.Observe(IdlePeriod{End: 25 * us, Length: 2 * us})
	if p.Records() != 1 || p.hist.origin != 20*us {
		t.Errorf("records %d origin %v, want 1 and 20µs", p.Records(), p.hist.origin)
	}
	// Without new values, the TTL empties the histogram at decision time.
	if got := p.Predict(31 * us); got != 7*us || p.Records() != 0 || p.hist.origin != 30*us {
		t.Errorf("after TTL: t_PDT %v records %d origin %v, want initial 7µs, 0, 30µs", got, p.Records(), p.hist.origin)
	}
	if _, err := New(Config{Kind: KindPerfBound, WakeTime: 1, Histogram: HistogramConfig{Windows: 3}}); err == nil ||
		!strings.Contains(err.Error(), "predictor.histogram.windows") {
		t.Errorf("windows 3: %v", err)
	}
}

// TestLayout: for every kind New builds, Layout gives the predictor's own
// struct (the simulator prefetches it); for one that is not a pointer to
// a struct, nothing.
func TestLayout(t *testing.T) {
	pdt := Duration(10 * time.Microsecond)
	for _, k := range Kinds {
		p, err := New(Config{Kind: k, PDT: &pdt, WakeTime: Duration(4480 * time.Nanosecond)})
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		at, size := Layout(p)
		if at == nil || at != reflect.ValueOf(p).UnsafePointer() || size != reflect.TypeOf(p).Elem().Size() {
			t.Errorf("%s: Layout %p, %d B; the predictor is at %p, %d B", k, at, size, reflect.ValueOf(p).UnsafePointer(), reflect.TypeOf(p).Elem().Size())
		}
	}
	if at, size := Layout(foreign{}); at != nil || size != 0 {
		t.Errorf("another package's predictor: %p, %d B", at, size)
	}
}

// foreign is a Predictor held by value, which Layout cannot place.
type foreign struct{}

func (foreign) Observe(IdlePeriod)                  {}
func (foreign) ObserveHops(int, uint64)             {}
func (foreign) Predict(time.Duration) time.Duration { return 0 }
func (foreign) StateBytes() int                     { return 0 }
func (foreign) Kind() Kind                          { return KindFixed }
