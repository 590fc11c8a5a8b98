package simbackend_test

import (
	"context"
	"testing"
	"time"

	"github.com/lpictl/lpictl/agent"
	"github.com/lpictl/lpictl/agent/simbackend"
)

// run opens node0 of the quick scenario, sets t_PDT and advances 20 ms of
// simulated time on a fake clock; it returns the idle periods and misses.
func run(t *testing.T, pdt time.Duration) (periods, misses int, lowPower time.Duration) {
	t.Helper()
	now := time.Unix(0, 0)
	b, err := simbackend.New(simbackend.Options{Scenario: "../../configs/sim/quick.yaml", Speed: 1, Loop: true,
		Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ports, _ := b.Ports(ctx)
	if len(ports) == 0 || ports[0].Name != "node0" || ports[0].WakeTime <= 0 || len(ports[0].Hops) == 0 {
		t.Fatalf("ports %+v", ports[:1])
	}
	p, err := b.Open(ctx, ports[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.SetPDT(ctx, pdt); err != nil {
		t.Fatal(err)
	}
	buf := make([]agent.Observation, 1<<16)
	for i := 0; i < 20; i++ {
		now = now.Add(time.Millisecond)
		if err := b.Step(ctx); err != nil {
			t.Fatal(err)
		}
		n, _ := p.Drain(buf)
		for _, o := range buf[:n] {
			if !o.MissedKnown || o.Length < 0 || o.End > b.Now() {
				t.Fatalf("bad observation %+v at %v", o, b.Now())
			}
			periods++
			if o.Missed {
				misses++
			}
		}
	}
	c, _ := p.Counters(ctx)
	return periods, misses, c.LowPowerTime
}

func TestSimPortsFollowPDT(t *testing.T) {
	n1, m1, low1 := run(t, time.Microsecond)
	n2, m2, low2 := run(t, 10*time.Millisecond)
	t.Logf("pdt 1µs: %d periods, %d misses, %v low; pdt 10ms: %d periods, %d misses, %v low", n1, m1, low1, n2, m2, low2)
	if n1 == 0 || n2 == 0 {
		t.Fatal("no idle periods")
	}
	if m1 <= m2 || low1 <= low2 {
		t.Errorf("a shorter t_PDT should sleep more and miss more")
	}
	// Only the first idle period (armed with the port's initial 10µs) may miss.
	if m2 > 1 {
		t.Errorf("t_PDT 10ms above every gap still missed %d times", m2)
	}
}
