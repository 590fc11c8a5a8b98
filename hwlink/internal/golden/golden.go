package golden

import (
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Update (-update) rewrites the golden files instead of comparing.
var Update = flag.Bool("update", false, "rewrite golden files in testdata")

// Check compares got with testdata/name (hex, '#' comments allowed) or
// rewrites it with -update.
func Check(t *testing.T, name, comment string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *Update {
		var sb strings.Builder
		sb.WriteString("# " + comment + "\n")
		for i := 0; i < len(got); i += 16 {
			sb.WriteString(hex.EncodeToString(got[i:min(i+16, len(got))]) + "\n")
		}
		if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := Read(t, path)
	if string(want) != string(got) {
		t.Errorf("%s: got\n%s\nwant\n%s", name, hex.Dump(got), hex.Dump(want))
	}
}

// Read reads a golden file: hex, blank lines and '#' comments ignored.
func Read(t testing.TB, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	for _, line := range strings.Split(string(raw), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			sb.WriteString(line)
		}
	}
	b, err := hex.DecodeString(sb.String())
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return b
}
