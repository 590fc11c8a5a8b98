package scenario

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lpictl/lpictl/sim/eee"
	"github.com/lpictl/lpictl/sim/power"
)

const small = `
name: small
seed: 3
topology: {kind: megafly, groups: 5, leaves: 2, spines: 2, nodes_per_switch: 2, global_links: 2}
power: {mode: deep-sleep}
workload: {kind: synthetic, duration: 30us, synthetic: {pattern: uniform, load: 0.3, message_bytes: 20000}}
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
	if h := runJSON(t, "engine.queue=calendar"); !bytes.Equal(a, h) {
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
		{"", "workload.synthetic.load=-0.5", "workload.synthetic.load"},
		{"", "network.mtu=-1", "network.mtu"},
		{"network: {propagation: -1ns}", "", "line 1: negative duration"},
		{"", "power.mode=sleepy", "power.mode"},
		{"", "power.lpi=sometimes", "power.lpi"},
		{"", "power.preset=nope", "power.preset"},
		{"", "predictor.kind=oracle", "predictor.kind"},
		{"", "workload.synthetic.pattern=spiral", "workload.synthetic.pattern"},
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
	apps, _ := filepath.Glob("../../configs/sim/apps/*.yaml")
	if len(apps) < 6 {
		t.Fatalf("application scenarios: %v", apps)
	}
	files = append(files, apps...)
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
	if len(rows) != 8 || rows[0].ExecOverheadPct != 0 || rows[0].LinkSavingPct != 0 {
		t.Fatalf("rows %+v", rows)
	}
	// The guarded rows report their ledger, the end-to-end one its gate,
	// the papers' rows neither.
	if rows[2].LedgerWorst != nil || rows[3].LedgerWorst == nil || *rows[3].LedgerWorst > 1 || rows[6].StallBudget == nil {
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
	f.Add([]byte("topology: {kind: torus3d, dims: [2, 2, 2]}"), "workload.synthetic.load=2")
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

// TestWorkloadScenario: a scenario with a VEF trace given relative to its
// folder replays through the network; the JSON is deterministic and the
// message count is the replay's.
func TestWorkloadScenario(t *testing.T) {
	dir := t.TempDir()
	trace, err := os.ReadFile("../../configs/workloads/sample.vef")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "s.vef"), trace, 0o644); err != nil {
		t.Fatal(err)
	}
	doc := `
topology: {kind: megafly, groups: 5, leaves: 2, spines: 2, nodes_per_switch: 2, global_links: 2}
power: {mode: fast-wake}
predictor: {kind: fixed, pdt: 0}
workload: {kind: vef, file: s.vef}
output: {idle_hist_port: 3}
`
	path := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	var outs [2][]byte
	for i := range outs {
		s, err := Load(path, nil)
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
		outs[i] = b.Bytes()
		if st := o.Net.Workload().Stats(); o.Report.Messages != uint64(st.Messages) || st.Messages == 0 || o.Report.Workload != "vef" || o.Report.Ranks != 8 {
			t.Errorf("messages %d, replay %d, workload %q ranks %d", o.Report.Messages, st.Messages, o.Report.Workload, o.Report.Ranks)
		}
		if i == 0 {
			out := t.TempDir()
			if err := o.WriteDir(out); err != nil {
				t.Fatal(err)
			}
			hist, _ := os.ReadFile(filepath.Join(out, "idle_hist.csv"))
			log, _ := os.ReadFile(filepath.Join(out, "idle_log.csv"))
			if !strings.Contains(string(hist), "\nport3,") || !strings.Contains(string(log), "\nport3,") {
				t.Errorf("no port3 rows in idle_hist.csv / idle_log.csv")
			}
		}
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Errorf("same scenario, different JSON")
	}
	// A bad record: FILE:LINE, found by Build before the run starts.
	bad := strings.Replace(string(trace), "1 1 2 4096 2 500 0", "1 1 2 4096 2 500 9", 1)
	if err := os.WriteFile(filepath.Join(dir, "s.vef"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(path, nil)
	if err == nil {
		_, err = s.Build()
	}
	if err == nil || !strings.Contains(err.Error(), "s.vef:") {
		t.Errorf("bad trace: %v", err)
	}
}

// TestConfigErrorsNameFile: every configuration error, whether found while
// parsing, building or starting the run, names the scenario's file and
// the key; a non-integer where an integer is expected is one of them.
func TestConfigErrorsNameFile(t *testing.T) {
	for _, c := range []struct{ set, key string }{
		{"network.pfc_stop=1", "network.pfc_go"},
		{"network.pfc_go=-1", "network.pfc_go"},
		{"power.preset=nope", "power.preset"},
		{"predictor.kind=fixed", "predictor.pdt"},
		{"predictor.bound=2", "predictor.bound"},
		{"predictor.history=-1", "predictor.history"},
		{"predictor.hops={0: 1}", "predictor.hops"},
		{"topology.radix=1", "topology.radix"},
		{"topology={kind: fbfly, dims: [70]}", "topology.radix"},
		{"output.idle_hist_port=999999", "output.idle_hist_port"},
		{"seed=1.5", "seed"},
		{"topology.groups=2.5", "topology.groups"},
	} {
		s, err := Parse([]byte(small), "small.yaml", []string{c.set})
		if err == nil {
			_, err = Run(context.Background(), s, nil)
		}
		if err == nil || !strings.HasPrefix(err.Error(), "small.yaml: ") || !strings.Contains(err.Error(), c.key) {
			t.Errorf("--set %s: error %v, want one naming small.yaml and %s", c.set, err, c.key)
		}
	}
	if _, err := Parse([]byte("seed: 1.5\n"), "f.yaml", nil); err == nil || err.Error() != "f.yaml: line 1: seed: want an integer, got 1.5" {
		t.Errorf("seed: 1.5 in a file: %v", err)
	}
	if s, err := Parse([]byte("seed: 2.0\n"), "f.yaml", nil); err != nil || s.Seed != 2 {
		t.Errorf("seed: 2.0 (a whole number): %v", err)
	}
}

// TestAlwaysOnLinkPowerIsTable7: always on, the links draw exactly the
// idle link power of the paper's Table 7 layout (topo describe): 24 W per
// port end, 2 × 24 W per cable.
func TestAlwaysOnLinkPowerIsTable7(t *testing.T) {
	s, err := Load("../../configs/sim/quick.yaml", []string{"power.mode=always-on", "workload.duration=5us"})
	if err != nil {
		t.Fatal(err)
	}
	o, err := Run(context.Background(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := o.Report
	got := r.EnergyJ.Links / r.ExecTimeS
	want := power.Breakdown(o.Built.Topology, o.Built.Preset).Idle.Links.W
	if math.Abs(got-want) > 1e-6*want {
		t.Errorf("links draw %v W, Table 7 idle link power %v W", got, want)
	}
	// By hand: quick is a 272-node Megafly with 136 radix-8 switches:
	// 136 × 8 + 272 = 1360 port ends × 24 W.
	if want != 1360*24 {
		t.Errorf("Table 7 link power %v W, want 1360 × 24 W", want)
	}
}

// TestPowerLPI: power.lpi overrides the preset's symmetry; per direction
// the small Megafly's links sleep more (no handshake, no waiting for the
// peer) and the per-link run is the default's, byte for byte.
func TestPowerLPI(t *testing.T) {
	def := runJSON(t)
	if got := runJSON(t, "power.lpi=per-link"); !bytes.Equal(got, def) {
		t.Error("power.lpi=per-link differs from the default (eee-400g is per-link)")
	}
	dir := runJSON(t, "power.lpi=Per-Direction")
	if bytes.Equal(dir, def) {
		t.Error("power.lpi=per-direction changed nothing")
	}
	s, err := Parse([]byte(small), "small.yaml", []string{"power.preset=eee-100base-tx"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	if b.Params.EEE.LPI != eee.PerDirection {
		t.Errorf("eee-100base-tx: LPI %v, want the preset's per-direction", b.Params.EEE.LPI)
	}
}
