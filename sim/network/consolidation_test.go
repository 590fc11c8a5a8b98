package network

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/lpictl/lpictl/sim/eee"
	"github.com/lpictl/lpictl/sim/tcep"
	"github.com/lpictl/lpictl/sim/topo"
)

func hyperx(t testing.TB, dims []int, c int) topo.Topology {
	t.Helper()
	tp, err := topo.Build(topo.Config{Kind: topo.KindHyperX, Dims: dims, NodesPerSwitch: c})
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

type change struct {
	at   int64
	a, b int
	st   tcep.State
}

// TestTCEPTimeline: a 1-D HyperX of 4 routers (2 nodes each), links
// always on, the paper's epochs (1 µs, 10 µs), a control message of 64 B
// at 400 Gb/s plus 10 ns of cable: d = 1280 + 10000 = 11280 ps.
//
// Light traffic (node 0 → node 2, 1000 B every µs) until 39 µs. At the
// first deactivation epoch (10 µs) routers 1, 2 and 3 find an outer link
// (their highest neighbour); 2 and 3 ask for the same link 2–3 (agreed),
// 1's request to 3 is refused: 2–3 is Shadow when the ACK arrives, 10 µs
// + 2d, and Inactive one deactivation epoch later, 20 µs + 2d. At 20 µs
// and 30 µs router 1 asks for 1–3 again and 3 refuses (a shadow link;
// then with two links left, both inner in its partition).
//
// At 40 µs node 4 (switch 2) sends 100 kB to node 6 (switch 3): its
// packets (9600 B, one every 192 ns, first bit at switch 2 at 40 µs +
// 100 ns NIC + 10 ns cable; routed at their first bit) detour through an
// intermediate; by the activation tick at 41 µs five have been routed
// (48000 B: 0.96 of the epoch's 50000 B, above U_hwm = 0.75, all
// non-minimal), so router 2 asks for its
// inactive link with the highest virtual utilisation, 2–3, over two hops
// (2d), and the ACK comes back over two (2d): Active at 41 µs + 4d.
func TestTCEPTimeline(t *testing.T) {
	const d = 1280 + 10*ns
	p := table6(eee.AlwaysOn, 0)
	p.TCEP = TCEP{Enabled: true, Config: tcep.DefaultConfig()}
	n := build(t, hyperx(t, []int{4}, 2), p)
	if n.tc.ctl != d {
		t.Fatalf("control delay %d ps, want %d", n.tc.ctl, d)
	}
	var got []change
	n.tc.trace = func(at int64, si, a, b int, st tcep.State) { got = append(got, change{at, a, b, st}) }
	for i := range 39 {
		n.Inject(int64(i)*us, 0, 2, 1000)
	}
	n.Inject(40*us, 4, 6, 100_000)
	r := run(t, n)
	want := []change{
		{10*us + 2*d, 2, 3, tcep.Shadow},
		{20*us + 2*d, 2, 3, tcep.Inactive},
		{41*us + 4*d, 2, 3, tcep.Active},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("changes %+v, want %+v", got, want)
	}
	c := r.Consolidation
	if c == nil || c.Deactivations != 1 || c.Gated != 1 || c.Activations != 1 || c.Violations != 0 || c.Links != 6 {
		t.Fatalf("consolidation %+v", c)
	}
	// Requests: 3 + 3 answers + 3 broadcasts at 10 µs; 1 + 1 at 20, 30
	// and 40 µs; the activation's request, answer and 3 broadcasts.
	if c.ControlMessages != 9+6+5 {
		t.Errorf("control messages %d, want 20", c.ControlMessages)
	}
	// 11 packets of 4 → 6; those routed before 41 µs + 4d = 41.04512 µs
	// go non-minimally: first bits at 40.110 + 0.192 j µs, j = 0…4
	// (41.070 is after): 5.
	if c.NonMinimal != 5 {
		t.Errorf("non-minimal %d, want 5", c.NonMinimal)
	}
	if r.Packets != 39+11 {
		t.Errorf("packets %d", r.Packets)
	}
}

// TestTCEPOverloadInvariant: uniform traffic on a 4×4 HyperX (2 nodes a
// switch) under deep sleep, at 10 % and at 100 % offered load: every
// packet delivered, none across an inactive link, and the same seed gives
// the same JSON.
func TestTCEPOverloadInvariant(t *testing.T) {
	tp := hyperx(t, []int{4, 4}, 2)
	for _, load := range []float64{0.1, 1} {
		runOnce := func() ([]byte, Result) {
			p := table6(eee.DeepSleep, 1*time.Microsecond)
			p.TCEP = TCEP{Enabled: true, Config: tcep.DefaultConfig()}
			n := build(t, tp, p)
			attachConfig(t, n, synthetic("uniform", 9600, load, 60*time.Microsecond), 7)
			r := run(t, n)
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			return b, r
		}
		a, r := runOnce()
		c := r.Consolidation
		if c == nil || c.Violations != 0 || r.Dropped != 0 {
			t.Fatalf("load %v: consolidation %+v, dropped %d", load, c, r.Dropped)
		}
		if r.Packets == 0 {
			t.Fatalf("load %v: nothing delivered", load)
		}
		if load < 0.5 && c.Gated == 0 {
			t.Errorf("load %v: nothing gated: %+v", load, c)
		}
		t.Logf("load %v: %d packets, %+v", load, r.Packets, *c)
		if b, _ := runOnce(); !bytes.Equal(a, b) {
			t.Errorf("load %v: same seed, different JSON", load)
		}
	}
}

// TestTCEPRefusals: other topologies and other routings are refused,
// naming the key.
func TestTCEPRefusals(t *testing.T) {
	p := table6(eee.DeepSleep, 0)
	p.TCEP = TCEP{Enabled: true, Config: tcep.DefaultConfig()}
	if _, err := New(line{}, p); err == nil || err.Error() != "power.consolidation: tcep needs topology.kind hyperx or fbfly (fully connected subnetworks), not line" {
		t.Errorf("line: %v", err)
	}
	p.Routing = RoutingECMP
	if _, err := New(hyperx(t, []int{4}, 2), p); err == nil || err.Error() != "power.consolidation: tcep routes with PAL and needs routing.kind minimal, got ecmp" {
		t.Errorf("ecmp: %v", err)
	}
}
