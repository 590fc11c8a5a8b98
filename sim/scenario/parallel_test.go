package scenario

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// shrink is what makes each shipped scenario short enough to run three
// times in a test; the scenarios not listed run as shipped.
var shrink = map[string][]string{
	"fattree-1024.yaml":       {"workload.duration=2us"},
	"megafly-4160.yaml":       {"workload.duration=2us"},
	"quick.yaml":              {"workload.duration=5us"},
	"torus-4000.yaml":         {"workload.duration=2us"},
	"demo.yaml":               {"workload.steps=1"},
	"alexnet.yaml":            {"workload.steps=1", "workload.step_time=1ms"},
	"alltoall.yaml":           {"workload.steps=1", "workload.ranks=512"},
	"lammps.yaml":             {"workload.steps=1", "workload.ranks=512", "workload.step_time=1ms"},
	"mlwf.yaml":               {"workload.steps=1", "workload.step_time=10ms", "workload.mlwf.gradient_bytes=1MB"},
	"patmos.yaml":             {"workload.ranks=512"},
	"stencil.yaml":            {"workload.steps=2", "workload.ranks=512"},
	"fattree-ecmp-htsim.yaml": nil,
	"ring.yaml":               nil,
}

// outputs runs a scenario and returns its output files but perf.json
// (wall time, memory) and the threads it ran on.
func outputs(t *testing.T, path string, sets []string) (map[string][]byte, int, string) {
	t.Helper()
	s, err := Load(path, sets)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	o, err := Run(context.Background(), s, nil)
	if err != nil {
		t.Fatalf("%s %v: %v", path, sets, err)
	}
	dir := t.TempDir()
	if err := o.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	files, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		if f.Name() == "perf.json" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[f.Name()] = b
	}
	return out, o.Perf.Threads, o.Perf.Sequential
}

func sameOutputs(t *testing.T, name string, want, got map[string][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d output files, sequential %d", name, len(got), len(want))
	}
	for f, w := range want {
		if !bytes.Equal(got[f], w) {
			t.Errorf("%s: %s differs from the sequential run's", name, f)
		}
	}
}

// TestParallelShippedScenarios: every scenario in configs/sim (shortened)
// gives byte-identical outputs on 1, 2 and 4 threads, and runs on them
// (none of them has a reason to run sequentially).
func TestParallelShippedScenarios(t *testing.T) {
	paths, _ := filepath.Glob("../../configs/sim/*.yaml")
	apps, _ := filepath.Glob("../../configs/sim/apps/*.yaml")
	paths = append(paths, apps...)
	if len(paths) < 10 {
		t.Fatalf("only %d shipped scenarios found", len(paths))
	}
	for _, path := range paths {
		base := filepath.Base(path)
		sets, ok := shrink[base]
		if !ok {
			t.Errorf("%s: a shipped scenario this test does not know: add it to shrink", base)
			continue
		}
		t.Run(base, func(t *testing.T) {
			t.Parallel()
			want, _, _ := outputs(t, path, sets)
			for _, threads := range []int{2, 4} {
				got, ran, why := outputs(t, path, append(sets[:len(sets):len(sets)], fmt.Sprintf("engine.threads=%d", threads)))
				if ran != threads {
					t.Errorf("%d threads asked for, ran on %d: %s", threads, ran, why)
				}
				sameOutputs(t, fmt.Sprintf("%s at %d threads", base, threads), want, got)
			}
		})
	}
}

// TestParallelRandomNetworks is the property over random small networks
// and loads: Megaflies, dragonflies, fat trees and tori of random sizes,
// per-link or per-direction, with random predictors, loads and message
// sizes, give byte-identical outputs on 1 to 4 threads.
func TestParallelRandomNetworks(t *testing.T) {
	cases := 40
	if testing.Short() {
		cases = 8
	}
	r := rand.New(rand.NewPCG(26, 3))
	topos := []func() string{
		func() string {
			g, spines := 3+r.IntN(6), 1+r.IntN(3)
			return fmt.Sprintf("{kind: megafly, groups: %d, leaves: %d, spines: %d, nodes_per_switch: %d, global_links: %d}",
				g, 1+r.IntN(3), spines, 1+r.IntN(4), (g-1+spines-1)/spines)
		},
		func() string { return fmt.Sprintf("{kind: rlft, radix: %d, levels: 2}", []int{4, 8}[r.IntN(2)]) },
		func() string { return "{kind: dragonfly, groups: 9, routers: 4, nodes_per_switch: 2, global_links: 2}" },
		func() string { return "{kind: torus3d, dims: [4, 4, 4], nodes_per_switch: 1, dateline: true}" },
	}
	for c := range cases {
		doc := fmt.Sprintf(`name: random%d
seed: %d
topology: %s
power: {mode: %s, lpi: %s}
predictor: %s
workload: {kind: synthetic, duration: %dus, synthetic: {pattern: %s, load: %.2f, message_bytes: %d, arrivals: %s}}
`, c, 1+r.IntN(1000), topos[r.IntN(len(topos))](),
			[]string{"deep-sleep", "fast-wake", "hybrid", "always-on"}[r.IntN(4)],
			[]string{"per-link", "per-direction"}[r.IntN(2)],
			[]string{"{kind: perfboundcorrect}", "{kind: perfbound}", "{kind: fixed, pdt: 10us}"}[r.IntN(3)],
			2+r.IntN(8), []string{"uniform", "tornado", "hotspot"}[r.IntN(3)],
			0.05+0.9*r.Float64(), []int{64, 1500, 9600, 30000}[r.IntN(4)],
			[]string{"poisson", "onoff"}[r.IntN(2)])
		path := filepath.Join(t.TempDir(), "random.yaml")
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		want, _, _ := outputs(t, path, nil)
		threads := 2 + r.IntN(3)
		got, ran, why := outputs(t, path, []string{fmt.Sprintf("engine.threads=%d", threads)})
		if ran != threads {
			t.Errorf("case %d: %d threads asked for, ran on %d: %s\n%s", c, threads, ran, why, doc)
		}
		sameOutputs(t, fmt.Sprintf("case %d at %d threads:\n%s", c, threads, doc), want, got)
	}
}

// TestParallelBlockers: a scenario whose model has state shared with no
// delay across the network runs on one thread when more are asked for,
// says why, and gives the results of a sequential run.
func TestParallelBlockers(t *testing.T) {
	const base = `name: blocked
seed: 2
topology: {kind: megafly, groups: 5, leaves: 2, spines: 2, nodes_per_switch: 2, global_links: 2}
power: {mode: deep-sleep}
workload: {kind: synthetic, duration: 5us, synthetic: {pattern: uniform, load: 0.3, message_bytes: 9600}}
`
	for _, c := range []struct {
		sets []string
		why  string
	}{
		{[]string{"power.end_to_end.enabled=true"}, "power.end_to_end"},
		{[]string{"routing.kind=powar"}, "POWAR"},
		{[]string{"topology={kind: fbfly, dims: [4, 4], nodes_per_switch: 2}", "power.consolidation={kind: tcep}"}, "TCEP"},
		{[]string{"network.propagation=0s"}, "no propagation delay"},
		{[]string{"network.nic_latency=0s"}, "nic_latency 0"},
	} {
		path := filepath.Join(t.TempDir(), "blocked.yaml")
		if err := os.WriteFile(path, []byte(base), 0o644); err != nil {
			t.Fatal(err)
		}
		want, _, _ := outputs(t, path, c.sets)
		got, ran, why := outputs(t, path, append(c.sets[:len(c.sets):len(c.sets)], "engine.threads=2"))
		if ran != 1 || !bytes.Contains([]byte(why), []byte(c.why)) {
			t.Errorf("%v: ran on %d threads, reason %q (want one thread, a reason naming %q)", c.sets, ran, why, c.why)
		}
		sameOutputs(t, fmt.Sprint(c.sets), want, got)
	}
}
