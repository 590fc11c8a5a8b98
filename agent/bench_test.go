package agent_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/lpictl/lpictl/agent"
	"github.com/lpictl/lpictl/predictor"
)

func benchConfig(b *testing.B, n int) (agent.Config, *fakeBackend) {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("eth%d", i)
	}
	be := newFake(names...)
	c := agent.Config{Mode: agent.Enforce, StateDir: b.TempDir(), Interval: predictor.Duration(100 * time.Millisecond)}
	c.Metrics.Listen = agent.MetricsOff
	c.Ports.Names = []string{"eth*"}
	c.Predictor = predictor.Config{Kind: predictor.KindPerfBoundCorrect}
	return c.WithDefaults(), be
}

// BenchmarkAgent64Ports runs the real agent loop on 64 ports at the default
// 100 ms decision interval for 5 s of wall-clock time per iteration; every
// port reports one idle period per millisecond (64 000 per second in all).
// It reports the agent's CPU use (% of one core) and peak RSS.
func BenchmarkAgent64Ports(b *testing.B) {
	for i := 0; i < b.N; i++ {
		cfg, be := benchConfig(b, 64)
		a, err := agent.New(agent.Options{Config: cfg, Backend: be})
		if err != nil {
			b.Fatal(err)
		}
		var before, after syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &before)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		start := time.Now()
		if err := a.Run(ctx, nil); err != nil {
			b.Fatal(err)
		}
		wall := time.Since(start)
		cancel()
		syscall.Getrusage(syscall.RUSAGE_SELF, &after)
		cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
		b.ReportMetric(100*cpu.Seconds()/wall.Seconds(), "cpu-%")
		b.ReportMetric(float64(after.Maxrss)/1024, "maxrss-MiB")
	}
}

// BenchmarkRound64Ports measures one decision round over 64 ports, each
// with 100 new idle periods (100 ms at one per millisecond).
func BenchmarkRound64Ports(b *testing.B) {
	cfg, be := benchConfig(b, 64)
	a, err := agent.New(agent.Options{Config: cfg, Backend: be})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	agent.ExportSync(a, ctx)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		be.mu.Lock()
		for _, p := range be.ports {
			p.lastObs = time.Since(be.start) - 100*time.Millisecond
		}
		be.mu.Unlock()
		agent.ExportTick(a, ctx)
	}
}
