package network

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/eee"
	"github.com/lpictl/lpictl/sim/topo"
)

// extNet builds a 20-node Megafly with bursty injected traffic (bursts of
// messages between random nodes, separated by gaps of a few µs to tens of
// µs, so ports see idle periods on both sides of a few-µs t_PDT).
func extNet(t *testing.T, p Params) *Network {
	t.Helper()
	tp, err := topo.Build(topo.Config{Kind: topo.KindMegafly, Radix: 4})
	if err != nil {
		t.Fatal(err)
	}
	n, err := New(tp, p)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 7))
	at := int64(0)
	for range 1500 {
		at += int64(r.ExpFloat64() * float64(us))
		src := r.IntN(tp.Nodes())
		dst := (src + 1 + r.IntN(tp.Nodes()-1)) % tp.Nodes()
		n.Inject(at, src, dst, int64(1+r.IntN(3*9600)))
	}
	return n
}

func mustPort(t *testing.T, n *Network, name string) PortID {
	t.Helper()
	id, err := n.PortByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func drainAll(n *Network, p PortID) []IdleObservation {
	var out []IdleObservation
	buf := make([]IdleObservation, 7) // small: exercises partial drains
	for {
		k := n.DrainIdle(p, buf)
		out = append(out, buf[:k]...)
		if k < len(buf) {
			return out
		}
	}
}

func hopsOf(n *Network, p PortID) map[int]uint64 {
	m := map[int]uint64{}
	n.DrainHops(p, func(h int, c uint64) { m[h] += c })
	return m
}

// TestExternalPDTEqualsFixedController: a port whose t_PDT is set from
// outside to d behaves exactly as under the simulator's own Fixed(d)
// controller: the same idle periods (end, length, missed, t_PDT), the same
// link states and energy, and the rest of the network is unchanged.
func TestExternalPDTEqualsFixedController(t *testing.T) {
	const d = 5 * time.Microsecond
	names := []string{"node0", "node7", "sw0p0", "sw5p2"}
	type outcome struct {
		res   Result
		rows  map[int]PortRow
		obs   map[string][]IdleObservation
		hops  map[string]map[int]uint64
		links map[string]eee.Link
		n     *Network
	}
	runIt := func(external bool) outcome {
		n := extNet(t, table6(eee.DeepSleep, d))
		o := outcome{rows: map[int]PortRow{}, obs: map[string][]IdleObservation{}, hops: map[string]map[int]uint64{},
			links: map[string]eee.Link{}, n: n}
		for _, name := range names {
			id := mustPort(t, n, name)
			if external {
				if err := n.Externalize(id); err != nil {
					t.Fatal(err)
				}
				if err := n.SetPDT(id, int64(d/time.Nanosecond)*1000); err != nil {
					t.Fatal(err)
				}
			} else if err := n.Watch(id); err != nil {
				t.Fatal(err)
			}
		}
		// Drain as the agent does, in steps.
		for at := int64(0); !n.Drained() || at == 0; at += 50 * us {
			if err := n.RunUntil(at + 50*us); err != nil {
				t.Fatal(err)
			}
			for _, name := range names {
				id := mustPort(t, n, name)
				o.obs[name] = append(o.obs[name], drainAll(n, id)...)
			}
		}
		for _, name := range names {
			o.hops[name] = hopsOf(n, mustPort(t, n, name))
		}
		if err := n.Run(context.Background(), 0, nil); err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			o.links[name] = n.PortLink(mustPort(t, n, name), n.Reached())
		}
		o.res = n.Result()
		n.Ports(func(r *PortRow) { o.rows[r.Port] = *r })
		return o
	}
	fixed, ext := runIt(false), runIt(true)

	for _, name := range names {
		id := mustPort(t, fixed.n, name)
		obs := fixed.obs[name]
		if len(obs) == 0 {
			t.Fatalf("%s: no idle periods", name)
		}
		var misses uint64
		for _, o := range obs {
			if o.PDT != int64(d/time.Nanosecond)*1000 || o.Length < 0 {
				t.Fatalf("%s: observation %+v", name, o)
			}
			if o.Missed {
				misses++
			}
		}
		// What Watch saw is what the port's controller saw.
		st := fixed.n.ctlFor(int32(id)).Stats(0)
		if st.Hits+st.Misses != uint64(len(obs)) || st.Misses != misses {
			t.Errorf("%s: watched %d periods (%d misses), the controller %d hits %d misses", name, len(obs), misses, st.Hits, st.Misses)
		}
		t.Logf("%s: %d idle periods, %d misses", name, len(obs), misses)
		if misses == 0 || misses == uint64(len(obs)) {
			t.Errorf("%s: %d of %d periods missed; the test wants both outcomes", name, misses, len(obs))
		}
		if !reflect.DeepEqual(obs, ext.obs[name]) {
			t.Errorf("%s: idle periods differ under external control:\n fixed    %v\n external %v", name, obs, ext.obs[name])
		}
		if !reflect.DeepEqual(fixed.hops[name], ext.hops[name]) || len(fixed.hops[name]) == 0 {
			t.Errorf("%s: hops %v vs %v", name, fixed.hops[name], ext.hops[name])
		}
		var sent uint64
		for _, c := range fixed.hops[name] {
			sent += c
		}
		if row := fixed.rows[int(id)]; row.Sent != sent {
			t.Errorf("%s: %d packets sent, hops of %d", name, row.Sent, sent)
		}
		if fixed.links[name] != ext.links[name] {
			t.Errorf("%s: link state %+v vs %+v", name, fixed.links[name], ext.links[name])
		}
		// The controller's columns of an externalized port are not its.
		a, b := fixed.rows[int(id)], ext.rows[int(id)]
		a.Hits, a.Misses, a.MeanPDTNs, a.FinalPDTNs, a.PredBytes = 0, 0, 0, 0, 0
		b.Hits, b.Misses, b.MeanPDTNs, b.FinalPDTNs, b.PredBytes = 0, 0, 0, 0, 0
		if a != b {
			t.Errorf("%s: ports.csv row\n fixed    %+v\n external %+v", name, a, b)
		}
		delete(fixed.rows, int(id))
		delete(ext.rows, int(id))
	}
	if !reflect.DeepEqual(fixed.rows, ext.rows) {
		t.Error("other ports' rows differ")
	}
	fr, er := fixed.res, ext.res
	fr.Hits, fr.Misses, er.Hits, er.Misses = 0, 0, 0, 0
	if fr != er {
		t.Errorf("results differ:\n fixed    %+v\n external %+v", fr, er)
	}
	if fixed.res.EnergyJ != ext.res.EnergyJ || fixed.res.EnergyJ.Links == 0 {
		t.Errorf("energy %+v vs %+v", fixed.res.EnergyJ, ext.res.EnergyJ)
	}
}

// TestExternalPDTFollowsSetPDT: a t_PDT of 0 misses and sleeps more than
// one that never expires; Release hands the port back.
func TestExternalPDTFollowsSetPDT(t *testing.T) {
	try := func(pdt int64) (misses int, low int64) {
		n := extNet(t, table6(eee.DeepSleep, 10*time.Microsecond))
		id := mustPort(t, n, "node3")
		if err := n.Externalize(id); err != nil {
			t.Fatal(err)
		}
		if got := n.PDT(id); got != 10*us {
			t.Fatalf("initial t_PDT %d ps, want the controller's 10 µs", got)
		}
		if err := n.SetPDT(id, pdt); err != nil {
			t.Fatal(err)
		}
		if err := n.RunUntil(3 * engine1ms); err != nil {
			t.Fatal(err)
		}
		for _, o := range drainAll(n, id) {
			if o.Missed {
				misses++
			}
		}
		l := n.PortLink(id, n.Reached())
		if n.Reached() != 3*engine1ms || l.Accounted() != 3*engine1ms {
			t.Errorf("reached %d, link accounted to %d", n.Reached(), l.Accounted())
		}
		n.Release(id)
		if err := n.SetPDT(id, 0); err == nil {
			t.Error("SetPDT on a released port")
		}
		return misses, l.Times[eee.LowDeepSleep]
	}
	// The link also sleeps when the peer (the leaf's port) transmitted
	// last and its own timer expires, so even "never" can miss.
	m0, low0 := try(0)
	mNever, lowNever := try(eee.Never)
	if m0 <= mNever || low0 <= lowNever {
		t.Errorf("misses/deep sleep: t_PDT 0: %d/%d ps, never: %d/%d ps", m0, low0, mNever, lowNever)
	}
}

const engine1ms = 1000 * 1000 * 1000 // ps

// TestRunUntilInStepsIsRunAtOnce: advancing in steps (and in bounded
// numbers of events) and then finishing with Run gives byte-identical
// results to one Run.
func TestRunUntilInStepsIsRunAtOnce(t *testing.T) {
	p := table6(eee.Hybrid, 0)
	p.Predictor = predictor.Config{Kind: predictor.KindPerfBoundCorrect, WakeTime: predictor.Duration(375 * time.Nanosecond)}
	report := func(n *Network) string {
		var b strings.Builder
		r := n.Result()
		r.Events = n.eng.Events()
		js, _ := json.Marshal(r)
		b.Write(js)
		n.Ports(func(r *PortRow) { b.WriteString("\n" + r.CSV()) })
		for _, r := range n.IdleHistogram(20) {
			b.WriteString("\n" + r.CSV())
		}
		return b.String()
	}
	once := extNet(t, p)
	if err := once.Run(context.Background(), 0, nil); err != nil {
		t.Fatal(err)
	}
	steps := extNet(t, p)
	for at := int64(0); at < 2*engine1ms && !steps.Drained(); at += 3777 * 1000 {
		if err := steps.RunUntil(at); err != nil {
			t.Fatal(err)
		}
		if steps.Reached() != at {
			t.Fatalf("reached %d, want %d", steps.Reached(), at)
		}
		next := at + 1000*1000
		for {
			ok, err := steps.Advance(next, 97)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				break
			}
		}
	}
	if err := steps.Run(context.Background(), 0, nil); err != nil {
		t.Fatal(err)
	}
	a, b := report(once), report(steps)
	t.Logf("%d events, %d packets", once.eng.Events(), once.delivered)
	if a != b {
		t.Errorf("stepped run differs:\n%s\n---\n%s", a, b)
	}
	if err := steps.RunUntil(3 * engine1ms); err == nil {
		t.Error("RunUntil after Run")
	}
}

func TestPortNames(t *testing.T) {
	n := extNet(t, table6(eee.DeepSleep, time.Microsecond))
	seen := map[string]bool{}
	for i := range n.NumPorts() {
		id := PortID(i)
		name := n.DeviceName(id)
		if seen[name] {
			t.Fatalf("name %s twice", name)
		}
		seen[name] = true
		back, err := n.PortByName(name)
		if err != nil || back != id {
			t.Fatalf("%s → %d, %v; want %d", name, back, err, id)
		}
		if (i < n.t.Nodes()) != (n.PortClass(id) == "nic") {
			t.Errorf("%s class %s", name, n.PortClass(id))
		}
	}
	for _, bad := range []string{"", "node", "node-1", "node+1", "node01", "node20", "sw", "sw0", "sw0p", "sw0p9", "sw99p0", "sw00p1", "eth0"} {
		if _, err := n.PortByName(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
