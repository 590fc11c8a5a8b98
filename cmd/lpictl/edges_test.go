package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lpictl/lpictl/sim/sweep"
)

// TestConfigReadsBounded: -c /dev/zero and --preset /dev/zero read without
// limit until the memory ran out (issue 24 item 11). Every configuration
// file read from a flag is now bounded (configs.MaxFileSize): a longer one
// exits 2 with one line naming it.
func TestConfigReadsBounded(t *testing.T) {
	big := writeFile(t, "big.yaml", "# padding\n"+strings.Repeat("#"+strings.Repeat("x", 1023)+"\n", 5<<10)+"seed: 1\n")
	gaps := writeFile(t, "g.txt", "1us\n2us\n")
	cases := [][]string{
		{"predict", "-c", big, gaps},
		{"predict", "--preset", big, gaps},
		{"sim", "run", "-c", big},
		{"topo", "describe", "-c", big},
		{"workload", "describe", "-c", big},
		{"sweep", "plan", big},
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		cases = append(cases,
			[]string{"predict", "--preset", "/dev/zero", gaps},
			[]string{"predict", "-c", "/dev/zero", gaps},
			[]string{"sim", "run", "-c", "/dev/zero"},
			[]string{"sweep", "plan", "/dev/zero"},
		)
	}
	for _, args := range cases {
		code, out, errs := lpictl(t, args...)
		if code != 2 || out != "" || !strings.Contains(errs, "longer than 4 MiB") || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and one line \"… longer than 4 MiB …\"", args, code, out, errs)
		}
	}
}

// TestPredictTraceStreams: --trace kept every decision in memory (684 MB
// for 10^6 periods) until the end (issue 24 item 13). The table now goes
// through a spool on disk: the heap stays small however long the input,
// and the output is the tabwriter's, byte for byte.
func TestPredictTraceStreams(t *testing.T) {
	var b strings.Builder
	for i := range 300_000 {
		fmt.Fprintf(&b, "%dns\n", 1+(i*7919)%40_000)
	}
	gaps := writeFile(t, "g.txt", b.String())
	b.Reset()
	runtime.GC()
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > peak.Load() {
				peak.Store(ms.HeapAlloc)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	var out countingWriter
	var errb strings.Builder
	code := run([]string{"predict", "--trace", "--predictor", "fixed", "--pdt", "10us", gaps}, &out, &errb)
	close(stop)
	<-sampled
	if code != 0 || out.lines != 300_000+1+8 { // the rows, their header, the summary
		t.Fatalf("exit %d, %d lines, stderr %q", code, out.lines, errb.String())
	}
	if p := peak.Load(); p > 64<<20 {
		t.Errorf("heap peaked at %d MiB for a 300 000-period --trace; want < 64 MiB (streamed)", p>>20)
	}
}

type countingWriter struct{ lines int }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.lines += bytes.Count(p, []byte("\n"))
	return len(p), nil
}

// TestPredictFormatDetection: a "# controller:" comment in a gap file made
// predict read it as an agent trace (and fail on its JSON); only a port
// trace's header block names a controller. A BOM made a port trace a gap
// file. "-0.4ns" was a gap of 0 (issue 24 item 14).
func TestPredictFormatDetection(t *testing.T) {
	gaps := writeFile(t, "g.txt", "1us\n# controller: see the wiki\n20us\n")
	s := predictJSON(t, "--predictor", "fixed", "--pdt", "10us", gaps)
	if s.IdlePeriods != 2 || s.Misses != 1 {
		t.Errorf("gap file with a controller comment: %+v", s)
	}
	first := writeFile(t, "g2.txt", "# controller: not json\n1us\n")
	if s := predictJSON(t, first); s.IdlePeriods != 1 {
		t.Errorf("gap file whose first line is a controller comment: %+v", s)
	}
	trace := writeFile(t, "t.csv", "\ufeffstart_ps,gap_ps,pdt_ps,outcome,delay_ps,sent\n0,5000000,1000000,miss,0,\n")
	if s := predictJSON(t, "--predictor", "fixed", "--pdt", "1us", trace); s.Agreement == nil || s.Agreement.Decisions != 1 {
		t.Errorf("port trace with a BOM not read as one: %+v", s)
	}
	for in, want := range map[string]string{
		"1us\n-0.4ns\n": `g.txt:2: negative duration "-0.4ns"`,
		"1us\n-0.4\n":   `g.txt:2: negative duration "-0.4"`,
	} {
		code, out, errs := lpictl(t, "predict", writeFile(t, "g.txt", in))
		if code != 2 || out != "" || !strings.Contains(errs, want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and %q", in, code, out, errs, want)
		}
	}
	code, out, _ := lpictl(t, "predict", "--trace", writeFile(t, "b.txt", "9007199254740993\n"))
	if code != 0 || !strings.Contains(out, " 2501h59m59.254740993s ") {
		t.Errorf("2^53+1 ns not read exactly: exit %d\n%s", code, out)
	}
}

// TestSimRunInterruptedWritesPartial: ^C on sim run -o DIR threw the whole
// run away ("context canceled", exit 1, nothing written; issue 24 item
// 16). The run now writes what it simulated, marked incomplete, and exits
// 130. The context is cancelled before the run starts: the run stops
// after its first million events (quick.yaml has 2.7 million).
func TestSimRunInterruptedWritesPartial(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	code := runContext(ctx, []string{"sim", "run", "-c", "../../configs/sim/quick.yaml", "-o", dir}, &out, &errb)
	if code != exitInterrupted || !strings.Contains(errb.String(), "interrupted after") || strings.Count(errb.String(), "\n") != 1 {
		t.Fatalf("exit %d, stderr %q; want %d and one line saying it was interrupted", code, errb.String(), exitInterrupted)
	}
	if !strings.HasPrefix(out.String(), "INCOMPLETE") {
		t.Errorf("table does not start with the INCOMPLETE line:\n%s", out.String())
	}
	data, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Incomplete bool    `json:"incomplete"`
		ExecTimeS  float64 `json:"exec_time_s"`
		Events     uint64  `json:"events"`
	}
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	if !sum.Incomplete || sum.ExecTimeS <= 0 || sum.Events < 1<<20 || sum.Events >= 2_695_420 {
		t.Errorf("summary.json: %+v; want incomplete, some time simulated, between 2^20 and all events", sum)
	}
	for _, f := range []string{"perf.json", "ports.csv", "idle_hist.csv", "idle_log.csv"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	// A run that ends is not marked.
	code, full, _ := lpictl(t, "sim", "run", "-c", "../../configs/sim/quick.yaml", "--json", "--deterministic")
	if code != 0 || strings.Contains(full, "incomplete") {
		t.Errorf("complete run: exit %d, incomplete in its JSON", code)
	}
}

// TestSweepPointLimit: a 10^6-point sweep planned for 90 s and 0.9 GB with
// no output, and run would have written 10^6 folders (issue 24 item 17).
// The points are now counted first (axes × seeds, nothing expanded) and
// more than --max-points is refused at once; the count is shown.
func TestSweepPointLimit(t *testing.T) {
	vals := func(unit string) string {
		v := make([]string, 100)
		for i := range v {
			v[i] = fmt.Sprintf("%d%s", i+1, unit)
		}
		return "[" + strings.Join(v, ", ") + "]"
	}
	path := sweepFile(t, "base: small.yaml\nset: {predictor.kind: fixed}\naxes:\n  predictor.pdt: "+vals("us")+
		"\n  workload.duration: "+vals("us")+"\n  predictor.initial_pdt: "+vals("ns")+"\nrepetitions: 2\n")
	start := time.Now()
	for _, sub := range []string{"plan", "run", "submit"} {
		args := []string{"sweep", sub, path}
		if sub != "plan" {
			args = append(args, "-o", t.TempDir(), "--slurm")
		}
		if sub == "run" {
			args = args[:len(args)-1]
		}
		code, out, errs := lpictl(t, args...)
		want := "2000000 points (100 × 100 × 100 values × 2 seeds) is more than --max-points 10000"
		if code != 2 || out != "" || !strings.Contains(errs, want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 2 and %q", sub, code, out, errs, want)
		}
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("refusing took %v", el)
	}
	code, _, errs := lpictl(t, "sweep", "plan", smokeSweep)
	if code != 0 || errs != "smoke: 4 points (2 × 2 values × 1 seed), 5 runs with the baselines\n" {
		t.Errorf("smoke plan: exit %d, stderr %q; want the count", code, errs)
	}
	if code, _, errs := lpictl(t, "sweep", "plan", "--max-points", "3", smokeSweep); code != 2 || !strings.Contains(errs, "4 points (2 × 2 values × 1 seed) is more than --max-points 3") {
		t.Errorf("--max-points 3: exit %d, %q", code, errs)
	}
}

// TestSweepChecksInputsFirst: a bad trace in a sweep's base scenario was
// found only when every run had failed (exit 1); it is now read through
// once before anything runs: exit 2 naming FILE:LINE, no run started
// (issue 24 item 18).
func TestSweepChecksInputsFirst(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("w.yaml", "topology: {kind: megafly, groups: 5, leaves: 2, spines: 2, nodes_per_switch: 2, global_links: 2}\n"+
		"workload: {kind: vef, file: w.vef}\n")
	write("w.vef", "VEF 2 2 1 0 0 FALSE\nC0 0 1\n0 0 1 20000 0 1000 -1\n1 1 0 0 2 500 5\n")
	sw := write("s.yaml", "base: w.yaml\nset: {predictor.kind: fixed}\naxes:\n  predictor.pdt: [0, 1us, 2us]\nbaseline:\n  set: {power.mode: always-on}\n")
	out := filepath.Join(dir, "out")
	for _, sub := range []string{"run", "submit"} {
		args := []string{"sweep", sub, sw, "-o", out}
		if sub == "submit" {
			args = append(args, "--slurm", "--dry-run")
		}
		code, stdout, errs := lpictl(t, args...)
		if code != 2 || stdout != "" || !strings.Contains(errs, "w.vef:4:") || strings.Count(errs, "\n") != 1 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 2 and one line naming w.vef:4", sub, code, stdout, errs)
		}
	}
	if st, _ := filepath.Glob(filepath.Join(out, "points", "*", "status.json")); len(st) != 0 {
		t.Errorf("runs were started: %v", st)
	}
}

// TestSweepRunLocked: two sweep runs on one directory both ran every
// point; the second now stops at once with a clear message.
func TestSweepRunLocked(t *testing.T) {
	out := filepath.Join(t.TempDir(), "smoke")
	unlock, err := sweep.Lock(out)
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, errs := lpictl(t, "sweep", "run", smokeSweep, "-o", out)
	if code != 1 || stdout != "" || !strings.Contains(errs, "another lpictl sweep run is running in this directory") || strings.Count(errs, "\n") != 1 {
		t.Errorf("second run: exit %d, stdout %q, stderr %q; want 1 and the lock's message", code, stdout, errs)
	}
	if _, err := os.Stat(filepath.Join(out, sweep.PlanFile)); err == nil {
		t.Error("the second run wrote plan.json")
	}
	unlock()
	if code, _, errs := lpictl(t, "sweep", "run", smokeSweep, "-o", out, "-j", "1"); code != 0 {
		t.Fatalf("after unlock: exit %d %s", code, errs)
	} else if lines := strings.Split(errs, "\n"); len(lines) < 3 || !strings.Contains(lines[2], " baseline ") {
		// Baselines run first: after ^C, finished points have their
		// overheads.
		t.Errorf("the first run finished is not the baseline:\n%s", errs)
	}
}

// TestWorkloadDescribeTIAndGOAL: TI printed an empty collectives line and
// "57 (0 from collectives)"; GOAL summed overlapping calcs ("max 4µs"
// while the replay ran them at once in 1 µs) and its errors numbered ops
// from 0 instead of naming their labels (issue 24 item 19).
func TestWorkloadDescribeTIAndGOAL(t *testing.T) {
	const topo = "topology={kind: megafly, groups: 5, leaves: 2, spines: 2, nodes_per_switch: 2, global_links: 2}"
	ti := "../../sim/workload/ti/testdata/smpi-coll/coll.ti"
	code, out, errs := lpictl(t, "workload", "describe", "--set", "workload={kind: ti, file: "+ti+"}", "--set", topo)
	for _, want := range []string{
		"trace records         50 (5 point-to-point, 52 B)",
		"collectives           allgather 1, allgatherv 1, allreduce 1, alltoall 1, alltoallv 1, barrier 1, bcast 1, exscan 1, gather 1, gatherv 1, reduce 1, reducescatter 1, scan 1, scatter 1, scatterv 1\n",
		"network messages      57 (52 from collectives), 578 B",
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("TI describe: exit %d %s, want %q in\n%s", code, errs, want, out)
		}
	}
	goal := writeFile(t, "c.goal", "num_ranks 1\nrank 0 {\na: calc 1000\nb: calc 1000\nc: calc 1000\nd: calc 1000\n}\n")
	code, out, errs = lpictl(t, "workload", "describe", "--set", "workload={kind: goal, file: "+goal+"}", "--set", topo)
	for _, want := range []string{"compute per rank      max 4µs, mean 4µs", "collectives           none", "ideal execution time  4µs", "mean utilisation      1.000"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("GOAL describe: exit %d %s, want %q in\n%s", code, errs, want, out)
		}
	}
	cyc := writeFile(t, "cyc.goal", "num_ranks 1\nrank 0 {\nfirst: calc 1\nsecond: calc 1\nfirst requires second\nsecond requires first\n}\n")
	code, _, errs = lpictl(t, "workload", "describe", "--set", "workload={kind: goal, file: "+cyc+"}", "--set", topo)
	if code != 2 || !strings.Contains(errs, "dependency cycle: op first (line 3) requires op second (line 4) requires op first (line 3)") {
		t.Errorf("GOAL cycle: exit %d, %q; want 2 naming the labels", code, errs)
	}
}

// TestSimRunSetKindChange: -c quick.yaml --set workload.kind=goal --set
// workload.file=X failed on quick's duration (issue 24 item 20).
func TestSimRunSetKindChange(t *testing.T) {
	goal := writeFile(t, "c.goal", "num_ranks 2\nrank 0 {\ns: send 8b to 1 tag 0\n}\nrank 1 {\nr: recv 8b from 0 tag 0\n}\n")
	code, out, errs := lpictl(t, "sim", "run", "-c", "../../configs/sim/quick.yaml", "--set", "workload.kind=goal", "--set", "workload.file="+goal, "--json", "--deterministic")
	if code != 0 || !strings.Contains(out, `"workload": "goal"`) || !strings.Contains(out, `"ranks": 2`) {
		t.Errorf("exit %d, stderr %q\n%s", code, errs, out)
	}
}
