package scenario

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const small = `
name: small
seed: 3
topology: {kind: megafly, groups: 5, leaves: 2, spines: 2, nodes_per_switch: 2, global_links: 2}
power: {mode: deep-sleep}
workload: {pattern: uniform, load: 0.3, message_size: 20000, duration: 30us}
`

func runJSON(t *testing.T, sets ...string) []byte {
	t.Helper()
	s, err := Parse([]byte(small), "small.yaml", sets)
	if err != nil {
		t.Fatal(err)
	}
	o, err := Run(context.Background(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := o.WriteJSON(&b, false); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestDeterministicJSON(t *testing.T) {
	a, b := runJSON(t), runJSON(t)
	if !bytes.Equal(a, b) {
		t.Fatalf("same seed, different JSON:\n%s\n%s", a, b)
	}
	if c := runJSON(t, "seed=4"); bytes.Equal(a, c) {
		t.Fatal("different seeds, identical JSON")
	}
	if h := runJSON(t, "engine.queue=heap"); !bytes.Equal(a, h) {
		t.Fatalf("heap and calendar queues differ:\n%s\n%s", a, h)
	}
	for _, key := range []string{`"exec_time_s"`, `"latency_s"`, `"energy_j"`, `"link_state_fraction"`, `"events"`} {
		if !bytes.Contains(a, []byte(key)) {
			t.Errorf("JSON lacks %s", key)
		}
	}
}

func TestWriteDir(t *testing.T) {
	s, err := Parse([]byte(small), "small.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	dirs := []string{t.TempDir(), t.TempDir()}
	for _, dir := range dirs {
		o, err := Run(context.Background(), s, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := o.WriteDir(dir); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"summary.json", "ports.csv", "idle_hist.csv"} {
		a, err := os.ReadFile(filepath.Join(dirs[0], f))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(dirs[1], f))
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two runs", f)
		}
	}
	ports, _ := os.ReadFile(filepath.Join(dirs[0], "ports.csv"))
	if n := strings.Count(string(ports), "\n"); n != 1+2*50 { // header + 2 ends × 50 links
		t.Errorf("ports.csv has %d lines", n)
	}
	hist, _ := os.ReadFile(filepath.Join(dirs[0], "idle_hist.csv"))
	for _, class := range []string{"\nall,", "\nnic,", "\nleaf,", "\nspine,"} {
		if !strings.Contains(string(hist), class) {
			t.Errorf("idle_hist.csv lacks class %q", class)
		}
	}
	if _, err := os.Stat(filepath.Join(dirs[0], "perf.json")); err != nil {
		t.Error(err)
	}
}

func TestBadInput(t *testing.T) {
	for _, c := range []struct{ doc, set, want string }{
		{"network: {bogus: 1}", "", `unknown key "network.bogus"`},
		{"topology: {kind: megafly, radix: 1}", "", "topology.radix"},
		{"topology: {kind: rlft, radix: 2}", "", "topology.radix"},
		{"network: {link_rate: -1}", "", "network.link_rate"},
		{"", "network.link_rate=-400e9", "network.link_rate"},
		{"", "workload.load=-0.5", "workload.load"},
		{"", "network.mtu=-1", "network.mtu"},
		{"network: {propagation: -1ns}", "", "line 1: negative duration"},
		{"", "power.mode=sleepy", "power.mode"},
		{"", "power.preset=nope", "power.preset"},
		{"", "predictor.kind=oracle", "predictor.kind"},
		{"", "workload.pattern=tornado", "workload.pattern"},
		{"", "network.pfc_stop=48000", "network.pfc_stop"},
		{"", "network.foo.bar=1", `unknown key "network.foo"`},
		{"seed: [1]", "", "line 1: cannot unmarshal"},
	} {
		s, err := Parse([]byte(c.doc), "bad.yaml", splitSet(c.set))
		if err == nil {
			_, err = s.Build()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q %q: error %v, want one line naming %s", c.doc, c.set, err, c.want)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "bad.yaml") && !strings.Contains(c.want, "topology") && c.set == "" {
			t.Errorf("%q: error %v does not name the file", c.doc, err)
		}
	}
}

func splitSet(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

func TestShippedScenarios(t *testing.T) {
	files, err := filepath.Glob("../../configs/sim/*.yaml")
	if err != nil || len(files) < 4 {
		t.Fatalf("shipped scenarios: %v %v", files, err)
	}
	for _, f := range files {
		s, err := Load(f, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Build(); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if _, err := Load("", nil); err != nil {
		t.Fatalf("default scenario: %v", err)
	}
}

func TestCompare(t *testing.T) {
	s, err := Parse([]byte(small), "small.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := Compare(context.Background(), s, DefaultVariants(s, 1000), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || rows[0].ExecOverheadPct != 0 || rows[0].LinkSavingPct != 0 {
		t.Fatalf("rows %+v", rows)
	}
	var b bytes.Buffer
	if err := WriteCompareTable(&b, rows); err != nil || !strings.Contains(b.String(), "perfboundcorrect") {
		t.Fatalf("table %q, %v", b.String(), err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(small), "seed=2")
	f.Add([]byte("network: {mtu: 100}"), "network.queue_size=1")
	f.Add([]byte("topology: {kind: torus3d, dims: [2, 2, 2]}"), "workload.load=2")
	f.Add([]byte("{"), "=")
	f.Fuzz(func(t *testing.T, doc []byte, set string) {
		s, err := Parse(doc, "fuzz.yaml", []string{set})
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error: %q", err)
			}
			return
		}
		if s.Topology.Validate() != nil {
			t.Fatal("normalized topology does not validate")
		}
		_, _ = s.Build()
	})
}
