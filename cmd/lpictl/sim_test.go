package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const smallScenario = `
name: small
topology: {kind: megafly, groups: 5, leaves: 2, spines: 2, nodes_per_switch: 2, global_links: 2}
workload: {kind: synthetic, duration: 20us, synthetic: {load: 0.2}}
`

func TestSimRunJSONDeterministic(t *testing.T) {
	cfg := writeFile(t, "small.yaml", smallScenario)
	dir := t.TempDir()
	code, a, errs := lpictl(t, "sim", "run", "-c", cfg, "--json", "--deterministic", "-o", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	_, b, _ := lpictl(t, "sim", "run", "-c", cfg, "--json", "--deterministic")
	if a != b {
		t.Fatal("same scenario, different JSON")
	}
	summary, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil || string(summary) != a {
		t.Fatalf("summary.json differs from --deterministic output (%v)", err)
	}
	_, c, _ := lpictl(t, "sim", "run", "-c", cfg, "--json", "--set", "seed=9")
	var full map[string]any
	if err := json.Unmarshal([]byte(c), &full); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"exec_time_s", "packets", "messages", "latency_s", "energy_j", "link_state_fraction",
		"transitions", "wakeups", "hits", "misses", "events", "wall_s", "events_per_s", "peak_rss_bytes"} {
		if _, ok := full[k]; !ok {
			t.Errorf("--json lacks %s", k)
		}
	}
	if full["seed"].(float64) != 9 {
		t.Errorf("--set seed=9 not applied: %v", full["seed"])
	}
	for _, f := range []string{"perf.json", "ports.csv", "idle_hist.csv"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	code, table, _ := lpictl(t, "sim", "run", "-c", cfg)
	if code != 0 || !strings.Contains(table, "energy network") {
		t.Errorf("table: exit %d\n%s", code, table)
	}
}

func TestSimCompare(t *testing.T) {
	cfg := writeFile(t, "small.yaml", smallScenario)
	code, out, errs := lpictl(t, "sim", "compare", "-c", cfg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, v := range []string{"always-on", "fixed 1µs", "perfbound", "perfboundcorrect"} {
		if !strings.Contains(out, v) {
			t.Errorf("compare lacks %s:\n%s", v, out)
		}
	}
}

func TestSimBadInput(t *testing.T) {
	for _, c := range []struct {
		doc  string
		args []string
		want string
	}{
		{"network: {colour: blue}\n", nil, `unknown key "network.colour"`},
		{"topology: {kind: megafly, radix: 1}\n", nil, "topology.radix"},
		{"network: {link_rate: -1}\n", nil, "network.link_rate"},
		{smallScenario, []string{"--set", "workload.synthetic.load=-1"}, "workload.synthetic.load"},
		{smallScenario, []string{"--set", "bogus=1"}, `unknown key "bogus"`},
		{smallScenario, []string{"--fixed-pdt", "x"}, "--fixed-pdt"},
	} {
		cfg := writeFile(t, "bad.yaml", c.doc)
		cmd := "run"
		if len(c.args) > 0 && c.args[0] == "--fixed-pdt" {
			cmd = "compare"
		}
		code, _, errs := lpictl(t, append([]string{"sim", cmd, "-c", cfg}, c.args...)...)
		if code != 2 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%q %v: exit %d, stderr %q; want 2 and one line naming %s", c.doc, c.args, code, errs, c.want)
		}
		if !strings.Contains(errs, "bad.yaml") && c.args == nil {
			t.Errorf("%q: error does not name the file: %q", c.doc, errs)
		}
	}
	if code, _, _ := lpictl(t, "sim", "run", "-c", "/nonexistent.yaml"); code != 2 {
		t.Errorf("missing scenario file: exit %d, want 2", code)
	}
}

func TestTopoDescribe(t *testing.T) {
	code, out, errs := lpictl(t, "topo", "describe")
	if code != 0 || !strings.Contains(out, "4160") || !strings.Contains(out, "20800") {
		t.Fatalf("exit %d (%s):\n%s", code, errs, out)
	}
	torus := writeFile(t, "torus.yaml", "topology: {kind: torus3d}\n")
	code, out, _ = lpictl(t, "topo", "describe", "-c", torus, "--json")
	var d map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &d) != nil || d["power"] == nil {
		t.Fatalf("torus --json: exit %d\n%s", code, out)
	}
	if code, _, _ := lpictl(t, "topo", "describe", "--set", "topology.radix=-3"); code != 2 {
		t.Errorf("negative radix: exit %d, want 2", code)
	}
}

// TestSimRunWorkload: a VEF trace next to the scenario runs through the
// network; a bad record exits 2 naming FILE:LINE.
func TestSimRunWorkload(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "w.yaml")
	doc := "topology: {kind: megafly, groups: 5, leaves: 2, spines: 2, nodes_per_switch: 2, global_links: 2}\n" +
		"workload: {kind: vef, file: w.vef}\n"
	if err := os.WriteFile(cfg, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	trace := "VEF 2 2 1 0 0 FALSE\nC0 0 1\n0 0 1 20000 0 1000 -1\n1 1 0 0 2 500 0\n"
	if err := os.WriteFile(filepath.Join(dir, "w.vef"), []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := lpictl(t, "sim", "run", "-c", cfg, "--json", "--deterministic")
	var r map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil || r["messages"].(float64) != 2 || r["workload"] != "vef" {
		t.Fatalf("exit %d (%s):\n%s", code, errs, out)
	}
	bad := strings.Replace(trace, "1 1 0 0 2 500 0", "1 1 0 0 2 500 5", 1)
	if err := os.WriteFile(filepath.Join(dir, "w.vef"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs = lpictl(t, "sim", "run", "-c", cfg)
	if code != 2 || !strings.Contains(errs, "w.vef:4:") {
		t.Errorf("bad record: exit %d, stderr %q; want 2 and w.vef:4", code, errs)
	}
}
