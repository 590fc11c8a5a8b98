package scenario

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTwoRanksPerNodeHalo: a 1-D halo exchange of 8 ranks (each sends
// 1000 B to both neighbours on a ring, then 1 µs of compute and again, 3
// rounds) with two ranks per node (linear: ranks 2i and 2i+1 on node i).
// By hand: per round 16 messages, the 8 between 2i and 2i+1 stay on the
// node, the 8 between 2i+1 and 2i+2 (7 and 0) cross the network: 24
// messages and 24 000 B each way over 3 rounds. A second run with one
// rank per node sends all 48 through the network.
func TestTwoRanksPerNodeHalo(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	const ranks, rounds = 8, 3
	fmt.Fprintf(&b, "VEF %d %d 1 0 0 FALSE\nC0", ranks, ranks*2*rounds)
	for i := 0; i < ranks; i++ {
		fmt.Fprintf(&b, " %d", i)
	}
	b.WriteString("\n")
	id := 0
	for round := 0; round < rounds; round++ {
		for r := 0; r < ranks; r++ {
			for _, d := range []int{(r + 1) % ranks, (r + ranks - 1) % ranks} {
				if round == 0 {
					fmt.Fprintf(&b, "%d %d %d 1000 0 0 -1\n", id, r, d)
				} else {
					// after receiving the same neighbour's previous message
					prev := (round-1)*ranks*2 + d*2
					if (d+1)%ranks != r { // d sent to r as its second message
						prev++
					}
					fmt.Fprintf(&b, "%d %d %d 1000 2 1000 %d\n", id, r, d, prev)
				}
				id++
			}
		}
	}
	path := filepath.Join(dir, "halo.vef")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(sets ...string) Report {
		t.Helper()
		s, err := Parse([]byte("name: halo\n"), "halo.yaml", append([]string{
			"topology.kind=megafly", "topology.radix=4", "workload.kind=vef", "workload.file=" + path,
			"power.mode=always-on",
		}, sets...))
		if err != nil {
			t.Fatal(err)
		}
		o, err := Run(context.Background(), s, nil)
		if err != nil {
			t.Fatal(err)
		}
		return o.Report
	}
	two := run("workload.ranks_per_node=2")
	if tr := two.RankTraffic; tr == nil || tr.IntraMessages != 24 || tr.IntraBytes != 24000 || tr.NetworkMessages != 24 || tr.NetworkBytes != 24000 {
		t.Fatalf("two per node: rank traffic %+v, want 24 messages and 24000 B each way", tr)
	}
	if two.Messages != 24 {
		t.Errorf("two per node: %d messages through the network, want 24", two.Messages)
	}
	one := run()
	if one.RankTraffic != nil || one.Messages != 48 {
		t.Errorf("one per node: rank traffic %+v, %d network messages; want none, 48", one.RankTraffic, one.Messages)
	}
	// The intra-node path (0.5 µs + 1000 B at 10 GB/s = 0.6 µs) is slower
	// than a 400 Gb/s hop here, but nothing else changes: both runs end.
	if two.ExecTimeS <= 0 || one.ExecTimeS <= 0 {
		t.Errorf("exec times %v, %v", two.ExecTimeS, one.ExecTimeS)
	}
}
