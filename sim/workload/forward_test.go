package workload

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lpictl/lpictl/sim/workload/vef"
)

// forwardTrace is item 13's layout: a point-to-point block whose first
// record (line 3) waits for task 0's end of G7, then the collectives G0…G7
// (barriers on all 8 tasks, one after the other).
func forwardTrace() string {
	var b strings.Builder
	b.WriteString("VEF 8 2 1 8 64 FALSE\nC0 0 1 2 3 4 5 6 7\n0 0 7 65536 3 100 G7\n1 7 0 8 2 0 0\n")
	for g := 0; g < 8; g++ {
		for t := 0; t < 8; t++ {
			if g == 0 {
				fmt.Fprintf(&b, "G0 0 6 %d 0 0 0 0 -1\n", t)
			} else {
				fmt.Fprintf(&b, "G%d 0 6 %d 0 0 3 0 G%d\n", g, t, g-1)
			}
		}
	}
	return b.String()
}

func writeTrace(t testing.TB, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReplayForwardReference replays records that depend on records later
// in the file (item 13): message 0 leaves 100 ns after task 0 ends G7,
// however the file orders them, and the same holds through a multi-job
// merge and repeats.
func TestReplayForwardReference(t *testing.T) {
	h := &timedHost{IdealHost: IdealHost{Latency: 1000}}
	r := replayText(t, forwardTrace(), h)
	// Eight barriers of 3 rounds on 8 tasks, 1 ns a round: task 0 leaves
	// G7 at 24 ns; message 0 leaves 100 ns later, message 1 on its receipt.
	if got := h.sendAt[0]; got != 124_000 {
		t.Errorf("message 0 sent at %d ps, want 124000", got)
	}
	if got := h.sendAt[1]; got != 125_000 {
		t.Errorf("message 1 sent at %d ps, want 125000", got)
	}
	st := r.Stats()
	if st.P2P != 2 || st.Collectives[vef.Barrier] != 8 {
		t.Errorf("stats %+v", st)
	}

	path := writeTrace(t, "fwd.vef", forwardTrace())
	single, err := Build(Config{Kind: KindVEF, File: path}, 32, 1)
	if err != nil {
		t.Fatal(err)
	}
	one := runIdeal(t, single)
	for _, tc := range []struct {
		name string
		cfg  Config
		n    int64
	}{
		{"window 2", Config{Kind: KindVEF, File: path, Window: 2}, 1},
		{"two jobs", Config{Jobs: []Config{{Kind: KindVEF, File: path}, {Kind: KindVEF, File: path}}}, 2},
		{"repeated", Config{Jobs: []Config{{Kind: KindVEF, File: path, Repeat: 3}, {Kind: KindVEF, File: path}}}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := Build(tc.cfg, 32, 1)
			if err != nil {
				t.Fatal(err)
			}
			st := runIdeal(t, w)
			if st.P2P != tc.n*one.P2P || st.Collectives[vef.Barrier] != tc.n*8 || st.Bytes != tc.n*one.Bytes {
				t.Errorf("%d p2p, %d barriers, %d B; want %d × (%d, 8, %d)", st.P2P, st.Collectives[vef.Barrier], st.Bytes, tc.n, one.P2P, one.Bytes)
			}
			// The export is a valid trace again (forward references kept).
			if _, _, _, err := readBack(exportVEF(t, w)); err != nil {
				t.Errorf("export does not read back: %v", err)
			}
		})
	}
}

func readBack(b []byte) (vef.Header, int, int, error) {
	rd, err := vef.NewReader(strings.NewReader(string(b)), "export.vef", vef.ReaderOptions{})
	if err != nil {
		return vef.Header{}, 0, 0, err
	}
	var rec vef.Record
	n := 0
	for {
		err := rd.Next(&rec)
		if errors.Is(err, io.EOF) {
			return rd.Header(), n, rd.Tasks(), nil
		}
		if err != nil {
			return rd.Header(), n, rd.Tasks(), err
		}
		n++
	}
}

// TestReplayDeadlockCycleIsBadInput: records that wait for each other in a
// cycle, often only through a collective's algorithm, are bad input (item
// 15): Build reports "FILE:LINE: circular dependency: …" naming the
// record of the cycle that comes first in the file, as a *vef.Error (the
// CLI exits 2), before any simulation. A dependency on a collective that
// the algorithm lets finish early is no cycle.
func TestReplayDeadlockCycleIsBadInput(t *testing.T) {
	tests := []struct {
		name   string
		text   string
		window int64
		want   string // "" = replays
	}{
		{"barrier", "VEF 2 1 1 1 2 FALSE\nC0 0 1\nG0 0 6 0 0 0 0 0 -1\n0 0 1 64 3 0 G0\nG0 0 6 1 0 0 2 0 0\n", 0,
			"c.vef:3: circular dependency: task 0 in G0 (line 3) waits for a message from task 1 in G0 (line 5), which waits for the receipt of message 0 (line 4), which waits for the end of task 0 in G0 (line 3)"},
		{"messages", "VEF 2 2 1 0 0 TRUE\nC0 0 1\n0 0 1 8 1 0 1\n1 1 0 8 1 0 0\n", 0,
			"c.vef:3: circular dependency: message 0 (line 3) waits for the send of message 1 (line 4), which waits for the send of message 0 (line 3)"},
		{"bcast", "VEF 2 1 1 1 2 FALSE\nC0 0 1\n0 1 0 8 3 0 G0\nG0 0 0 0 8 0 2 0 0\nG0 0 0 1 0 8 0 0 -1\n", 0,
			"c.vef:3: circular dependency: message 0 (line 3) waits for the end of task 1 in G0 (line 5), which waits for a message from task 0 in G0 (line 4), which waits for the receipt of message 0 (line 3)"},
		{"gather: no cycle", "VEF 2 1 1 1 2 FALSE\nC0 0 1\n0 1 0 8 3 0 G0\nG0 0 3 0 8 16 2 0 0\nG0 0 3 1 8 0 0 0 -1\n", 0, ""},
		{"window", "VEF 2 3 1 1 2 TRUE\nC0 0 1\n0 0 1 8 1 0 1\n1 1 0 8 3 0 G0\n2 0 1 8 0 0 -1\nG0 0 6 0 0 0 0 0 -1\nG0 0 6 1 0 0 0 0 -1\n", 2,
			"c.vef:5: replay deadlock: message 2 cannot be read while message 0 (line 3) is unfinished; raise workload.window (now 2)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeTrace(t, "c.vef", tc.text)
			_, err := Build(Config{Kind: KindVEF, File: path, Window: tc.window}, 4, 1)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %s", tc.want)
			}
			if got := strings.TrimPrefix(err.Error(), filepath.Dir(path)+"/"); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			var ve *vef.Error
			if !errors.As(err, &ve) || ve.File != path {
				t.Errorf("%T %v is not a *vef.Error naming %s", err, err, path)
			}
		})
	}
}

// FuzzReplay replays every trace the reader accepts: the replay either
// finishes or stops with a *vef.Error naming the file and a line (a
// dependency cycle, a full window), never a panic or an unexplained
// deadlock.
func FuzzReplay(f *testing.F) {
	sample, err := os.ReadFile("../../configs/workloads/sample.vef")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(sample), int64(0))
	f.Add(forwardTrace(), int64(2))
	f.Add("VEF 2 1 1 1 2 FALSE\nC0 0 1\nG0 0 6 0 0 0 0 0 -1\n0 0 1 64 3 0 G0\nG0 0 6 1 0 0 2 0 0\n", int64(0))
	f.Add("VEF 2 2 1 0 0 TRUE\nC0 0 1\n0 0 1 8 1 0 1\n1 1 0 8 1 0 0\n", int64(0))
	f.Add("VEF 2 1 1 1 2 FALSE\nC0 0 1\n0 1 0 8 3 0 G0\nG0 0 0 0 8 0 2 0 0\nG0 0 0 1 0 8 0 0 -1\n", int64(0))
	f.Add("VEF 2 3 1 1 2 TRUE\nC0 0 1\n0 0 1 8 1 0 1\n1 1 0 8 3 0 G0\n2 0 1 8 0 0 -1\nG0 0 6 0 0 0 0 0 -1\nG0 0 6 1 0 0 0 0 -1\n", int64(2))
	f.Add("VEF 4 0 1 1 4 TRUE\nC0 0 1 2 3\nG0 0 2 0 100003 100003 0 0 -1\nG0 0 2 1 100003 100003 0 0 -1\nG0 0 2 2 100003 100003 0 0 -1\nG0 0 2 3 100003 100003 0 0 -1\n", int64(0))
	f.Fuzz(func(t *testing.T, text string, window int64) {
		window = 1 + max(0, window)%64
		rd, err := vef.NewReader(strings.NewReader(text), "f.vef", vef.ReaderOptions{Window: window})
		if err != nil || rd.Tasks() > 64 {
			return
		}
		r, err := NewReplayer(rd, identity(rd.Tasks()), Options{Window: window, Collectives: Collectives{AllreduceLarge: "rabenseifner"}})
		if err != nil {
			t.Fatal(err)
		}
		err = (&IdealHost{Latency: 1000}).Run(r)
		var ve *vef.Error
		if err != nil && (!errors.As(err, &ve) || ve.File != "f.vef" || ve.Line < 1 || strings.Contains(err.Error(), "\n")) {
			t.Fatalf("%v (%T)", err, err)
		}
	})
}
