package simbackend_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/lpictl/lpictl/agent"
	"github.com/lpictl/lpictl/agent/simbackend"
)

// small is the quick scenario on a 20-node Megafly: 2 ms of on/off traffic
// that simulates in a few tens of ms.
var small = []string{"topology.radix=4"}

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func newBackend(t *testing.T, loop bool, speed float64) (*simbackend.Backend, *fakeClock) {
	t.Helper()
	c := &fakeClock{t: time.Unix(0, 0)}
	b, err := simbackend.New(simbackend.Options{Scenario: "../../configs/sim/quick.yaml", Sets: small, Speed: speed, Loop: loop,
		Clock: c.now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b, c
}

func open(t *testing.T, b *simbackend.Backend, name string) agent.Port {
	t.Helper()
	ctx := context.Background()
	ports, err := b.Ports(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range ports {
		if in.Name == name {
			p, err := b.Open(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
	}
	t.Fatalf("no port %s", name)
	return nil
}

// stepAll advances the fake clock by step, steps times, and returns the
// port's observations, checking that they are well formed and in order.
func stepAll(t *testing.T, b *simbackend.Backend, c *fakeClock, p agent.Port, step time.Duration, steps int) []agent.Observation {
	t.Helper()
	var all []agent.Observation
	buf := make([]agent.Observation, 1<<16)
	last := b.Now()
	for range steps {
		c.t = c.t.Add(step)
		if err := b.Step(context.Background()); err != nil {
			t.Fatal(err)
		}
		n, _ := p.Drain(buf)
		for _, o := range buf[:n] {
			if !o.MissedKnown || o.Length < 0 || o.End > b.Now() || o.End < last || o.PDT <= 0 {
				t.Fatalf("bad observation %+v after %v, now %v", o, last, b.Now())
			}
			all = append(all, o)
		}
		last = b.Now()
	}
	return all
}

func TestPortsAreTheNetworks(t *testing.T) {
	b, _ := newBackend(t, true, 1)
	ports, _ := b.Ports(context.Background())
	if len(ports) != 2*50 { // both ends of the 20-node Megafly's 50 links
		t.Errorf("%d ports", len(ports))
	}
	first := ports[0]
	if first.Name != "node0" || first.Driver != "nic" || first.WakeTime <= 0 || len(first.Hops) == 0 || !first.CanSet {
		t.Fatalf("first port %+v", first)
	}
	roles := map[string]bool{}
	for _, in := range ports {
		roles[in.Driver] = true
	}
	if !roles["leaf"] || !roles["spine"] {
		t.Errorf("drivers %v", roles)
	}
	if _, err := b.Open(context.Background(), agent.PortInfo{Name: "eth0"}); err == nil {
		t.Error("opened a port that does not exist")
	}
}

// run opens node0, sets t_PDT and advances 10 ms of simulated time (five
// runs of the scenario) on a fake clock.
func run(t *testing.T, pdt time.Duration) (obs []agent.Observation, misses int, lowPower time.Duration) {
	t.Helper()
	b, c := newBackend(t, true, 1)
	p := open(t, b, "node0")
	if st, _ := p.EEE(context.Background()); st.TxLPITimer != 10*time.Microsecond || !st.Enabled {
		t.Fatalf("initial EEE state %+v, want the scenario's initial 10µs", st)
	}
	if _, err := p.SetPDT(context.Background(), pdt); err != nil {
		t.Fatal(err)
	}
	obs = stepAll(t, b, c, p, time.Millisecond, 10)
	if b.Now() != 10*time.Millisecond {
		t.Fatalf("now %v after 10 ms at speed 1", b.Now())
	}
	for _, o := range obs {
		if o.Missed {
			misses++
		}
	}
	cnt, _ := p.Counters(context.Background())
	return obs, misses, cnt.LowPowerTime
}

func TestSimPortsFollowPDT(t *testing.T) {
	o1, m1, low1 := run(t, time.Microsecond)
	o2, m2, low2 := run(t, 10*time.Millisecond)
	t.Logf("pdt 1µs: %d periods, %d misses, %v low; pdt 10ms: %d periods, %d misses, %v low", len(o1), m1, low1, len(o2), m2, low2)
	if len(o1) < 50 || len(o2) < 50 {
		t.Fatal("too few idle periods")
	}
	// The leaf's end of the link still sleeps after its own t_PDT when it
	// transmitted last, so t_PDT 10 ms does not remove every miss.
	if m1 <= m2 || low1 <= low2 {
		t.Errorf("a shorter t_PDT should sleep more and miss more")
	}
	pdts := map[time.Duration]int{}
	for _, o := range o1 {
		pdts[o.PDT]++
	}
	if pdts[time.Microsecond] < len(o1)-1 {
		t.Errorf("t_PDT in force %v, want 1µs (but the first period)", pdts)
	}
	// Loop: the scenario's 2 ms ran five times; the observations go on.
	if last := o1[len(o1)-1].End; last < 8*time.Millisecond {
		t.Errorf("last idle period ended at %v: the scenario did not loop", last)
	}
	again, _, _ := run(t, time.Microsecond)
	if !reflect.DeepEqual(o1, again) {
		t.Error("the same scenario, clock and t_PDT gave other idle periods")
	}
}

func TestNoLoopIdles(t *testing.T) {
	b, c := newBackend(t, false, 1)
	p := open(t, b, "sw0p0")
	obs := stepAll(t, b, c, p, time.Millisecond, 5)
	if len(obs) == 0 {
		t.Fatal("no idle periods")
	}
	if last := obs[len(obs)-1].End; last > 2100*time.Microsecond {
		t.Errorf("idle period at %v after the 2 ms workload", last)
	}
	c1, _ := p.Counters(context.Background())
	stepAll(t, b, c, p, time.Millisecond, 1)
	c2, _ := p.Counters(context.Background())
	if b.Now() != 6*time.Millisecond || c2.LowPowerTime != c1.LowPowerTime+time.Millisecond {
		t.Errorf("idle network: now %v, low power %v then %v", b.Now(), c1.LowPowerTime, c2.LowPowerTime)
	}
}

func TestHopsAndClose(t *testing.T) {
	b, c := newBackend(t, true, 1)
	p := open(t, b, "node3")
	stepAll(t, b, c, p, time.Millisecond, 1)
	var pkts uint64
	p.Hops(func(h int, n uint64) {
		if h < 1 || h > 5 {
			t.Errorf("%d hops", h)
		}
		pkts += n
	})
	if pkts == 0 {
		t.Error("no hop counts")
	}
	p.Hops(func(int, uint64) { t.Error("hops reported twice") })
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	// Reopened: the port starts from the value in force again.
	p = open(t, b, "node3")
	stepAll(t, b, c, p, time.Millisecond, 1)
}

// TestSlowSimulationDoesNotBlock: a Step gives up after its budget and
// the lag is not caught up later.
func TestSlowSimulationDoesNotBlock(t *testing.T) {
	c := &fakeClock{t: time.Unix(0, 0)}
	tick := func() time.Time { c.t = c.t.Add(time.Millisecond); return c.t } // every look costs 1 ms
	b, err := simbackend.New(simbackend.Options{Scenario: "../../configs/sim/quick.yaml", Sets: small, Speed: 1000, Loop: true,
		StepBudget: 5 * time.Millisecond, Clock: tick})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	start := time.Now()
	for range 3 {
		if err := b.Step(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("3 steps took %v", el)
	}
	if now := b.Now(); now <= 0 || now >= time.Second {
		t.Errorf("now %v: want some progress and no catching up", now)
	}
}
