package traces

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/lpictl/lpictl/sim/workload"
)

func build(t *testing.T, cfg workload.Config, nodes int) *workload.Workload {
	t.Helper()
	w, err := workload.Build(cfg, nodes, 1)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func idealRun(t *testing.T, w *workload.Workload) workload.Stats {
	t.Helper()
	d, err := w.NewDriver()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := workload.NewIdealHost().Run(d); err != nil {
		t.Fatal(err)
	}
	return d.Stats()
}

// TestSameProgramGOALAndTI: the token ring of testdata/ring.goal and the
// same program as a SimGrid TI trace (testdata/ring-ti: 128 doubles =
// 1024 B, compute 1000 flops at 1 Gflop/s = 1 µs) replay alike. By hand on
// the ideal host (550 ns + 1024 B at 400 Gb/s = 570.48 ns a message): six
// hops of 1 µs compute and one message, 9 422 880 ps; each rank sends and
// receives 2 messages of 1024 B and computes 2 µs.
func TestSameProgramGOALAndTI(t *testing.T) {
	goal := build(t, workload.Config{Kind: workload.KindGOAL, File: "testdata/ring.goal"}, 8)
	ti := build(t, workload.Config{Kind: workload.KindTI, File: "testdata/ring-ti/ring.ti", FlopRate: 1e9}, 8)
	if goal.Ranks != 3 || ti.Ranks != 3 {
		t.Fatalf("ranks %d and %d, want 3", goal.Ranks, ti.Ranks)
	}
	g, s := idealRun(t, goal), idealRun(t, ti)
	if g.ExecTime != 9_422_880 {
		t.Errorf("GOAL: exec %d ps, want 9 422 880", g.ExecTime)
	}
	for r := 0; r < 3; r++ {
		if g.RankSends[r] != 2 || g.RankRecvs[r] != 2 || g.RankBytesSent[r] != 2048 || g.RankBusy[r] != 2_000_000 {
			t.Errorf("GOAL rank %d: sends %d recvs %d bytes %d busy %d", r, g.RankSends[r], g.RankRecvs[r], g.RankBytesSent[r], g.RankBusy[r])
		}
	}
	if !reflect.DeepEqual(g, s) {
		t.Errorf("GOAL and TI replays differ:\n%+v\n%+v", g, s)
	}
	if sum := goal.Program().Summary(); sum.Header.Messages != 6 || sum.P2PBytes != 6144 || sum.MaxCompute != 2_000_000 {
		t.Errorf("summary %+v", sum)
	}
}

// TestTwoRanksPerNode: ranks_per_node 2 puts ranks 0 and 1 on node 0: the
// messages 0→1 (2 of 1024 B) take the intra-node path, 1→2 and 2→0 the
// network.
func TestTwoRanksPerNode(t *testing.T) {
	w := build(t, workload.Config{Kind: workload.KindGOAL, File: "testdata/ring.goal", RanksPerNode: 2}, 8)
	if !reflect.DeepEqual(w.Nodes, []int{0, 0, 1}) {
		t.Fatalf("nodes %v, want [0 0 1]", w.Nodes)
	}
	s := idealRun(t, w)
	if s.IntraMessages != 2 || s.IntraBytes != 2048 || s.Messages != 4 || s.Bytes != 4096 {
		t.Errorf("intra %d msgs %d B, network %d msgs %d B; want 2, 2048, 4, 4096", s.IntraMessages, s.IntraBytes, s.Messages, s.Bytes)
	}
}

// TestDeadlockAtLoad: a program whose receive is never matched fails when
// it is loaded, naming the file, line, rank and operation.
func TestDeadlockAtLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "stuck.goal")
	src := "num_ranks 2\nrank 0 {\n  r: recv 8b from 1 tag 3\n}\nrank 1 {\n  c: calc 10\n}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := workload.Build(workload.Config{Kind: workload.KindGOAL, File: path}, 4, 1)
	if err == nil || !strings.Contains(err.Error(), "stuck.goal:3") || !strings.Contains(err.Error(), "rank 0") {
		t.Fatalf("error %v, want one naming stuck.goal:3 and rank 0", err)
	}
	_, err = workload.Build(workload.Config{Kind: workload.KindGOAL, File: filepath.Join(dir, "missing.goal")}, 4, 1)
	if err == nil || !strings.HasPrefix(err.Error(), "workload.file: ") {
		t.Fatalf("missing file: %v", err)
	}
}

// TestTIDeadlockNamesRankFile: a TI receive that no send matches fails at
// load, naming the rank's own file and line (not the index).
func TestTIDeadlockNamesRankFile(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"app.ti": "r0.txt\nr1.txt\n",
		"r0.txt": "0 init\n0 compute 1000\n0 finalize\n",
		"r1.txt": "1 init\n1 recv 0 3 8 6\n1 finalize\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := workload.Build(workload.Config{Kind: workload.KindTI, File: filepath.Join(dir, "app.ti")}, 4, 1)
	if err == nil || !strings.Contains(err.Error(), "r1.txt:2: rank 1") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("error %v, want one line naming r1.txt:2 and rank 1", err)
	}
}

// TestProgramJobs: program traces as jobs of a multi-job workload, beside
// a model job, each on its own ranks. The GOAL ring repeated twice runs
// back to back: 2 × 9 422 880 ps on the ideal host, 4 sends a rank; the
// second copy once, 2 sends a rank; the alltoall job's 2 ranks exchange
// one message each way a step.
func TestProgramJobs(t *testing.T) {
	w := build(t, workload.Config{Jobs: []workload.Config{
		{Kind: workload.KindGOAL, File: "testdata/ring.goal", Repeat: 2},
		{Kind: "alltoall", Ranks: 2, Steps: 1, Repeat: 1},
		{Kind: workload.KindTI, File: "testdata/ring-ti/ring.ti", FlopRate: 1e9, Repeat: 1},
	}}, 8)
	if w.Ranks != 8 || w.Jobs[1].FirstRank != 3 || w.Jobs[2].FirstRank != 5 {
		t.Fatalf("ranks %d, jobs %+v", w.Ranks, w.Jobs)
	}
	s := idealRun(t, w)
	for r, want := range []int64{4, 4, 4, 1, 1, 2, 2, 2} {
		if s.RankSends[r] != want {
			t.Errorf("rank %d: %d sends, want %d (all: %v)", r, s.RankSends[r], want, s.RankSends)
		}
	}
	if s.RankFinish[0] != 2*9_422_880 || s.RankFinish[5] != 9_422_880 {
		t.Errorf("finish: ring job %d ps, TI job %d ps; want 18 845 760 and 9 422 880", s.RankFinish[0], s.RankFinish[5])
	}
	if s.ExecTime < 2*9_422_880 || s.RankBusy[0] != 4_000_000 {
		t.Errorf("exec %d ps, rank 0 busy %d ps", s.ExecTime, s.RankBusy[0])
	}
	if _, err := w.Open(); err == nil {
		t.Error("a workload with program jobs has no VEF stream")
	}
	sum, err := w.Summarize()
	if err != nil || sum.Header.Tasks != 8 || sum.Header.Messages < 12 {
		t.Errorf("summary %+v, %v", sum, err)
	}
}
