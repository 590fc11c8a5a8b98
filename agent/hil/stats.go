package hil

import (
	"math"
	"slices"
	"time"
)

// Dist summarises a sample of durations in seconds: Mean and Max exact,
// P50 and P99 the ⌊q·(n−1)⌋-th smallest (as the simulator's latency).
type Dist struct {
	Count int     `json:"count"`
	Mean  float64 `json:"mean_s"`
	P50   float64 `json:"p50_s"`
	P99   float64 `json:"p99_s"`
	Max   float64 `json:"max_s"`
}

// NewDist summarises samples (sorting them).
func NewDist(samples []time.Duration) Dist {
	d := Dist{Count: len(samples)}
	if len(samples) == 0 {
		return d
	}
	slices.Sort(samples)
	var sum float64
	for _, s := range samples {
		sum += s.Seconds()
	}
	at := func(q float64) float64 { return samples[int(q*float64(len(samples)-1))].Seconds() }
	d.Mean, d.P50, d.P99, d.Max = sum/float64(len(samples)), at(0.5), at(0.99), samples[len(samples)-1].Seconds()
	return d
}

// overheadPct is 100·(x − base)/base, 0 without a baseline.
func overheadPct(x, base float64) float64 {
	if !(base > 0) || math.IsNaN(x) {
		return 0
	}
	return 100 * (x - base) / base
}
