package schedvef

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/lpictl/lpictl/sim/workload"
	"github.com/lpictl/lpictl/sim/workload/sched"
	"github.com/lpictl/lpictl/sim/workload/ti"
)

// TestSMPITraces converts SMPI TI traces of scripts/simgrid/ (traced with
// smpirun -trace-ti, smpi/simulate-computation:no, 1 Gflop/s): the ring
// converts to the golden text and replays to the hand-calculated time, as
// the schedule's executor does; the halo's MPI_Sendrecv cannot be written.
func TestSMPITraces(t *testing.T) {
	s, err := ti.ReadIndex("testdata/ring.ti", ti.Options{FlopRate: 1e9})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Write(&b, s); err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile("testdata/ring.vef")
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(golden) {
		t.Fatalf("got\n%s\nwant (testdata/ring.vef)\n%s", b.String(), golden)
	}
	// 3 laps × 4 hops, each after 1e6 flops (1 ms) and 1 ns of latency.
	const lat = ns
	want := int64(12 * (1_000_000_000 + lat))
	if st := replay(t, s, lat); st.ExecTime != want {
		t.Errorf("VEF replay ExecTime %d ps, want %d", st.ExecTime, want)
	}
	ex, err := sched.NewExecutor(s, sched.Options{EagerThreshold: 1 << 40, IntraLatency: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := (&workload.IdealHost{Latency: lat}).Run(ex); err != nil {
		t.Fatal(err)
	}
	if et := ex.Stats().ExecTime; et != want {
		t.Errorf("executor ExecTime %d ps, want %d", et, want)
	}

	h, err := ti.ReadIndex("testdata/halo.ti", ti.Options{FlopRate: 1e9})
	if err != nil {
		t.Fatal(err)
	}
	err = Write(&bytes.Buffer{}, h)
	if err == nil || !strings.Contains(err.Error(), "two message events") || !strings.Contains(err.Error(), "halo.ti_files/rank-0.txt:4: rank 0 op 3 (send)") {
		t.Fatalf("halo: got %v, want a two-message-events error at rank 0's op 3 (its line 4, the second sendRecv)", err)
	}
	t.Log(err)
}
