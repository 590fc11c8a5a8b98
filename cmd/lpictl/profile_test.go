package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// TestSimRunCPUProfile checks --cpuprofile: a run writes a pprof profile (a
// gzip stream, as Go's profiler writes it) in place of an older file, and a
// path that cannot be written is bad input naming it, with nothing left.
func TestSimRunCPUProfile(t *testing.T) {
	cfg := writeFile(t, "small.yaml", smallScenario)
	dir := t.TempDir()
	path := filepath.Join(dir, "cpu.pprof")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := lpictl(t, "sim", "run", "-c", cfg, "--cpuprofile", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	z, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("not a profile (gzip): %v", err)
	}
	if body, err := io.ReadAll(z); err != nil || len(body) == 0 {
		t.Fatalf("profile body: %d bytes, %v", len(body), err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}

	bad := filepath.Join(dir, "missing", "cpu.pprof")
	code, _, errs = lpictl(t, "sim", "run", "-c", cfg, "--cpuprofile", bad)
	if code != 2 || !strings.Contains(errs, "--cpuprofile "+bad) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
		t.Errorf("unwritable profile: exit %d, want 2 and one line naming it: %q", code, errs)
	}
}

// TestBuiltWithProfile checks that go builds lpictl with its profile
// (cmd/lpictl/default.pgo, make pgo; docs/simulator.md "Profile-guided
// build"): a test binary of package main is built as the command is, and a
// missing or unreadable profile would build without, or not at all.
func TestBuiltWithProfile(t *testing.T) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		t.Skip("no build information in this binary")
	}
	for _, s := range bi.Settings {
		if s.Key == "-pgo" {
			if !strings.HasSuffix(s.Value, "default.pgo") {
				t.Errorf("built with profile %q, want cmd/lpictl/default.pgo", s.Value)
			}
			return
		}
	}
	t.Error("built without a profile: cmd/lpictl/default.pgo missing, or -pgo=off (make pgo writes it)")
}
