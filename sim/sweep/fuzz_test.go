package sweep

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse: the sweep-file parser never panics, its errors are one line
// naming the file, and what it accepts has consistent axes.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("../../configs/sweeps/*.yaml")
	for _, p := range seeds {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("base: a.yaml\naxes: {power.mode: [fast-wake, deep-sleep]}\nzip:\n  - {predictor.kind: [fixed], predictor.pdt: [0]}\nseeds: [1, 2]\nbaseline: {set: {power.mode: always-on}, group_by: [power.mode]}\n"))
	f.Add([]byte("base: a.yaml\naxes:\n  x: &a [1, {b: *a}]\n"))
	f.Add([]byte("base: a.yaml\nrepetitions: 3\nset: {workload.steps: 4}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data, "f.yaml")
		if err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, "f.yaml: ") || strings.ContainsAny(msg, "\r\n") {
				t.Fatalf("error not one line naming the file: %q", msg)
			}
			return
		}
		if s.Base == "" || s.Name == "" {
			t.Fatalf("accepted without base or name: %+v", s)
		}
		n := 1
		groups := map[int]int{}
		for _, a := range s.Axes {
			if len(a.Values) == 0 {
				t.Fatalf("axis %s without values", a.Key)
			}
			if a.Group < 0 {
				n *= len(a.Values)
			} else if l, ok := groups[a.Group]; ok && l != len(a.Values) {
				t.Fatalf("zip group %d: lengths %d and %d", a.Group, l, len(a.Values))
			} else if !ok {
				groups[a.Group] = len(a.Values)
				n *= len(a.Values)
			}
		}
		if n != s.product() {
			t.Fatalf("product %d, want %d", s.product(), n)
		}
		if n > 1<<12 {
			return
		}
		if got := len(s.combinations()); got != n {
			t.Fatalf("%d combinations, want %d", got, n)
		}
	})
}
