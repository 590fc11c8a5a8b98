package sweep

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// runSweep plans the sweep file into a fresh directory and runs it.
func runSweep(t *testing.T, path string, jobs int) (string, *Plan, *Report) {
	t.Helper()
	s, plan := mustPlan(t, path)
	dir := t.TempDir()
	if err := Prepare(dir, s, plan); err != nil {
		t.Fatal(err)
	}
	rep, err := RunAll(context.Background(), dir, plan, Options{Jobs: jobs})
	if err != nil {
		t.Fatal(err)
	}
	return dir, plan, rep
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// withoutWall drops the wall_s column of a results.csv.
func withoutWall(t *testing.T, path string) string {
	t.Helper()
	recs := readCSV(t, path)
	col := slices.Index(recs[0], "wall_s")
	if col < 0 {
		t.Fatalf("%s: no wall_s column", path)
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	for _, r := range recs {
		if err := w.Write(slices.Delete(slices.Clone(r), col, col+1)); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	return b.String()
}

// The shipped smoke sweep end to end, with -j 1 and -j 2: the same table
// apart from wall_s, every run's files, and the overhead and saving
// columns against a hand calculation from the summary.json files.
func TestSmokeEndToEnd(t *testing.T) {
	path := "../../configs/sweeps/smoke.yaml"
	dir1, plan, rep := runSweep(t, path, 1)
	dir2, _, _ := runSweep(t, path, 2)
	if rep.Total != 5 || rep.Done != 5 || rep.Failed != 0 || rep.Pending != 0 {
		t.Fatalf("report %+v, want 5 done", rep)
	}
	if a, b := withoutWall(t, filepath.Join(dir1, ResultsCSV)), withoutWall(t, filepath.Join(dir2, ResultsCSV)); a != b {
		t.Errorf("results.csv with -j 1 and -j 2 differ beyond wall_s:\n%s\n%s", a, b)
	}
	recs := readCSV(t, filepath.Join(dir1, ResultsCSV))
	if len(recs) != 1+5 {
		t.Fatalf("%d rows, want 5", len(recs)-1)
	}
	wantHeader := "index,id,role,status,baseline_id,power.mode,predictor.pdt,seed,exec_time_s,latency_mean_s,latency_p50_s,latency_p99_s,latency_max_s," +
		"energy_links_j,energy_switches_j,energy_network_j,energy_nodes_j,energy_total_j,frac_wake,frac_transition,frac_fast_wake,frac_deep_sleep," +
		"transitions,wakeups,hits,misses,packets,messages,pfc_pauses,events,e2e_stall_s,tcep_active_ratio,powar_w_net,ledger_worst_ratio,tcep_lower_bound,exec_overhead_pct,latency_overhead_pct,p99_latency_overhead_pct," +
		"links_saving_pct,network_saving_pct,total_saving_pct,powar_e_net_norm,powar_e_cluster_norm,powar_ideal_e_net_norm,powar_ideal_e_cluster_norm,wall_s,error"
	if got := strings.Join(recs[0], ","); got != wantHeader {
		t.Errorf("header\n%s\nwant\n%s", got, wantHeader)
	}
	for _, pt := range plan.Points {
		for _, f := range []string{ScenarioFile, "summary.json", "perf.json", "ports.csv", "idle_hist.csv", "idle_log.csv", StatusFile} {
			if _, err := os.Stat(filepath.Join(dir1, pt.Dir, f)); err != nil {
				t.Error(err)
			}
		}
	}
	entries, _ := os.ReadDir(filepath.Join(dir1, PointsDir))
	if len(entries) != 5 {
		t.Errorf("%d entries in points/, want 5 (no temporary directories left)", len(entries))
	}
	checkAgainstSummaries(t, dir1, recs)
	checkJSONMatchesCSV(t, dir1, recs)
}

// summary reads the figures the comparison uses from a run's summary.json
// as plain JSON (not through the package's types).
func summary(t *testing.T, dir, id string) map[string]float64 {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, PointsDir, id, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		ExecTimeS float64 `json:"exec_time_s"`
		Latency   struct {
			Mean, P99 float64
		} `json:"latency_s"`
		Energy struct {
			Links, Network, Total float64
		} `json:"energy_j"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return map[string]float64{"t": m.ExecTimeS, "lat": m.Latency.Mean, "p99": m.Latency.P99,
		"links": m.Energy.Links, "net": m.Energy.Network, "total": m.Energy.Total}
}

func checkAgainstSummaries(t *testing.T, dir string, recs [][]string) {
	t.Helper()
	col := func(name string) int { return slices.Index(recs[0], name) }
	for _, r := range recs[1:] {
		id, bl := r[col("id")], r[col("baseline_id")]
		if r[col("role")] == RoleBaseline {
			if bl != "" || r[col("exec_overhead_pct")] != "" || r[col("power.mode")] != "" {
				t.Errorf("baseline row %v: want no baseline, overheads or axis values", r)
			}
			continue
		}
		p, b := summary(t, dir, id), summary(t, dir, bl)
		if got, _ := strconv.ParseFloat(r[col("exec_time_s")], 64); got != p["t"] {
			t.Errorf("%s: exec_time_s %v, summary.json %v", id, got, p["t"])
		}
		for _, c := range []struct {
			col  string
			want float64
		}{
			{"exec_overhead_pct", 100 * (p["t"] - b["t"]) / b["t"]},
			{"latency_overhead_pct", 100 * (p["lat"] - b["lat"]) / b["lat"]},
			{"p99_latency_overhead_pct", 100 * (p["p99"] - b["p99"]) / b["p99"]},
			{"links_saving_pct", 100 * (b["links"] - p["links"]) / b["links"]},
			{"network_saving_pct", 100 * (b["net"] - p["net"]) / b["net"]},
			{"total_saving_pct", 100 * (b["total"] - p["total"]) / b["total"]},
		} {
			got, err := strconv.ParseFloat(r[col(c.col)], 64)
			if err != nil || math.Abs(got-c.want) > 1e-9*math.Max(1, math.Abs(c.want)) {
				t.Errorf("%s: %s = %q, hand calculation %v", id, c.col, r[col(c.col)], c.want)
			}
		}
	}
}

func checkJSONMatchesCSV(t *testing.T, dir string, recs [][]string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, ResultsJSON))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var rows []map[string]any
	if err := dec.Decode(&rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(recs)-1 {
		t.Fatalf("results.json: %d rows, csv %d", len(rows), len(recs)-1)
	}
	for i, row := range rows {
		if len(row) != len(recs[0]) {
			t.Errorf("json row %d: %d keys, want %d", i, len(row), len(recs[0]))
		}
		for j, name := range recs[0] {
			cell := recs[i+1][j]
			switch v := row[name].(type) {
			case nil:
				if cell != "" {
					t.Errorf("row %d %s: json null, csv %q", i, name, cell)
				}
			case json.Number:
				if v.String() != cell {
					t.Errorf("row %d %s: json %s, csv %q", i, name, v, cell)
				}
			case string:
				if v != cell {
					t.Errorf("row %d %s: json %q, csv %q", i, name, v, cell)
				}
			default:
				t.Errorf("row %d %s: unexpected %T", i, name, v)
			}
		}
		if _, ok := row["exec_time_s"].(json.Number); !ok {
			t.Errorf("row %d: exec_time_s is not a number", i)
		}
	}
}

const resumeSweep = `
base: small.yaml
axes:
  power.mode: [fast-wake, deep-sleep]
  predictor.pdt: [0, 2us]
`

// A rerun runs only what is not done; a leftover temporary directory of
// a killed run is removed; the results do not change.
func TestResume(t *testing.T) {
	path := writeSweep(t, resumeSweep)
	dir, plan, _ := runSweep(t, path, 2)
	first := withoutWall(t, filepath.Join(dir, ResultsCSV))
	victim := plan.Points[2]
	if err := os.Remove(filepath.Join(dir, victim.Dir, StatusFile)); err != nil {
		t.Fatal(err)
	}
	leftover := filepath.Join(dir, PointsDir, tmpPrefix(victim.ID)+"123")
	if err := os.MkdirAll(leftover, 0o755); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var ran []string
	var skipped int
	rep, err := RunAll(context.Background(), dir, plan, Options{Jobs: 2, Progress: func(ev Event) {
		mu.Lock()
		defer mu.Unlock()
		if ev.Skipped {
			skipped++
		} else {
			ran = append(ran, ev.Point.ID)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ran) != 1 || ran[0] != victim.ID || skipped != 3 || rep.Done != 4 {
		t.Errorf("rerun ran %v (skipped %d, report %+v), want only %s", ran, skipped, rep, victim.ID)
	}
	if _, err := os.Stat(leftover); !os.IsNotExist(err) {
		t.Errorf("leftover %s: %v", leftover, err)
	}
	if again := withoutWall(t, filepath.Join(dir, ResultsCSV)); again != first {
		t.Errorf("results changed on resume:\n%s\n%s", first, again)
	}
	// A third run finds nothing to do.
	ran = nil
	if _, err := RunAll(context.Background(), dir, plan, Options{Jobs: 2, Progress: func(ev Event) {
		if !ev.Skipped {
			ran = append(ran, ev.Point.ID)
		}
	}}); err != nil || len(ran) != 0 {
		t.Errorf("third run ran %v (%v)", ran, err)
	}
}

// A run that fails is recorded and the others finish; its row has the
// error and no figures, and it reruns on the next RunAll.
func TestFailingPoint(t *testing.T) {
	path := writeSweep(t, `
base: small.yaml
axes:
  power.preset: [eee-400g, no-such-preset, eee-100g]
baseline:
  set: {power.mode: always-on}
`)
	dir, plan, rep := runSweep(t, path, 2)
	if rep.Done != 3 || rep.Failed != 1 || len(rep.Failures) != 1 || rep.Failures[0].Index != 1 {
		t.Fatalf("report %+v, want 3 done, run 1 failed", rep)
	}
	st, ok := ReadStatus(dir, plan.Points[1])
	if !ok || st.Status != StatusFailed || !strings.Contains(st.Error, "power.preset") || strings.Contains(st.Error, "\n") {
		t.Errorf("status of the failing run: %+v", st)
	}
	recs := readCSV(t, filepath.Join(dir, ResultsCSV))
	col := func(name string) int { return slices.Index(recs[0], name) }
	bad := recs[2]
	if bad[col("status")] != StatusFailed || bad[col("exec_time_s")] != "" || bad[col("exec_overhead_pct")] != "" ||
		bad[col("error")] != st.Error || bad[col("power.preset")] != "no-such-preset" || bad[col("wall_s")] == "" {
		t.Errorf("failed row %v", bad)
	}
	for _, i := range []int{1, 3, 4} {
		if r := recs[i]; r[col("status")] != StatusOK || r[col("exec_time_s")] == "" || r[col("error")] != "" {
			t.Errorf("row %v", r)
		}
	}
	// The points against the baseline (run 3, the base's preset).
	if recs[1][col("exec_overhead_pct")] == "" || recs[4][col("role")] != RoleBaseline {
		t.Errorf("rows %v / %v", recs[1], recs[4])
	}
	var ran []int
	if _, err := RunAll(context.Background(), dir, plan, Options{Jobs: 1, Progress: func(ev Event) {
		if !ev.Skipped {
			ran = append(ran, ev.Point.Index)
		}
	}}); err != nil || len(ran) != 1 || ran[0] != 1 {
		t.Errorf("rerun ran %v (%v), want the failed run 1 only", ran, err)
	}
}

// Rows whose baseline failed have empty overhead cells.
func TestBaselineFailed(t *testing.T) {
	path := writeSweep(t, `
base: small.yaml
axes:
  predictor.pdt: [0, 2us]
baseline:
  set: {power.preset: no-such-preset}
`)
	dir, _, rep := runSweep(t, path, 2)
	if rep.Done != 2 || rep.Failed != 1 {
		t.Fatalf("report %+v", rep)
	}
	recs := readCSV(t, filepath.Join(dir, ResultsCSV))
	col := slices.Index(recs[0], "exec_overhead_pct")
	for _, r := range recs[1:3] {
		if r[col] != "" || r[slices.Index(recs[0], "exec_time_s")] == "" {
			t.Errorf("row %v: want figures but no overheads", r)
		}
	}
}

// A cancelled RunAll leaves no half-written runs.
func TestCancelled(t *testing.T) {
	s, plan := mustPlan(t, writeSweep(t, resumeSweep))
	dir := t.TempDir()
	if err := Prepare(dir, s, plan); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep, err := RunAll(ctx, dir, plan, Options{Jobs: 2})
	if err != context.Canceled || rep == nil || rep.Done != 0 || rep.Pending != 4 {
		t.Fatalf("RunAll: %+v %v, want context.Canceled with 4 pending", rep, err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, PointsDir))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".tmp-") {
			t.Errorf("left %s", e.Name())
		}
		if _, err := os.Stat(filepath.Join(dir, PointsDir, e.Name(), StatusFile)); err == nil {
			t.Errorf("%s has a status", e.Name())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ResultsCSV)); err != nil {
		t.Errorf("no results after cancel: %v", err)
	}
}

// RunPoint works from DIR alone (another machine): it reads plan.json and
// scenario.json, never the sweep file.
func TestRunPointFromDir(t *testing.T) {
	path := writeSweep(t, resumeSweep)
	s, plan := mustPlan(t, path)
	dir := t.TempDir()
	if err := Prepare(dir, s, plan); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Dir(path)); err != nil {
		t.Fatal(err)
	}
	read, err := ReadPlan(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, ran, err := RunPoint(context.Background(), dir, read.Points[3])
	if err != nil || !ran || st.Status != StatusOK || st.ID != read.Points[3].ID || st.Host == "" {
		t.Fatalf("RunPoint: %+v %v %v", st, ran, err)
	}
	if _, ran, err := RunPoint(context.Background(), dir, read.Points[3]); ran || err != nil {
		t.Errorf("second RunPoint ran %v (%v)", ran, err)
	}
	rep, err := StatusOf(dir)
	if err != nil || rep.Done != 1 || rep.Pending != 3 {
		t.Errorf("status %+v %v", rep, err)
	}
	// A scenario.json that no longer matches its id is refused.
	p0 := read.Points[0]
	sc := filepath.Join(dir, p0.Dir, ScenarioFile)
	data, _ := os.ReadFile(sc)
	write(t, sc, strings.Replace(string(data), `"seed": 1`, `"seed": 2`, 1))
	if _, _, err := RunPoint(context.Background(), dir, p0); err == nil || !strings.Contains(err.Error(), "resolves to id") {
		t.Errorf("tampered scenario.json: %v", err)
	}
}

// TestRunThreadsCapped: RunAll gives a run no more threads than the cores
// left to it (NumCPU/Jobs, at least one), whatever engine.threads says,
// while RunPoint alone runs it as the scenario says; the scenario file in
// the run's directory keeps what it says.
func TestRunThreadsCapped(t *testing.T) {
	path := writeSweep(t, `
base: small.yaml
set: {engine.threads: 4}
seeds: [1, 2]
`)
	threadsOf := func(dir string, pt Point) int {
		t.Helper()
		var perf struct {
			Threads int `json:"threads"`
		}
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(pt.Dir), "perf.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &perf); err != nil {
			t.Fatal(err)
		}
		return perf.Threads
	}
	dir, plan, rep := runSweep(t, path, runtime.NumCPU())
	if rep.Done != 2 || rep.Failed != 0 {
		t.Fatalf("report %+v", rep)
	}
	for _, pt := range plan.Points {
		if n := threadsOf(dir, pt); n != 1 {
			t.Errorf("run %d: %d threads with as many jobs as cores, want 1", pt.Index, n)
		}
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(pt.Dir), ScenarioFile))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), `"threads": 4`) {
			t.Errorf("run %d: its scenario file lost engine.threads 4", pt.Index)
		}
	}
	// Alone, the same run takes the four threads it asks for.
	s, plan := mustPlan(t, path)
	dir = t.TempDir()
	if err := Prepare(dir, s, plan); err != nil {
		t.Fatal(err)
	}
	if _, ran, err := RunPoint(context.Background(), dir, plan.Points[0]); !ran || err != nil {
		t.Fatalf("RunPoint: ran %v, %v", ran, err)
	}
	if n := threadsOf(dir, plan.Points[0]); n != 4 {
		t.Errorf("RunPoint: %d threads, want the scenario's 4", n)
	}
}
