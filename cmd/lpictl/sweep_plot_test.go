package main

import (
	"bytes"
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/lpictl/lpictl/configs"
)

// runSweepPlot runs `lpictl sweep plot ARGS` through the root command (adding
// a bare `sweep` parent when the root has none yet) and returns the exit
// status run would give, stdout and the error text.
func runSweepPlot(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	root := newRootCommand()
	var sweep *cobra.Command
	for _, c := range root.Commands() {
		if c.Name() == "sweep" {
			sweep = c
		}
	}
	if sweep == nil {
		sweep = &cobra.Command{Use: "sweep"}
		root.AddCommand(sweep)
	}
	if c, _, err := sweep.Find([]string{"plot"}); err != nil || c == sweep {
		sweep.AddCommand(newSweepPlotCmd())
	}
	var out, errb bytes.Buffer
	root.SetArgs(append([]string{"sweep", "plot"}, args...))
	root.SetOut(&out)
	root.SetErr(&errb)
	err := root.Execute()
	if err == nil {
		return 0, out.String(), ""
	}
	var ue *configs.InputError
	if errors.As(err, &ue) {
		return 2, out.String(), err.Error()
	}
	return 1, out.String(), err.Error()
}

// copyPlotTestdata copies the plot package's test sweep directory to a temporary
// one, so the default output DIR/<figure>.png lands there.
func copyPlotTestdata(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestSweepPlot(t *testing.T) {
	dir := copyPlotTestdata(t, "../../sim/sweep/plot/testdata/pdt")
	code, out, msg := runSweepPlot(t, dir, "--figure", "pdt-sweep")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, msg)
	}
	want := filepath.Join(dir, "pdt-sweep.png")
	if strings.TrimSpace(out) != want {
		t.Errorf("stdout %q, want %q", out, want)
	}
	f, err := os.Open(want)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil || cfg.Height != 500 {
		t.Errorf("PNG config %+v, %v; want 500 px high", cfg, err)
	}

	svg := filepath.Join(t.TempDir(), "g.svg")
	code, _, msg = runSweepPlot(t, dir, "--figure", "generic", "--x", "predictor.pdt", "--logx",
		"--y", "energy_links_j,frac_deep_sleep", "--series", "power.mode", "--where", "seed=1",
		"--title", "links", "-o", svg)
	if code != 0 {
		t.Fatalf("generic: exit %d: %s", code, msg)
	}
	data, err := os.ReadFile(svg)
	if err != nil || !bytes.Contains(data, []byte(">links<")) {
		t.Errorf("generic SVG: %v, title missing", err)
	}
}

func TestSweepPlotErrors(t *testing.T) {
	pdt := "../../sim/sweep/plot/testdata/pdt"
	out := filepath.Join(t.TempDir(), "x.png")
	empty := t.TempDir()
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown figure", []string{pdt, "--figure", "pie", "-o", out}, 2, `unknown figure "pie"`},
		{"no figure", []string{pdt, "-o", out}, 2, "--figure is required"},
		{"no results", []string{empty, "--figure", "pdt-sweep"}, 2, "run `lpictl sweep collect " + empty + "` first"},
		{"bad where", []string{pdt, "--figure", "pdt-sweep", "--where", "power.mode", "-o", out}, 2, `--where "power.mode": want COL=VALUE`},
		{"where filters all", []string{pdt, "--figure", "pdt-sweep", "--where", "power.mode=hybrid", "-o", out}, 2, "no rows with status ok and power.mode=hybrid"},
		{"missing column", []string{pdt, "--figure", "predictors", "-o", out}, 2, `no column "predictor.bound"`},
		{"two dirs", []string{pdt, pdt, "--figure", "pdt-sweep"}, 2, "accepts 1 arg(s)"},
		{"unwritable", []string{pdt, "--figure", "pdt-sweep", "-o", filepath.Join(empty, "no", "dir", "x.png")}, 1, "write "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, msg := runSweepPlot(t, tc.args...)
			if code != tc.code || !strings.Contains(msg, tc.want) {
				t.Errorf("exit %d %q; want exit %d with %q", code, msg, tc.code, tc.want)
			}
		})
	}
}
