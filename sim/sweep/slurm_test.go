package sweep

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func TestArraySpec(t *testing.T) {
	for _, tc := range []struct {
		idx  []int
		want string
	}{
		{[]int{0}, "0"},
		{[]int{0, 1, 2, 3, 4}, "0-4"},
		{[]int{0, 2, 4}, "0,2,4"},
		{[]int{0, 1, 3, 5, 6, 7, 9}, "0-1,3,5-7,9"},
		{[]int{12, 13}, "12-13"},
	} {
		if got := ArraySpec(tc.idx); got != tc.want {
			t.Errorf("ArraySpec(%v) = %q, want %q", tc.idx, got, tc.want)
		}
	}
}

func TestSbatchGolden(t *testing.T) {
	plan := &Plan{Name: "lammps-pdt", Points: make([]Point, 12)}
	script, err := Sbatch(plan, []int{0, 1, 2, 3, 5, 8, 9, 10, 11}, Slurm{
		Exe: "/opt/lpictl/bin/lpictl", Dir: "/scratch/my study/lammps",
		Partition: "debug", Time: "1:00:00", Account: "proj42", Mem: "4G",
		MaxParallel: 4, CPUsPerTask: 1, Extra: []string{"--qos=long", "--exclusive"},
	})
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "sweep.sbatch")
	if *update {
		if err := os.WriteFile(golden, script, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(script) != string(want) {
		t.Errorf("sbatch script\n%s\nwant (%s)\n%s", script, golden, want)
	}
	for _, o := range []Slurm{
		{Exe: "lpictl", Dir: "/d"},
		{Exe: "/bin/lpictl", Dir: "/d", Extra: []string{"--a\n#SBATCH --b"}},
		{Exe: "/bin/lpictl", Dir: "/d", Partition: "x\ny"},
	} {
		if _, err := Sbatch(plan, []int{0}, o); err == nil {
			t.Errorf("Sbatch(%+v): no error", o)
		}
	}
	if _, err := Sbatch(plan, nil, Slurm{Exe: "/a", Dir: "/d"}); err == nil {
		t.Error("Sbatch with nothing pending: no error")
	}
}

// fakeSbatch puts a script called sbatch first on PATH.
func fakeSbatch(t *testing.T, script string) string {
	t.Helper()
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "sbatch"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return bin
}

func TestSubmit(t *testing.T) {
	args := filepath.Join(t.TempDir(), "args")
	fakeSbatch(t, "#!/bin/sh\necho \"$@\" > '"+args+"'\necho '4242;cluster'\n")
	id, err := Submit(context.Background(), "/d/sweep.sbatch")
	if err != nil || id != "4242" {
		t.Fatalf("Submit: %q %v", id, err)
	}
	got, _ := os.ReadFile(args)
	if string(got) != "--parsable /d/sweep.sbatch\n" {
		t.Errorf("sbatch got %q", got)
	}
	fakeSbatch(t, "#!/bin/sh\necho 'sbatch: error: invalid partition' >&2\necho 'second line' >&2\nexit 1\n")
	if _, err := Submit(context.Background(), "/d/sweep.sbatch"); err == nil || err.Error() != "sbatch /d/sweep.sbatch: sbatch: error: invalid partition; second line" {
		t.Errorf("failing sbatch: %v", err)
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := Submit(context.Background(), "/d/sweep.sbatch"); !errors.Is(err, ErrNoSbatch) {
		t.Errorf("no sbatch: %v", err)
	}
}

// Pending lists the runs not done, one index per id.
func TestPending(t *testing.T) {
	path := writeSweep(t, resumeSweep)
	s, plan := mustPlan(t, path)
	dir := t.TempDir()
	if err := Prepare(dir, s, plan); err != nil {
		t.Fatal(err)
	}
	if got := ArraySpec(Pending(dir, plan)); got != "0-3" {
		t.Errorf("pending %s, want 0-3", got)
	}
	if _, _, err := RunPoint(context.Background(), dir, plan.Points[1]); err != nil {
		t.Fatal(err)
	}
	if got := ArraySpec(Pending(dir, plan)); got != "0,2-3" {
		t.Errorf("pending %s, want 0,2-3", got)
	}
	// Equal ids (a repeated axis value) are one task.
	dup := &Plan{Name: "d", Points: []Point{plan.Points[0], plan.Points[0], plan.Points[2]}}
	dup.Points[1].Index, dup.Points[2].Index = 1, 2
	if got := ArraySpec(Pending(dir, dup)); got != "0,2" {
		t.Errorf("pending with a duplicate %s, want 0,2", got)
	}
	if !strings.HasPrefix(plan.Points[0].Dir, PointsDir+"/") {
		t.Errorf("dir %s", plan.Points[0].Dir)
	}
}
