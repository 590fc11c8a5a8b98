package workload

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lpictl/lpictl/configs"
)

// TestKeepSections: the sections LoadFile does not read are blanked with
// their line numbers kept, so a typo there is no error and one in
// workload: names its line.
func TestKeepSections(t *testing.T) {
	in := "sim:\n  duraton: 1s\nworkload:\n  kind: alltoall\nseed: 3\npower: {preset: x}\n"
	out, err := keepSections([]byte(in), "workload", "topology", "seed")
	if err != nil {
		t.Fatal(err)
	}
	if want := "\n\nworkload:\n  kind: alltoall\nseed: 3\n\n"; string(out) != want {
		t.Errorf("kept %q, want %q", out, want)
	}
	if _, err := keepSections([]byte("{workload: {kind: ring}, sim: 1}\n"), "workload"); err == nil ||
		!strings.Contains(err.Error(), `cannot skip section "sim" (write it in block style)`) {
		t.Errorf("flow style: %v", err)
	}
}

func TestLoadFileAndDescribe(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "w.yaml")
	if err := os.WriteFile(path, []byte("sim:\n  anything: 1\nworkload:\n  kind: alltoall\n  ranks: 8\n  steps: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, nodes, err := LoadFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Describe(w, nodes)
	if err != nil {
		t.Fatal(err)
	}
	if d.Kind != "alltoall" || d.Ranks != 8 || d.Messages != nil {
		t.Errorf("description %+v", d)
	}
	if err := d.Replay(w, NewIdealHost(), true); err != nil {
		t.Fatal(err)
	}
	if d.Messages == nil || *d.Messages == 0 || len(d.PerRank) != 8 || d.MeanUtil == nil {
		t.Errorf("after the ideal replay: %+v", d)
	}
	var b strings.Builder
	if err := d.WriteText(&b); err != nil || !strings.Contains(b.String(), "ideal execution time") {
		t.Errorf("text %q, %v", b.String(), err)
	}
	if _, _, err := LoadFile(path, []string{"workload.kind=nope"}); !configs.IsBadInput(err) {
		t.Errorf("bad kind: %v, want bad input", err)
	}
}
