package sched

import (
	"runtime"
	"testing"

	"github.com/lpictl/lpictl/sim/workload"
)

// ring is a schedule of n ranks passing a message of bytes round a ring
// iters times, with a calc of 100 ns after each receipt.
func ring(n, iters int, bytes int64) *Schedule {
	var s Schedule
	for r := range n {
		prev := uint32(0)
		for k := range iters {
			var deps []Dep
			if k > 0 {
				deps = []Dep{{Op: prev}}
			}
			snd := s.Add(r, Op{Kind: Send, Peer: int32((r + 1) % n), Bytes: bytes}, deps...)
			rcv := s.Add(r, Op{Kind: Recv, Peer: int32((r + n - 1) % n), Bytes: bytes}, deps...)
			prev = s.Add(r, Op{Kind: Calc, Time: 100_000}, Dep{Op: rcv}, Dep{Op: snd})
		}
	}
	return &s
}

// TestSteadyStateAllocs: replaying 120000 ops allocates only while its
// pools and the host's heap grow (a few dozen times), not per op.
func TestSteadyStateAllocs(t *testing.T) {
	for _, bytes := range []int64{1000, 100_000} { // eager, rendezvous
		s := ring(4, 10_000, bytes)
		e, err := NewExecutor(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		h := &workload.IdealHost{Latency: L}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if err := h.Run(e); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		if n := after.Mallocs - before.Mallocs; n > 200 {
			t.Errorf("%d bytes: %d allocations for %d ops, want ≤ 200", bytes, n, s.NumOps())
		}
		// Each iteration: one latency (eager) or three (rendezvous), then
		// the 100 ns calc.
		per := int64(L + 100_000)
		if bytes > DefaultEagerThreshold {
			per = 3*L + 100_000
		}
		if got, want := e.Stats().ExecTime, 10_000*per; got != want {
			t.Errorf("%d bytes: ExecTime %d, want %d", bytes, got, want)
		}
	}
}

func BenchmarkExecutor(b *testing.B) {
	s := ring(16, 1000, 1000)
	b.ReportAllocs()
	for b.Loop() {
		e, err := NewExecutor(s, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := (&workload.IdealHost{Latency: L}).Run(e); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(s.NumOps()), "ops/run")
}
