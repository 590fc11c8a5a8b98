package plot

import (
	"strings"
	"testing"

	gplot "gonum.org/v1/plot"
)

func TestZeroPosition(t *testing.T) {
	tests := []struct {
		xs   []float64
		want float64
		ok   bool
	}{
		{[]float64{0, 1e-8, 1e-6, 1}, 1e-9, true}, // 10ns → 0 drawn at 1ns
		{[]float64{1, 0, 3e-6}, 3e-7, true},       // one decade left of 3µs
		{[]float64{100, 20, 0}, 2, true},          // plain numbers
		{[]float64{0, 0}, 0, false},               // nothing positive
		{nil, 0, false},
	}
	for _, tc := range tests {
		got, ok := zeroPosition(tc.xs)
		if ok != tc.ok || !near(got, tc.want) {
			t.Errorf("zeroPosition(%v) = %v %v, want %v %v", tc.xs, got, ok, tc.want, tc.ok)
		}
	}
}

func TestLogAxisZero(t *testing.T) {
	x := &xAxis{scale: xDuration, log: true}
	x.setup([]float64{0, 1e-8, 1e-6, 1e-4, 1, 0})
	if !near(x.zero, 1e-9) || x.place(0) != x.zero || x.place(1e-6) != 1e-6 {
		t.Fatalf("zero at %v, place(0) = %v", x.zero, x.place(0))
	}
	ticks := logTicks{zero: x.zero, duration: true, labelAt: x.labelAt}.Ticks(1e-9, 1)
	labels := map[string]float64{}
	for _, tk := range ticks {
		if tk.Value > x.zero*1.0001 && tk.Value < 1e-8*0.9999 {
			t.Errorf("tick at %v between the 0 position and 10ns", tk.Value)
		}
		if tk.Label != "" {
			labels[tk.Label] = tk.Value
		}
	}
	want := map[string]float64{"0": 1e-9, "10ns": 1e-8, "1µs": 1e-6, "100µs": 1e-4, "1s": 1}
	if len(labels) != len(want) {
		t.Errorf("labels %v, want %v", labels, want)
	}
	for l, v := range want {
		if got, ok := labels[l]; !ok || !near(got, v) {
			t.Errorf("label %q at %v, want %v", l, got, v)
		}
	}
	// More values than maxLabels: decades are labelled instead.
	many := []float64{0}
	for v := 1e-9; v <= 1; v *= 10 {
		many = append(many, v)
	}
	y := &xAxis{scale: xDuration, log: true}
	y.setup(many)
	if y.labelAt != nil || !near(y.zero, 1e-10) {
		t.Errorf("labelAt = %v, zero = %v; want decades and 0.1ns", y.labelAt, y.zero)
	}
}

func TestLogTicksLabels(t *testing.T) {
	tests := []struct {
		lo, hi float64
		want   string
	}{
		{1e-3, 1e3, "0.001 0.01 0.1 1 10 100 1000"}, // decades only
		{0.01, 0.5, "0.01 0.02 0.05 0.1 0.2 0.5"},   // 50×: 1, 2, 5
		{2, 9, "2 3 4 5 6 7 8 9"},                   // < 10×: every multiple
	}
	for _, tc := range tests {
		var got []string
		for _, tk := range (logTicks{}).Ticks(tc.lo, tc.hi) {
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("logTicks(%v, %v) labels %q, want %q", tc.lo, tc.hi, got, tc.want)
		}
	}
}

func TestFormatSeconds(t *testing.T) {
	tests := map[float64]string{
		0: "0", 1e-9: "1ns", 1e-8: "10ns", 1e-6: "1µs", 1e-4: "100µs",
		2.5e-3: "2.5ms", 1: "1s", 100: "100s", 1.5e-10: "0.15ns",
	}
	for v, want := range tests {
		if got := formatSeconds(v); got != want {
			t.Errorf("formatSeconds(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestParseSeconds(t *testing.T) {
	tests := map[string]float64{"0": 0, "10ns": 1e-8, "1us": 1e-6, "1µs": 1e-6, "1μs": 1e-6, "100ms": 0.1, "1s": 1, "2500": 2.5e-6}
	for s, want := range tests {
		got, err := parseSeconds(s)
		if err != nil || !near(got, want) {
			t.Errorf("parseSeconds(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	if _, err := parseSeconds("fast"); err == nil {
		t.Error(`parseSeconds("fast"): no error`)
	}
}

func TestParseBound(t *testing.T) {
	tests := map[string]float64{"0.01": 1, "0.02": 2, "0.025": 2.5, "5%": 5, " 10 %": 10}
	for s, want := range tests {
		got, err := parseBound(s)
		if err != nil || !near(got, want) {
			t.Errorf("parseBound(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
}

func TestNiceTicks(t *testing.T) {
	labelled := func(ts []gplot.Tick) string {
		var out []string
		for _, tk := range ts {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return strings.Join(out, " ")
	}
	tests := []struct {
		lo, hi float64
		want   string
	}{
		{0, 83, "0 20 40 60 80 100"},                          // 83/6 ≈ 13.8 → step 20
		{-8.7, 10.5, "-10 -5 0 5 10 15"},                      // 19.2/6 = 3.2 → step 5
		{0.0100, 0.0181, "0.01 0.012 0.014 0.016 0.018 0.02"}, // step 0.002
		{0, 12, "0 2 4 6 8 10 12"},                            // step 2: 6 steps
		{5, 5, "4 4.5 5 5.5 6"},                               // a flat series gets ±1
	}
	for _, tc := range tests {
		if got := labelled(niceTicks{}.Ticks(tc.lo, tc.hi)); got != tc.want {
			t.Errorf("niceTicks(%v, %v) = %q, want %q", tc.lo, tc.hi, got, tc.want)
		}
	}
}
