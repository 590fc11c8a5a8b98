package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lpictl/lpictl/configs"
)

// TestLoadPrecedence: a scenario is file < LPICTL_SCENARIO_* < --set (sim
// has no flags bound to scenario keys); Parse (sweep points, the HIL
// check) reads no environment. Errors are bad input.
func TestLoadPrecedence(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(file, []byte("seed: 5\npower:\n  mode: fast-wake\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(file, nil)
	if err != nil || s.Seed != 5 || s.Power.Mode != "fast-wake" {
		t.Fatalf("file: %v %+v", err, s)
	}
	t.Setenv("LPICTL_SCENARIO_SEED", "6")
	t.Setenv("LPICTL_SCENARIO_POWER_MODE", "deep-sleep")
	if s, err = Load(file, nil); err != nil || s.Seed != 6 || s.Power.Mode != "deep-sleep" {
		t.Fatalf("environment over the file: %v %+v", err, s)
	}
	if s, err = Load(file, []string{"seed=7"}); err != nil || s.Seed != 7 || s.Power.Mode != "deep-sleep" {
		t.Fatalf("--set over the environment: %v %+v", err, s)
	}
	if s, err = Parse([]byte("seed: 5\n"), "p.yaml", nil); err != nil || s.Seed != 5 {
		t.Fatalf("Parse read the environment: %v %+v", err, s)
	}
	t.Setenv("LPICTL_SCENARIO_SEEDS", "8")
	if _, err = Load(file, nil); err == nil || !configs.IsBadInput(err) || !strings.Contains(err.Error(), "environment LPICTL_SCENARIO_SEEDS: unknown key") {
		t.Errorf("unknown variable: %v", err)
	}
	if _, err = Load(filepath.Join(t.TempDir(), "none.yaml"), nil); !configs.IsBadInput(err) || !strings.HasPrefix(err.Error(), "scenario: ") {
		t.Errorf("missing file: %v; want bad input named scenario", err)
	}
}
