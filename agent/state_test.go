package agent_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lpictl/lpictl/agent"
)

func TestStateFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	st, err := agent.OpenState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := agent.OpenState(dir); err == nil || !strings.Contains(err.Error(), "locked by another lpictl agent") {
		t.Errorf("second open: %v", err)
	}
	r := agent.PortRecord{Name: "eth0", Index: 3, MAC: "02:00:00:00:00:01", Backend: "hw",
		Original: agent.Settings{TxLPITimer: 250 * time.Microsecond, TxLPIEnabled: true}}
	if err := st.Record(r); err != nil {
		t.Fatal(err)
	}
	// The first original wins.
	r2 := r
	r2.Original.TxLPITimer = time.Microsecond
	if err := st.Record(r2); err != nil {
		t.Fatal(err)
	}
	if err := st.Record(agent.PortRecord{Name: "eth1"}); err != nil {
		t.Fatal(err)
	}
	if err := st.Forget("eth1"); err != nil {
		t.Fatal(err)
	}
	st.Close()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".state-") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
	st, err = agent.OpenState(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p := st.Pending()
	if len(p) != 1 || p[0].Name != "eth0" || p[0].Original.TxLPITimer != 250*time.Microsecond || p[0].MAC != r.MAC {
		t.Errorf("pending %+v", p)
	}
}

func TestCorruptStateFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, agent.StateFileName), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := agent.OpenState(dir); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Errorf("corrupt file: %v", err)
	}
}

// FuzzStateFile: a state file of any content opens or is refused; never
// a panic, and a file that opens survives a rewrite.
func FuzzStateFile(f *testing.F) {
	f.Add([]byte(`{"version":1,"ports":{"eth0":{"name":"eth0","backend":"hw","original":{"tx_lpi_timer_ns":250000,"tx_lpi_enabled":true},"recorded_at":"2026-01-01T00:00:00Z"}}}`))
	f.Add([]byte(`{"version":1}`))
	f.Add([]byte(`{"version":2,"ports":{}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, agent.StateFileName), data, 0o600); err != nil {
			t.Fatal(err)
		}
		st, err := agent.OpenState(dir)
		if err != nil {
			return
		}
		n := len(st.Pending())
		if err := st.Record(agent.PortRecord{Name: "fuzz-new-port"}); err != nil {
			t.Fatal(err)
		}
		if err := st.Forget("fuzz-new-port"); err != nil {
			t.Fatal(err)
		}
		st.Close()
		st, err = agent.OpenState(dir)
		if err != nil {
			t.Fatalf("rewritten file does not open: %v", err)
		}
		defer st.Close()
		if got := len(st.Pending()); got != n {
			t.Fatalf("records %d → %d", n, got)
		}
	})
}
