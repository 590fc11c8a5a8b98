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

// TestStateFileRejectsImpossibleRecord (issue 11, defect 8): a record with
// impossible values is refused, naming its port, in one line.
func TestStateFileRejectsImpossibleRecord(t *testing.T) {
	for name, rec := range map[string]string{
		"negative timer": `{"name":"eth0","backend":"hw","original":{"tx_lpi_timer_ns":-5,"tx_lpi_enabled":true}}`,
		"huge timer":     `{"name":"eth0","backend":"hw","original":{"tx_lpi_timer_ns":9000000000000000000}}`,
		"name mismatch":  `{"name":"eth9","backend":"hw","original":{"tx_lpi_timer_ns":250000}}`,
		"bad mac":        `{"name":"eth0","mac":"zz","backend":"hw","original":{"tx_lpi_timer_ns":250000}}`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			doc := `{"version":1,"ports":{"eth0":` + rec + `}}`
			if err := os.WriteFile(filepath.Join(dir, agent.StateFileName), []byte(doc), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := agent.OpenState(dir)
			if err == nil || !strings.Contains(err.Error(), `port "eth0"`) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("impossible record: %v", err)
			}
			if _, err := agent.ReadState(dir); err == nil {
				t.Errorf("ReadState accepted it")
			}
		})
	}
	st, err := agent.OpenState(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Record(agent.PortRecord{Name: "eth0", Original: agent.Settings{TxLPITimer: -5}}); err == nil {
		t.Error("Record wrote an impossible record")
	}
}

// TestStateDirLoosePermissionsRefused (issue 11, defect 8): a state
// directory or file another user could write is refused with one line
// naming the path and the fix.
func TestStateDirLoosePermissionsRefused(t *testing.T) {
	check := func(t *testing.T, dir, path, fix string) {
		t.Helper()
		st, err := agent.OpenState(dir)
		if err == nil {
			st.Close()
			t.Fatalf("%s accepted", path)
		}
		if msg := err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, fix) || strings.Contains(msg, "\n") {
			t.Errorf("error %q: want one line naming %s and %q", msg, path, fix)
		}
	}
	t.Run("dir 0777", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Chmod(dir, 0o777); err != nil {
			t.Fatal(err)
		}
		check(t, dir, dir, "chmod go-w")
	})
	t.Run("file 0666", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, agent.StateFileName)
		if err := os.WriteFile(path, []byte(`{"version":1,"ports":{}}`), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, 0o666); err != nil {
			t.Fatal(err)
		}
		check(t, dir, path, "chmod go-w")
	})
	t.Run("not owned", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("needs root to give the directory to another user")
		}
		dir := t.TempDir()
		if err := os.Chown(dir, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		check(t, dir, dir, "chown 0")
	})
}

// TestStateDirSymlinkAccepted: a state directory reached through a symlink
// (systemd's DynamicUser links /var/lib/NAME to /var/lib/private/NAME) is
// checked at its target.
func TestStateDirSymlinkAccepted(t *testing.T) {
	base := t.TempDir()
	target := filepath.Join(base, "private")
	if err := os.Mkdir(target, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "lpictl")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	st, err := agent.OpenState(link)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
}
