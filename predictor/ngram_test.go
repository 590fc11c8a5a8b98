package predictor

import (
	"math"
	"strings"
	"testing"
	"time"
)

// ngramConfig is an n-gram config that is easy to follow by hand: t_w = 1µs,
// break-even 3µs, so with 3 classes: S (< 1µs) = 0, M (1µs ≤ d < 3µs) = 1,
// L (≥ 3µs) = 2, and "stay awake" = h_maxval = 100µs. Its PerfBound fallback
// has bound 1 and 1µs bins, so at now = 1s (N = 10^6, above any count) it
// answers the middle of the lowest populated bin: 500ns once a period
// shorter than 1µs has been seen.
func ngramConfig(n, minCount int, conf float64) Config {
	return Config{
		Kind:       KindNGram,
		Bound:      1,
		WakeTime:   Duration(us),
		InitialPDT: dur(7 * us),
		Histogram:  HistogramConfig{Strategy: Unbounded, BinWidth: Duration(us), MaxValue: Duration(100 * us), Search: SearchPopulated},
		NGram:      NGramConfig{N: n, MinCount: minCount, Confidence: conf, BreakEven: Duration(3 * us)},
	}.WithDefaults()
}

const (
	gS = 500 * time.Nanosecond // class 0
	gM = 2 * us                // class 1
	gL = 10 * us               // class 2
)

func mustNGram(t *testing.T, cfg Config) *NGram {
	t.Helper()
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p.(*NGram)
}

// feed observes one period after another from time 0, returning the end.
func feed(p Predictor, now time.Duration, gaps ...time.Duration) time.Duration {
	for _, g := range gaps {
		now += g
		p.Observe(IdlePeriod{End: now, Length: g})
	}
	return now
}

func TestNGramClasses(t *testing.T) {
	g := mustNGram(t, ngramConfig(1, 1, 1))
	for _, c := range []struct {
		d    time.Duration
		want int
	}{{0, 0}, {999, 0}, {us, 1}, {2999, 1}, {3 * us, 2}, {time.Hour, 2}} {
		if got := g.Class(c.d); got != c.want {
			t.Errorf("Class(%v) = %d, want %d", c.d, got, c.want)
		}
	}
	// Five classes: t_w, break-even, then doublings: 1, 3, 6, 12 µs;
	// long from class 2. Two classes: the break-even alone.
	cfg := ngramConfig(1, 1, 1)
	cfg.NGram.Classes = 5
	g = mustNGram(t, cfg)
	want := []time.Duration{us, 3 * us, 6 * us, 12 * us}
	if b := g.Bounds(); len(b) != 4 || b[0] != want[0] || b[1] != want[1] || b[2] != want[2] || b[3] != want[3] || g.LongFrom() != 2 {
		t.Errorf("5 classes: bounds %v long from %d, want %v from 2", b, g.LongFrom(), want)
	}
	cfg.NGram.Classes = 2
	g = mustNGram(t, cfg)
	if b := g.Bounds(); len(b) != 1 || b[0] != 3*us || g.LongFrom() != 1 || g.Class(2999) != 0 || g.Class(3*us) != 1 {
		t.Errorf("2 classes: bounds %v long from %d", b, g.LongFrom())
	}
	// Default break-even without t_s: 2 × t_w.
	g = mustNGram(t, Config{Kind: KindNGram, WakeTime: Duration(4480)})
	if b := g.Bounds(); b[1] != 8960 {
		t.Errorf("default break_even = %v, want 8.96µs", b[1])
	}
}

// TestNGramBreakEvenWakeCost: the default break-even is t_s + t_w of the
// wake a long period pays — in hybrid mode Deep Sleep's, not Fast Wake's —
// and an explicit ngram.break_even wins. eee-400g: Fast Wake t_s 200 ns,
// t_w 375 ns; Deep Sleep t_s 2 µs, t_w 4.48 µs.
func TestNGramBreakEvenWakeCost(t *testing.T) {
	hybrid := HybridConfig{DeepWakeTime: 4480, FastWakePower: 0.4, DeepSleepPower: 0.1}
	for _, c := range []struct {
		name string
		cfg  Config
		want time.Duration
	}{
		{"deep sleep", Config{WakeTime: 4480, SleepTime: 2000}, 6480},
		{"fast wake", Config{WakeTime: 375, SleepTime: 200}, 575},
		// Before: 2 × 375 ns = 750 ns, so nearly every gap was "long".
		{"hybrid: Deep Sleep's t_w", Config{WakeTime: 375, SleepTime: 200, Hybrid: hybrid}, 4680},
		{"hybrid, t_s unknown", Config{WakeTime: 375, Hybrid: hybrid}, 8960},
		{"explicit", Config{WakeTime: 375, SleepTime: 200, Hybrid: hybrid, NGram: NGramConfig{BreakEven: 3000}}, 3000},
	} {
		c.cfg.Kind = KindNGram
		g := mustNGram(t, c.cfg)
		if b := g.Bounds(); b[1] != c.want || b[0] != c.cfg.WakeTime.D() {
			t.Errorf("%s: bounds %v, want [%v %v]", c.name, b, c.cfg.WakeTime.D(), c.want)
		}
	}
	if _, err := New(Config{Kind: KindNGram, WakeTime: 375, SleepTime: -1}); err == nil || !strings.Contains(err.Error(), "predictor.sleep_time") {
		t.Errorf("negative sleep_time: %v", err)
	}
}

// TestNGramBigram follows n = 1 (the context is the previous class),
// min_count 2 and confidence 0.6 through a hand-computed sequence. Rows are
// the counts of the successors of the context [S M L].
func TestNGramBigram(t *testing.T) {
	g := mustNGram(t, ngramConfig(1, 2, 0.6))
	steps := []struct {
		gap     time.Duration
		want    time.Duration
		comment string
	}{
		{gS, 500, "S: first period, no context yet counted; row S empty → PerfBound"},
		{gL, 500, "L: S→L = 1; row L empty → PerfBound"},
		{gS, 500, "S: L→S = 1; row S [0 0 1]: 1 < min_count → PerfBound"},
		{gL, 500, "L: S→L = 2; row L [1 0 0] → PerfBound"},
		{gS, 0, "S: L→S = 2; row S [0 0 2]: L, 2 ≥ 2, 2/2 ≥ 0.6 → sleep at once"},
		{gL, 100 * us, "L: S→L = 3; row L [2 0 0]: S → stay awake (h_maxval)"},
		{gS, 0, "S: L→S = 3; row S [0 0 3] → 0"},
		{gS, 0, "S: S→S = 1; row S [1 0 3]: 3 ≥ 0.6×4 → 0"},
		{gM, 500, "M: S→M = 1; row M empty → PerfBound"},
		{gL, 100 * us, "L: M→L = 1; row L [3 0 0] → awake"},
		{gS, 0, "S: L→S = 4; row S [1 1 3]: 3 ≥ 0.6×5 (equal passes) → 0"},
		{gS, 500, "S: S→S = 2; row S [2 1 3]: 3 < 0.6×6 → PerfBound"},
	}
	var now time.Duration
	for i, s := range steps {
		now = feed(g, now, s.gap)
		if got := g.Predict(time.Second); got != s.want {
			t.Errorf("step %d (%s): t_PDT %v, want %v", i+1, s.comment, got, s.want)
		}
	}
}

// TestNGramTrigramPattern: the repeating pattern S S L needs two classes of
// context. With n = 2 and the defaults (min_count 3, confidence 0.9) the
// first confident decision follows the 11th period: contexts (S,S)→L,
// (S,L)→S and (L,S)→S are counted once per cycle from the 3rd period, and
// (S,S) reaches 3 at period 9, (S,L) at 10, (L,S) at 11 — paper 003's
// "three appearances predict the fourth". With n = 1, S is followed by S
// and L equally often (50 % < 90 %): only L → S is ever confident.
func TestNGramTrigramPattern(t *testing.T) {
	pattern := []time.Duration{gS, gS, gL}
	tests := []struct {
		n    int
		want []time.Duration // decision after each period, periods 1..15
	}{
		{2, []time.Duration{
			500, 500, 500, 500, 500, 500, 500, 500, 500, 500, // until (L,S) holds 3 after period 11
			0,        // 11: context (S,S) → L (3 counts)
			100 * us, // 12: (S,L) → S
			100 * us, // 13: (L,S) → S
			0,        // 14: (S,S) → L
			100 * us, // 15: (S,L) → S
		}},
		{1, []time.Duration{
			// Row S: S→S and S→L one each per cycle, never 90 %; row L:
			// L→S counted at periods 4, 7, 10, 13, so from period 12 (3
			// counts) context L answers stay awake.
			500, 500, 500, 500, 500, 500, 500, 500, 500, 500, 500,
			100 * us, // 12
			500, 500,
			100 * us, // 15
		}},
	}
	for _, tc := range tests {
		g := mustNGram(t, ngramConfig(tc.n, 0, 0))
		var now time.Duration
		for i := range 15 {
			now = feed(g, now, pattern[i%3])
			if got := g.Predict(time.Second); got != tc.want[i] {
				t.Errorf("n=%d period %d: t_PDT %v, want %v", tc.n, i+1, got, tc.want[i])
			}
		}
	}
}

// TestNGramHashedReplacement: one hashed slot (K^n = 2 > table_size 1), so
// every context competes for it and a new one takes it over, clearing the
// counts. Two classes (S < 3µs ≤ L), n = 1, min_count 1, confidence 0.5.
func TestNGramHashedReplacement(t *testing.T) {
	cfg := ngramConfig(1, 1, 0.5)
	cfg.NGram.Classes, cfg.NGram.TableSize = 2, 1
	g := mustNGram(t, cfg)
	if e, hashed := g.Entries(); e != 1 || !hashed {
		t.Fatalf("entries %d hashed %v", e, hashed)
	}
	steps := []struct {
		gap     time.Duration
		want    time.Duration
		comment string
	}{
		{gS, 500, "S: nothing counted; slot empty → PerfBound"},
		{gS, 100 * us, "S: S takes the slot, S→S = 1; context S found: S → awake"},
		{gL, 500, "L: S→L = 1 ([1 1]); context L is not in the slot → PerfBound"},
		{gS, 500, "S: L takes the slot (cleared), L→S = 1; context S not in it → PerfBound"},
		{gL, 500, "L: S takes the slot back, S→L = 1; context L not in it → PerfBound"},
		{gL, 0, "L: L takes the slot, L→L = 1; context L found: L → sleep at once"},
	}
	var now time.Duration
	for i, s := range steps {
		now = feed(g, now, s.gap)
		if got := g.Predict(time.Second); got != s.want {
			t.Errorf("step %d (%s): t_PDT %v, want %v", i+1, s.comment, got, s.want)
		}
	}
}

// TestNGramCounterAging: an 8-bit counter that would pass 255 halves its
// row first, so an old majority fades: 255 × S→S, then S→L 200 times:
// at the 256th S the row [255 0] halves to [127 0] and counts 128; then
// L's 200 against S's 128.
func TestNGramCounterAging(t *testing.T) {
	cfg := ngramConfig(1, 1, 0.6)
	cfg.NGram.Classes = 2
	g := mustNGram(t, cfg)
	var now time.Duration
	for range 257 { // 256 counts S→S
		now = feed(g, now, gS)
	}
	i, _ := g.slot()
	if row := g.counts[i*2 : i*2+2]; row[0] != 128 || row[1] != 0 {
		t.Fatalf("after 256 S→S: row %v, want [128 0]", row)
	}
	// Alternate L, S: each L is counted after context S (S→L), each S after L.
	for range 200 {
		now = feed(g, now, gL, gS)
	}
	if row := g.counts[i*2 : i*2+2]; row[0] != 128 || row[1] != 200 {
		t.Fatalf("row %v, want [128 200]", row)
	}
	// Context S: L holds 200/328 = 0.61 ≥ 0.6 → sleep at once.
	if got := g.Predict(time.Second); got != 0 {
		t.Errorf("t_PDT %v, want 0", got)
	}
}

func TestNGramStateBytes(t *testing.T) {
	// Defaults: K = 3, n = 2: a direct table of 9 entries × 3 counters, a
	// context of ⌈2·2/8⌉ = 1 byte; clearing PerfBound with one bin: 4.
	g := mustNGram(t, Config{Kind: KindNGram, WakeTime: Duration(us)})
	feed(g, 0, gS)
	if e, hashed := g.Entries(); e != 9 || hashed {
		t.Errorf("entries %d hashed %v, want 9 direct", e, hashed)
	}
	if got := g.StateBytes(); got != 4+27+1 {
		t.Errorf("default: %d bytes, want 4 + 27 + 1", got)
	}
	// Hashed: K = 8, n = 4 (4096 > 256): 256 × (8 counters + a tag of
	// ⌈4·3/8⌉ = 2 bytes) + the 2-byte context, empty histogram.
	cfg := Config{Kind: KindNGram, WakeTime: Duration(us), NGram: NGramConfig{N: 4, Classes: 8}}
	g = mustNGram(t, cfg)
	if got := g.StateBytes(); got != 256*(8+2)+2 {
		t.Errorf("hashed: %d bytes, want %d", got, 256*10+2)
	}
}

// TestNGramFallbackLearns: PerfBound sees every period, also those the
// table decided, so its answer is the one a PerfBound fed the same periods
// gives.
func TestNGramFallbackLearns(t *testing.T) {
	cfg := ngramConfig(2, 0, 0)
	g := mustNGram(t, cfg)
	pbCfg := cfg
	pbCfg.Kind = KindPerfBound
	pb, _ := New(pbCfg)
	gaps := []time.Duration{gS, gS, gL, gS, gS, gL, 40 * us, 2 * us}
	feed(g, 0, gaps...)
	feed(pb, 0, gaps...)
	if g.PerfBound().Records() != len(gaps) || g.PerfBound().Predict(100*us) != pb.Predict(100*us) {
		t.Errorf("fallback %v records %d, PerfBound %v", g.PerfBound().Predict(100*us), g.PerfBound().Records(), pb.Predict(100*us))
	}
	g.ObserveHops(4, 10)
	if l := g.PerfBound().HopFactor(); l != 0.25 {
		t.Errorf("hop factor %v, want 0.25", l)
	}
}

func TestNewKindsConfigErrors(t *testing.T) {
	ng := func(c NGramConfig) Config { return Config{Kind: KindNGram, WakeTime: Duration(us), NGram: c} }
	tests := []struct {
		cfg  Config
		want string
	}{
		{ng(NGramConfig{N: 16}), "predictor.ngram.n: must be in 1..15, got 16"},
		{ng(NGramConfig{N: -1}), "predictor.ngram.n"},
		{ng(NGramConfig{Classes: 1}), "predictor.ngram.classes: must be in 2..16, got 1"},
		{ng(NGramConfig{Classes: 17}), "predictor.ngram.classes"},
		{ng(NGramConfig{TableSize: 1<<16 + 1}), "predictor.ngram.table_size"},
		{ng(NGramConfig{Confidence: 1.5}), "predictor.ngram.confidence: must be in (0, 1], got 1.5"},
		{ng(NGramConfig{Confidence: math.NaN()}), "predictor.ngram.confidence"},
		{ng(NGramConfig{MinCount: 256}), "predictor.ngram.min_count: must be in 1..255, got 256"},
		{ng(NGramConfig{BreakEven: Duration(20 * time.Millisecond)}), "predictor.ngram.break_even: 20ms is above histogram.max_value (10ms)"},
		{ng(NGramConfig{BreakEven: Duration(us)}), "predictor.ngram.break_even: 1µs must be above wake_time (1µs)"},
		{Config{Kind: KindNGram}, "predictor.wake_time"},
		{Config{Kind: KindNGram, WakeTime: 1, Bound: 3}, "predictor.bound"},
		{Config{Kind: KindPerfBoundCorrectWeighted, WakeTime: 1, Decay: 1.01}, "predictor.decay: must be in (0, 1]"},
		{Config{Kind: KindPerfBoundCorrectWeighted, WakeTime: 1, Decay: -0.5}, "predictor.decay"},
		{Config{Kind: KindPerfBoundCorrectWeighted, WakeTime: 1, History: -1}, "predictor.history"},
	}
	for _, tc := range tests {
		_, err := New(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want error containing %q", tc.cfg, err, tc.want)
		}
	}
	// Two classes need no class between t_w and the break-even.
	if _, err := New(ng(NGramConfig{Classes: 2, BreakEven: Duration(us)})); err != nil {
		t.Errorf("2 classes, break_even = t_w: %v", err)
	}
	// Keys of other kinds are ignored, as for the existing kinds.
	if _, err := New(Config{Kind: KindPerfBound, WakeTime: 1, Decay: 7, NGram: NGramConfig{N: 99}}); err != nil {
		t.Errorf("perfbound ignores decay and ngram: %v", err)
	}
	for _, s := range []string{"ngram", "NGram", " perfboundcorrect-weighted"} {
		if _, err := ParseKind(s); err != nil {
			t.Errorf("ParseKind(%q): %v", s, err)
		}
	}
}

// TestNGramBreakEvenFromLateWakeTime: a configuration defaulted before t_w
// was known (the agent fills t_w per port afterwards) derives the
// break-even from the t_w it ends up with.
func TestNGramBreakEvenFromLateWakeTime(t *testing.T) {
	cfg := Config{Kind: KindNGram}.WithDefaults()
	cfg.WakeTime = Duration(us)
	g := mustNGram(t, cfg)
	if b := g.Bounds(); b[0] != us || b[1] != 2*us {
		t.Errorf("bounds %v, want [1µs 2µs]", b)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}
