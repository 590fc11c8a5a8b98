package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lpictl/lpictl/sim/workload"
)

func TestWorkloadShippedConfigs(t *testing.T) {
	files, err := filepath.Glob("../../configs/workloads/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatal("no configs/workloads/*.yaml", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			args := []string{"workload", "describe", "-c", f, "--json"}
			if strings.Contains(f, "4160") || strings.Contains(f, "patmos") {
				args = append(args, "--ideal=false")
			}
			code, out, stderr := lpictl(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var d workload.Description
			if err := json.Unmarshal([]byte(out), &d); err != nil {
				t.Fatal(err)
			}
			if d.Ranks == 0 || d.Records == 0 {
				t.Errorf("%+v", d)
			}
		})
	}
}

func TestWorkloadDescribeScenario(t *testing.T) {
	// Other scenario sections are ignored; workload and topology are read.
	cfg := writeFile(t, "s.yaml", `network:
  anything: [1, 2]
topology:
  kind: megafly
  radix: 8
workload:
  kind: stencil
  ranks: 16
  steps: 2
predictor:
  kind: fixed
`)
	code, out, stderr := lpictl(t, "workload", "describe", "-c", cfg, "--set", "workload.stencil.halo_bytes=1KiB")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"kind                  stencil", "16 on a network of 272 nodes", "trace records         192 (192 point-to-point, 196608 B)", "ideal execution time"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
}

func TestWorkloadExportRoundTrip(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.vef")
	code, _, stderr := lpictl(t, "workload", "export", "--vef", "--set", "workload.kind=mlwf", "--set", "workload.ranks=6",
		"--set", "workload.steps=2", "-o", a)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b := filepath.Join(dir, "b.vef")
	code, _, stderr = lpictl(t, "workload", "export", "--vef", "--set", "workload.kind=vef", "--set", "workload.file="+a, "-o", b)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	ab, _ := os.ReadFile(a)
	bb, _ := os.ReadFile(b)
	if len(ab) == 0 || string(ab) != string(bb) {
		t.Error("export of the exported trace differs")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("temporary files left: %v", entries)
	}
}

func TestWorkloadBadInput(t *testing.T) {
	bad := writeFile(t, "bad.vef", "VEF 2 1 1 0 0 TRUE\nC0 0 1\n0 0 1 8 2 0 0\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"workload", "describe", "--set", "workload.kind=nope"}, `workload.kind: unknown kind "nope"`},
		{[]string{"workload", "describe", "--set", "workload.kind=lammps", "--set", "workload.bogus=1"}, `unknown key "workload.bogus"`},
		{[]string{"workload", "describe", "--set", "workload.kind=vef", "--set", "workload.file=" + bad}, bad + ":3: cyclic dependency: message 0 depends on itself"},
		{[]string{"workload", "describe", "--set", "workload.kind=lammps", "--set", "workload.ranks=5000"}, "workload.ranks: 5000 ranks do not fit on 4160 nodes"},
		{[]string{"workload", "export", "--set", "workload.kind=lammps"}, "--vef"},
	} {
		code, _, stderr := lpictl(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestDescribeJSONEveryKey: `workload describe --json` is a contract with
// every key always present (item 18): a zero (bytes, utilisation of a
// barrier-only, open-loop trace) is printed as 0, and the ideal replay's
// keys are null with --ideal=false.
func TestDescribeJSONEveryKey(t *testing.T) {
	barrier := writeFile(t, "barrier.vef", "VEF 2 0 1 1 2 TRUE\nC0 0 1\nG0 0 6 0 0 0 0 0 -1\nG0 0 6 1 0 0 0 0 -1\n")
	keys := []string{"algorithms", "bytes", "collective_messages", "collectives", "compute_max_ps", "compute_mean_ps",
		"ideal_exec_ps", "intra_node_bytes", "intra_node_messages", "jobs", "kind", "mean_utilisation", "messages", "nodes", "p2p_bytes", "p2p_messages", "ranks", "records"}
	ideal := []string{"algorithms", "bytes", "collective_messages", "ideal_exec_ps", "intra_node_bytes", "intra_node_messages", "mean_utilisation", "messages"}
	tests := []struct {
		name  string
		args  []string
		zeros []string // keys whose value must be 0
		nulls bool     // the ideal replay's keys are null
	}{
		{"zero bytes and utilisation", []string{"--set", "workload.kind=vef", "--set", "workload.file=" + barrier},
			[]string{"bytes", "mean_utilisation", "p2p_bytes", "p2p_messages", "compute_max_ps", "compute_mean_ps"}, false},
		{"no ideal replay", []string{"--set", "workload.kind=vef", "--set", "workload.file=" + barrier, "--ideal=false"},
			[]string{"p2p_bytes", "p2p_messages"}, true},
		{"model", []string{"--set", "workload.kind=stencil", "--set", "workload.ranks=8", "--set", "workload.steps=1"}, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := lpictl(t, append([]string{"workload", "describe", "--json"}, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(out), &m); err != nil {
				t.Fatal(err)
			}
			var got []string
			for k := range m {
				got = append(got, k)
			}
			slices.Sort(got)
			if !slices.Equal(got, keys) {
				t.Errorf("keys\n got %v\nwant %v", got, keys)
			}
			for _, k := range tc.zeros {
				if v, ok := m[k].(float64); !ok || v != 0 {
					t.Errorf("%s = %v, want 0", k, m[k])
				}
			}
			for _, k := range ideal {
				if (m[k] == nil) != tc.nulls {
					t.Errorf("%s = %v (null: want %v)", k, m[k], tc.nulls)
				}
			}
			if jobs, ok := m["jobs"].([]any); !ok || len(jobs) != 1 {
				t.Errorf("jobs = %v", m["jobs"])
			}
		})
	}
}

// TestWorkloadTraceErrorsExit2: a bad trace gives exit 2 and one line
// "FILE:LINE: …" from both `lpictl sim run` (scenario workload: kind vef)
// and `lpictl workload describe`, and nothing is written (items 15, 16,
// 17); a forward reference to a collective is a valid trace (item 13).
func TestWorkloadTraceErrorsExit2(t *testing.T) {
	var fwd strings.Builder
	fwd.WriteString("VEF 8 2 1 8 64 FALSE\nC0 0 1 2 3 4 5 6 7\n0 0 7 65536 3 100 G7\n1 7 0 8 2 0 0\n")
	for g := 0; g < 8; g++ {
		for r := 0; r < 8; r++ {
			fmt.Fprintf(&fwd, "G%d 0 6 %d 0 0 0 0 -1\n", g, r)
		}
	}
	tests := []struct {
		name, trace, want string // want "": valid
	}{
		{"13 forward collective", fwd.String(), ""},
		{"15 cycle through a collective", "VEF 2 1 1 1 2 FALSE\nC0 0 1\nG0 0 6 0 0 0 0 0 -1\n0 0 1 64 3 0 G0\nG0 0 6 1 0 0 2 0 0\n",
			"z.vef:3: circular dependency: task 0 in G0 (line 3) waits for a message from task 1 in G0 (line 5), which waits for the receipt of message 0 (line 4), which waits for the end of task 0 in G0 (line 3)"},
		{"16 not its receive", "VEF 2 2 1 0 0 FALSE\nC0 0 1\n0 0 1 64 0 0 -1\n1 0 1 64 2 0 0\n",
			"z.vef:4: task 0 depends on the receipt of message 0, which task 1 receives (a task can only wait for its own receives)"},
		{"17 header count", "VEF 2 3 1 0 0 TRUE\nC0 0 1\n0 0 1 64 0 0 -1\n", "z.vef:1: header says 3 point-to-point messages, the trace has 1"},
		{"17 communicator count", "VEF 2 1 2 0 0 TRUE\nC0 0 1\n", "z.vef:1: header says 2 communicators, the trace ends after 1"},
		{"17 header and body errors share the format", "VEF 2 1 1 0 0 TRUE\nC0 0 5\n", "z.vef:2: task 5 out of range [0, 1]"},
		{"dangling forward", "VEF 2 2 1 1 2 TRUE\nC0 0 1\n0 0 1 8 1 0 1\nG0 0 6 0 0 0 0 0 -1\nG0 0 6 1 0 0 0 0 -1\n",
			"z.vef:3: dangling dependency: message 1 never comes in the trace"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "z.vef"), []byte(tc.trace), 0o644); err != nil {
				t.Fatal(err)
			}
			scen := filepath.Join(dir, "z.yaml")
			doc := "topology: {kind: fbfly, dims: [4], nodes_per_switch: 2}\npredictor: {kind: fixed, pdt: 10us}\nworkload: {kind: vef, file: z.vef}\n"
			if err := os.WriteFile(scen, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			outDir := filepath.Join(dir, "out")
			for _, args := range [][]string{
				{"sim", "run", "-c", scen, "-o", outDir},
				{"workload", "describe", "-c", scen},
				{"workload", "describe", "-c", scen, "--json", "--ideal=false"},
			} {
				code, _, stderr := lpictl(t, args...)
				if tc.want == "" {
					if code != 0 {
						t.Errorf("%v: exit %d: %s", args, code, stderr)
					}
					continue
				}
				want := "lpictl: " + filepath.Join(dir, tc.want) + "\n"
				if code != 2 || stderr != want {
					t.Errorf("%v: exit %d, stderr\n%q\nwant 2 and\n%q", args, code, stderr, want)
				}
				if _, err := os.Stat(outDir); err == nil {
					t.Errorf("%v: wrote %s", args, outDir)
				}
			}
		})
	}
}

// TestDescribeRanksAndConvert: `describe --ranks` on the GOAL token ring of
// sim/workload/traces (3 ranks, 2 laps of 1024 B, 1 µs compute a hop)
// gives each rank 2 sends, 2 receives, 2048 B each way and 2 µs of
// compute, and 9 422 880 ps on the ideal host (by hand: 6 × (1 µs +
// 550 ns + 20.48 ns)), 6 000 000 ps without latency; `convert --to vef`
// writes a VEF trace that replays in the same time; a program VEF cannot
// express exits 2 naming the operation.
func TestDescribeRanksAndConvert(t *testing.T) {
	ring := "../../sim/workload/traces/testdata/ring.goal"
	code, out, stderr := lpictl(t, "workload", "describe", "--ranks", "--json", "--set", "workload.kind=goal", "--set", "workload.file="+ring)
	if code != 0 {
		t.Fatalf("describe: exit %d: %s", code, stderr)
	}
	var d struct {
		IdealExecPS int64 `json:"ideal_exec_ps"`
		PerRank     []struct {
			Rank, Node                                       int
			Sends, Receives, BytesSent, BytesRecv, ComputePS int64
		} `json:"per_rank"`
	}
	if err := json.Unmarshal([]byte(strings.NewReplacer(`"bytes_sent"`, `"BytesSent"`, `"bytes_received"`, `"BytesRecv"`, `"compute_ps"`, `"ComputePS"`).Replace(out)), &d); err != nil {
		t.Fatal(err)
	}
	if d.IdealExecPS != 9_422_880 || len(d.PerRank) != 3 {
		t.Fatalf("ideal %d ps, %d rank rows; want 9422880, 3:\n%s", d.IdealExecPS, len(d.PerRank), out)
	}
	for _, r := range d.PerRank {
		if r.Node != r.Rank || r.Sends != 2 || r.Receives != 2 || r.BytesSent != 2048 || r.BytesRecv != 2048 || r.ComputePS != 2_000_000 {
			t.Errorf("rank row %+v", r)
		}
	}
	code, out, _ = lpictl(t, "workload", "describe", "--json", "--ideal-latency", "0", "--ideal-bandwidth", "0", "--set", "workload.kind=goal", "--set", "workload.file="+ring)
	if code != 0 || !strings.Contains(out, `"ideal_exec_ps": 6000000`) {
		t.Errorf("without latency: exit %d, %s", code, out)
	}

	vefPath := filepath.Join(t.TempDir(), "ring.vef")
	if code, _, stderr := lpictl(t, "workload", "convert", "--to", "vef", "--set", "workload.kind=goal", "--set", "workload.file="+ring, "-o", vefPath); code != 0 {
		t.Fatalf("convert: exit %d: %s", code, stderr)
	}
	code, out, stderr = lpictl(t, "workload", "describe", "--json", "--set", "workload.kind=vef", "--set", "workload.file="+vefPath)
	if code != 0 || !strings.Contains(out, `"ideal_exec_ps": 9422880`) {
		t.Errorf("the converted trace: exit %d, %s %s", code, out, stderr)
	}

	waitall := writeFile(t, "waitall.goal", "num_ranks 3\nrank 0 {\n  a: recv 8b from 1\n  b: recv 8b from 2\n  c: send 8b to 1\n  c requires a\n  c requires b\n}\nrank 1 {\n  s: send 8b to 0\n  r: recv 8b from 0\n}\nrank 2 {\n  s: send 8b to 0\n}\n")
	code, out, stderr = lpictl(t, "workload", "convert", "--to", "vef", "--set", "workload.kind=goal", "--set", "workload.file="+waitall)
	if code != 2 || out != "" || !strings.Contains(stderr, "waitall.goal:5") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("waitall: exit %d, stdout %q, stderr %q; want 2, nothing, one line naming waitall.goal:5", code, out, stderr)
	}
	if code, _, stderr := lpictl(t, "workload", "convert", "--to", "goal", "--set", "workload.kind=goal", "--set", "workload.file="+ring); code != 2 || !strings.Contains(stderr, "vef") {
		t.Errorf("--to goal: exit %d, %q", code, stderr)
	}
}
