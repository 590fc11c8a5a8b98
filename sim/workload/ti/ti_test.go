package ti

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/lpictl/lpictl/sim/workload/sched"
)

var gflops = Options{FlopRate: 1e9} // 1 flop = 1 ns = 1000 ps

// opString renders op i of rank r: "send to1 tag5 40B nb after0 started2".
func opString(s *sched.Schedule, r int, i uint32) string {
	op := s.Ranks[r].Ops[i]
	var b strings.Builder
	tag := func(t int32) string {
		switch {
		case t == sched.AnyTag:
			return "*"
		case t >= CollTagBase:
			return fmt.Sprintf("C%d", t-CollTagBase)
		}
		return fmt.Sprint(t)
	}
	switch op.Kind {
	case sched.Calc:
		fmt.Fprintf(&b, "calc %dps", op.Time)
	case sched.Send:
		fmt.Fprintf(&b, "send to%d tag%s %dB", op.Peer, tag(op.Tag), op.Bytes)
	case sched.Recv:
		peer := fmt.Sprint(op.Peer)
		if op.Peer == sched.AnySource {
			peer = "*"
		}
		fmt.Fprintf(&b, "recv from%s tag%s %dB", peer, tag(op.Tag), op.Bytes)
	}
	if op.NonBlocking {
		b.WriteString(" nb")
	}
	for _, d := range s.OpDeps(r, i) {
		if d.Start {
			fmt.Fprintf(&b, " started%d", d.Op)
		} else {
			fmt.Fprintf(&b, " after%d", d.Op)
		}
	}
	return b.String()
}

func rankStrings(s *sched.Schedule, r int) []string {
	var out []string
	for i := range s.Ranks[r].Ops {
		out = append(out, opString(s, r, uint32(i)))
	}
	return out
}

// checkMatching checks, independently of the expected op lists, that for
// every ordered pair of ranks the sizes of the sends a→b, in op order, are
// those of b's receives from a.
func checkMatching(t *testing.T, s *sched.Schedule) {
	t.Helper()
	type pair struct{ a, b int32 }
	sent, got := map[pair][]int64{}, map[pair][]int64{}
	for r, rk := range s.Ranks {
		for _, op := range rk.Ops {
			switch op.Kind {
			case sched.Send:
				sent[pair{int32(r), op.Peer}] = append(sent[pair{int32(r), op.Peer}], op.Bytes)
			case sched.Recv:
				if op.Peer == sched.AnySource {
					t.Fatalf("checkMatching: rank %d receives from any source", r)
				}
				got[pair{op.Peer, int32(r)}] = append(got[pair{op.Peer, int32(r)}], op.Bytes)
			}
		}
	}
	if !reflect.DeepEqual(sent, got) {
		t.Errorf("sends %v\nrecvs %v", sent, got)
	}
}

// TestPointToPoint: hand-written traces in testdata/ → exact op lists.
func TestPointToPoint(t *testing.T) {
	tests := []struct {
		file string
		want [][]string
	}{
		{"p2p.ti", [][]string{{
			"calc 1000000ps",             // compute 1000 flops at 1 Gflop/s = 1 µs
			"send to1 tag5 40B after0",   // 10 MPI_INT (code 1, 4 B)
			"recv from1 tag6 24B after1", // 3 MPI_DOUBLE (code 0, 8 B)
			"calc 2000000ps after2",      // sleep 2 µs
		}, {
			"recv from0 tag5 40B",
			"calc 2000000ps after0", // 2e3 flops
			"send to0 tag6 24B after1",
		}}},
		{"nonblocking.ti", [][]string{{
			"recv from1 tag1 32B nb",                // irecv 4 doubles
			"send to1 tag2 8B nb started0",          // isend 2 ints, posted after the irecv
			"calc 500000ps started1",                // the compute overlaps both requests
			"send to1 tag3 1B after2 after0 after1", // after waitall: the compute and both requests
		}, {
			"recv from0 tag2 8B nb",
			"send to0 tag1 32B nb started0",
			"recv from0 tag3 1B after0 after1",
		}}},
		{"wait.ti", [][]string{{
			"send to1 tag1 8B nb",
			"send to1 tag2 8B nb started0",
			"recv from1 tag3 8B nb started1",
			"calc 1000000ps after1 started2",        // wait 0 1 2: the isend with tag 2
			"send to1 tag4 0B after3 after2 after0", // wait 1 0 3 (the irecv), wait 0 1 9 (none), wait 0 1 1
		}, {
			"recv from0 tag1 8B",
			"recv from0 tag2 8B after0",
			"send to0 tag3 8B after1",
			"recv from0 tag4 0B after2",
		}}},
		{"oldform.ti", [][]string{{
			"send to1 tag0 80B",                    // send 1 10: 10 doubles (init 1)
			"send to1 tag0 24B nb after0",          // isend 1 3
			"send to1 tag0 32B nb after0 started1", // isend 1 4; waitall ends the rank
		}, {
			"recv from0 tag0 80B",
			"recv from0 tag0 24B nb after0",
			"recv from0 tag0 32B nb after0 started1",
			"calc 1000000000000ps after0 after2 after1", // wait: the newest (irecv 0 4), then the other; compute 0 dropped
		}}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			s, err := Read(f, tc.file, gflops)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Validate(); err != nil {
				t.Fatal(err)
			}
			if len(s.Ranks) != len(tc.want) {
				t.Fatalf("%d ranks, want %d", len(s.Ranks), len(tc.want))
			}
			for r := range tc.want {
				if got := rankStrings(s, r); !slices.Equal(got, tc.want[r]) {
					t.Errorf("rank %d:\n got %q\nwant %q", r, got, tc.want[r])
				}
			}
			checkMatching(t, s)
		})
	}
}

// TestLines: ops carry the line they were read at.
func TestLines(t *testing.T) {
	f, err := os.Open("testdata/p2p.ti")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := Read(f, "p2p.ti", gflops)
	if err != nil {
		t.Fatal(err)
	}
	var got []int32
	for _, op := range s.Ranks[0].Ops {
		got = append(got, op.Line)
	}
	if want := []int32{4, 5, 9, 10}; !slices.Equal(got, want) {
		t.Errorf("rank 0 lines %v, want %v", got, want)
	}
}
