package workload

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lpictl/lpictl/sim/topo"
	"github.com/lpictl/lpictl/sim/workload/apps"
	"github.com/lpictl/lpictl/sim/workload/vef"
)

// timedHost records send and delivery times by tag.
type timedHost struct {
	IdealHost
	sendAt map[uint64]int64
	recvAt map[uint64]int64
	sends  []sent
}

func (h *timedHost) Send(src, dst int, bytes int64, tag uint64) {
	h.sendAt[tag] = h.Now()
	h.sends = append(h.sends, sent{src, dst, bytes, h.Now()})
	h.IdealHost.Send(src, dst, bytes, tag)
}

func (h *timedHost) run(t testing.TB, r *Replayer) {
	t.Helper()
	h.sendAt, h.recvAt = map[uint64]int64{}, map[uint64]int64{}
	r.Start(h)
	for len(h.heap) > 0 && r.Err() == nil {
		e := h.pop()
		h.now = e.at
		// The network asks for the prefetches one event ahead; here every
		// replay test runs them (they must change nothing, whatever the tag).
		if e.timer {
			r.PrefetchTimer(e.tag)
			r.Timer(e.tag)
		} else {
			h.recvAt[e.tag] = e.at
			r.PrefetchDelivered(e.tag)
			r.Delivered(e.tag)
		}
	}
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	if !r.Done() {
		t.Fatal("not done")
	}
}

func identity(n int) []int {
	m := make([]int, n)
	for i := range m {
		m[i] = i
	}
	return m
}

func replayText(t testing.TB, text string, h *timedHost) *Replayer {
	return replayTextWith(t, text, h, Options{})
}

// replayTextWith replays text on h with opts, task i on node i.
func replayTextWith(t testing.TB, text string, h *timedHost, opts Options) *Replayer {
	t.Helper()
	rd, err := vef.NewReader(strings.NewReader(text), "t.vef", vef.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewReplayer(rd, identity(rd.Tasks()), opts)
	if err != nil {
		t.Fatal(err)
	}
	h.run(t, r)
	return r
}

// TestDependencyKinds replays a hand-made trace with every dependency kind
// on a 1 ns, infinite-bandwidth network and checks each send time.
func TestDependencyKinds(t *testing.T) {
	const text = `VEF 4 4 1 1 4 FALSE
C0 0 1 2 3
0 0 1 11 0 5000 -1
1 1 2 22 2 1000 0
2 1 3 33 1 200 1
G0 0 6 0 0 0 1 0 0
G0 0 6 1 0 0 1 0 2
G0 0 6 2 0 0 2 0 1
G0 0 6 3 0 0 2 0 2
3 2 0 44 3 300 G0
`
	h := &timedHost{IdealHost: IdealHost{Latency: 1000}}
	r := replayText(t, text, h)
	want := map[uint64]int64{
		0: 5_000_000,             // dep 0: absolute
		1: 5_001_000 + 1_000_000, // dep 2: receipt of 0 + 1 µs
		2: 6_001_000 + 200_000,   // dep 1: send of 1 + 200 ns
		3: 6_204_000 + 300_000,   // dep 3: task 2 leaves the barrier at 6.204 µs, + 300 ns
	}
	for id, at := range want {
		if got := h.sendAt[id]; got != at {
			t.Errorf("message %d sent at %d, want %d", id, got, at)
		}
	}
	st := r.Stats()
	if st.ExecTime != 6_505_000 {
		t.Errorf("exec time %d, want 6505000", st.ExecTime)
	}
	// Compute: task 0 5 µs before its first record; task 1 1.2 µs; task 2 0.3 µs.
	if st.RankBusy[0] != 5_000_000 || st.RankBusy[1] != 1_200_000 || st.RankBusy[2] != 300_000 || st.RankBusy[3] != 0 {
		t.Errorf("busy %v", st.RankBusy)
	}
}

// TestNeverEarly replays a generated model on a slow network and checks
// that every message leaves exactly when its dependency plus its delay
// allow, and that the slower network stretches the run.
func TestNeverEarly(t *testing.T) {
	w, err := Build(Config{Kind: apps.KindStencil, Ranks: 24, Steps: 5, Imbalance: 0.3}, 24, 7)
	if err != nil {
		t.Fatal(err)
	}
	var execs []int64
	for _, lat := range []int64{500_000, 5_000_000} {
		src, _ := w.Open()
		recs := map[int64]vef.Record{}
		var rec vef.Record
		for src.Next(&rec) == nil {
			recs[rec.ID] = rec
		}
		r, err := w.NewReplayer()
		if err != nil {
			t.Fatal(err)
		}
		h := &timedHost{IdealHost: IdealHost{Latency: lat, Bandwidth: 100e9}}
		h.run(t, r)
		for id, rec := range recs {
			var dep int64
			switch rec.Dep {
			case vef.DepNone:
				dep = 0
			case vef.DepSend:
				dep = h.sendAt[uint64(rec.DepID)]
			case vef.DepRecv:
				dep = h.recvAt[uint64(rec.DepID)]
			default:
				t.Fatalf("unexpected dep %d", rec.Dep)
			}
			if got := h.sendAt[uint64(id)]; got != dep+rec.Time {
				t.Fatalf("message %d sent at %d, want dependency %d + %d", id, got, dep, rec.Time)
			}
		}
		execs = append(execs, r.Stats().ExecTime)
	}
	if execs[1] <= execs[0] {
		t.Errorf("slower network did not stretch the run: %v", execs)
	}
}

// TestComputeOnly: a workload of compute phases only ends exactly when its
// longest compute does.
func TestComputeOnly(t *testing.T) {
	var b strings.Builder
	b.WriteString("VEF 3 6 1 0 0 FALSE\nC0 0 1 2\n")
	for i := 0; i < 3; i++ {
		fmt.Fprintf(&b, "%d %d %d 0 0 %d -1\n", 2*i, i, i, 1000*(i+1))
		fmt.Fprintf(&b, "%d %d %d 0 2 %d.5 %d\n", 2*i+1, i, i, 7777*(i+1), 2*i)
	}
	path := filepath.Join(t.TempDir(), "c.vef")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := Build(Config{Kind: KindVEF, File: path}, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := w.Summarize()
	if err != nil {
		t.Fatal(err)
	}
	st := runIdeal(t, w)
	if st.ExecTime != sum.MaxCompute || st.ExecTime != (3000+3*7777)*1000+500 {
		t.Errorf("exec %d, compute %d", st.ExecTime, sum.MaxCompute)
	}
	for i, busy := range st.RankBusy {
		if want := int64(1000*(i+1)+7777*(i+1))*1000 + 500; busy != want || st.RankFinish[i] != want {
			t.Errorf("rank %d busy %d finish %d, want %d", i, busy, st.RankFinish[i], want)
		}
	}
	if st.Messages != 0 || st.SelfMessages != 6 {
		t.Errorf("messages %d self %d", st.Messages, st.SelfMessages)
	}
	if u := st.Utilisation(3); u[2] != 1 {
		t.Errorf("utilisation %v", u)
	}
}

func exportVEF(t testing.TB, w *Workload) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := vef.WriteAll(&b, w.Open); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestExportRoundTrip: every kind of workload exports to VEF, reads back,
// exports byte-identically, and replays to the same statistics.
func TestExportRoundTrip(t *testing.T) {
	cfgs := map[string]Config{}
	for _, k := range apps.Kinds() {
		c := Config{Kind: k, Ranks: 16, Steps: 3}
		if k == apps.KindSynthetic {
			c.Steps, c.Duration = 0, 30000
			c.Synthetic = &apps.Synthetic{Arrivals: "onoff", Distribution: "pareto"}
		}
		cfgs[k] = c
	}
	cfgs["multi"] = Config{Jobs: []Config{
		{Kind: apps.KindStencil, Ranks: 8, Steps: 4},
		{Kind: apps.KindMLWF, Ranks: 6, Steps: 1},
		{Kind: apps.KindSynthetic, Ranks: 4, Duration: 20000, Repeat: 2},
	}, Mapping: MappingRandom}
	dir := t.TempDir()
	for name, cfg := range cfgs {
		t.Run(name, func(t *testing.T) {
			w, err := Build(cfg, 32, 3)
			if err != nil {
				t.Fatal(err)
			}
			first := exportVEF(t, w)
			path := filepath.Join(dir, name+".vef")
			if err := os.WriteFile(path, first, 0o644); err != nil {
				t.Fatal(err)
			}
			back := Config{Kind: KindVEF, File: path, Mapping: cfg.Mapping}
			wb, err := Build(back, 32, 3)
			if err != nil {
				t.Fatal(err)
			}
			if second := exportVEF(t, wb); !bytes.Equal(first, second) {
				t.Fatal("export → read → export is not byte-identical")
			}
			a, b := runIdeal(t, w), runIdeal(t, wb)
			if a.Messages != b.Messages || a.Bytes != b.Bytes || a.ExecTime != b.ExecTime || a.Collectives != b.Collectives {
				t.Errorf("generated %+v\nreplayed  %+v", a, b)
			}
			if a.Messages == 0 {
				t.Error("no messages")
			}
		})
	}
}

func TestMultiJob(t *testing.T) {
	cfg := Config{Jobs: []Config{
		{Kind: apps.KindStencil, Ranks: 8, Steps: 10, StepTime: 10000},
		{Kind: apps.KindAlltoall, Ranks: 8, Steps: 2, StepTime: 10000},
	}}
	w, err := Build(cfg, 20, 1)
	if err != nil {
		t.Fatal(err)
	}
	if w.Ranks != 16 || w.Jobs[0].Repeat != 1 || w.Jobs[1].Repeat != 5 || w.Jobs[1].FirstRank != 8 {
		t.Fatalf("jobs %+v", w.Jobs)
	}
	st := runIdeal(t, w)
	if st.Collectives[vef.Alltoall] != 10 {
		t.Errorf("alltoall ran %d times, want 2 × 5", st.Collectives[vef.Alltoall])
	}
	// Disjoint node sets, and every message stays inside its job.
	src, _ := w.Open()
	var rec vef.Record
	for src.Next(&rec) == nil {
		if rec.Kind == vef.Message && (rec.Src < 8) != (rec.Dst < 8) {
			t.Fatalf("message crosses jobs: %+v", rec)
		}
	}
	// Both jobs end at about the same time (auto repeat).
	a, b := maxOf(st.RankFinish[:8]), maxOf(st.RankFinish[8:])
	if b < a/2 || a < b/2 {
		t.Errorf("jobs end at %d and %d", a, b)
	}
}

func maxOf(s []int64) int64 {
	var m int64
	for _, v := range s {
		m = max(m, v)
	}
	return m
}

// TestMappingHops: a linear mapping keeps a 3D stencil's neighbours close
// on a Megafly; a random one spreads them over groups.
func TestMappingHops(t *testing.T) {
	tp, err := topo.Build(topo.Config{Kind: topo.KindMegafly, Radix: 8}) // 17 groups × 16 nodes
	if err != nil {
		t.Fatal(err)
	}
	mean := func(mapping string) (float64, map[int]int) {
		w, err := Build(Config{Kind: apps.KindStencil, Ranks: 64, Steps: 1, Mapping: mapping}, tp.Nodes(), 5)
		if err != nil {
			t.Fatal(err)
		}
		r, _ := w.NewReplayer()
		h := &timedHost{IdealHost: *NewIdealHost()}
		h.run(t, r)
		hist := map[int]int{}
		sum := 0
		for _, s := range h.sends {
			n := topo.Hops(tp, s.src, s.dst)
			hist[n]++
			sum += n
		}
		return float64(sum) / float64(len(h.sends)), hist
	}
	lin, lh := mean(MappingLinear)
	rnd, rh := mean(MappingRandom)
	t.Logf("linear mean %.2f %v; random mean %.2f %v", lin, lh, rnd, rh)
	if !(lin < rnd) {
		t.Errorf("linear mapping mean hops %.2f not below random %.2f", lin, rnd)
	}
	if lh[2] == 0 || rh[5] <= lh[5] {
		t.Errorf("hop histograms: linear %v, random %v", lh, rh)
	}
}

func TestReadMapping(t *testing.T) {
	m, err := ReadMapping(strings.NewReader("# nodes\n3\n\n1 # rank 1\n0\n"), "m.txt", 3, 4)
	if err != nil || fmt.Sprint(m) != "[3 1 0]" {
		t.Fatalf("%v %v", m, err)
	}
	for text, want := range map[string]string{
		"3\n1\n":       "m.txt:3: 2 nodes for 3 ranks",
		"3\n1\n1\n":    "m.txt:3: node 1 already holds rank 1",
		"3\n9\n1\n":    "m.txt:2: node 9 out of range",
		"3\nx\n1\n":    "m.txt:2: malformed node number",
		"0\n1\n2\n3\n": "m.txt:4: more lines than",
	} {
		if _, err := ReadMapping(strings.NewReader(text), "m.txt", 3, 4); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
}

func TestRandomMappingDeterministic(t *testing.T) {
	a, _ := RandomMapping(10, 100, 42)
	b, _ := RandomMapping(10, 100, 42)
	c, _ := RandomMapping(10, 100, 43)
	if fmt.Sprint(a) != fmt.Sprint(b) || fmt.Sprint(a) == fmt.Sprint(c) {
		t.Errorf("%v %v %v", a, b, c)
	}
}

func FuzzReadMapping(f *testing.F) {
	f.Add("0\n1\n2\n", 3, 4)
	f.Add("# x\n5\n", 1, 8)
	f.Fuzz(func(t *testing.T, text string, ranks, nodes int) {
		if ranks < 0 || ranks > 1000 || nodes <= 0 || nodes > 1000 {
			return
		}
		m, err := ReadMapping(strings.NewReader(text), "f", ranks, nodes)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f:") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("bad error %q", err)
			}
			return
		}
		seen := map[int]bool{}
		for _, n := range m {
			if n < 0 || n >= nodes || seen[n] {
				t.Fatalf("bad mapping %v", m)
			}
			seen[n] = true
		}
		if len(m) != ranks {
			t.Fatalf("len %d", len(m))
		}
	})
}

// TestDeterministic: the same workload and seed give the same calls.
func TestDeterministic(t *testing.T) {
	cfg := Config{Kind: apps.KindLAMMPS, Ranks: 27, Steps: 6, Imbalance: 0.2, Mapping: MappingRandom}
	var runs [2][]sent
	for i := range runs {
		w, err := Build(cfg, 64, 9)
		if err != nil {
			t.Fatal(err)
		}
		r, _ := w.NewReplayer()
		h := &timedHost{IdealHost: *NewIdealHost()}
		h.run(t, r)
		runs[i] = h.sends
	}
	if fmt.Sprint(runs[0]) != fmt.Sprint(runs[1]) {
		t.Error("two runs differ")
	}
}

// TestMultiJobInterleaved merges two open-loop jobs record by record, with
// dependencies reaching far back in each job's own numbering.
func TestMultiJobInterleaved(t *testing.T) {
	cfg := Config{Jobs: []Config{
		{Kind: apps.KindSynthetic, Ranks: 4, Duration: 2_000_000, Repeat: 2},
		{Kind: apps.KindSynthetic, Ranks: 4, Duration: 2_000_000, Repeat: 2},
	}}
	w, err := Build(cfg, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	st := runIdeal(t, w)
	if st.P2P < 10000 {
		t.Errorf("only %d messages", st.P2P)
	}
}

// TestOpenLoopNoCompute: open-loop traffic (every record of a task at an
// absolute time) computes nothing, alone, next to closed-loop tasks, and
// repeated in a multi-job workload; closed-loop tasks keep the time before
// their first record as compute.
func TestOpenLoopNoCompute(t *testing.T) {
	// Synthetic traffic alone: no compute, utilisation 0.
	w, err := Build(Config{Kind: apps.KindSynthetic, Ranks: 8, Duration: 100_000}, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	st := runIdeal(t, w)
	if st.P2P == 0 {
		t.Fatal("no messages")
	}
	for r, b := range st.RankBusy {
		if b != 0 {
			t.Errorf("synthetic rank %d busy %d ps", r, b)
		}
	}
	for n, u := range st.Utilisation(8) {
		if u != 0 {
			t.Errorf("synthetic node %d utilisation %v", n, u)
		}
	}
	if sum, err := w.Summarize(); err != nil || sum.MaxCompute != 0 || sum.Span <= 0 {
		t.Errorf("summary %+v %v", sum, err)
	}

	// A trace: task 0 open-loop (two absolute-time sends), task 1 computes
	// 2 µs before its first send, then 1 µs after that send; task 2 only
	// receives.
	const text = `VEF 3 4 1 0 0 TRUE
C0 0 1 2
0 0 2 8 0 5000 -1
1 1 0 8 0 2000 -1
2 1 2 8 1 1000 1
3 0 2 8 0 9000 -1
`
	r := replayText(t, text, &timedHost{IdealHost: IdealHost{Latency: 1000}})
	st = r.Stats()
	if st.RankBusy[0] != 0 || st.RankBusy[1] != 3_000_000 || st.RankBusy[2] != 0 {
		t.Errorf("busy %v, want [0 3000000 0]", st.RankBusy)
	}

	// Multi-job: a repeated synthetic job stays open-loop (its repeats are
	// shifted in time, not chained by compute); the stencil computes.
	w, err = Build(Config{Jobs: []Config{
		{Kind: apps.KindStencil, Ranks: 8, Steps: 10, StepTime: 10000},
		{Kind: apps.KindSynthetic, Ranks: 4, Duration: 20000, Repeat: 3},
		{Kind: apps.KindSynthetic, Ranks: 4, Duration: 20000}, // auto: about as long as the stencil
	}}, 16, 1)
	if err != nil {
		t.Fatal(err)
	}
	if w.Jobs[2].Repeat != 5 {
		t.Errorf("auto repeat of the open-loop job: %d, want 100 µs / 20 µs = 5", w.Jobs[2].Repeat)
	}
	st = runIdeal(t, w)
	for r, b := range st.RankBusy {
		if r < 8 && b < 10*10_000_000 {
			t.Errorf("stencil rank %d busy %d ps", r, b)
		}
		if r >= 8 && b != 0 {
			t.Errorf("synthetic rank %d busy %d ps", r, b)
		}
	}
	if f := maxOf(st.RankFinish[8:12]); f < 2*20_000_000 {
		t.Errorf("3 repeats of 20 µs ended at %d ps", f)
	}
}

// TestMappingsK: k ranks per node. Linear: rank r on node ⌊r/k⌋; random:
// k consecutive ranks on each node of the k = 1 permutation; file: a node
// may appear k times, not k+1.
func TestMappingsK(t *testing.T) {
	m, err := LinearMappingK(5, 3, 2)
	if err != nil || !slices.Equal(m, []int{0, 0, 1, 1, 2}) {
		t.Fatalf("linear: %v %v", m, err)
	}
	if _, err := LinearMappingK(7, 3, 2); err == nil || !strings.Contains(err.Error(), "7 ranks do not fit on 3 nodes (2 per node)") {
		t.Fatalf("linear, too many: %v", err)
	}
	one, _ := RandomMapping(3, 10, 7)
	two, err := RandomMappingK(6, 10, 2, 7)
	if err != nil {
		t.Fatal(err)
	}
	for r, n := range two {
		if n != one[r/2] {
			t.Fatalf("random k=2: %v, want pairs on %v", two, one)
		}
	}
	m, err = ReadMappingK(strings.NewReader("1\n1\n0\n"), "m.txt", 3, 2, 2)
	if err != nil || !slices.Equal(m, []int{1, 1, 0}) {
		t.Fatalf("file: %v %v", m, err)
	}
	if _, err := ReadMappingK(strings.NewReader("1\n1\n1\n"), "m.txt", 3, 2, 2); err == nil ||
		err.Error() != "m.txt:3: node 1 already holds ranks [0 1] (2 per node: workload.ranks_per_node)" {
		t.Fatalf("file, a third rank on node 1: %v", err)
	}
}

// TestBlockingSends replays, with and without Options.BlockingSends, task 0
// sending three messages (at 0, 100 ns and 5 µs) over a 1 µs network and
// task 1 answering the send of the second 200 ns later: blocking, the
// second waits for the first's delivery (1 µs) and the answer follows that
// real send; the third leaves on time; task 1's answer is never held by
// task 0's messages.
func TestBlockingSends(t *testing.T) {
	const text = `VEF 2 4 1 0 0 TRUE
C0 0 1
0 0 1 10 0 0 -1
1 0 1 10 0 100 -1
2 0 1 10 0 5000 -1
3 1 0 10 1 200 1
`
	for _, tc := range []struct {
		blocking bool
		want     [4]int64
	}{
		{false, [4]int64{0, 100_000, 5_000_000, 300_000}},
		// 1 waits for 0's delivery at 1 µs; 3 is 200 ns after 1's send.
		{true, [4]int64{0, 1_000_000, 5_000_000, 1_200_000}},
	} {
		h := &timedHost{IdealHost: IdealHost{Latency: 1_000_000}}
		replayTextWith(t, text, h, Options{BlockingSends: tc.blocking})
		for id, at := range tc.want {
			if got := h.sendAt[uint64(id)]; got != at {
				t.Errorf("blocking %v: message %d sent at %d ps, want %d", tc.blocking, id, got, at)
			}
		}
	}
}

// TestBlockingSendsFIFO: messages released together while their task's
// previous one is on its way leave one per delivery, in release order.
func TestBlockingSendsFIFO(t *testing.T) {
	const text = `VEF 2 4 1 0 0 TRUE
C0 0 1
0 0 1 10 0 0 -1
1 0 1 10 0 10 -1
2 0 1 10 0 20 -1
3 0 1 10 0 30 -1
`
	h := &timedHost{IdealHost: IdealHost{Latency: 1_000_000}}
	r := replayTextWith(t, text, h, Options{BlockingSends: true})
	for id := range 4 {
		if got, want := h.sendAt[uint64(id)], int64(id)*1_000_000; got != want {
			t.Errorf("message %d sent at %d ps, want %d", id, got, want)
		}
	}
	if st := r.Stats(); st.ExecTime != 4_000_000 {
		t.Errorf("exec time %d, want 4000000", st.ExecTime)
	}
}
