package network

import (
	"bytes"
	"encoding/json"
	"math"
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
// At 40 µs nodes 4 and 5 (switch 2) each send 100 kB to nodes 6 and 7
// (switch 3): their packets (9600 B, one every 192 ns from each NIC, first
// bits at switch 2 at 40 µs + 100 ns NIC + 10 ns cable; routed at their
// first bit) detour through intermediate 0 or 1, chosen at random per
// packet; by the activation tick at 41 µs ten have been routed, at least
// five through the same intermediate (48000 B: 0.96 of the epoch's
// 50000 B, above U_hwm = 0.75, all non-minimal), so router 2 asks for its
// inactive link with the highest virtual utilisation, 2–3, over two hops
// (2d), and the ACK comes back over two (2d): the link is switched on
// (Waking) at 41 µs + 4d and Active after the off state's wake time
// (1 µs), at 42 µs + 4d.
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
	n.Inject(40*us, 5, 7, 100_000)
	r := run(t, n)
	want := []change{
		{10*us + 2*d, 2, 3, tcep.Shadow},
		{20*us + 2*d, 2, 3, tcep.Inactive},
		{41*us + 4*d, 2, 3, tcep.Waking},
		{42*us + 4*d, 2, 3, tcep.Active},
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
	// 11 packets of 4 → 6 and 11 of 5 → 7; those routed before 42 µs +
	// 4d = 42.04512 µs (the link back from off) go non-minimally: first
	// bits at 40.110 + 0.192 j µs, j = 0…10, the last at 42.030: all 11
	// from each NIC, 22. Others may detour by PAL's adaptive choice.
	if c.NonMinimal-c.Adaptive != 22 {
		t.Errorf("non-minimal %d of which adaptive %d, want 22 not adaptive", c.NonMinimal, c.Adaptive)
	}
	if r.Packets != 39+22 {
		t.Errorf("packets %d", r.Packets)
	}
}

// TestTCEPOverloadInvariant: uniform, tornado and bit-reverse traffic on a
// 4×4 HyperX (2 nodes a switch, 32 nodes) under deep sleep, at 10 % and at
// 100 % offered load: every packet delivered (PAL's detours through any
// intermediate, its adaptive choice included, do not deadlock: the second
// hop is in the other traffic class, vc.go), none across an inactive
// link, and the same seed gives the same JSON. At 100 % the adaptive
// choice detours around Active minimal ports; at 10 % links are gated.
// Both with control messages as delays and as packets.
func TestTCEPOverloadInvariant(t *testing.T) {
	tp := hyperx(t, []int{4, 4}, 2)
	for _, ctlPackets := range []bool{false, true} {
		for _, pattern := range []string{"uniform", "tornado", "bitreverse"} {
			for _, load := range []float64{0.1, 1} {
				runOnce := func() ([]byte, Result) {
					p := table6(eee.DeepSleep, 1*time.Microsecond)
					p.TCEP = TCEP{Enabled: true, Config: tcep.DefaultConfig()}
					p.TCEP.ControlPackets = ctlPackets
					n := build(t, tp, p)
					attachConfig(t, n, synthetic(pattern, 9600, load, 60*time.Microsecond), 7)
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
					t.Fatalf("%s %v: consolidation %+v, dropped %d", pattern, load, c, r.Dropped)
				}
				if r.Packets == 0 {
					t.Fatalf("%s %v: nothing delivered", pattern, load)
				}
				if load < 0.5 && c.Gated == 0 {
					t.Errorf("%s %v: nothing gated: %+v", pattern, load, c)
				}
				if load == 1 && c.Adaptive == 0 {
					t.Errorf("%s %v: no adaptive detour: %+v", pattern, load, c)
				}
				t.Logf("%s %v: %d packets, %+v", pattern, load, r.Packets, *c)
				if b, _ := runOnce(); !bytes.Equal(a, b) {
					t.Errorf("%s %v: same seed, different JSON", pattern, load)
				}
			}
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

// tcepSetup puts the listed links of subnetwork 0 into the Inactive state
// (through Shadow, one at a time) or, with shadow, leaves them Shadow, at
// time 0 before a run.
func tcepSetup(n *Network, shadow bool, links ...[2]int) {
	sub := n.tc.subs[0]
	for _, l := range links {
		sub.CompleteDeactivation([]tcep.Request{{From: l[0], To: l[1]}})
		if !shadow {
			sub.Expire(l[0], l[1])
			ga, gb := n.tc.portsOf(0, l[0], l[1])
			n.linkOff(ga, gb, 0)
		}
	}
	n.tcepSync(0, 0)
}

// TestTCEPIndirectTimeline: a 1-D HyperX of 8 routers (8 nodes each),
// activation epochs of 5 µs, no deactivation within the run (1 s), U_hwm
// 0.5, d = 11280 ps (TestTCEPTimeline). Router 5's links to 1, 2, 4, 6 and
// 7 are Inactive, 3–5 and 0–5 Active.
//
// At 0 the eight nodes of switch 3 (24…31) each send 100 kB to a node of
// switch 5 (40…47): 11 packets each (10 of 9600 B, one of 4000 B), 8 ×
// 400 Gb/s into one 400 Gb/s link, so the routed queue of 3→5 passes
// 2·q(3→0) + 2 and PAL's adaptive choice detours through 0, the only
// available intermediate (the others lack their link to 5): 39 of the 88
// packets, at least 31 × 9600 + 8 × 4000 = 329 600 B, of which 60 000 B
// (0.24 of the second epoch's 250 000 B, checked below) in [5, 10 µs):
// at least 269 600 B on 3→0 in the first epoch, above 0.5 × 250 000 B.
// At the tick at 5 µs router 3 (no Inactive link of its own: no direct
// request) finds target 5 hot and sends an indirect request to 1 (the
// lowest router with 3–1 Active and 1–5 Inactive), buffered
// there until 1's next epoch at 10 µs, when 1 asks 5 for 1–5 over two
// hops (2d); 5 ACKs over two (2d): switched on at 10 µs + 4d, Active
// 1 µs later (the off state's wake time). The second epoch
// is below U_hwm on 3→0: no second request. One packet at 20 µs keeps
// the epochs running past 10 µs.
func TestTCEPIndirectTimeline(t *testing.T) {
	const d = 1280 + 10*ns
	p := table6(eee.AlwaysOn, 0)
	p.TCEP = TCEP{Enabled: true, Config: tcep.Config{Hwm: 0.5, ActivationEpoch: 5 * us, DeactivationEpoch: 1_000_000 * us}}
	n := build(t, hyperx(t, []int{8}, 8), p)
	tcepSetup(n, false, [2]int{1, 5}, [2]int{2, 5}, [2]int{4, 5}, [2]int{6, 5}, [2]int{7, 5})
	base := n.tc.subs[0].Stats.Messages
	var got []change
	second := -1.0
	n.tc.trace = func(at int64, si, a, b int, st tcep.State) {
		got = append(got, change{at, a, b, st})
		second = n.tc.acUse[0][3*8+0].Util() // the epoch [5, 10 µs)
	}
	for i := range 8 {
		n.Inject(0, 24+i, 40+i, 100_000)
	}
	n.Inject(20*us, 24, 40, 9600)
	r := run(t, n)
	if want := []change{{10*us + 4*d, 1, 5, tcep.Waking}, {11*us + 4*d, 1, 5, tcep.Active}}; !slices.Equal(got, want) {
		t.Fatalf("changes %+v, want %+v", got, want)
	}
	if math.Abs(second-0.24) > 1e-9 {
		t.Errorf("3→0 in [5, 10 µs): %v, want 0.24", second)
	}
	c := r.Consolidation
	if c.IndirectRequests != 1 || c.Activations != 1 || c.Violations != 0 || c.NonMinimal != 39 || c.Adaptive != 39 {
		t.Fatalf("consolidation %+v", c)
	}
	// The indirect request, 1's request, 5's ACK and 7 broadcasts.
	if m := n.tc.subs[0].Stats.Messages - base; m != 1+1+1+7 {
		t.Errorf("control messages %d, want 10", m)
	}
}

// TestTCEPIndirectOff: TestTCEPIndirectTimeline's traffic with indirect
// activation off (power.consolidation.indirect_activation: false): router
// 3 still detours the same 39 packets through 0, but sends no indirect
// request, so 1–5 stays Inactive, no link changes state and no control
// message is sent.
func TestTCEPIndirectOff(t *testing.T) {
	p := table6(eee.AlwaysOn, 0)
	p.TCEP = TCEP{Enabled: true, Config: tcep.Config{Hwm: 0.5, ActivationEpoch: 5 * us, DeactivationEpoch: 1_000_000 * us, NoIndirect: true}}
	n := build(t, hyperx(t, []int{8}, 8), p)
	tcepSetup(n, false, [2]int{1, 5}, [2]int{2, 5}, [2]int{4, 5}, [2]int{6, 5}, [2]int{7, 5})
	base := n.tc.subs[0].Stats.Messages
	var got []change
	n.tc.trace = func(at int64, si, a, b int, st tcep.State) { got = append(got, change{at, a, b, st}) }
	for i := range 8 {
		n.Inject(0, 24+i, 40+i, 100_000)
	}
	n.Inject(20*us, 24, 40, 9600)
	r := run(t, n)
	c := r.Consolidation
	if len(got) != 0 || c.IndirectRequests != 0 || c.Activations != 0 || c.Violations != 0 || c.NonMinimal != 39 || c.Adaptive != 39 {
		t.Fatalf("changes %+v, consolidation %+v", got, c)
	}
	if m := n.tc.subs[0].Stats.Messages - base; m != 0 {
		t.Errorf("control messages %d, want 0", m)
	}
}

// TestPALTableI exercises each row of PAL's Table I and the adaptive
// choice at switch 3 of a 1-D HyperX of 4 routers (1 node each), for a
// packet to node 2 (switch 2): minimal port 3→2, the only available
// intermediate 0 (1–2 is Inactive), so the detour's first port is 3→0.
// The UGAL offset is ⌊49152 B / 9600 B⌋ / 2 = 2 packets: minimal while
// q(3→2) ≤ 2·q(3→0) + 2. Credits on the detour: the next switch has
// room (the port is not PFC-paused), whatever this switch's output buffer
// holds (a full output buffer holds the packet at the input, it does not
// reactivate the shadow link).
func TestPALTableI(t *testing.T) {
	const size = 9600
	for _, tc := range []struct {
		name         string
		min          tcep.State
		qMin, qNm    int32
		paused       bool
		outBytes     int32
		detour       bool
		adaptive     bool
		reactivation bool
	}{
		{name: "active-empty", min: tcep.Active},
		{name: "active-at-offset", min: tcep.Active, qMin: 2},
		{name: "active-over-offset", min: tcep.Active, qMin: 3, detour: true, adaptive: true},
		{name: "active-4-vs-2·1+2", min: tcep.Active, qMin: 4, qNm: 1},
		{name: "active-5-vs-2·1+2", min: tcep.Active, qMin: 5, qNm: 1, detour: true, adaptive: true},
		{name: "active-22-vs-2·10+2", min: tcep.Active, qMin: 22, qNm: 10},
		{name: "active-23-vs-2·10+2", min: tcep.Active, qMin: 23, qNm: 10, detour: true, adaptive: true},
		{name: "shadow-credits", min: tcep.Shadow, outBytes: 49152 - size, detour: true},
		{name: "shadow-paused", min: tcep.Shadow, paused: true, reactivation: true},
		{name: "shadow-buffer-full", min: tcep.Shadow, outBytes: 49152 - size + 1, detour: true},
		{name: "inactive-paused", min: tcep.Inactive, paused: true, detour: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := table6(eee.AlwaysOn, 0)
			p.TCEP = TCEP{Enabled: true, Config: tcep.DefaultConfig()}
			n := build(t, hyperx(t, []int{4}, 1), p)
			tcepSetup(n, false, [2]int{1, 2})
			switch tc.min {
			case tcep.Shadow:
				tcepSetup(n, true, [2]int{3, 2})
			case tcep.Inactive:
				tcepSetup(n, false, [2]int{3, 2})
			}
			tcs := n.tc
			g := n.swBase[3] + int32(tcs.port(0, 3, 2))
			gm := n.swBase[3] + int32(tcs.port(0, 3, 0))
			n.palQ[g], n.palQ[gm] = tc.qMin, tc.qNm
			if tc.paused {
				n.ports[gm].flags |= paused
			}
			n.ports[gm].bytes = tc.outBytes
			pk := &packet{dst: 2, size: size, hops: 1}
			out := n.routePAL(3, pk)
			want := g
			if tc.detour {
				want = gm
			}
			if out != want || pk.detour != tc.detour || pk.hops != 1+b2u8(tc.detour) {
				t.Fatalf("out %d detour %v hops %d, want %d %v", out, pk.detour, pk.hops, want, tc.detour)
			}
			c := n.consolidation(0)
			if c.Adaptive != b2u(tc.adaptive) || c.NonMinimal != b2u(tc.detour) || c.PALReactivations != b2u(tc.reactivation) || c.Reactivations != b2u(tc.reactivation) {
				t.Errorf("consolidation %+v", c)
			}
			if tc.reactivation && (tcs.state[g] != tcep.Active || tcs.subs[0].State(3, 2) != tcep.Active) {
				t.Errorf("3–2 %v after the reactivation", tcs.state[g])
			}
			// Virtual utilisation counts a packet detoured around a link
			// that is not Active; the detour counter every detour.
			if v := tcs.act[g][2]; v != int64(size)*int64(b2u(tc.detour && tc.min != tcep.Active)) {
				t.Errorf("virtual bytes %d", v)
			}
			if v := tcs.det[g]; v != int64(size)*int64(b2u(tc.detour)) {
				t.Errorf("detour bytes %d", v)
			}
		})
	}
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func b2u8(b bool) uint8 { return uint8(b2u(b)) }

// offTimeline is TestTCEPTimeline's run: light traffic until 39 µs gates
// 2–3 at 20 µs + 2d; 100 kB from each node of switch 2 to one of switch 3
// at 40 µs switch it on at 41 µs + 4d, Active 1 µs later. Two flows, not
// one: PAL draws each detour's intermediate (0 or 1) per packet, and the
// five packets one node has routed by the tick at 41 µs may split 3–2
// (28 800 B, 0.576 of the epoch: below U_hwm, 2–3 never activated); of
// the ten of two nodes at least five take the same first hop (48 000 B,
// 0.96, above U_hwm 0.75), whatever the draws (TestTCEPTimeline). It
// returns the network after the run, its result and link 2–3's eee.Link.
func offTimeline(t *testing.T, p Params) (*Network, Result, *eee.Link) {
	t.Helper()
	n := build(t, hyperx(t, []int{4}, 2), p)
	for i := range 39 {
		n.Inject(int64(i)*us, 0, 2, 1000)
	}
	n.Inject(40*us, 4, 6, 100_000)
	n.Inject(40*us, 5, 7, 100_000)
	r := run(t, n)
	var l *eee.Link
	if n.tc != nil {
		ga, _ := n.tc.portsOf(0, 2, 3)
		l = &n.links[n.ports[ga].link]
	}
	return n, r, l
}

// TestTCEPGatedLinkIsOff is the regression test of "TCEP saves nothing
// when links are otherwise always on" and "the per-port predictor keeps
// gated links awake": a gated link is Off (docs/model.md §1.3) from its
// gating (20 µs + 2d) until the ACK of its activation (41 µs + 4d),
// whatever the mode and t_PDT underneath (always on; deep sleep with a
// t_PDT of 1 s, which never sleeps: before, EEE alone gated it and it
// stayed awake), draws the off power (0 W) and goes
// up for the off state's wake time (1 µs); with links always on, the
// links' energy is the always-on energy less the off time's.
func TestTCEPGatedLinkIsOff(t *testing.T) {
	const d = 1280 + 10*ns
	const off = (41*us + 4*d) - (20*us + 2*d)
	for _, tc := range []struct {
		name string
		mode eee.Mode
		pdt  time.Duration
	}{
		{"always-on", eee.AlwaysOn, 0},
		{"deep-sleep-never-sleeps", eee.DeepSleep, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := table6(tc.mode, tc.pdt)
			p.TCEP = TCEP{Enabled: true, Config: tcep.DefaultConfig()}
			n, r, l := offTimeline(t, p)
			if l.Times[eee.Off] != off || l.Offs != 1 || l.Ons != 1 || l.Times[eee.GoingUp] < 1*us {
				t.Fatalf("link 2–3: off %d ps (want %d), offs %d, ons %d, going up %d ps", l.Times[eee.Off], off, l.Offs, l.Ons, l.Times[eee.GoingUp])
			}
			if c := r.Consolidation; c.Gated != 1 || c.Activations != 1 || c.Violations != 0 {
				t.Fatalf("consolidation %+v", c)
			}
			if tc.mode != eee.AlwaysOn {
				// No packet waited for the link coming back from off
				// (model §1.3): with a t_PDT of 1 s nothing is a miss.
				if r.Misses != 0 {
					t.Errorf("%d misses: a packet waited for a link", r.Misses)
				}
				return
			}
			// Every link draws 2 × 24 W while on, 0 while off.
			links := float64(len(n.links))
			want := 2 * 24 * (links*float64(n.endTime) - float64(off)) * 1e-12
			if math.Abs(r.EnergyJ.Links-want) > 1e-9*want {
				t.Errorf("links energy %.9g J, want %.9g J", r.EnergyJ.Links, want)
			}
			p.TCEP.Enabled = false
			_, r0, _ := offTimeline(t, p)
			if r.EnergyJ.Links >= r0.EnergyJ.Links {
				t.Errorf("links energy %.9g J with TCEP, %.9g J without: no saving", r.EnergyJ.Links, r0.EnergyJ.Links)
			}
		})
	}
}

// TestIdlePowerFraction: with Power.IdleFraction 0.75 (paper 004: p_idle
// 23.44 against p_real 31.25 pJ/bit) an always-on link draws 0.75 of the
// awake power when it does not transmit: one 1000 B message from node 0
// to node 2 (switch 0 to 1) crosses three links once (20 ns each at
// 400 Gb/s), so the links' energy is 0.75 × 2 × 24 W × the links' time
// plus 0.25 × 24 W × 3 × 20 ns.
func TestIdlePowerFraction(t *testing.T) {
	for _, tc := range []struct {
		name string
		frac float64
	}{{"idle-0.75", 0.75}, {"idle-1", 1}, {"unset", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			p := table6(eee.AlwaysOn, 0)
			p.Power.IdleFraction = tc.frac
			n := build(t, hyperx(t, []int{4}, 2), p)
			n.Inject(0, 0, 2, 1000)
			r := run(t, n)
			f := tc.frac
			if f == 0 {
				f = 1
			}
			T := float64(len(n.links)) * float64(n.endTime) * 1e-12
			want := f*2*24*T + (1-f)*24*3*20e-9
			if math.Abs(r.EnergyJ.Links-want) > 1e-9*want {
				t.Errorf("links energy %.12g J, want %.12g J", r.EnergyJ.Links, want)
			}
		})
	}
}

// BenchmarkTCEPEpoch is the cost of one activation epoch of the whole
// network (every tenth also a deactivation epoch): reading every switch
// port's counters into the subnetworks' uses (with the 100 µs
// measurement window), the activation and deactivation rules and their
// answers, on paper 004's 1024-node 1-D flattened butterfly (one
// subnetwork of 32 routers) and its 512-node 2-D one (16 of 8), half the
// non-root links gated, counters filled with a fixed pattern (a third of
// the ports above U_hwm, mostly non-minimal) before each epoch.
func BenchmarkTCEPEpoch(b *testing.B) {
	for _, bc := range []struct {
		name  string
		dims  []int
		nodes int
	}{{"fbfly-1024-1d", []int{32}, 32}, {"fbfly-512-2d", []int{8, 8}, 8}} {
		b.Run(bc.name, func(b *testing.B) {
			tp, err := topo.Build(topo.Config{Kind: topo.KindFBFly, Dims: bc.dims, NodesPerSwitch: bc.nodes})
			if err != nil {
				b.Fatal(err)
			}
			p := table6(eee.AlwaysOn, 0)
			cfg := tcep.DefaultConfig()
			cfg.Hwm, cfg.Window = 0.99, 100*us
			p.TCEP = TCEP{Enabled: true, Config: cfg}
			n := build(b, tp, p)
			tc := n.tc
			for si, sub := range tc.subs {
				for a := 1; a < sub.K; a++ {
					for c := a + 1; c < sub.K; c += 2 {
						sub.CompleteDeactivation([]tcep.Request{{From: a, To: c}})
						sub.Expire(a, c)
					}
				}
				n.tcepSync(si, 0)
			}
			capA := int64(float64(cfg.ActivationEpoch) * p.RateBps / 8e12)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				for g := range tc.act {
					if tc.state[g] == tcep.Active {
						tc.act[g] = [3]int64{capA / 8, capA * int64(g%3) / 2, 0}
					} else {
						tc.act[g][2] = capA / 4
					}
					tc.deact[g] = tc.act[g]
				}
				now := int64(i+1) * cfg.ActivationEpoch
				n.tcepEpoch(now)
				for si, sub := range tc.subs {
					tc.acReqs[si] = sub.RespondActivation(tc.acReqs[si])
					if len(tc.deReqs[si]) > 0 {
						tc.deReqs[si] = sub.RespondDeactivation(tc.deReqs[si], tc.deUse[si], cfg.Hwm)
					}
					tc.deReqs[si] = tc.deReqs[si][:0]
				}
			}
		})
	}
}

// TestTCEPWindow is the regression test of "TCEP never settles near
// Fig. 12's bound": a 1 µs epoch holds five 9600 B packets at 400 Gb/s, so
// a reading of one epoch is noise. A 1-D HyperX of 4 routers (2 nodes
// each), 2–3 and 2–1 gated from the start (tcepSetup), so that the hub is
// the only intermediate from switch 2 to 3: PAL draws its intermediate per
// packet among the available ones, and with two (0 and 1) a stream's
// readings on each first hop would depend on the draws. 2–1 rather than
// 1–3: router 2 then has no one to send an indirect request to (1 lacks
// its link to 2), so the only activation is the direct one of 2–3, the
// inactive link with the virtual utilisation. No link carries traffic
// before 40 µs, so no rule changes anything (routers 1, 2 and 3 keep two
// active links or fewer: no outer link). From 40 µs node 4
// (switch 2) sends to node 6 (switch 3) either a burst (100 kB: eleven
// packets, five routed by the tick at 41 µs, 48 000 B on 2→0: 0.96 of one
// epoch) or a sustained stream (2 MB: 42 µs at the link rate), all through
// 0. With the epochs' own counters (window 0) the burst activates 2–3 at
// once (2→0 above U_hwm, all non-minimal; 2–3 the inactive link with the
// virtual utilisation); with a measurement window of 20 µs (an
// exponentially weighted average, the router settling 20 epochs after a
// request) the burst does not, and the stream does once its average
// passes U_hwm: with weight α = 1/20 per epoch and readings near 1 (5.2
// packets a µs), the average is about 1 − 0.95^n after n epochs, above
// 0.75 from n = 27: the tick at 67 µs (ACK at 67 µs + 4d).
func TestTCEPWindow(t *testing.T) {
	const d = 1280 + 10*ns
	for _, tc := range []struct {
		name   string
		window int64
		bytes  int64
		on     int64 // when 2–3 is switched on (−1: never)
	}{
		{"no-window-burst", 0, 100_000, 41*us + 4*d},
		{"window-burst", 20 * us, 100_000, -1},
		{"window-stream", 20 * us, 2_000_000, 67*us + 4*d},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := table6(eee.AlwaysOn, 0)
			cfg := tcep.DefaultConfig()
			cfg.Window = tc.window
			p.TCEP = TCEP{Enabled: true, Config: cfg}
			n := build(t, hyperx(t, []int{4}, 2), p)
			tcepSetup(n, false, [2]int{2, 3}, [2]int{2, 1})
			var at int64 = -1
			n.tc.trace = func(now int64, si, a, b int, st tcep.State) {
				if a == 2 && b == 3 && st == tcep.Waking && at < 0 {
					at = now
				}
			}
			n.Inject(40*us, 4, 6, tc.bytes)
			r := run(t, n)
			if c := r.Consolidation; c.Gated != 2 || c.Deactivations != 2 || (c.Activations == 1) != (tc.on >= 0) || c.Violations != 0 {
				t.Fatalf("consolidation %+v", c)
			}
			if at != tc.on {
				t.Errorf("2–3 switched on at %d ps, want %d", at, tc.on)
			}
		})
	}
}

// TestTCEPControlPackets: TestTCEPTimeline's timeline with the requests
// and answers as packets (power.consolidation.control_packets). Every
// control packet finds its output queue empty and its link awake (always
// on), so each crossing takes one control message's time d, as the delays
// do: the same changes at the same times. The control packets are not
// delivered to nodes (the packet count is the data's) and cost link time.
//
// The activation request and its answer cross the root star via the hub
// (2→0→3, then 3→0→2), and PAL draws each detour's intermediate among 0
// and 1 per packet, so data from switch 2 to 3 may be on 2→0 or 0→3 when
// they are sent: a control packet passes the data waiting in its queue,
// not a transmission under way (docs/simulator.md "Consolidation: TCEP").
// The traffic that triggers the activation is therefore across before the
// tick at 41 µs, whatever the draw: node 4 sends one 9600 B packet to node
// 6 at 40 µs (first bit at switch 2 at 40.110 µs, routed there: a detour
// through m = 0 or 1; store and forward, each hop starting 100 ns after
// the last bit is in: on 2→m from 40.402 to 40.594 µs, on m→3 from 40.704
// to 40.896 µs). The tick at 41 µs reads 9600 B on 2→m, 0.192 of the
// epoch's 50 000 B, all non-minimal: with U_hwm 0.15 router 2 asks for
// 2–3, its one inactive link (virtual utilisation 0.192). Router m's link
// m→3 reads the same but m has no inactive link: no other request. U_hwm
// changes nothing before: the light traffic loads no link above 0.02, so
// every router's first two links cover its others and the deactivations
// are TestTCEPTimeline's.
func TestTCEPControlPackets(t *testing.T) {
	const d = 1280 + 10*ns
	p := table6(eee.AlwaysOn, 0)
	cfg := tcep.DefaultConfig()
	cfg.ControlPackets = true
	cfg.Hwm = 0.15
	p.TCEP = TCEP{Enabled: true, Config: cfg}
	n := build(t, hyperx(t, []int{4}, 2), p)
	var got []change
	n.tc.trace = func(at int64, si, a, b int, st tcep.State) { got = append(got, change{at, a, b, st}) }
	for i := range 39 {
		n.Inject(int64(i)*us, 0, 2, 1000)
	}
	n.Inject(40*us, 4, 6, 9600)
	r := run(t, n)
	want := []change{
		{10*us + 2*d, 2, 3, tcep.Shadow},
		{20*us + 2*d, 2, 3, tcep.Inactive},
		{41*us + 4*d, 2, 3, tcep.Waking},
		{42*us + 4*d, 2, 3, tcep.Active},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("changes %+v, want %+v", got, want)
	}
	c := r.Consolidation
	if c.Deactivations != 1 || c.Gated != 1 || c.Activations != 1 || c.Violations != 0 || c.ControlMessages != 9+6+5 {
		t.Fatalf("consolidation %+v", c)
	}
	if r.Packets != 39+1 {
		t.Errorf("packets %d", r.Packets)
	}
	if len(n.tc.msgs) == 0 || len(n.tc.msgFree) != len(n.tc.msgs) {
		t.Errorf("control messages: %d slots, %d free at the end", len(n.tc.msgs), len(n.tc.msgFree))
	}
}
