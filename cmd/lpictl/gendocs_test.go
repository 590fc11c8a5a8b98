package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestVersionFlagMatchesVersionCommand(t *testing.T) {
	code, flag, _ := lpictl(t, "--version")
	if code != 0 {
		t.Fatalf("--version: exit %d", code)
	}
	_, cmd, _ := lpictl(t, "version")
	first, _, _ := strings.Cut(cmd, "\n")
	if strings.TrimSpace(flag) != first {
		t.Errorf("--version printed %q, version's first line is %q", flag, first)
	}
}

func TestGenMan(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "man")
	t.Setenv("SOURCE_DATE_EPOCH", "1767225600")
	if code, _, errOut := lpictl(t, "gen-man", dir); code != 0 {
		t.Fatalf("gen-man: exit %d: %s", code, errOut)
	}
	for _, name := range []string{"lpictl.1", "lpictl-agent.1", "lpictl-sim-run.1"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), ".TH ") || !strings.Contains(string(b), "Jan 2026") {
			t.Errorf("%s: no .TH header dated Jan 2026:\n%.300s", name, b)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "lpictl-gen-man.1")); err == nil {
		t.Error("the hidden gen-man command got a man page")
	}
	if code, _, _ := lpictl(t, "gen-man", "--bogus"); code != 2 {
		t.Errorf("gen-man --bogus: exit %d, want 2", code)
	}
}
