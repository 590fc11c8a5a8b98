package sweep

import (
	"strings"
	"testing"
)

func TestTextReports(t *testing.T) {
	pt := Point{Index: 3, ID: "abc", Role: RolePoint, Seed: 7, BaselineID: "def",
		Axes: AxisValues{{"predictor.pdt", "1us"}, {"power.mode", "deep-sleep"}}}
	if got, want := pt.Label(), "point predictor.pdt=1us power.mode=deep-sleep seed=7"; got != want {
		t.Errorf("label %q, want %q", got, want)
	}
	if got, want := (Point{Role: RoleBaseline, Seed: 1}).Label(), "baseline seed=1"; got != want {
		t.Errorf("label %q, want %q", got, want)
	}
	ev := Event{Point: pt, Status: Status{Status: "failed", WallS: 1.5, Error: "boom"}, Finished: 2, Total: 9}
	if got, want := ev.String(), "[2/9] run 3 abc point predictor.pdt=1us power.mode=deep-sleep seed=7: failed in 1.5s: boom"; got != want {
		t.Errorf("event %q, want %q", got, want)
	}
	var b strings.Builder
	if err := (&Plan{Points: []Point{pt, {Index: 4, ID: "def", Role: RoleBaseline}}}).WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	want := "INDEX  ID   ROLE      SEED  BASELINE  AXES\n" +
		"3      abc  point     7     def       predictor.pdt=1us power.mode=deep-sleep\n" +
		"4      def  baseline  0     -         \n"
	if b.String() != want {
		t.Errorf("plan table:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestTaskIndex(t *testing.T) {
	t.Setenv("SLURM_ARRAY_TASK_ID", "2")
	for _, c := range []struct {
		arg  []string
		want int
		err  string
	}{
		{nil, 2, ""}, {[]string{"1"}, 1, ""}, {[]string{"x"}, 0, `I "x": want a run index`},
		{[]string{"5"}, 0, "I 5: out of range (the plan has runs 0..2)"}, {[]string{""}, 0, `I "": want a run index`},
	} {
		i, err := TaskIndex(3, c.arg...)
		if i != c.want || (err == nil) != (c.err == "") || err != nil && err.Error() != c.err {
			t.Errorf("TaskIndex(3, %q) = %d, %v; want %d, %q", c.arg, i, err, c.want, c.err)
		}
	}
}
