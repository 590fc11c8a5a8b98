package workload

import (
	"fmt"
	"strings"
	"testing"

	"github.com/lpictl/lpictl/sim/workload/vef"
)

// recHost wraps an IdealHost and records every message.
type recHost struct {
	*IdealHost
	sends []sent
}

type sent struct {
	src, dst int
	bytes    int64
	at       int64
}

func (h *recHost) Send(src, dst int, bytes int64, tag uint64) {
	h.sends = append(h.sends, sent{src, dst, bytes, h.Now()})
	h.IdealHost.Send(src, dst, bytes, tag)
}

// runTrace replays a VEF text on a latency-only host (1 ns per message,
// infinite bandwidth) with the identity mapping.
func runTrace(t *testing.T, text string, opts Options) (*Replayer, *recHost) {
	t.Helper()
	rd, err := vef.NewReader(strings.NewReader(text), "test.vef", vef.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nodes := make([]int, rd.Tasks())
	for i := range nodes {
		nodes[i] = i
	}
	r, err := NewReplayer(rd, nodes, opts)
	if err != nil {
		t.Fatal(err)
	}
	h := &recHost{IdealHost: &IdealHost{Latency: 1000}}
	// Run through the wrapper so Send is recorded.
	h.now, h.seq, h.heap = 0, 0, nil
	r.Start(h)
	for len(h.heap) > 0 && r.Err() == nil {
		e := h.pop()
		h.now = e.at
		if e.timer {
			r.Timer(e.tag)
		} else {
			r.Delivered(e.tag)
		}
	}
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	if !r.Done() {
		t.Fatal("replay not done")
	}
	return r, h
}

// collTrace writes a trace of one collective over all p tasks.
func collTrace(p int, op vef.Op, send, recv func(i int) int64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "VEF %d 0 1 1 %d TRUE\nC0", p, p)
	for i := 0; i < p; i++ {
		fmt.Fprintf(&b, " %d", i)
	}
	b.WriteString("\n")
	for i := 0; i < p; i++ {
		fmt.Fprintf(&b, "G0 0 %d %d %d %d 0 0 -1\n", op, i, send(i), recv(i))
	}
	return b.String()
}

func c(v int64) func(int) int64 { return func(int) int64 { return v } }

func rootOnly(root int, v int64) func(int) int64 {
	return func(i int) int64 {
		if i == root {
			return v
		}
		return 0
	}
}

func nonRoot(root int, v int64) func(int) int64 {
	return func(i int) int64 {
		if i == root {
			return 0
		}
		return v
	}
}

func TestCollectiveAlgorithms(t *testing.T) {
	var dflt Collectives
	rab := Collectives{AllreduceLarge: "rabenseifner"}
	idx := func(f func(i int) int64) func(int) int64 { return f }
	tests := []struct {
		name     string
		p        int
		op       vef.Op
		send     func(int) int64
		recv     func(int) int64
		opts     Collectives
		alg      Algorithm
		messages int
		// rounds is the critical path in messages: the execution time on a
		// latency-only network divided by the latency. It equals the
		// algorithm's step count except where tasks need not wait for a
		// step (bcast on 5 tasks: depth 2 in 3 steps; the non-power-of-two
		// fold of recursive doubling overlaps the first exchange).
		rounds int64
		recvd  func(i int) int64 // bytes each task receives over the network
	}{
		{"bcast-8", 8, vef.Bcast, rootOnly(0, 100), nonRoot(0, 100), dflt, AlgBinomialBcast, 7, 3, nonRoot(0, 100)},
		{"bcast-5-root2", 5, vef.Bcast, rootOnly(2, 100), nonRoot(2, 100), dflt, AlgBinomialBcast, 4, 2, nonRoot(2, 100)},
		{"bcast-16", 16, vef.Bcast, rootOnly(0, 1), nonRoot(0, 1), dflt, AlgBinomialBcast, 15, 4, nonRoot(0, 1)},
		{"reduce-8-root3", 8, vef.Reduce, nonRoot(3, 100), rootOnly(3, 100), dflt, AlgBinomialReduce, 7, 3, nil},
		{"allreduce-rd-8", 8, vef.Allreduce, c(8), c(8), dflt, AlgRecursiveDoubling, 24, 3, c(24)},
		{"allreduce-rd-6", 6, vef.Allreduce, c(8), c(8), dflt, AlgRecursiveDoubling, 2 + 4*2 + 2, 3, nil},
		{"allreduce-ring-4", 4, vef.Allreduce, c(40000), c(40000), dflt, AlgRing, 24, 6, c(60000)},
		{"allreduce-ring-3-uneven", 3, vef.Allreduce, c(10001), c(10001), dflt, AlgRing, 12, 4, nil},
		{"allreduce-rabenseifner-8", 8, vef.Allreduce, c(80000), c(80000), rab, AlgRabenseifner, 48, 6, c(40000 + 20000 + 10000 + 10000 + 20000 + 40000)},
		{"allreduce-rabenseifner-6", 6, vef.Allreduce, c(80000), c(80000), rab, AlgRabenseifner, 2 + 4*2*2 + 2, 6, nil},
		{"gather-4-root1", 4, vef.Gather, idx(func(i int) int64 { return int64(10 * (i + 1)) }), rootOnly(1, 100), dflt, AlgLinearGather, 3, 1, rootOnly(1, 80)},
		{"scatter-4-root0", 4, vef.Scatter, rootOnly(0, 100), idx(func(i int) int64 { return int64(10 * (i + 1)) }), dflt, AlgLinearScatter, 3, 1, idx(func(i int) int64 {
			if i == 0 {
				return 0
			}
			return int64(10 * (i + 1))
		})},
		{"allgather-4", 4, vef.Allgather, idx(func(i int) int64 { return int64(i + 1) }), c(10), dflt, AlgRingAllgather, 12, 3, idx(func(i int) int64 { return 10 - int64(i+1) })},
		{"barrier-8", 8, vef.Barrier, c(0), c(0), dflt, AlgDissemination, 24, 3, c(0)},
		{"barrier-5", 5, vef.Barrier, c(0), c(0), dflt, AlgDissemination, 15, 3, c(0)},
		{"alltoall-bruck-8", 8, vef.Alltoall, c(16), c(0), dflt, AlgBruck, 24, 3, c(3 * 4 * 16)},
		{"alltoall-bruck-10", 10, vef.Alltoall, c(16), c(0), dflt, AlgBruck, 40, 4, c((5 + 4 + 4 + 2) * 16)},
		{"alltoall-pairwise-4", 4, vef.Alltoall, c(1000), c(0), dflt, AlgPairwise, 12, 3, c(3000)},
		{"alltoall-pairwise-large-8", 8, vef.Alltoall, c(1000), c(0), dflt, AlgPairwise, 56, 7, c(7000)},
		{"alltoallv-4", 4, vef.Alltoall, c(402), c(1), dflt, AlgPairwise, 12, 3, nil},
		{"one-task", 1, vef.Allreduce, c(8), c(8), dflt, AlgNone, 0, 0, c(0)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, h := runTrace(t, collTrace(tc.p, tc.op, tc.send, tc.recv), Options{Collectives: tc.opts})
			st := r.Stats()
			if st.Algorithms[tc.alg] != 1 {
				t.Errorf("algorithm: got %v, want %s", st.Algorithms, tc.alg)
			}
			if len(h.sends) != tc.messages || st.Messages != int64(tc.messages) {
				t.Errorf("messages: got %d (stats %d), want %d", len(h.sends), st.Messages, tc.messages)
			}
			if got := st.ExecTime / 1000; got != tc.rounds {
				t.Errorf("rounds: got %d, want %d", got, tc.rounds)
			}
			got := make([]int64, tc.p)
			for _, s := range h.sends {
				if s.src == s.dst {
					t.Errorf("self message %v", s)
				}
				got[s.dst] += s.bytes
			}
			if tc.recvd != nil {
				for i := range got {
					if got[i] != tc.recvd(i) {
						t.Errorf("task %d received %d bytes, want %d", i, got[i], tc.recvd(i))
					}
				}
			}
			if st.Collectives[tc.op] != 1 {
				t.Errorf("collectives counted: %v", st.Collectives)
			}
		})
	}
}

// TestReduceTree checks the binomial reduce's edges: every non-root sends
// its X exactly once, to its parent.
func TestReduceTree(t *testing.T) {
	_, h := runTrace(t, collTrace(8, vef.Reduce, nonRoot(3, 100), rootOnly(3, 100)), Options{})
	from := map[int]int{}
	for _, s := range h.sends {
		from[s.src]++
		rel := (s.src - 3 + 8) % 8
		parent := (rel&(rel-1) + 3) % 8 // clear the lowest set bit
		if s.dst != parent || s.bytes != 100 {
			t.Errorf("send %+v, want to %d", s, parent)
		}
	}
	for i := 0; i < 8; i++ {
		if want := map[bool]int{true: 0, false: 1}[i == 3]; from[i] != want {
			t.Errorf("task %d sent %d times", i, from[i])
		}
	}
}

// TestAlltoallvBytes checks the vectorial split: send bytes over all tasks.
func TestAlltoallvBytes(t *testing.T) {
	_, h := runTrace(t, collTrace(4, vef.Alltoall, c(402), c(1)), Options{})
	var total int64
	for _, s := range h.sends {
		rel := (s.dst - s.src + 4) % 4
		want := int64(100)
		if rel < 402%4 {
			want++
		}
		if s.bytes != want {
			t.Errorf("%d→%d: %d bytes, want %d", s.src, s.dst, s.bytes, want)
		}
		total += s.bytes
	}
	if total != 4*(402-101) { // each keeps its own share (relative index 0 gets the +1)
		t.Errorf("total %d", total)
	}
}

// mpichRabenseifner transliterates MPICH's
// MPIR_Allreduce_intra_reduce_scatter_allgather (count in bytes, the
// send_idx/recv_idx/last_idx loops as written there) and lists every
// message as (src, dst, bytes): an independent reference for the plan.
func mpichRabenseifner(p int, count int64) []sent {
	pof2 := 1
	for pof2*2 <= p {
		pof2 *= 2
	}
	rem := p - pof2
	var out []sent
	real := func(nr int) int {
		if nr < rem {
			return nr*2 + 1
		}
		return nr + rem
	}
	for rank := 0; rank < 2*rem; rank += 2 {
		out = append(out, sent{rank, rank + 1, count, 0})
	}
	cnts := make([]int64, pof2)
	for i := range cnts {
		cnts[i] = count / int64(pof2)
		if int64(i) < count%int64(pof2) {
			cnts[i]++
		}
	}
	sum := func(a, b int) int64 {
		var s int64
		for i := a; i < b; i++ {
			s += cnts[i]
		}
		return s
	}
	for newrank := 0; newrank < pof2; newrank++ {
		mask, sendIdx, recvIdx, lastIdx := 1, 0, 0, pof2
		for mask < pof2 {
			newdst := newrank ^ mask
			var n int64
			if newrank < newdst {
				sendIdx = recvIdx + pof2/(mask*2)
				n = sum(sendIdx, lastIdx)
			} else {
				recvIdx = sendIdx + pof2/(mask*2)
				n = sum(sendIdx, recvIdx)
			}
			out = append(out, sent{real(newrank), real(newdst), n, 0})
			sendIdx = recvIdx
			mask <<= 1
			if mask < pof2 {
				lastIdx = recvIdx + pof2/mask
			}
		}
		mask >>= 1
		for mask > 0 {
			newdst := newrank ^ mask
			var n int64
			if newrank < newdst {
				if mask != pof2/2 {
					lastIdx += pof2 / (mask * 2)
				}
				recvIdx = sendIdx + pof2/(mask*2)
				n = sum(sendIdx, recvIdx)
			} else {
				recvIdx = sendIdx - pof2/(mask*2)
				n = sum(sendIdx, lastIdx)
			}
			out = append(out, sent{real(newrank), real(newdst), n, 0})
			if newrank > newdst {
				sendIdx = recvIdx
			}
			mask >>= 1
		}
	}
	for rank := 1; rank < 2*rem; rank += 2 {
		out = append(out, sent{rank, rank - 1, count, 0})
	}
	return out
}

// TestRabenseifnerExactBytes: Rabenseifner's allreduce splits the
// remainder bytes exactly, as MPICH does, instead of rounding every
// halving up (item 14: 2 ranks × 1 000 003 B moved 2 000 008 B). The
// totals are hand-computed: for P a power of two every rank sends X less
// its own final block in the reduce-scatter and the same again in the
// allgather, so the ranks move 2·(P−1)·X in all whatever the remainder;
// with r = P − P′ > 0 the fold adds r·X before and r·X after, so the
// total is 2·(P′−1)·X + 2·r·X. Every message also matches a
// transliteration of MPICH's index loops.
func TestRabenseifnerExactBytes(t *testing.T) {
	rab := Collectives{AllreduceLarge: "rabenseifner"}
	tests := []struct {
		name  string
		p     int
		x     int64
		total int64 // hand calculation
	}{
		// 2 ranks: blocks of 500 002 and 500 001 B; each rank sends one
		// block and receives the other, twice: 2·1 000 003.
		{"p2-odd", 2, 1_000_003, 2_000_006},
		// P = 64: 2·63·10 000 (the old rounding gave 1 260 160).
		{"p64", 64, 10_000, 1_260_000},
		{"p8-even", 8, 80_000, 1_120_000},
		// 10 007 = 8·1250 + 7: seven blocks of 1251, one of 1250.
		{"p8-rem7", 8, 10_007, 2 * 7 * 10_007},
		{"p16-rem1", 16, 160_001, 2 * 15 * 160_001},
		// P = 6: P′ = 4, r = 2: 2·3·X + 2·2·X = 10·X.
		{"p6", 6, 10_001, 10 * 10_001},
		// P = 5: P′ = 4, r = 1: 2·3·X + 2·X = 8·X.
		{"p5", 5, 10_003, 8 * 10_003},
		// P = 3: P′ = 2, r = 1: 2·X + 2·X.
		{"p3", 3, 1_000_003, 4 * 1_000_003},
		{"p12", 12, 99_999, (2*7 + 2*4) * 99_999},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, h := runTrace(t, collTrace(tc.p, vef.Allreduce, c(tc.x), c(tc.x)), Options{Collectives: rab})
			st := r.Stats()
			if st.Algorithms[AlgRabenseifner] != 1 {
				t.Fatalf("algorithm %v", st.Algorithms)
			}
			if st.Bytes != tc.total || st.CollBytes != tc.total {
				t.Errorf("moved %d B (collective %d), want %d", st.Bytes, st.CollBytes, tc.total)
			}
			got := map[sent]int{}
			for _, s := range h.sends {
				got[sent{s.src, s.dst, s.bytes, 0}]++
			}
			want := map[sent]int{}
			var sum int64
			for _, s := range mpichRabenseifner(tc.p, tc.x) {
				want[s]++
				sum += s.bytes
			}
			if sum != tc.total {
				t.Errorf("MPICH reference moves %d B, hand calculation %d", sum, tc.total)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("messages\n got %v\nwant %v", got, want)
			}
			// The ring moves the same total for a power of two.
			if tc.p&(tc.p-1) == 0 {
				rr, _ := runTrace(t, collTrace(tc.p, vef.Allreduce, c(tc.x), c(tc.x)), Options{})
				if b := rr.Stats().Bytes; b != tc.total {
					t.Errorf("ring moves %d B, want %d", b, tc.total)
				}
			}
		})
	}
}
