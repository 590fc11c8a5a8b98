package main

import (
	"os"
	"strings"
	"testing"
)

// TestConfigReadsBounded: -c /dev/zero and --preset /dev/zero read without
// limit until the memory ran out (issue 24 item 11). Every configuration
// file read from a flag is now bounded (configs.MaxFileSize): a longer one
// exits 2 with one line naming it.
func TestConfigReadsBounded(t *testing.T) {
	big := writeFile(t, "big.yaml", "# padding\n"+strings.Repeat("#"+strings.Repeat("x", 1023)+"\n", 5<<10)+"seed: 1\n")
	gaps := writeFile(t, "g.txt", "1us\n2us\n")
	cases := [][]string{
		{"predict", "-c", big, gaps},
		{"predict", "--preset", big, gaps},
		{"sim", "run", "-c", big},
		{"topo", "describe", "-c", big},
		{"workload", "describe", "-c", big},
		{"sweep", "plan", big},
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		cases = append(cases,
			[]string{"predict", "--preset", "/dev/zero", gaps},
			[]string{"predict", "-c", "/dev/zero", gaps},
			[]string{"sim", "run", "-c", "/dev/zero"},
			[]string{"sweep", "plan", "/dev/zero"},
		)
	}
	for _, args := range cases {
		code, out, errs := lpictl(t, args...)
		if code != 2 || out != "" || !strings.Contains(errs, "longer than 4 MiB") || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and one line \"… longer than 4 MiB …\"", args, code, out, errs)
		}
	}
}
