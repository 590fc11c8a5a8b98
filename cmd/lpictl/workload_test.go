package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
			var d workloadDescription
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
		{[]string{"workload", "describe", "--set", "workload.kind=vef", "--set", "workload.file=" + bad}, bad + ":3: dependency on message 0, which is not earlier"},
		{[]string{"workload", "describe", "--set", "workload.kind=lammps", "--set", "workload.ranks=5000"}, "workload.ranks: 5000 ranks do not fit on 4160 nodes"},
		{[]string{"workload", "export", "--set", "workload.kind=lammps"}, "--vef"},
	} {
		code, _, stderr := lpictl(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}
