package network

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/eee"
	"github.com/lpictl/lpictl/sim/engine"
	"github.com/lpictl/lpictl/sim/topo"
	"github.com/lpictl/lpictl/sim/workload"
	"github.com/lpictl/lpictl/sim/workload/apps"
	"github.com/lpictl/lpictl/sim/workload/vef"
)

// synthetic is a `kind: synthetic` workload configuration.
func synthetic(pattern string, bytes int64, load float64, d time.Duration) workload.Config {
	return workload.Config{Kind: apps.KindSynthetic, Duration: predictor.Duration(d),
		Params: apps.Params{Synthetic: &apps.Synthetic{Pattern: pattern, MessageBytes: apps.Bytes(bytes), Load: load}}}
}

// attachConfig builds cfg for n's topology and attaches it.
func attachConfig(t testing.TB, n *Network, cfg workload.Config, seed uint64) *workload.Replayer {
	t.Helper()
	w, err := workload.Build(cfg, n.t.Nodes(), seed)
	if err != nil {
		t.Fatal(err)
	}
	r, err := w.NewReplayer()
	if err != nil {
		t.Fatal(err)
	}
	if err := n.AttachWorkload(r); err != nil {
		t.Fatal(err)
	}
	return r
}

// attach attaches a replay of src with rank i on node i.
func attach(t testing.TB, n *Network, src vef.Source) *workload.Replayer {
	t.Helper()
	return attachMapped(t, n, src, nil)
}

func attachMapped(t testing.TB, n *Network, src vef.Source, nodes []int) *workload.Replayer {
	t.Helper()
	if nodes == nil {
		nodes = make([]int, src.Tasks())
		for i := range nodes {
			nodes[i] = i
		}
	}
	r, err := workload.NewReplayer(src, nodes, workload.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.AttachWorkload(r); err != nil {
		t.Fatal(err)
	}
	return r
}

// vefText is a trace given as text.
func vefText(t testing.TB, text string) vef.Source {
	t.Helper()
	r, err := vef.NewReader(strings.NewReader(text), "t.vef", vef.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// openLoop is an open-loop source of dep-0 messages for tests that need
// more than `kind: synthetic` allows (an offered load above 1, a message
// count per node): per node, a seeded PCG stream of Poisson arrivals at
// load × 400 Gb/s to uniformly random other nodes.
type openLoop struct {
	nodes int
	bytes int64
	load  float64
	count int64
	seed  uint64
	recs  []vef.Record
	pos   int
	comms [][]int32
}

func newOpenLoop(nodes int, bytes int64, load float64, count int64, seed uint64) *openLoop {
	o := &openLoop{nodes: nodes, bytes: bytes, load: load, count: count, seed: seed}
	if count > 0 {
		o.generate(0, 0, 0)
	}
	return o
}

// onoff regenerates the records with exponential ON and OFF periods (the
// rate during ON raised so the mean is the load) until duration.
func (o *openLoop) onoff(on, off, duration int64) { o.generate(on, off, duration) }

func (o *openLoop) generate(on, off, duration int64) {
	o.recs = o.recs[:0]
	gap := float64(o.bytes) * 8 / (o.load * 400e9) * 1e12
	if on > 0 {
		gap *= float64(on) / float64(on+off)
	}
	for i := 0; i < o.nodes; i++ {
		rng := rand.New(rand.NewPCG(o.seed, uint64(i)))
		t, onUntil := int64(0), int64(-1)
		if on > 0 {
			onUntil = int64(rng.ExpFloat64() * float64(on))
		}
		for k := int64(0); o.count == 0 || k < o.count; k++ {
			t += int64(rng.ExpFloat64() * gap)
			for on > 0 && t >= onUntil {
				rest := t - onUntil
				start := onUntil + int64(rng.ExpFloat64()*float64(off))
				onUntil = start + max(1, int64(rng.ExpFloat64()*float64(on)))
				t = start + rest
			}
			if duration > 0 && t >= duration {
				break
			}
			dst := int32(rng.IntN(o.nodes - 1))
			if dst >= int32(i) {
				dst++
			}
			o.recs = append(o.recs, vef.Record{Kind: vef.Message, Src: int32(i), Dst: dst, Bytes: o.bytes, Dep: vef.DepNone, Time: t, DepID: -1})
		}
	}
	slices.SortStableFunc(o.recs, func(a, b vef.Record) int { return int(min(1, max(-1, a.Time-b.Time))) })
	for i := range o.recs {
		o.recs[i].ID = int64(i)
	}
	world := make([]int32, o.nodes)
	for i := range world {
		world[i] = int32(i)
	}
	o.comms = [][]int32{world}
}

func (o *openLoop) Tasks() int       { return o.nodes }
func (o *openLoop) Comms() [][]int32 { return o.comms }
func (o *openLoop) Next(r *vef.Record) error {
	if o.pos == len(o.recs) {
		return io.EOF
	}
	*r = o.recs[o.pos]
	o.pos++
	return nil
}

func smallMegafly(t testing.TB) topo.Topology {
	t.Helper()
	tp, err := topo.Build(topo.Config{Kind: topo.KindMegafly, Groups: 5, Leaves: 2, Spines: 2, NodesPerSwitch: 2, GlobalLinks: 2})
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// zeroLoad is the exact zero-load time (ps) from a message's send to its
// last packet's last bit at the destination, h links away, with Table 6
// parameters: the packets enter the NIC queue after the NIC latency; on
// every link a packet starts when it is ready (the NIC latency, or its
// last bit in at the switch plus the switch latency; the crossbar at
// speed-up 2.44 is never slower) and the link has sent the one before.
func zeroLoad(h int, bytes int64) int64 {
	if bytes == 0 {
		bytes = 64 // one control_bytes packet
	}
	var ready []int64
	var sizes []int64
	for rem := bytes; rem > 0; rem -= 9600 {
		ready = append(ready, 100*ns)
		sizes = append(sizes, min(rem, 9600))
	}
	var end int64
	for range h {
		end = 0
		for i := range ready {
			end = max(ready[i], end) + Ser(sizes[i], 400e9)
			ready[i] = end + 10*ns + 100*ns // at the next switch's output
		}
	}
	return end + 10*ns
}

// TestWorkloadZeroLoadLatency: a workload message of known size (one
// packet, several packets with a short last one, zero bytes) is delivered
// to the replayer exactly at the zero-load time, on the two-switch line and
// at 2, 3 and 5 hops of a small Megafly, in every power mode (links are
// awake at time 0).
func TestWorkloadZeroLoadLatency(t *testing.T) {
	tp := smallMegafly(t)
	for _, mode := range []eee.Mode{eee.AlwaysOn, eee.FastWake, eee.DeepSleep} {
		for _, bytes := range []int64{9600, 20000, 1, 0} {
			seen := map[int]bool{}
			for dst := 1; dst < tp.Nodes(); dst++ {
				h := topo.Hops(tp, 0, dst)
				if seen[h] {
					continue
				}
				seen[h] = true
				n := build(t, tp, table6(mode, time.Millisecond))
				trace := fmt.Sprintf("VEF 2 1 1 0 0 TRUE\nC0 0 1\n0 0 1 %d 0 1000 -1\n", bytes)
				r := attachMapped(t, n, vefText(t, trace), []int{0, dst})
				res := run(t, n)
				want := 1000*ns + zeroLoad(h, bytes)
				if st := r.Stats(); st.ExecTime != want || st.RankFinish[1] != want {
					t.Errorf("%v %d B 0→%d (%d hops): delivered at %d ps, want %d", mode, bytes, dst, h, st.ExecTime, want)
				}
				pk := max(1, (bytes+9599)/9600)
				if res.Messages != 1 || res.Packets != uint64(pk) || res.ExecTimeS != float64(want)*1e-12 {
					t.Errorf("%v %d B: %d messages, %d packets (want %d), exec %v", mode, bytes, res.Messages, res.Packets, pk, res.ExecTimeS)
				}
			}
		}
	}
	// The two-switch line: 0 → 2 crosses 3 links.
	n := build(t, line{}, table6(eee.DeepSleep, time.Millisecond))
	r := attachMapped(t, n, vefText(t, "VEF 2 1 1 0 0 TRUE\nC0 0 1\n0 0 1 20000 0 0 -1\n"), []int{0, 2})
	run(t, n)
	if got, want := r.Stats().ExecTime, zeroLoad(3, 20000); got != want {
		t.Errorf("line: delivered at %d, want %d", got, want)
	}
}

// computeTrace is sim/workload's TestComputeOnly trace: three ranks that
// compute only (self-messages), the longest for (3000 + 3×7777) ns + 0.5 ns.
func computeTrace() string {
	var b strings.Builder
	b.WriteString("VEF 3 6 1 0 0 FALSE\nC0 0 1 2\n")
	for i := 0; i < 3; i++ {
		fmt.Fprintf(&b, "%d %d %d 0 0 %d -1\n", 2*i, i, i, 1000*(i+1))
		fmt.Fprintf(&b, "%d %d %d 0 2 %d.5 %d\n", 2*i+1, i, i, 7777*(i+1), 2*i)
	}
	return b.String()
}

// TestWorkloadComputeOnly: through the real network, a compute-only
// workload's execution time is exactly its longest compute, the links
// sleep after the initial t_PDT, and the node energy follows each node's
// utilisation (docs/model.md §3.3).
func TestWorkloadComputeOnly(t *testing.T) {
	tp := smallMegafly(t)
	for _, mode := range []eee.Mode{eee.AlwaysOn, eee.DeepSleep} {
		n := build(t, tp, table6(mode, time.Microsecond))
		r := attach(t, n, vefText(t, computeTrace()))
		res := run(t, n)
		want := int64(3000+3*7777)*ns + 500
		if st := r.Stats(); st.ExecTime != want || n.endTime != want || res.ExecTimeS != float64(want)*1e-12 {
			t.Fatalf("%v: exec %d (network end %d), want %d", mode, st.ExecTime, n.endTime, want)
		}
		if res.Packets != 0 || res.Messages != 0 {
			t.Errorf("%v: %d packets", mode, res.Packets)
		}
		secs := float64(want) * 1e-12
		var watts float64
		for i := 0; i < 3; i++ {
			busy := float64(int64(1000*(i+1)+7777*(i+1))*ns + 500)
			watts += 800 + 400*busy/float64(want)
		}
		watts += float64(tp.Nodes()-3) * 800
		if d := res.EnergyJ.Nodes - watts*secs; d > 1e-15 || d < -1e-15 {
			t.Errorf("%v: node energy %v, want %v", mode, res.EnergyJ.Nodes, watts*secs)
		}
		if mode == eee.DeepSleep && res.LinkStateFraction.DeepSleep == 0 {
			t.Errorf("idle links never slept")
		}
	}
}

// TestWorkloadVEFTrace replays configs/workloads/sample.vef (every
// dependency kind, every collective, a sub-communicator; its mapping
// file) to completion through the network, with the same messages and
// bytes as on IdealHost, and a longer execution time.
func TestWorkloadVEFTrace(t *testing.T) {
	dir := "../../configs/workloads"
	cfg := workload.Config{Kind: workload.KindVEF, File: "sample.vef", Mapping: workload.MappingFile, MappingFile: "sample.map"}
	cfg.Resolve(dir)
	tp := smallMegafly(t)
	w, err := workload.Build(cfg, tp.Nodes(), 1)
	if err != nil {
		t.Fatal(err)
	}
	ideal, err := w.NewReplayer()
	if err != nil {
		t.Fatal(err)
	}
	h := workload.NewIdealHost()
	h.Latency = 0
	if err := h.Run(ideal); err != nil {
		t.Fatal(err)
	}
	want := ideal.Stats()
	for _, mode := range []eee.Mode{eee.AlwaysOn, eee.DeepSleep} {
		n := build(t, tp, table6(mode, 100*time.Nanosecond))
		r, err := w.NewReplayer()
		if err != nil {
			t.Fatal(err)
		}
		if err := n.AttachWorkload(r); err != nil {
			t.Fatal(err)
		}
		res := run(t, n)
		got := r.Stats()
		if got.Messages != want.Messages || got.Bytes != want.Bytes || got.P2P != want.P2P || got.CollectiveOps() != want.CollectiveOps() {
			t.Errorf("%v: %d messages %d B %d p2p %d collectives; ideal %d %d %d %d", mode,
				got.Messages, got.Bytes, got.P2P, got.CollectiveOps(), want.Messages, want.Bytes, want.P2P, want.CollectiveOps())
		}
		if res.Messages != uint64(got.Messages) {
			t.Errorf("%v: the network delivered %d messages, the replay sent %d", mode, res.Messages, got.Messages)
		}
		if got.ExecTime <= want.ExecTime {
			t.Errorf("%v: exec %d on the network, %d on a zero-latency host", mode, got.ExecTime, want.ExecTime)
		}
		r.Close()
	}
}

// TestWorkloadDependencyOrder: a chain of dependencies of every kind runs
// through the network in order, each release exactly its dependency plus
// its delay: at zero load the execution time is the sum of the messages'
// zero-load times and the delays. Released a picosecond early, it would
// be shorter.
func TestWorkloadDependencyOrder(t *testing.T) {
	tp := smallMegafly(t)
	// Ranks 0…3 on nodes 0, a (farthest from 0), b (nearest) and c.
	var a, b, c int
	for dst := 1; dst < tp.Nodes(); dst++ {
		if topo.Hops(tp, 0, dst) > topo.Hops(tp, 0, a) {
			a = dst
		}
		if b == 0 || topo.Hops(tp, 0, dst) < topo.Hops(tp, 0, b) {
			b = dst
		}
	}
	for c = 1; c == a || c == b; c++ {
	}
	// m0 0→1 at 1 µs (20 000 B); m1 1→3 500 ns after m0's receipt (dep
	// 2); m2 3→0, 0 B, 700 ns after m1's receipt; m3 0→2 300 ns after
	// m2's receipt; m4 0→2 200 ns after m3's send (dep 1).
	trace := `VEF 4 5 1 0 0 FALSE
C0 0 1 2 3
0 0 1 20000 0 1000 -1
1 1 3 9600 2 500 0
2 3 0 0 2 700 1
3 0 2 4000 2 300 2
4 0 2 4000 1 200 3
`
	for _, mode := range []eee.Mode{eee.AlwaysOn, eee.FastWake} {
		n := build(t, tp, table6(mode, time.Second))
		r := attachMapped(t, n, vefText(t, trace), []int{0, a, b, c})
		run(t, n)
		h := func(x, y int) int { return topo.Hops(tp, x, y) }
		t3 := 1000*ns + zeroLoad(h(0, a), 20000) + 500*ns + zeroLoad(h(a, c), 9600) + 700*ns + zeroLoad(h(c, 0), 0) + 300*ns
		// m3 and m4 share the path 0 → b: m4, sent 200 ns after m3,
		// finds the path free (m3 takes 180 ns per link).
		want := t3 + 200*ns + zeroLoad(h(0, b), 4000)
		if st := r.Stats(); st.ExecTime != want {
			t.Errorf("%v: exec %d ps, want %d", mode, st.ExecTime, want)
		}
	}
}

// TestWorkloadErrors: a bad record found while streaming stops the run
// with FILE:LINE (the replayer's Err; a deadlock surfaces the same way).
func TestWorkloadErrors(t *testing.T) {
	tp := smallMegafly(t)
	n := build(t, tp, table6(eee.DeepSleep, time.Microsecond))
	attach(t, n, vefText(t, "VEF 2 2 1 0 0 TRUE\nC0 0 1\n0 0 1 100 0 0 -1\n1 0 7 100 0 0 -1\n"))
	err := n.Run(context.Background(), 0, nil)
	if err == nil || !strings.Contains(err.Error(), "t.vef:4:") {
		t.Errorf("bad record: %v, want t.vef:4", err)
	}
}

// TestWorkloadDeterminism: the same workload and seed give identical
// results on both event queues; another seed differs.
func TestWorkloadDeterminism(t *testing.T) {
	cfg := workload.Config{Kind: apps.KindStencil, Steps: 4, StepTime: predictor.Duration(5 * time.Microsecond), Imbalance: 0.2, Mapping: workload.MappingRandom}
	res := func(seed uint64, q engine.QueueKind) Result {
		p := deepSleepPBC()
		p.Queue = q
		n := build(t, smallMegafly(t), p)
		attachConfig(t, n, cfg, seed)
		return run(t, n)
	}
	a, b := res(3, engine.QueueCalendar), res(3, engine.QueueHeap)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("same seed, different queues:\n%+v\n%+v", a, b)
	}
	if a.Messages == 0 || a.NodeUtilisation <= 0 {
		t.Errorf("stencil: %d messages, utilisation %v", a.Messages, a.NodeUtilisation)
	}
	if c := res(4, engine.QueueCalendar); reflect.DeepEqual(c, a) {
		t.Error("different seeds gave identical results")
	}
}

// TestWorkloadSteadyStateAllocs: message records, packets and events are
// pooled: a ring of 40 000 dependent messages allocates nothing per
// message once the pools have grown.
func TestWorkloadSteadyStateAllocs(t *testing.T) {
	var b strings.Builder
	const msgs = 40000
	fmt.Fprintf(&b, "VEF 4 %d 1 0 0 TRUE\nC0 0 1 2 3\n0 0 1 12000 0 0 -1\n", msgs)
	for i := 1; i < msgs; i++ {
		fmt.Fprintf(&b, "%d %d %d 12000 2 10 %d\n", i, i%4, (i+1)%4, i-1)
	}
	path := filepath.Join(t.TempDir(), "ring.vef")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	mallocs := func() uint64 {
		w, err := workload.Build(workload.Config{Kind: workload.KindVEF, File: path, Window: 64}, 4, 1)
		if err != nil {
			t.Fatal(err)
		}
		n := build(t, line{}, table6(eee.AlwaysOn, 0))
		r, err := w.NewReplayer()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if err := n.AttachWorkload(r); err != nil {
			t.Fatal(err)
		}
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		if err := n.Run(context.Background(), 0, nil); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&m1)
		if st := r.Stats(); st.Messages != msgs {
			t.Fatalf("%d messages", st.Messages)
		}
		return m1.Mallocs - m0.Mallocs
	}
	if got := mallocs(); got > msgs/100 {
		t.Errorf("%d allocations for %d messages", got, msgs)
	}
}

// TestPackTag: a delivery event carries its tag's top bit and low 31 bits
// (for the driver's prefetch), and gives back exactly those.
func TestPackTag(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 31))
	const kept = uint64(1)<<63 | 1<<31 - 1
	for i := 0; i < 10000; i++ {
		tag := rng.Uint64()
		if i%2 == 0 {
			tag &= 1<<63 | uint64(rng.IntN(1<<20)) // the replayer's: an id, or the collective bit and an index
		}
		if got := unpackTag(packTag(tag)); got != tag&kept {
			t.Fatalf("tag %#x: unpacked %#x, want %#x", tag, got, tag&kept)
		}
	}
}
