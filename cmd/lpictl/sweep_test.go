package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const smokeSweep = "../../configs/sweeps/smoke.yaml"

// sweepFile writes a sweep (and smallScenario as small.yaml) into a fresh
// folder and returns the sweep file's path.
func sweepFile(t *testing.T, content string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "small.yaml"), []byte(smallScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func csvRows(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// The shipped smoke sweep through the CLI: plan, run, resume, status,
// collect and run-point.
func TestSweepSmokeCLI(t *testing.T) {
	code, out, errs := lpictl(t, "sweep", "plan", smokeSweep)
	if code != 0 || strings.Count(out, "\n") != 6 || !strings.Contains(out, "baseline") {
		t.Fatalf("plan: exit %d\n%s%s", code, out, errs)
	}
	dir := filepath.Join(t.TempDir(), "smoke")
	code, out, errs = lpictl(t, "sweep", "run", smokeSweep, "-o", dir, "-j", "2")
	if code != 0 || !strings.Contains(errs, "[5/5] run ") || !strings.Contains(out, "5 runs: 5 done, 0 failed, 0 pending") {
		t.Fatalf("run: exit %d\n%s%s", code, out, errs)
	}
	if rows := csvRows(t, filepath.Join(dir, "results.csv")); len(rows) != 6 {
		t.Errorf("results.csv: %d rows, want 5", len(rows)-1)
	}
	code, _, errs = lpictl(t, "sweep", "run", smokeSweep, "-o", dir, "-j", "2")
	if code != 0 || !strings.Contains(errs, "5 done before, 0 to run") || strings.Contains(errs, "[1/5]") {
		t.Errorf("resume: exit %d\n%s", code, errs)
	}
	code, out, _ = lpictl(t, "sweep", "status", dir, "--json")
	var st struct{ Total, Done, Failed, Pending int }
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st.Total != 5 || st.Done != 5 {
		t.Errorf("status --json: exit %d %s", code, out)
	}
	code, out, _ = lpictl(t, "sweep", "status", dir)
	if code != 0 || out != "smoke: 5 runs: 5 done, 0 failed, 0 pending\n" {
		t.Errorf("status: exit %d %q", code, out)
	}
	if err := os.Remove(filepath.Join(dir, "results.csv")); err != nil {
		t.Fatal(err)
	}
	code, out, _ = lpictl(t, "sweep", "collect", dir)
	if code != 0 || !strings.Contains(out, "5 rows") {
		t.Errorf("collect: exit %d %q", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "results.csv")); err != nil {
		t.Error(err)
	}
	code, out, _ = lpictl(t, "sweep", "run-point", dir, "4")
	if code != 0 || !strings.Contains(out, "done before") {
		t.Errorf("run-point of a done run: exit %d %q", code, out)
	}
}

func TestSweepRunPoint(t *testing.T) {
	path := sweepFile(t, "base: small.yaml\naxes:\n  predictor.pdt: [0, 2us]\n")
	dir := t.TempDir()
	if code, _, errs := lpictl(t, "sweep", "plan", path, "-o", dir); code != 0 {
		t.Fatalf("plan -o: exit %d %s", code, errs)
	}
	t.Setenv("SLURM_ARRAY_TASK_ID", "1")
	code, out, errs := lpictl(t, "sweep", "run-point", dir)
	if code != 0 || !strings.HasPrefix(out, "run 1 (") || !strings.Contains(out, "predictor.pdt=2us seed=1: ok in") {
		t.Fatalf("run-point from SLURM_ARRAY_TASK_ID: exit %d %q %s", code, out, errs)
	}
	code, out, _ = lpictl(t, "sweep", "status", dir)
	if code != 0 || !strings.Contains(out, "2 runs: 1 done, 0 failed, 1 pending") {
		t.Errorf("status: %q", out)
	}
	for _, tc := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{dir, "2"}, "", "I 2: out of range (the plan has runs 0..1)"},
		{[]string{dir, "--", "-1"}, "", "I -1: out of range"},
		{[]string{dir, "one"}, "", `I "one": want a run index`},
		{[]string{dir}, "", "no run index: give I or set SLURM_ARRAY_TASK_ID"},
		{[]string{dir}, "x", `SLURM_ARRAY_TASK_ID "x"`},
		{[]string{t.TempDir(), "0"}, "", "plan.json: missing"},
	} {
		t.Setenv("SLURM_ARRAY_TASK_ID", tc.env)
		code, _, errs := lpictl(t, append([]string{"sweep", "run-point"}, tc.args...)...)
		if code != 2 || !strings.Contains(errs, tc.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("run-point %v (env %q): exit %d %q, want 2 and %q", tc.args, tc.env, code, errs, tc.want)
		}
	}
}

// Exit status 2 on bad input, one line naming the file and the key.
func TestSweepBadInput(t *testing.T) {
	bad := sweepFile(t, "base: small.yaml\naxes:\n  predictor.pdt: [0, 10ns, soon]\n")
	unknown := sweepFile(t, "base: small.yaml\naxis: {}\n")
	badPlan := t.TempDir()
	if err := os.WriteFile(filepath.Join(badPlan, "plan.json"), []byte(`{"name": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", bad}, bad + ": line 3: axes.predictor.pdt[2]: "},
		{[]string{"run", bad, "-o", t.TempDir()}, bad + ": line 3: axes.predictor.pdt[2]: "},
		{[]string{"plan", unknown}, unknown + ": line 2: axis: unknown key"},
		{[]string{"plan", "no/such.yaml"}, "no/such.yaml"},
		{[]string{"run", bad}, "-o DIR is required"},
		{[]string{"run", bad, "-o", t.TempDir(), "-j", "0"}, "-j 0"},
		{[]string{"status", badPlan}, filepath.Join(badPlan, "plan.json") + ": json: cannot unmarshal"},
		{[]string{"collect", t.TempDir()}, "plan.json: missing"},
		{[]string{"status"}, "accepts 1 arg"},
		{[]string{"submit", bad, "-o", t.TempDir()}, "--slurm is required"},
		{[]string{"submit", bad, "-o", t.TempDir(), "--slurm"}, "axes.predictor.pdt[2]"},
	} {
		code, _, errs := lpictl(t, append([]string{"sweep"}, tc.args...)...)
		if code != 2 || !strings.Contains(errs, tc.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("sweep %v: exit %d %q, want 2 and %q", tc.args, code, errs, tc.want)
		}
	}
}

// A failing run: recorded, the others finish, results written, exit 1.
func TestSweepRunFailure(t *testing.T) {
	path := sweepFile(t, "base: small.yaml\naxes:\n  power.preset: [eee-400g, no-such-preset]\n")
	dir := t.TempDir()
	code, out, errs := lpictl(t, "sweep", "run", path, "-o", dir, "-j", "1")
	if code != 1 || !strings.Contains(errs, "1 of 2 runs failed") || !strings.Contains(out, "1 done, 1 failed") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	rows := csvRows(t, filepath.Join(dir, "results.csv"))
	if len(rows) != 3 || rows[1][3] != "ok" || rows[2][3] != "failed" {
		t.Errorf("results %v", rows)
	}
	code, out, _ = lpictl(t, "sweep", "status", dir)
	if code != 0 || !strings.Contains(out, "failed: run 1 (") || !strings.Contains(out, "power.preset") {
		t.Errorf("status: %q", out)
	}
	code, _, errs = lpictl(t, "sweep", "run-point", dir, "1")
	if code != 1 || !strings.Contains(errs, "failed: ") {
		t.Errorf("run-point of a failing run: exit %d %q", code, errs)
	}
}

// fakeSbatchOnPath puts an sbatch first on PATH that appends its arguments
// to the returned file and prints a job id.
func fakeSbatchOnPath(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	log := filepath.Join(t.TempDir(), "sbatch.log")
	script := "#!/bin/sh\necho \"$@\" >> '" + log + "'\necho 777\n"
	if err := os.WriteFile(filepath.Join(bin, "sbatch"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return log
}

func TestSweepSubmit(t *testing.T) {
	log := fakeSbatchOnPath(t)
	path := sweepFile(t, "name: tiny\nbase: small.yaml\naxes:\n  predictor.pdt: [0, 2us, 4us]\n")
	dir := t.TempDir()
	args := []string{"sweep", "submit", path, "-o", dir, "--slurm", "--partition", "debug", "--time", "10", "--max-parallel", "2"}

	code, out, errs := lpictl(t, append(args, "--dry-run")...)
	if code != 0 || !strings.Contains(out, "#SBATCH --array=0-2%2\n") || !strings.Contains(errs, "nothing submitted") {
		t.Fatalf("dry run: exit %d\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(log); !os.IsNotExist(err) {
		t.Errorf("--dry-run called sbatch (%v)", err)
	}
	script, err := os.ReadFile(filepath.Join(dir, "sweep.sbatch"))
	if err != nil || string(script) != out {
		t.Errorf("sweep.sbatch differs from the dry run's output (%v)", err)
	}
	if !strings.Contains(out, "sweep run-point "+dir+"\n") || !strings.Contains(out, "--output="+filepath.Join(dir, "slurm", "%A_%a.out")) {
		t.Errorf("script:\n%s", out)
	}

	code, out, errs = lpictl(t, args...)
	if code != 0 || !strings.HasSuffix(out, "as Slurm job 777\n") {
		t.Fatalf("submit: exit %d\n%s%s", code, out, errs)
	}
	got, _ := os.ReadFile(log)
	if string(got) != "--parsable "+filepath.Join(dir, "sweep.sbatch")+"\n" {
		t.Errorf("sbatch called with %q", got)
	}

	// Run one run here: the next submit lists only the others.
	if code, _, errs := lpictl(t, "sweep", "run-point", dir, "1"); code != 0 {
		t.Fatalf("run-point: %s", errs)
	}
	code, out, _ = lpictl(t, append(args, "--dry-run")...)
	if code != 0 || !strings.Contains(out, "#SBATCH --array=0,2%2\n") {
		t.Errorf("resubmit: exit %d\n%s", code, out)
	}
	// All done: nothing submitted.
	for _, i := range []string{"0", "2"} {
		if code, _, errs := lpictl(t, "sweep", "run-point", dir, i); code != 0 {
			t.Fatalf("run-point: %s", errs)
		}
	}
	before, _ := os.ReadFile(log)
	code, out, _ = lpictl(t, args...)
	after, _ := os.ReadFile(log)
	if code != 0 || !strings.Contains(out, "nothing pending") || string(before) != string(after) {
		t.Errorf("submit with nothing pending: exit %d %q, sbatch log %q → %q", code, out, before, after)
	}

	// No sbatch on PATH: one line, exit 1.
	t.Setenv("PATH", t.TempDir())
	code, _, errs = lpictl(t, "sweep", "submit", path, "-o", t.TempDir(), "--slurm")
	if code != 1 || !strings.Contains(errs, "sbatch not found on PATH") || strings.Count(errs, "\n") != 1 {
		t.Errorf("no sbatch: exit %d %q", code, errs)
	}
}
