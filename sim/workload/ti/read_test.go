package ti

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/lpictl/lpictl/sim/workload/sched"
)

// TestSMPIRing reads the trace smpirun 3.32 wrote for testdata/smpi-ring/ring.c
// (4 ranks: two ring laps of one MPI_INT with tag 7, an irecv/isend of 64
// MPI_DOUBLE with waitall, allreduce of one double, barrier, bcast of 64
// doubles from 0) and checks per-rank message counts and bytes worked out
// by hand:
//
//	ring laps: 2 sends + 2 recvs of 4 B each rank
//	isend/irecv: 1 send + 1 recv of 512 B each rank
//	allreduce (recursive doubling, 4 ranks): 2 sends + 2 recvs of 8 B each rank
//	barrier: 2 sends + 2 recvs of 0 B each rank
//	bcast from 0 (binomial): rank 0 sends to 2 and 1; rank 2 receives, sends to 3;
//	  ranks 1 and 3 receive; 512 B each
//
// so rank 0 sends 9 (8+512+16+0+1024 = 1560 B) and receives 7 (8+512+16 = 536 B);
// rank 1 sends 7 (536 B), receives 8 (1048 B); rank 2 sends 8 (1048 B),
// receives 8 (1048 B); rank 3 sends 7 (536 B), receives 8 (1048 B).
func TestSMPIRing(t *testing.T) {
	s, err := ReadIndex("testdata/smpi-ring/ring.ti", gflops)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	type tally struct{ sends, sendB, recvs, recvB, calcs, calcPS int64 }
	want := []tally{
		{9, 1560, 7, 536, 10, 0},
		{7, 536, 8, 1048, 0, 0},
		{8, 1048, 8, 1048, 0, 0},
		{7, 536, 8, 1048, 0, 0},
	}
	// Rank 0's compute lines (flops at 1 Gflop/s, rounded to ps): 790 + 80 +
	// 26 + 87 + 36 + 41 + 65230 + 113 + 70 + 47 = 66520 ps in 10 Calcs.
	if len(s.Ranks) != 4 {
		t.Fatalf("%d ranks, want 4", len(s.Ranks))
	}
	for r, rk := range s.Ranks {
		var got tally
		for _, op := range rk.Ops {
			switch op.Kind {
			case sched.Send:
				got.sends++
				got.sendB += op.Bytes
			case sched.Recv:
				got.recvs++
				got.recvB += op.Bytes
			case sched.Calc:
				got.calcs++
				got.calcPS += op.Time
			}
		}
		w := want[r]
		if r != 0 {
			w.calcs, w.calcPS = got.calcs, got.calcPS
		} else {
			w.calcPS = 66520
		}
		if got != w {
			t.Errorf("rank %d: %+v, want %+v", r, got, w)
		}
	}
	checkMatching(t, s)

	// Same trace as one file (ti-one-file form, ranks interleaved): same schedule but for lines and file.
	var all bytes.Buffer
	files, _, err := readIndex("testdata/smpi-ring/ring.ti")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
	}
	one, err := Read(&all, "all", gflops)
	if err != nil {
		t.Fatal(err)
	}
	for r := range one.Ranks {
		a, b := one.Ranks[r].Ops, s.Ranks[r].Ops
		if len(a) != len(b) {
			t.Fatalf("rank %d: %d ops one-file, %d indexed", r, len(a), len(b))
		}
		for i := range a {
			a[i].Line, b[i].Line = 0, 0
		}
		if !reflect.DeepEqual(one.Ranks[r], s.Ranks[r]) {
			t.Errorf("rank %d differs between one-file and indexed reads", r)
		}
	}
}

// TestDeterministic: the same trace gives the same schedule.
func TestDeterministic(t *testing.T) {
	a, err := ReadIndex("testdata/smpi-ring/ring.ti", gflops)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadIndex("testdata/smpi-ring/ring.ti", gflops)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Error("two reads differ")
	}
}

// TestIndexOneFile: an index of one line names a shared file.
func TestIndexOneFile(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile("testdata/nonblocking.ti")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "x_files"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "x_files", "all.txt"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "x.ti"), []byte("x_files/all.txt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ReadIndex(filepath.Join(dir, "x.ti"), gflops)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Ranks) != 2 || len(s.Ranks[0].Ops) != 4 || len(s.Ranks[1].Ops) != 3 {
		t.Errorf("got %d ranks", len(s.Ranks))
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name  string
		trace string
		opts  Options
		want  string
	}{
		{"unknown action", "0 init\n0 Ssend 1 0 1 1\n", gflops, `t:2: unsupported action "Ssend"`},
		{"unknown collective", "0 ibcast 1 0 0\n", gflops, `t:1: unsupported action "ibcast"`},
		{"bad count", "0 send 1 0 -4 1\n1 recv 0 0 4 1\n", gflops, "t:1: send: bad count -4"},
		{"fractional count", "0 send 1 0 2.5 1\n1 recv 0 0 4 1\n", gflops, "t:1: send: bad count 2.5"},
		{"not a number", "0 send 1 0 x 1\n", gflops, `t:1: send: argument 3 "x": not a finite number`},
		{"bad rank field", "zero init\n", gflops, `t:1: rank "zero"`},
		{"missing action", "\n# c\n3\n", gflops, "t:3: missing action after rank 3"},
		{"peer out of range", "0 send 2 0 1 1\n1 init\n", gflops, "t:1: send: rank 2: want an integer in [0, 2)"},
		{"reserved tag", "0 send 1 1073741824 1 1\n1 init\n", gflops, "t:1: send: tag 1.073741824e+09"},
		{"unknown datatype", "0 send 1 0 1 77\n1 init\n", gflops, "t:1: send: unknown datatype code 77"},
		{"derived datatype", "0 bcast 1 0 -1\n", gflops, "t:1: bcast: datatype -1 is a derived datatype"},
		{"arguments", "0 allreduce 1\n", gflops, "t:1: allreduce: 1 arguments, want 2 to 3"},
		{"vector arguments", "0 alltoallv 1 1 1 1\n1 init\n", gflops, "t:1: alltoallv: 4 arguments, want 6 to 8"},
		{"root out of range", "0 bcast 1 2\n1 bcast 1 2\n", gflops, "t:1: bcast: root 2: want an integer in [0, 1]"},
		{"wait alone", "0 wait 0 1 0\n", gflops, "t:1: wait without an outstanding isend or irecv"},
		{"comm_size", "0 comm_size 2\n", gflops, "t:1: comm_size 2: the run has 1 ranks"},
		{"collective mismatch", "0 barrier\n0 bcast 1\n1 barrier\n1 allreduce 1 0\n", gflops,
			"t:4: rank 1: collective #2 is allreduce, rank 0 has bcast at t:2"},
		{"root mismatch", "0 bcast 1 0\n1 bcast 1 1\n", gflops, "t:2: rank 1: bcast (collective #1) has root 1, rank 0 has root 0 at t:1"},
		{"size mismatch", "0 bcast 2 0 1\n1 bcast 2 0 0\n", gflops, "t:2: rank 1: bcast (collective #1) of 16 bytes, rank 0 has 8 bytes at t:1"},
		{"missing collective", "0 barrier\n0 barrier\n1 barrier\n", gflops, "t: rank 1 ends after 1 collectives; rank 0 has barrier at t:2"},
		{"rank beyond Options.Ranks", "0 init\n2 init\n", Options{FlopRate: 1, Ranks: 2}, "t:2: rank 2: Options.Ranks is 2"},
		{"no flop rate", "0 init\n", Options{}, "ti: Options.FlopRate 0"},
		{"empty", "# nothing\n", gflops, "t: no actions"},
		{"compute negative", "0 compute -1\n", gflops, "t:1: compute -1: negative"},
		{"finalize arity", "0 finalize 3\n", gflops, "t:1: finalize: 1 arguments, want 0"},
		{"wait arity", "0 isend 0 0 1\n0 wait 0 0\n", gflops, "t:2: wait: 2 arguments, want 3 (src dst tag) or none"},
		{"location arity", "0 location a.c\n", gflops, "t:1: location: 1 arguments, want 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tc.trace), "t", tc.opts)
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q, want one line containing %q", err, tc.want)
			}
		})
	}
}

func TestIndexErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("r0.txt", "0 init\n0 barrier\n")
	write("r1.txt", "1 init\n1 barrier\n")
	write("wrong.txt", "0 init\n")
	tests := []struct {
		name, index string
		opts        Options
		want        string
	}{
		{"missing file", "r0.txt\n\nnone.txt\n", gflops, "missing.ti:3: rank 1: open " + filepath.Join(dir, "none.txt")},
		{"rank mismatch", "r0.txt\nwrong.txt\n", gflops, "missing.ti:2: rank 1: " + filepath.Join(dir, "wrong.txt") + ":1: rank 0 in the file of rank 1"},
		{"Options.Ranks", "r0.txt\nr1.txt\n", Options{FlopRate: 1, Ranks: 3}, "2 rank files, Options.Ranks is 3"},
		{"empty index", "\n", gflops, "no rank files listed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := write("missing.ti", tc.index)
			_, err := ReadIndex(p, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %v, want one line containing %q", err, tc.want)
			}
		})
	}
	if _, err := ReadIndex(filepath.Join(dir, "nope.ti"), gflops); err == nil || !strings.Contains(err.Error(), "nope.ti") {
		t.Errorf("missing index: %v", err)
	}
	p := write("ok.ti", "r0.txt\nr1.txt\n")
	if _, err := ReadIndex(p, gflops); err != nil {
		t.Errorf("good index: %v", err)
	}
}

func FuzzRead(f *testing.F) {
	for _, name := range []string{"p2p.ti", "nonblocking.ti", "wait.ti", "oldform.ti", "smpi-ring/ring.ti_files/1795515847.401855_rank-1.txt"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("0 alltoallv 3 1 2 3 0 1 2\n1 allgatherv 1 1 2 6 6\n0 reducescatter 1 1 0 0\n1 gatherv 1 1 1 1 0 0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, ranks := range []int{0, 4} { // kept until the end, converted while reading
			s, err := Read(bytes.NewReader(data), "fuzz", Options{FlopRate: 1e9, Ranks: ranks})
			if err != nil {
				if strings.Contains(err.Error(), "\n") {
					t.Fatalf("multi-line error %q", err)
				}
				continue
			}
			if err := s.Validate(); err != nil {
				t.Fatalf("Ranks %d: invalid schedule: %v", ranks, err)
			}
		}
	})
}

// TestSMPICollectives reads the trace smpirun 3.32 wrote for
// testdata/smpi-coll/coll.c at 3 ranks (every collective the tracer
// writes, sendRecv, an irecv from MPI_ANY_SOURCE with wait, an irecv
// completed by MPI_Test) and checks per-rank message counts and bytes
// worked out by hand, collective by collective (S sends, R receives):
//
//	                       rank 0          rank 1          rank 2
//	bcast 5 int root 1     R1 20           S2 40           R1 20
//	reduce 3 dbl root 2    S1 24           S1 24           R2 48
//	allreduce 2 long       S2 32 R2 32     S1 16 R1 16     S1 16 R1 16
//	alltoall 2 int         S2 16 R2 16     S2 16 R2 16     S2 16 R2 16
//	alltoallv int          S2 20 R2 20     S2 24 R2 24     S2 28 R2 28
//	gather 4 short root 0  R2 16           S1 8            S1 8
//	gatherv int root 1     S1 4            R2 16           S1 12
//	scatter 3 char root 2  R1 3            R1 3            S2 6
//	scatterv int root 0    S2 20           R1 8            R1 12
//	allgather 2 float      S2 16 R2 16     S2 16 R2 16     S2 16 R2 16
//	allgatherv 1,2,3 int   S2 16 R2 20     S2 12 R2 16     S2 20 R2 12
//	reducescatter 1,2,3    S2 20 R2 48     S1 24 R1 8      S1 24 R1 12
//	scan, exscan 2 int     S2 16           S2 16 R2 16     R2 16
//	sendRecv 3 int         S1 12 R1 12     S1 12 R1 12     S1 12 R1 12
//	p2p 2 int              R2 16           S1 8            S1 8
//	barrier                S2 R2 0         S1 R1 0         S1 R1 0
//	total                  S21 196 R21 219 S19 216 R18 151 S17 166 R18 208
func TestSMPICollectives(t *testing.T) {
	s, err := ReadIndex("testdata/smpi-coll/coll.ti", gflops)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	type tally struct{ sends, sendB, recvs, recvB, anySource int64 }
	want := []tally{{21, 196, 21, 219, 1}, {19, 216, 18, 151, 0}, {17, 166, 18, 208, 0}}
	for r, rk := range s.Ranks {
		var got tally
		for _, op := range rk.Ops {
			switch op.Kind {
			case sched.Send:
				got.sends++
				got.sendB += op.Bytes
			case sched.Recv:
				got.recvs++
				got.recvB += op.Bytes
				if op.Peer == sched.AnySource {
					got.anySource++
				}
			}
		}
		if got != want[r] {
			t.Errorf("rank %d: %+v, want %+v", r, got, want[r])
		}
	}
}

// TestRanksOption: converting while reading (Options.Ranks set) gives the
// schedule of converting at the end; extra ranks are empty.
func TestRanksOption(t *testing.T) {
	for _, name := range []string{"p2p.ti", "nonblocking.ti", "wait.ti", "oldform.ti"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		a, err := Read(bytes.NewReader(data), name, gflops)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Read(bytes.NewReader(data), name, Options{FlopRate: 1e9, Ranks: 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Ranks) != 3 || len(b.Ranks[2].Ops) != 0 || !reflect.DeepEqual(a.Ranks, b.Ranks[:2]) {
			t.Errorf("%s: Ranks 3 gives %d ranks, or different ops", name, len(b.Ranks))
		}
	}
}
