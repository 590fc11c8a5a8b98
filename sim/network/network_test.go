package network

import (
	"context"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/eee"
	"github.com/lpictl/lpictl/sim/engine"
	"github.com/lpictl/lpictl/sim/topo"
)

// line is two switches in a line, each with two nodes: nodes 0, 1 on
// switch 0 (ports 0, 1), nodes 2, 3 on switch 1; switch 0 port 2 is cabled
// to switch 1 port 2.
type line struct{}

func (line) Name() string          { return "line" }
func (line) Nodes() int            { return 4 }
func (line) Switches() int         { return 2 }
func (line) Radix(int) int         { return 3 }
func (line) SwitchRole(int) string { return "leaf" }
func (line) Links() []topo.Link {
	var l []topo.Link
	for n := 0; n < 4; n++ {
		l = append(l, topo.Link{A: topo.End{Kind: topo.NodeEnd, ID: int32(n)}, B: topo.End{Kind: topo.SwitchEnd, ID: int32(n / 2), Port: int32(n % 2)}, Class: topo.Injection})
	}
	return append(l, topo.Link{A: topo.End{Kind: topo.SwitchEnd, ID: 0, Port: 2}, B: topo.End{Kind: topo.SwitchEnd, ID: 1, Port: 2}, Class: topo.Local})
}
func (line) Attach(n int) (int, int) { return n / 2, n % 2 }
func (line) PortPeer(s, p int) (topo.End, bool) {
	if p == 2 {
		return topo.End{Kind: topo.SwitchEnd, ID: int32(1 - s), Port: 2}, true
	}
	return topo.End{Kind: topo.NodeEnd, ID: int32(2*s + p)}, true
}
func (line) Route(s, dst int) int {
	if dst/2 == s {
		return dst % 2
	}
	return 2
}
func (line) Distance(s, dst int) int {
	if dst/2 == s {
		return 1
	}
	return 2
}

const (
	ns = engine.Nanosecond
	us = engine.Microsecond
)

// table6 returns the paper's parameters (docs/model.md §3, Table 6) with the
// eee-400g preset's times, in the given mode, with a fixed t_PDT.
func table6(mode eee.Mode, pdt time.Duration) Params {
	d := predictor.Duration(pdt)
	return Params{
		RateBps: 400e9, MTU: 9600, Propagation: 10 * ns, SwitchLatency: 100 * ns, NICLatency: 100 * ns,
		QueueBytes: 49152, PFCGo: 3200, PFCStop: 37900, Speedup: 2.44, ControlBytes: 64,
		EEE:        eee.Params{Mode: mode, SleepFW: 200 * ns, WakeFW: 375 * ns, SleepDS: 2 * us, WakeDS: 4480 * ns, HybridHold: 10 * us, WakeOff: 1 * us},
		Power:      Power{WakeW: 24, FastWakeW: 9.6, DeepSleepW: 2.4, SwitchW: 250, NodeMinW: 800, NodeMaxW: 1200},
		Predictor:  predictor.Config{Kind: predictor.KindFixed, PDT: &d, WakeTime: predictor.Duration(4480 * time.Nanosecond)},
		Controller: controller.Config{},
		Queue:      engine.QueueHeap,
	}
}

func run(t *testing.T, n *Network) Result {
	t.Helper()
	if err := n.Run(context.Background(), 0, nil); err != nil {
		t.Fatal(err)
	}
	return n.Result()
}

func build(t testing.TB, tp topo.Topology, p Params) *Network {
	t.Helper()
	n, err := New(tp, p)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// perHop is serialisation + propagation + switch latency of a 9600 B
// packet at 400 Gb/s (20 ps/B): the NIC latency equals the switch latency,
// so a packet's zero-load latency is hops × perHop.
const perHop = 192*ns + 10*ns + 100*ns

func TestZeroLoadLatency(t *testing.T) {
	for _, mode := range []eee.Mode{eee.AlwaysOn, eee.DeepSleep, eee.Hybrid} {
		for _, c := range []struct{ src, dst, hops int }{{0, 1, 2}, {0, 2, 3}, {3, 0, 3}} {
			n := build(t, line{}, table6(mode, time.Millisecond))
			n.Inject(0, c.src, c.dst, 9600)
			r := run(t, n)
			want := float64(int64(c.hops)*perHop) * 1e-12
			if r.Packets != 1 || r.LatencyS.Max != want || r.LatencyS.Mean != want {
				t.Errorf("%v %d→%d: latency %v (max %v), want %v", mode, c.src, c.dst, r.LatencyS.Mean, r.LatencyS.Max, want)
			}
		}
	}
}

// TestZeroLoadLatencyMegafly checks hops × per-hop time on a small Megafly
// for pairs at 2, 3 and 5 hops.
func TestZeroLoadLatencyMegafly(t *testing.T) {
	tp, err := topo.Build(topo.Config{Kind: topo.KindMegafly, Groups: 5, Leaves: 2, Spines: 2, NodesPerSwitch: 2, GlobalLinks: 2})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for dst := 1; dst < tp.Nodes(); dst++ {
		h := topo.Hops(tp, 0, dst)
		if seen[h] {
			continue
		}
		seen[h] = true
		n := build(t, tp, table6(eee.FastWake, time.Millisecond))
		n.Inject(0, 0, dst, 9600)
		r := run(t, n)
		if want := float64(int64(h)*perHop) * 1e-12; r.LatencyS.Max != want {
			t.Errorf("0→%d (%d hops): latency %v, want %v", dst, h, r.LatencyS.Max, want)
		}
	}
	if len(seen) < 3 {
		t.Errorf("hop counts seen %v, want 2, 3 and 5", seen)
	}
}

// latencies injects messages (created at the given times, 9600 B) and
// returns each one's latency in ps (one message at a time in flight).
func latencies(t *testing.T, p Params, msgs ...[3]int64) []int64 {
	t.Helper()
	var out []int64
	for i := range msgs {
		n := build(t, line{}, p)
		for _, m := range msgs[:i+1] {
			n.Inject(m[0], int(m[1]), int(m[2]), 9600)
		}
		run(t, n)
		out = append(out, n.lastDelivery-msgs[i][0])
	}
	return out
}

func TestSleepingPortPaysWake(t *testing.T) {
	for _, c := range []struct {
		mode eee.Mode
		tw   int64
	}{{eee.FastWake, 375 * ns}, {eee.DeepSleep, 4480 * ns}, {eee.Hybrid, 4480 * ns}} {
		p := table6(c.mode, time.Microsecond)
		lat := latencies(t, p, [3]int64{0, 0, 2}, [3]int64{engine.Millisecond, 0, 2})
		if lat[0] != 3*perHop {
			t.Fatalf("%v: first latency %d", c.mode, lat[0])
		}
		if got, want := lat[1], 3*perHop+3*c.tw; got != want {
			t.Errorf("%v: latency after sleep %d ps, want %d (3 hops × (per hop + t_w))", c.mode, got, want)
		}
	}
	// Hybrid before the hold ends pays Fast Wake's t_w.
	p := table6(eee.Hybrid, time.Microsecond)
	p.EEE.HybridHold = engine.Second
	lat := latencies(t, p, [3]int64{0, 0, 2}, [3]int64{engine.Millisecond, 0, 2})
	if want := 3*perHop + 3*375*ns; lat[1] != want {
		t.Errorf("hybrid in Fast Wake: %d, want %d", lat[1], want)
	}
}

func TestGoingDownPaysRemainder(t *testing.T) {
	p := table6(eee.DeepSleep, time.Microsecond)
	H := 1280 + 10*ns // 64 B at 400 Gb/s + propagation
	ser := 192 * ns
	e := 100*ns + ser        // NIC 0's transmission ends
	down := e + us + 2*H     // both ends start going down
	at := down + us - 100*ns // the next packet reaches NIC 0's queue here: t_s remainder 1 µs
	lat := latencies(t, p, [3]int64{0, 0, 1}, [3]int64{at - 100*ns, 0, 1})
	// Hop 1 waits (down + t_s − at) + t_w; hop 2's link is asleep by then: t_w.
	want := 2*perHop + (down + 2*us - at) + 4480*ns + 4480*ns
	if lat[1] != want {
		t.Errorf("latency %d ps, want %d", lat[1], want)
	}
}

func TestHandshakeRefusal(t *testing.T) {
	p := table6(eee.DeepSleep, time.Microsecond)
	H := 1280 + 10*ns
	ser := 192 * ns
	e := 100*ns + ser // NIC 0 ends message 1 (0 → 1); it owns link 0's timer
	T := e + us       // NIC 0's timer expires; the request reaches switch 0 at T + H
	// Message 2 (1 → 0) enters switch 0's output queue toward node 0 at
	// `reach`: the peer of the timer's owner.
	create := func(reach int64) int64 { return reach - (100*ns + ser + 10*ns + 100*ns) }
	// Refused: switch 0's port is transmitting when the request arrives.
	lat := latencies(t, p, [3]int64{0, 0, 1}, [3]int64{create(T + H/2), 1, 0})
	if lat[1] != 2*perHop {
		t.Errorf("refused power-down: latency %d ps, want the zero-load %d", lat[1], 2*perHop)
	}
	// Accepted: the packet comes after the answer, while the link is
	// committed to going down: it waits until going down ends, then t_w.
	reach := T + H + ns
	lat = latencies(t, p, [3]int64{0, 0, 1}, [3]int64{create(reach), 1, 0})
	if want := 2*perHop + (T + 2*H + 2*us + 4480*ns - reach); lat[1] != want {
		t.Errorf("accepted power-down: latency %d ps, want %d", lat[1], want)
	}
}

func TestPFCLosslessOverload(t *testing.T) {
	// Incast: three nodes each send 2 MB to node 2 at once: the switch
	// link and node 2's link are overloaded three times over.
	for _, q := range []engine.QueueKind{engine.QueueHeap, engine.QueueCalendar} {
		p := table6(eee.FastWake, 100*time.Nanosecond)
		p.Queue = q
		n := build(t, line{}, p)
		for _, src := range []int{0, 1, 3} {
			for i := range 20 {
				n.Inject(int64(i)*us, src, 2, 100_000)
			}
		}
		r := run(t, n)
		want := uint64(3 * 20 * 11)
		if r.Packets != want || r.Messages != 60 || r.Dropped != 0 {
			t.Errorf("%s: delivered %d packets (want %d), %d messages, %d dropped", q, r.Packets, want, r.Messages, r.Dropped)
		}
		if r.PFCPauses == 0 {
			t.Errorf("%s: no PFC pause under 3× overload", q)
		}
	}
}

func TestUniformOverloadMegafly(t *testing.T) {
	tp, err := topo.Build(topo.Config{Kind: topo.KindMegafly, Groups: 5, Leaves: 2, Spines: 2, NodesPerSwitch: 2, GlobalLinks: 2})
	if err != nil {
		t.Fatal(err)
	}
	p := table6(eee.Hybrid, 200*time.Nanosecond)
	n := build(t, tp, p)
	attach(t, n, newOpenLoop(tp.Nodes(), 30000, 1.5, 40, 1))
	r := run(t, n)
	if want := uint64(tp.Nodes() * 40); r.Messages != want || r.Dropped != 0 || r.Packets != want*4 {
		t.Errorf("delivered %d messages / %d packets (want %d / %d), %d dropped", r.Messages, r.Packets, want, want*4, r.Dropped)
	}
	if r.PFCPauses == 0 {
		t.Error("no PFC pause at 150 % load")
	}
}

func TestEnergyIsStateTimeTimesPower(t *testing.T) {
	for _, mode := range []eee.Mode{eee.AlwaysOn, eee.FastWake, eee.DeepSleep, eee.Hybrid} {
		p := table6(mode, 500*time.Nanosecond)
		p.EEE.HybridHold = 2 * us
		p.Power.NodeUtilisation = 0.25 // no workload: every node
		n := build(t, line{}, p)
		src := newOpenLoop(4, 20000, 0.05, 0, 1)
		src.onoff(5*us, 20*us, 300*us)
		for _, m := range src.recs {
			n.Inject(m.Time, int(m.Src), int(m.Dst), m.Bytes)
		}
		r := run(t, n)
		end := n.endTime
		var links float64
		for i := range n.links {
			l := &n.links[i]
			var sum int64
			for _, v := range l.Times {
				sum += v
			}
			if sum != end {
				t.Fatalf("%v: link %d state times sum to %d ps, run is %d ps", mode, i, sum, end)
			}
			// docs/model.md §1.1: each of a link's two ports draws its state's power.
			links += 2 * (float64(l.Times[eee.Wake]+l.Times[eee.GoingDown]+l.Times[eee.GoingUp])*1e-12*24 +
				float64(l.Times[eee.LowFastWake])*1e-12*9.6 + float64(l.Times[eee.LowDeepSleep])*1e-12*2.4)
		}
		secs := float64(end) * 1e-12
		if math.Abs(r.EnergyJ.Links-links) > 1e-12*links {
			t.Errorf("%v: link energy %v, want %v", mode, r.EnergyJ.Links, links)
		}
		if want := 2 * 250 * secs; r.EnergyJ.Switches != want {
			t.Errorf("%v: switch energy %v, want %v", mode, r.EnergyJ.Switches, want)
		}
		if want := 4 * 900 * secs; math.Abs(r.EnergyJ.Nodes-want) > 1e-9*want {
			t.Errorf("%v: node energy %v, want %v", mode, r.EnergyJ.Nodes, want)
		}
		f := r.LinkStateFraction
		if s := f.Wake + f.Transition + f.FastWake + f.DeepSleep; math.Abs(s-1) > 1e-9 {
			t.Errorf("%v: state fractions sum to %v", mode, s)
		}
		if mode != eee.AlwaysOn && r.Wakeups == 0 {
			t.Errorf("%v: no wake-up", mode)
		}
		var portSum float64
		n.Ports(func(row *PortRow) { portSum += row.EnergyJ })
		if math.Abs(portSum-r.EnergyJ.Links) > 1e-9*r.EnergyJ.Links {
			t.Errorf("%v: ports' energy %v ≠ links' %v", mode, portSum, r.EnergyJ.Links)
		}
	}
}

// TestLinkPowerIsTwoPorts: a link always on draws 2 × P_wake (docs/model.md §1:
// a port, one end of a link, draws 24 W), so the links' energy over the
// run is links × 2 × 24 W × the run's time; each port's row carries half.
func TestLinkPowerIsTwoPorts(t *testing.T) {
	p := table6(eee.AlwaysOn, 0)
	n := build(t, line{}, p)
	n.Inject(0, 0, 3, 100000)
	r := run(t, n)
	secs := float64(n.endTime) * 1e-12
	if want := float64(len(n.links)) * 2 * 24 * secs; math.Abs(r.EnergyJ.Links-want) > 1e-12*want {
		t.Errorf("links' energy %v J over %v s, want %d links × 48 W = %v J", r.EnergyJ.Links, secs, len(n.links), want)
	}
	n.Ports(func(row *PortRow) {
		if want := 24 * secs; math.Abs(row.EnergyJ-want) > 1e-12*want {
			t.Errorf("port %d: %v J, want 24 W × %v s = %v J", row.Port, row.EnergyJ, secs, want)
		}
	})
}

func TestDeterminism(t *testing.T) {
	res := func(seed uint64, q engine.QueueKind) Result {
		tp, _ := topo.Build(topo.Config{Kind: topo.KindMegafly, Groups: 5, Leaves: 2, Spines: 2, NodesPerSwitch: 2, GlobalLinks: 2})
		p := table6(eee.DeepSleep, 0)
		p.Queue = q
		p.Predictor = predictor.Config{Kind: predictor.KindPerfBoundCorrect, WakeTime: predictor.Duration(4480 * time.Nanosecond)}
		n := build(t, tp, p)
		attachConfig(t, n, synthetic("uniform", 20000, 0.3, 50*time.Microsecond), seed)
		return run(t, n)
	}
	a, b := res(7, engine.QueueCalendar), res(7, engine.QueueHeap)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("same seed, different queues:\n%+v\n%+v", a, b)
	}
	if c := res(8, engine.QueueCalendar); reflect.DeepEqual(c, a) {
		t.Error("different seeds gave identical results")
	}
}

// TestPerDirectionLPI: node 1 sends to node 0 every 500 ns until 9.5 µs,
// node 0 sends once at 0 and once at 10 µs (t_PDT 1 µs, Deep Sleep). Per
// link, the reverse traffic keeps both links of node 0's path awake (the
// power-down needs both ends idle): the second message crosses at zero
// load. Per direction, node 0's and switch port 1's transmitters have been
// idle since their first packet and are low: it pays t_w on both hops. The
// reverse directions' energy: per direction each port draws its own
// transmitter's state.
func TestPerDirectionLPI(t *testing.T) {
	lat := func(lpi eee.LPI) (int64, Result, *Network) {
		p := table6(eee.DeepSleep, time.Microsecond)
		p.EEE.LPI = lpi
		n := build(t, line{}, p)
		n.Inject(0, 0, 1, 9600)
		for at := int64(0); at <= 9500*ns; at += 500 * ns {
			n.Inject(at, 1, 0, 9600)
		}
		n.Inject(10*us, 0, 1, 9600)
		r := run(t, n)
		return n.lastDelivery - 10*us, r, n
	}
	got, rl, _ := lat(eee.PerLink)
	if got != 2*perHop {
		t.Errorf("per link: latency %d ps, want zero-load %d", got, 2*perHop)
	}
	got, rd, n := lat(eee.PerDirection)
	if want := 2*perHop + 2*4480*ns; got != want {
		t.Errorf("per direction: latency %d ps, want %d (two hops × t_w)", got, want)
	}
	if rd.Links != rl.Links || rd.Links != 5 {
		t.Errorf("links %d and %d, want 5", rd.Links, rl.Links)
	}
	if rd.Wakeups != rl.Wakeups+2 || rd.LinkStateFraction.DeepSleep <= rl.LinkStateFraction.DeepSleep {
		t.Errorf("per direction: %d wake-ups, %v asleep; per link %d, %v: want 2 more wake-ups and more sleep",
			rd.Wakeups, rd.LinkStateFraction.DeepSleep, rl.Wakeups, rl.LinkStateFraction.DeepSleep)
	}
	var sum float64
	n.Ports(func(row *PortRow) { sum += row.EnergyJ })
	if math.Abs(sum-rd.EnergyJ.Links) > 1e-9*sum {
		t.Errorf("ports' energy %v ≠ links' %v", sum, rd.EnergyJ.Links)
	}
	for li := 0; li < 5; li++ {
		if e := n.LinkEnergy(li); !(e > 0) {
			t.Errorf("link %d energy %v", li, e)
		}
	}
}
