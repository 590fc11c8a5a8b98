package predictor

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// Kind names a predictor.
type Kind string

// The predictors lpictl implements.
const (
	KindFixed            Kind = "fixed"
	KindPerfBound        Kind = "perfbound"
	KindPerfBoundCorrect Kind = "perfboundcorrect"
	// KindNGram predicts the class of the next idle period from the last
	// n classes (paper 003, adapted: see NGram).
	KindNGram Kind = "ngram"
	// KindPerfBoundCorrectWeighted is PerfBoundCorrect whose correction
	// factor weighs recent outcomes more (paper 000's future work).
	KindPerfBoundCorrectWeighted Kind = "perfboundcorrect-weighted"
	// KindNextGap predicts the next gap's length from the recent context
	// and sleeps at once in the gaps predicted longest, as the budget
	// allows (see NextGap).
	KindNextGap Kind = "nextgap"
)

// Kinds lists every predictor kind, for help texts and validation.
var Kinds = []Kind{KindFixed, KindPerfBound, KindPerfBoundCorrect, KindNGram, KindPerfBoundCorrectWeighted, KindNextGap}

// Strategy is how a PerfBound histogram forgets (docs/model.md §2.2).
type Strategy string

// Histogram strategies.
const (
	// Unbounded never clears (paper 000's "regular" histogram).
	Unbounded Strategy = "unbounded"
	// Clearing empties the histogram when TTL has passed since the last
	// clear or MaxRecords values have been recorded.
	Clearing Strategy = "clearing"
	// Circular keeps the last MaxRecords values in a ring and counts
	// exactly those.
	Circular Strategy = "circular"
)

// Strategies lists every histogram strategy.
var Strategies = []Strategy{Unbounded, Clearing, Circular}

// Search is which bins PerfBound's bin search may answer (docs/model.md §2.2 step
// 3, whose two readings §2.5 names; docs/predictors.md "Bin search").
type Search string

// Bin-search readings.
const (
	// SearchPopulated: only populated bins are candidates; the answer is
	// the middle of the lowest populated bin whose count from the top is
	// ≤ N (the paper's map stores only those).
	SearchPopulated Search = "populated"
	// SearchAll: every bin is a candidate, empty ones included; the answer
	// is the middle of the lowest bin whose count from the top is ≤ N, so
	// it can be the empty bin just above a populated bin that would
	// overflow the budget.
	SearchAll Search = "all"
)

// Searches lists every bin-search reading.
var Searches = []Search{SearchPopulated, SearchAll}

// Defaults that are not in the papers (docs/model.md §2.2 "Defaults … ours").
const (
	DefaultBinWidth                 = 100 * time.Nanosecond
	DefaultMaxValue                 = 10 * time.Millisecond
	DefaultTTL                      = time.Second
	DefaultClearingRecords          = 250
	DefaultCircularRecords          = 20000
	DefaultInitialPDT               = 10 * time.Microsecond
	DefaultHistory                  = 32
	DefaultBound                    = 0.01
	DefaultCounterBytes             = 4
	DefaultElementBytes             = 4
	maxHops                         = 255
	maxBins                         = math.MaxUint32
	maxHistory                      = 1 << 20
	maxRecords                      = 1 << 24
	defaultStrategy        Strategy = Clearing
	defaultSearch          Search   = SearchAll
)

// Defaults and limits of the n-gram and recency-weighted predictors
// (docs/predictors.md says which come from papers 003 and 000).
const (
	// DefaultDecay is perfboundcorrect-weighted's weight ratio between an
	// outcome and the next newer one (ours: the paper gives none).
	DefaultDecay = 0.9
	// DefaultNGramN is the n-gram context length: paper 003's initial
	// pattern size, the bi-gram.
	DefaultNGramN = 2
	// DefaultNGramClasses: short (< t_w), break-even region, long.
	DefaultNGramClasses = 3
	// DefaultNGramTableSize bounds the n-gram table's entries (ours).
	DefaultNGramTableSize = 256
	// DefaultNGramConfidence is the share of a context's successors the
	// predicted class must hold (ours).
	DefaultNGramConfidence = 0.9
	// DefaultNGramMinCount is how often a context must have been followed
	// by the predicted class: paper 003 predicts a pattern's 4th
	// appearance after 3.
	DefaultNGramMinCount = 3
	maxNGramN            = 15 // 4 bits a class: a context fits 60 bits
	maxNGramClasses      = 16
	maxNGramTableSize    = 1 << 16
	maxNGramMinCount     = 255 // 8-bit counters
)

// Config describes a predictor. It is the `predictor:` section of every
// lpictl YAML file (lpictl predict, simulator scenarios, the agent).
// Zero values mean "default"; pointers distinguish an explicit 0.
type Config struct {
	Kind Kind `yaml:"kind" json:"kind"`
	// PDT is the fixed predictor's t_PDT; required for kind fixed.
	PDT *Duration `yaml:"pdt,omitempty" json:"pdt,omitempty"`
	// InitialPDT answers while the histogram is empty (default 10µs).
	InitialPDT *Duration `yaml:"initial_pdt,omitempty" json:"initial_pdt,omitempty"`
	// Bound is the tolerated degradation, e.g. 0.01 for 1 % (default).
	Bound float64 `yaml:"bound,omitempty" json:"bound,omitempty"`
	// WakeTime is t_w of the low-power state in use. The simulator fills it
	// from the power preset and mode; lpictl predict from its preset.
	WakeTime Duration `yaml:"wake_time,omitempty" json:"wake_time,omitempty"`
	// SleepTime is t_s of the low-power state in use (the state the mode
	// enters first), filled by the callers as WakeTime; 0 = not known. Only
	// the n-gram's default break-even reads it.
	SleepTime Duration `yaml:"sleep_time,omitempty" json:"sleep_time,omitempty"`
	// Hops is a static hop-count distribution (hops → share) used until
	// the port reports its own hop counts; none means every packet is 1 hop.
	Hops      map[int]float64 `yaml:"hops,omitempty" json:"hops,omitempty"`
	Histogram HistogramConfig `yaml:"histogram,omitempty" json:"histogram,omitempty"`
	// History is n_R, PerfBoundCorrect's outcome register length (default 32).
	History int `yaml:"history,omitempty" json:"history,omitempty"`
	// Decay is perfboundcorrect-weighted's recency weighting: an outcome
	// weighs Decay^age in the correction factor (age 0 = the newest), in
	// (0, 1]; 1 is PerfBoundCorrect exactly (default 0.9).
	Decay float64 `yaml:"decay,omitempty" json:"decay,omitempty"`
	// NGram configures kind ngram.
	NGram NGramConfig `yaml:"ngram,omitempty" json:"ngram,omitempty"`
	// NextGap configures kind nextgap.
	NextGap NextGapConfig `yaml:"nextgap,omitempty" json:"nextgap,omitempty,omitzero"`
	// Hybrid configures the hold choice of hybrid mode (perfbound,
	// perfboundcorrect and perfboundcorrect-weighted; see HoldChooser).
	// omitzero: encoding/json's omitempty keeps empty structs, and an
	// unset Hybrid must leave a config's JSON (and so sweep run ids, the
	// hash of a scenario's JSON) as it was.
	Hybrid HybridConfig `yaml:"hybrid,omitempty" json:"hybrid,omitempty,omitzero"`
}

// HybridConfig configures the hold choice of hybrid mode. Unset (DeepWakeTime 0) = not hybrid.
//
// In hybrid mode (paper 001) a port enters Fast Wake after t_PDT of
// idleness and Deep Sleep after a further hold; WakeTime is then Fast
// Wake's t_w and DeepWakeTime Deep Sleep's. The simulator and lpictl
// predict fill these from the power preset in hybrid mode.
type HybridConfig struct {
	DeepWakeTime   Duration `yaml:"deep_wake_time,omitempty" json:"deep_wake_time,omitempty"`     // t_w of Deep Sleep (WakeTime is then Fast Wake's)
	FastWakePower  float64  `yaml:"fast_wake_power,omitempty" json:"fast_wake_power,omitempty"`   // Fast Wake power / awake power, in [0,1)
	DeepSleepPower float64  `yaml:"deep_sleep_power,omitempty" json:"deep_sleep_power,omitempty"` // Deep Sleep power / awake power, in [0,1)
}

// Enabled reports whether the configuration asks for hybrid holds.
func (h HybridConfig) Enabled() bool { return h.DeepWakeTime != 0 }

// validate checks the hybrid keys against wake, the Fast Wake t_w.
func (h HybridConfig) validate(wake Duration) error {
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("predictor.hybrid.%s: %s", field, fmt.Sprintf(format, args...))
	}
	switch {
	case h.DeepWakeTime < 0:
		return bad("deep_wake_time", "must be ≥ 0 (0 = not hybrid), got %v", h.DeepWakeTime)
	case h.DeepWakeTime > 0 && wake > 0 && h.DeepWakeTime < wake:
		return bad("deep_wake_time", "%v is below wake_time (%v), Fast Wake's t_w; Deep Sleep wakes slower", h.DeepWakeTime, wake)
	case !(h.FastWakePower >= 0 && h.FastWakePower < 1):
		return bad("fast_wake_power", "must be in [0, 1) (a fraction of the awake power), got %v", h.FastWakePower)
	case !(h.DeepSleepPower >= 0 && h.DeepSleepPower < 1):
		return bad("deep_sleep_power", "must be in [0, 1) (a fraction of the awake power), got %v", h.DeepSleepPower)
	}
	return nil
}

// NGramConfig is the n-gram predictor's parameters (paper 003, adapted to
// Ethernet idle periods; docs/predictors.md).
type NGramConfig struct {
	// N is the context length: the classes of the last N idle periods
	// predict the next one's (default 2, 1..15).
	N int `yaml:"n,omitempty" json:"n,omitempty"`
	// Classes is the number of idle-period classes (default 3, 2..16).
	Classes int `yaml:"classes,omitempty" json:"classes,omitempty"`
	// TableSize bounds the table's entries: a direct table of Classes^N
	// entries when that fits, else a hashed table of TableSize entries
	// (default 256, 1..65536).
	TableSize int `yaml:"table_size,omitempty" json:"table_size,omitempty"`
	// Confidence is the share of a context's counted successors that the
	// predicted class must hold, in (0, 1] (default 0.9).
	Confidence float64 `yaml:"confidence,omitempty" json:"confidence,omitempty"`
	// MinCount is how many times the context must have been followed by
	// the predicted class (default 3, 1..255).
	MinCount int `yaml:"min_count,omitempty" json:"min_count,omitempty"`
	// BreakEven is the shortest idle period worth sleeping through at
	// once, t_s + t_w (docs/model.md §1). Default: SleepTime + the wake cost of a
	// long period — WakeTime, or in hybrid mode (Hybrid.DeepWakeTime set)
	// Deep Sleep's t_w, since a long period ends in Deep Sleep; with
	// SleepTime unknown (0), twice that wake cost (paper 003's 2·T_react:
	// equal transition times). Periods at or above it are "long".
	BreakEven Duration `yaml:"break_even,omitempty" json:"break_even,omitempty"`
}

// HistogramConfig is PerfBound's histogram management (paper 000 Table 4).
type HistogramConfig struct {
	Strategy Strategy `yaml:"strategy,omitempty" json:"strategy,omitempty"`
	// Search is the bin search's reading: all (default) or populated.
	Search   Search   `yaml:"search,omitempty" json:"search,omitempty"`
	BinWidth Duration `yaml:"bin_width,omitempty" json:"bin_width,omitempty"` // r_bin
	MaxValue Duration `yaml:"max_value,omitempty" json:"max_value,omitempty"` // h_maxval
	TTL      Duration `yaml:"ttl,omitempty" json:"ttl,omitempty"`             // TTL_hist (clearing)
	// MaxRecords is h_maxN: the clearing strategy's count trigger and the
	// circular strategy's ring size (defaults 250 and 20 000).
	MaxRecords int `yaml:"max_records,omitempty" json:"max_records,omitempty"`
	// Windows is how many clearing windows the search sees: 2 (0 means 2:
	// the last full window and the current one, so a fresh window does
	// not overspend) or 1 (the papers' self-clearing histogram: a clear
	// forgets everything).
	Windows      int `yaml:"windows,omitempty" json:"windows,omitempty"`
	CounterBytes int `yaml:"counter_bytes,omitempty" json:"counter_bytes,omitempty"` // w_counter
	ElementBytes int `yaml:"element_bytes,omitempty" json:"element_bytes,omitempty"` // s_elem
}

// WithDefaults returns cfg with every unset field filled.
func (c Config) WithDefaults() Config {
	if c.Kind == "" {
		c.Kind = KindPerfBoundCorrect
	}
	c.Kind = Kind(strings.ToLower(string(c.Kind)))
	if c.InitialPDT == nil {
		d := Duration(DefaultInitialPDT)
		c.InitialPDT = &d
	}
	if c.Bound == 0 {
		c.Bound = DefaultBound
	}
	if c.History == 0 {
		c.History = DefaultHistory
	}
	if c.Decay == 0 {
		c.Decay = DefaultDecay
	}
	g := &c.NGram
	if g.N == 0 {
		g.N = DefaultNGramN
	}
	if g.Classes == 0 {
		g.Classes = DefaultNGramClasses
	}
	if g.TableSize == 0 {
		g.TableSize = DefaultNGramTableSize
	}
	if g.Confidence == 0 {
		g.Confidence = DefaultNGramConfidence
	}
	if g.MinCount == 0 {
		g.MinCount = DefaultNGramMinCount
	}
	c.NextGap = c.NextGap.withDefaults(0, 0) // break_even: when built, from t_w and t_s
	h := &c.Histogram
	if h.Strategy == "" {
		h.Strategy = defaultStrategy
	}
	h.Strategy = Strategy(strings.ToLower(string(h.Strategy)))
	if h.Search == "" {
		h.Search = defaultSearch
	}
	h.Search = Search(strings.ToLower(string(h.Search)))
	if h.BinWidth == 0 {
		h.BinWidth = Duration(DefaultBinWidth)
	}
	if h.MaxValue == 0 {
		h.MaxValue = Duration(DefaultMaxValue)
	}
	if h.TTL == 0 {
		h.TTL = Duration(DefaultTTL)
	}
	if h.MaxRecords == 0 {
		h.MaxRecords = DefaultClearingRecords
		if h.Strategy == Circular {
			h.MaxRecords = DefaultCircularRecords
		}
	}
	if h.CounterBytes == 0 {
		h.CounterBytes = DefaultCounterBytes
	}
	if h.ElementBytes == 0 {
		h.ElementBytes = DefaultElementBytes
	}
	return c
}

// Validate reports the first invalid field as "predictor.<field>: …".
// Call it on a config with defaults filled.
func (c Config) Validate() error {
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("predictor.%s: %s", field, fmt.Sprintf(format, args...))
	}
	switch c.Kind {
	case KindFixed:
		if c.PDT == nil {
			return bad("pdt", "required for kind fixed (e.g. pdt: 10us)")
		}
		return nil
	case KindPerfBound, KindPerfBoundCorrect, KindNGram, KindPerfBoundCorrectWeighted, KindNextGap:
	default:
		return bad("kind", "unknown predictor %q (want one of %s)", c.Kind, joinKinds())
	}
	if !(c.Bound > 0 && c.Bound <= 1) {
		return bad("bound", "must be in (0, 1], got %v", c.Bound)
	}
	if c.WakeTime <= 0 {
		return bad("wake_time", "t_w must be > 0 (set it, or pick a power preset)")
	}
	if c.SleepTime < 0 {
		return bad("sleep_time", "t_s must be ≥ 0 (0 = not known), got %v", c.SleepTime)
	}
	hops := make([]int, 0, len(c.Hops))
	for h := range c.Hops {
		hops = append(hops, h)
	}
	sort.Ints(hops)
	total := 0.0
	for _, h := range hops {
		p := c.Hops[h]
		if h < 1 || h > maxHops {
			return bad("hops", "hop count %d out of range 1..%d", h, maxHops)
		}
		if !(p >= 0) || math.IsInf(p, 0) {
			return bad("hops", "share of %d hops must be ≥ 0, got %v", h, p)
		}
		total += p
	}
	if len(c.Hops) > 0 && !(total > 0) {
		return bad("hops", "shares must not all be 0")
	}
	h := c.Histogram
	switch h.Strategy {
	case Unbounded, Clearing, Circular:
	default:
		return bad("histogram.strategy", "unknown strategy %q (want unbounded, clearing or circular)", h.Strategy)
	}
	switch h.Search {
	case SearchPopulated, SearchAll:
	default:
		return bad("histogram.search", "unknown reading %q (want populated or all)", h.Search)
	}
	if h.Windows < 0 || h.Windows > 2 {
		return bad("histogram.windows", "must be 1 (the papers' clearing) or 2 (default), got %d", h.Windows)
	}
	if h.BinWidth <= 0 {
		return bad("histogram.bin_width", "must be > 0")
	}
	if h.MaxValue < h.BinWidth {
		return bad("histogram.max_value", "must be ≥ bin_width (%v), got %v", h.BinWidth, h.MaxValue)
	}
	if int64(h.MaxValue)/int64(h.BinWidth) >= maxBins {
		return bad("histogram.max_value", "max_value/bin_width must be < 2^32 bins")
	}
	if h.TTL <= 0 {
		return bad("histogram.ttl", "must be > 0")
	}
	if h.MaxRecords < 1 || h.MaxRecords > maxRecords {
		return bad("histogram.max_records", "must be in 1..%d, got %d", maxRecords, h.MaxRecords)
	}
	if h.CounterBytes < 1 || h.CounterBytes > 8 {
		return bad("histogram.counter_bytes", "must be in 1..8, got %d", h.CounterBytes)
	}
	if h.ElementBytes < 1 || h.ElementBytes > 16 {
		return bad("histogram.element_bytes", "must be in 1..16, got %d", h.ElementBytes)
	}
	if c.History < 1 || c.History > maxHistory {
		return bad("history", "n_R must be in 1..%d, got %d", maxHistory, c.History)
	}
	if c.Kind == KindPerfBoundCorrectWeighted && !(c.Decay > 0 && c.Decay <= 1) {
		return bad("decay", "must be in (0, 1] (1 is perfboundcorrect), got %v", c.Decay)
	}
	if c.Kind != KindNGram { // ngram ignores the hybrid keys (it uses the configured hold)
		if err := c.Hybrid.validate(c.WakeTime); err != nil {
			return err
		}
	}
	if c.Kind == KindNGram {
		if err := c.NGram.validate(h.MaxValue, c.WakeTime, c.breakEven()); err != nil {
			return err
		}
	}
	if c.Kind == KindNextGap {
		if err := c.NextGap.validate(); err != nil {
			return err
		}
	}
	// PerfBoundCorrect caps every answer at h_maxval and PerfBound would
	// not: an initial t_PDT above it would make them disagree.
	if c.InitialPDT != nil && *c.InitialPDT > h.MaxValue {
		return bad("initial_pdt", "%v is above histogram.max_value (%v), which caps t_PDT; set initial_pdt ≤ max_value (default %v)",
			*c.InitialPDT, h.MaxValue, Duration(DefaultInitialPDT))
	}
	return nil
}

// validate checks the n-gram keys; maxValue is h_maxval, the "stay
// awake" answer, wake is t_w, the first class boundary, and be the
// break-even in force (Config.breakEven).
func (g NGramConfig) validate(maxValue, wake, be Duration) error {
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("predictor.ngram.%s: %s", field, fmt.Sprintf(format, args...))
	}
	switch {
	case g.N < 1 || g.N > maxNGramN:
		return bad("n", "must be in 1..%d, got %d", maxNGramN, g.N)
	case g.Classes < 2 || g.Classes > maxNGramClasses:
		return bad("classes", "must be in 2..%d, got %d", maxNGramClasses, g.Classes)
	case g.TableSize < 1 || g.TableSize > maxNGramTableSize:
		return bad("table_size", "must be in 1..%d, got %d", maxNGramTableSize, g.TableSize)
	case !(g.Confidence > 0 && g.Confidence <= 1):
		return bad("confidence", "must be in (0, 1], got %v", g.Confidence)
	case g.MinCount < 1 || g.MinCount > maxNGramMinCount:
		return bad("min_count", "must be in 1..%d, got %d", maxNGramMinCount, g.MinCount)
	}
	switch {
	case be <= 0:
		return bad("break_even", "must be > 0 (t_s + t_w; default sleep_time + wake_time)")
	case be > maxValue:
		return bad("break_even", "%v is above histogram.max_value (%v), the t_PDT that keeps a port awake", be, maxValue)
	case g.Classes > 2 && be <= wake:
		return bad("break_even", "%v must be above wake_time (%v), the first class boundary, with more than 2 classes", be, wake)
	}
	return nil
}

// breakEven is the n-gram's break-even: NGram.BreakEven when set, else
// t_s + t_w of a long period (NGramConfig.BreakEven). It is derived here,
// when the predictor is validated or built, never stored by WithDefaults:
// callers fill WakeTime, SleepTime and Hybrid after defaulting (the agent
// per port), and the default must follow what they filled. 0 when t_w is
// not known yet, or on overflow (Validate then refuses it).
func (c Config) breakEven() Duration {
	if c.NGram.BreakEven != 0 {
		return c.NGram.BreakEven
	}
	wake := max(c.WakeTime, c.Hybrid.DeepWakeTime)
	if wake <= 0 {
		return 0
	}
	sleep := c.SleepTime
	if sleep <= 0 {
		sleep = wake // t_s not known: equal transition times (paper 003)
	}
	if wake > math.MaxInt64-sleep {
		return 0
	}
	return sleep + wake
}

// ParseKind reads a predictor name, case-insensitively.
func ParseKind(s string) (Kind, error) {
	k := Kind(strings.ToLower(strings.TrimSpace(s)))
	for _, known := range Kinds {
		if k == known {
			return k, nil
		}
	}
	return "", fmt.Errorf("unknown predictor %q (want one of %s)", s, joinKinds())
}

func joinKinds() string {
	s := make([]string, len(Kinds))
	for i, k := range Kinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}
