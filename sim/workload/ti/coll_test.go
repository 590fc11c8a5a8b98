package ti

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lpictl/lpictl/sim/workload/sched"
)

// steps renders rank r's ops as steps: ops sharing their dependencies are
// one step ("s3:512" send to 3 of 512 B, "r1:512" receive, "c5000" calc of
// 5000 ps), steps separated by " | ". It checks that step k requires
// exactly the ops of step k−1 (completion) and step 0 nothing.
func steps(s *sched.Schedule, r int) (string, error) {
	rk := &s.Ranks[r]
	var out []string
	var prev, cur []uint32 // ops of the previous and current step
	var curDeps []sched.Dep
	var words []string
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.Join(words, " "))
		}
		prev, cur, words = cur, nil, nil
	}
	for i := range rk.Ops {
		op := &rk.Ops[i]
		deps := s.OpDeps(r, uint32(i))
		if len(cur) == 0 || !slices.Equal(deps, curDeps) {
			flush()
			curDeps = deps
			var want []sched.Dep
			for _, p := range prev {
				want = append(want, sched.Dep{Op: p})
			}
			if !slices.Equal(deps, want) {
				return "", fmt.Errorf("rank %d op %d: deps %v, want %v (the previous step)", r, i, deps, want)
			}
		}
		cur = append(cur, uint32(i))
		switch op.Kind {
		case sched.Send:
			words = append(words, fmt.Sprintf("s%d:%d", op.Peer, op.Bytes))
		case sched.Recv:
			words = append(words, fmt.Sprintf("r%d:%d", op.Peer, op.Bytes))
		case sched.Calc:
			words = append(words, fmt.Sprintf("c%d", op.Time))
		}
		if op.Kind != sched.Calc && (op.Tag != CollTagBase || op.NonBlocking) {
			return "", fmt.Errorf("rank %d op %d: tag %d nonblocking %v, want tag %d blocking", r, i, op.Tag, op.NonBlocking, CollTagBase)
		}
	}
	flush()
	return strings.Join(out, " | "), nil
}

// TestCollectives: one collective per trace, at 4 ranks and at 3, against
// the steps worked out by hand from the algorithms of doc.go.
func TestCollectives(t *testing.T) {
	tests := []struct {
		name  string
		lines []string // rank r's action
		want  []string // rank r's steps
	}{
		// ---- 4 ranks (p = 4) ----
		{"barrier4", []string{"barrier", "barrier", "barrier", "barrier"}, []string{
			// recursive doubling: partner r^1, then r^2; 0-byte messages
			"s1:0 r1:0 | s2:0 r2:0", "s0:0 r0:0 | s3:0 r3:0", "s3:0 r3:0 | s0:0 r0:0", "s2:0 r2:0 | s1:0 r1:0"}},
		{"allreduce4", rep(4, "allreduce 10 5000 1"), []string{
			// 10 MPI_INT = 40 B; comp_size 5000 flops = 5 µs after it
			"s1:40 r1:40 | s2:40 r2:40 | c5000000", "s0:40 r0:40 | s3:40 r3:40 | c5000000",
			"s3:40 r3:40 | s0:40 r0:40 | c5000000", "s2:40 r2:40 | s1:40 r1:40 | c5000000"}},
		{"bcast4", rep(4, "bcast 64 1 0"), []string{
			// root 1, 64 doubles = 512 B; v = r−1: v0 (r1) → v2 (r3), v1 (r2); v2 (r3) → v3 (r0)
			"r3:512", "s3:512 | s2:512", "r1:512", "r1:512 | s0:512"}},
		{"reduce4", rep(4, "reduce 4 0 2 5"), []string{
			// root 2, 4 floats = 16 B; v = r−2: v0 (r2) ← v1 (r3), v2 (r0); v2 (r0) ← v3 (r1)
			"r1:16 | s2:16", "s0:16", "r3:16 | r0:16", "s2:16"}},
		{"alltoall4", rep(4, "alltoall 3 3 1 1"), []string{
			// 3 ints = 12 B to r+k, from r−k, k = 1, 2, 3
			"s1:12 r3:12 | s2:12 r2:12 | s3:12 r1:12", "s2:12 r0:12 | s3:12 r3:12 | s0:12 r2:12",
			"s3:12 r1:12 | s0:12 r0:12 | s1:12 r3:12", "s0:12 r2:12 | s1:12 r1:12 | s2:12 r0:12"}},
		{"alltoallv4", []string{
			// bytes; rank r sends 10r+j to j and receives 10j+r from j
			"alltoallv 6 0 1 2 3 60 0 10 20 30 6 6",
			"alltoallv 46 10 11 12 13 64 1 11 21 31 6 6",
			"alltoallv 86 20 21 22 23 68 2 12 22 32 6 6",
			"alltoallv 126 30 31 32 33 72 3 13 23 33 6 6"}, []string{
			"s1:1 r3:30 | s2:2 r2:20 | s3:3 r1:10", "s2:12 r0:1 | s3:13 r3:31 | s0:10 r2:21",
			"s3:23 r1:12 | s0:20 r0:2 | s1:21 r3:32", "s0:30 r2:23 | s1:31 r1:13 | s2:32 r0:3"}},
		{"gather4", rep(4, "gather 5 5 3 1 1"), []string{
			// root 3, 5 ints = 20 B, all receives at once
			"s3:20", "s3:20", "s3:20", "r0:20 r1:20 r2:20"}},
		{"gatherv4", []string{
			// root 0 receives 2, 4, 6, 8 ints; non-roots write zero recvcounts
			"gatherv 2 2 4 6 8 0 1 1", "gatherv 4 0 0 0 0 0 1 1", "gatherv 6 0 0 0 0 0 1 1", "gatherv 8 0 0 0 0 0 1 1"}, []string{
			"r1:16 r2:24 r3:32", "s0:16", "s0:24", "s0:32"}},
		{"scatter4", rep(4, "scatter 2 2 0 0 0"), []string{
			// root 0, 2 doubles = 16 B
			"s1:16 s2:16 s3:16", "r0:16", "r0:16", "r0:16"}},
		{"scatterv4", []string{
			// root 2 sends 1, 2, (3), 4 ints; rank j receives j+1
			"scatterv 0 0 0 0 1 2 1 1", "scatterv 0 0 0 0 2 2 1 1", "scatterv 1 2 3 4 3 2 1 1", "scatterv 0 0 0 0 4 2 1 1"}, []string{
			"r2:4", "r2:8", "s0:4 s1:8 s3:16", "r2:16"}},
		{"allgather4", rep(4, "allgather 2 2 0 0"), []string{
			// ring: 3 steps of one 16 B block to r+1, from r−1
			"s1:16 r3:16 | s1:16 r3:16 | s1:16 r3:16", "s2:16 r0:16 | s2:16 r0:16 | s2:16 r0:16",
			"s3:16 r1:16 | s3:16 r1:16 | s3:16 r1:16", "s0:16 r2:16 | s0:16 r2:16 | s0:16 r2:16"}},
		{"allgatherv4", []string{
			// blocks of 1, 2, 3, 4 bytes; step k sends block r−k, receives block r−k−1
			"allgatherv 1 1 2 3 4 6 6", "allgatherv 2 1 2 3 4 6 6", "allgatherv 3 1 2 3 4 6 6", "allgatherv 4 1 2 3 4 6 6"}, []string{
			"s1:1 r3:4 | s1:4 r3:3 | s1:3 r3:2", "s2:2 r0:1 | s2:1 r0:4 | s2:4 r0:3",
			"s3:3 r1:2 | s3:2 r1:1 | s3:1 r1:4", "s0:4 r2:3 | s0:3 r2:2 | s0:2 r2:1"}},
		{"reducescatter4", rep(4, "reducescatter 1 2 3 4 0 1"), []string{
			// reduce 10 ints = 40 B to 0 (binomial), then scatter 1, 2, 3, 4 ints from 0
			"r1:40 | r2:40 | s1:8 s2:12 s3:16", "s0:40 | r0:8", "r3:40 | s0:40 | r0:12", "s2:40 | r0:16"}},
		{"scan4", rep(4, "scan 3 0 0"), []string{
			// chain of 3 doubles = 24 B
			"s1:24", "r0:24 | s2:24", "r1:24 | s3:24", "r2:24"}},
		{"exscan4", rep(4, "exscan 3 0 0"), []string{"s1:24", "r0:24 | s2:24", "r1:24 | s3:24", "r2:24"}},

		// ---- 3 ranks (p = 2, rank 2 folds into rank 0) ----
		{"barrier3", rep(3, "barrier"), []string{
			"r2:0 | s1:0 r1:0 | s2:0", "s0:0 r0:0", "s0:0 | r0:0"}},
		{"allreduce3", rep(3, "allreduce 2 0 0"), []string{
			"r2:16 | s1:16 r1:16 | s2:16", "s0:16 r0:16", "s0:16 | r0:16"}},
		{"bcast3", rep(3, "bcast 8 2 1"), []string{
			// root 2, 8 ints = 32 B; v0 (r2) → v2 (r1), then v1 (r0)
			"r2:32", "r2:32", "s1:32 | s0:32"}},
		{"reduce3", rep(3, "reduce 1 0 1 4"), []string{
			// root 1, one long = 8 B; v0 (r1) ← v1 (r2), v2 (r0); v2 has no child (v3 ≥ 3)
			"s1:8", "r2:8 | r0:8", "s1:8"}},
		{"alltoall3", rep(3, "alltoall 1 1 0 0"), []string{
			"s1:8 r2:8 | s2:8 r1:8", "s2:8 r0:8 | s0:8 r2:8", "s0:8 r1:8 | s1:8 r0:8"}},
		{"alltoallv3", []string{
			"alltoallv 3 0 1 2 30 0 10 20 6 6", "alltoallv 33 10 11 12 33 1 11 21 6 6", "alltoallv 63 20 21 22 36 2 12 22 6 6"}, []string{
			"s1:1 r2:20 | s2:2 r1:10", "s2:12 r0:1 | s0:10 r2:21", "s0:20 r1:12 | s1:21 r0:2"}},
		{"gather3", rep(3, "gather 3 3 1 2 2"), []string{
			// root 1, 3 chars
			"s1:3", "r0:3 r2:3", "s1:3"}},
		{"gatherv3", []string{"gatherv 5 0 0 0 2 6 6", "gatherv 6 0 0 0 2 6 6", "gatherv 7 5 6 7 2 6 6"}, []string{
			"s2:5", "s2:6", "r0:5 r1:6"}},
		{"scatter3", rep(3, "scatter 1 1 2 3 3"), []string{
			// root 2, one short = 2 B
			"r2:2", "r2:2", "s0:2 s1:2"}},
		{"scatterv3", []string{"scatterv 1 3 5 1 0 1 1", "scatterv 0 0 0 3 0 1 1", "scatterv 0 0 0 5 0 1 1"}, []string{
			"s1:12 s2:20", "r0:12", "r0:20"}},
		{"allgather3", rep(3, "allgather 1 1 5 5"), []string{
			"s1:4 r2:4 | s1:4 r2:4", "s2:4 r0:4 | s2:4 r0:4", "s0:4 r1:4 | s0:4 r1:4"}},
		{"allgatherv3", []string{"allgatherv 1 1 2 3 6 6", "allgatherv 2 1 2 3 6 6", "allgatherv 3 1 2 3 6 6"}, []string{
			"s1:1 r2:3 | s1:3 r2:2", "s2:2 r0:1 | s2:1 r0:3", "s0:3 r1:2 | s0:2 r1:1"}},
		{"reducescatter3", rep(3, "reducescatter 1 2 3 0 6"), []string{
			// reduce 6 B to 0 (v2 sends straight to 0), scatter 2 and 3 B
			"r1:6 | r2:6 | s1:2 s2:3", "s0:6 | r0:2", "s0:6 | r0:3"}},
		{"scan3", rep(3, "scan 2 0 3"), []string{"s1:4", "r0:4 | s2:4", "r1:4"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			for r, l := range tc.lines {
				fmt.Fprintf(&b, "%d %s\n", r, l)
			}
			s, err := Read(strings.NewReader(b.String()), tc.name, gflops)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Validate(); err != nil {
				t.Fatal(err)
			}
			for r := range tc.want {
				got, err := steps(s, r)
				if err != nil {
					t.Fatal(err)
				}
				if got != tc.want[r] {
					t.Errorf("rank %d:\n got %s\nwant %s", r, got, tc.want[r])
				}
			}
			checkMatching(t, s)
		})
	}
}

func rep(n int, line string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = line
	}
	return out
}

// TestCollectiveSequence: collectives chain after each other and after
// point-to-point ops, with tags C0, C1, …; a 1-rank run has no messages.
func TestCollectiveSequence(t *testing.T) {
	const trace = `0 isend 1 3 1 6
0 barrier
0 bcast 1 0 6
1 barrier
1 recv 0 3 1 6
1 bcast 1 0 6
`
	s, err := Read(strings.NewReader(trace), "seq", gflops)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	want := [][]string{{
		"send to1 tag3 1B nb",
		"send to1 tagC0 0B started0", // the barrier's exchange starts after the isend, does not wait for it
		"recv from1 tagC0 0B started0",
		"send to1 tagC1 1B after1 after2", // bcast: root 0 → 1
	}, {
		"send to0 tagC0 0B",
		"recv from0 tagC0 0B",
		"recv from0 tag3 1B after0 after1",
		"recv from0 tagC1 1B after2",
	}}
	for r := range want {
		if got := rankStrings(s, r); !slices.Equal(got, want[r]) {
			t.Errorf("rank %d:\n got %q\nwant %q", r, got, want[r])
		}
	}

	s, err = Read(strings.NewReader("0 allreduce 4 1000 0\n0 bcast 3\n"), "one", gflops)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rankStrings(s, 0), []string{"calc 1000000ps"}; !slices.Equal(got, want) {
		t.Errorf("1 rank: got %q, want %q", got, want)
	}
}
