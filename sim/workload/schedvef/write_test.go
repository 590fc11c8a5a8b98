package schedvef

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lpictl/lpictl/sim/workload"
	"github.com/lpictl/lpictl/sim/workload/sched"
	"github.com/lpictl/lpictl/sim/workload/vef"
)

const ns = 1000 // ps

func send(peer, tag int32, bytes int64) sched.Op {
	return sched.Op{Kind: sched.Send, Peer: peer, Tag: tag, Bytes: bytes}
}
func recv(peer, tag int32) sched.Op { return sched.Op{Kind: sched.Recv, Peer: peer, Tag: tag} }
func calc(ps int64) sched.Op        { return sched.Op{Kind: sched.Calc, Time: ps} }
func after(ops ...uint32) []sched.Dep {
	d := make([]sched.Dep, len(ops))
	for i, o := range ops {
		d[i] = sched.Dep{Op: o}
	}
	return d
}

// ring3: a token once around 3 ranks; rank r computes (r+2) ns after
// receiving (rank 0: 5 ns before sending, 2 ns after the token is back).
func ring3() *sched.Schedule {
	s := &sched.Schedule{}
	c := s.Add(0, calc(5*ns))
	sd := s.Add(0, send(1, 0, 100), after(c)...)
	rv := s.Add(0, recv(2, 0), after(sd)...)
	s.Add(0, calc(2*ns), after(rv)...)
	for r := int32(1); r < 3; r++ {
		rv := s.Add(int(r), recv(r-1, 0))
		c := s.Add(int(r), calc(int64(r+2)*ns), after(rv)...)
		s.Add(int(r), send((r+1)%3, 0, 100), after(c)...)
	}
	return s
}

// pipeline: rank 0 computes and sends items items to rank 1; rank k
// receives, computes, forwards; the last rank receives and computes.
func pipeline(ranks, items int, work int64) *sched.Schedule {
	s := &sched.Schedule{}
	for r := 0; r < ranks; r++ {
		var prev []sched.Dep
		for j := 0; j < items; j++ {
			if r > 0 {
				prev = after(s.Add(r, recv(int32(r-1), 3), prev...))
			}
			prev = after(s.Add(r, calc(work), prev...))
			if r < ranks-1 {
				prev = after(s.Add(r, send(int32(r+1), 3, 64), prev...))
			}
		}
	}
	return s
}

func TestWriteText(t *testing.T) {
	// Tags: rank 0 sends A (tag 1) then B (tag 2, 2 ns after A); rank 1
	// receives tag 2 first, then tag 1, and answers after the tag-1
	// receive, i.e. after A's receipt (message 0).
	tags := &sched.Schedule{}
	a := tags.Add(0, send(1, 1, 10))
	c := tags.Add(0, calc(2*ns), after(a)...)
	tags.Add(0, send(1, 2, 20), after(c)...)
	tags.Add(0, recv(1, 0), after(c)...)
	r2 := tags.Add(1, recv(0, 2))
	r1 := tags.Add(1, recv(0, 1), after(r2)...)
	tags.Add(1, send(0, 0, 30), after(r1)...)

	// A send after two computes that both follow one receive: the longer
	// branch (7 ns) is the delay, not the sum.
	join := &sched.Schedule{}
	join.Add(0, send(1, 0, 8))
	rv := join.Add(1, recv(0, 0))
	c3 := join.Add(1, calc(3*ns), after(rv)...)
	c7 := join.Add(1, calc(4*ns), after(rv)...)
	c7 = join.Add(1, calc(3*ns), after(c7)...)
	join.Add(1, send(0, 0, 8), after(c3, c7)...)
	join.Add(0, recv(1, 0), after(0)...)

	// Reordering: rank 0's send waits for rank 1's, so rank 1's comes first.
	reorder := &sched.Schedule{}
	rr := reorder.Add(0, recv(1, 0))
	reorder.Add(0, send(1, 0, 8), after(rr)...)
	reorder.Add(1, send(0, 0, 8))
	reorder.Add(1, recv(0, 0))

	// Time zero merges with an event; a rank that only computes ends with
	// an absolute-time marker.
	zero := &sched.Schedule{}
	z := zero.Add(0, calc(0))
	zs := zero.Add(0, send(1, 0, 4))
	zero.Add(0, calc(1500), after(z, zs)...)
	zero.Add(1, recv(0, 0))
	zero.Add(2, calc(2*ns))

	// Any-tag receives from one source take its sends in order, whatever
	// the tag: rank 1's answer follows the second receive, i.e. the tag-9
	// message (1).
	anyTags := &sched.Schedule{}
	anyTags.Add(0, send(1, 5, 10))
	anyTags.Add(0, send(1, 9, 20), after(0)...)
	a1 := anyTags.Add(1, recv(0, sched.AnyTag))
	a2 := anyTags.Add(1, recv(0, sched.AnyTag), after(a1)...)
	anyTags.Add(1, send(0, 0, 30), after(a2)...)
	anyTags.Add(0, recv(1, 0), after(1)...)

	for _, tc := range []struct {
		name string
		s    *sched.Schedule
		want string
	}{
		{"anytag", anyTags, "VEF 2 3 1 0 0 FALSE\nC0 0 1\n" +
			"0 0 1 10 0 0 -1\n1 0 1 20 1 0 0\n2 1 0 30 2 0 1\n"},
		{"ring", ring3(), "VEF 3 4 1 0 0 FALSE\nC0 0 1 2\n" +
			"0 0 1 100 0 5 -1\n1 1 2 100 2 3 0\n2 2 0 100 2 4 1\n3 0 0 0 2 2 2\n"},
		{"tags", tags, "VEF 2 3 1 0 0 FALSE\nC0 0 1\n" +
			"0 0 1 10 0 0 -1\n1 0 1 20 1 2 0\n2 1 0 30 2 0 0\n"},
		{"join", join, "VEF 2 2 1 0 0 FALSE\nC0 0 1\n" +
			"0 0 1 8 0 0 -1\n1 1 0 8 2 7 0\n"},
		{"reorder", reorder, "VEF 2 2 1 0 0 FALSE\nC0 0 1\n" +
			"0 1 0 8 0 0 -1\n1 0 1 8 2 0 0\n"},
		{"zero", zero, "VEF 3 3 1 0 0 TRUE\nC0 0 1 2\n" +
			"0 0 1 4 0 0 -1\n1 2 2 0 0 2 -1\n2 0 0 0 1 1.5 0\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Write(&b, tc.s); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Fatalf("got\n%s\nwant\n%s", b.String(), tc.want)
			}
			// The text is a valid trace (vef.Reader's checks) and
			// writing it again is byte-identical.
			var again bytes.Buffer
			if err := Write(&again, tc.s); err != nil || again.String() != tc.want {
				t.Fatalf("second write differs (%v)", err)
			}
			rd, err := vef.NewReader(strings.NewReader(tc.want), tc.name, vef.ReaderOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := vef.Scan(rd); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestWriteRefuses(t *testing.T) {
	waitall := &sched.Schedule{File: "w.goal"}
	waitall.Add(0, send(1, 0, 8))
	waitall.Add(2, send(1, 0, 8))
	a := waitall.Add(1, sched.Op{Kind: sched.Recv, Peer: 0, Line: 4})
	b := waitall.Add(1, sched.Op{Kind: sched.Recv, Peer: 2, Line: 5})
	waitall.Add(1, sched.Op{Kind: sched.Send, Peer: 0, Bytes: 8, Line: 6}, after(a, b)...)
	waitall.Add(0, recv(1, 0))

	ireq := &sched.Schedule{File: "i.goal"}
	x := ireq.Add(0, send(1, 0, 8))
	ireq.Add(0, sched.Op{Kind: sched.Send, Peer: 1, Bytes: 8, Line: 9}, sched.Dep{Op: x, Start: true})
	ireq.Add(1, recv(0, 0))
	ireq.Add(1, recv(0, 0))

	anySrc := &sched.Schedule{}
	anySrc.Add(0, send(1, 0, 8))
	anySrc.Add(1, recv(sched.AnySource, 0))

	anyTag := &sched.Schedule{}
	anyTag.Add(0, send(1, 0, 8))
	anyTag.Add(0, send(1, 4, 8))
	anyTag.Add(1, recv(0, sched.AnyTag))
	anyTag.Add(1, recv(0, 4))

	unmatched := &sched.Schedule{}
	unmatched.Add(0, send(1, 0, 8))
	unmatched.Add(1, recv(0, 0))
	unmatched.Add(1, recv(0, 0))

	deadlock := &sched.Schedule{}
	r0 := deadlock.Add(0, recv(1, 0))
	deadlock.Add(0, send(1, 0, 8), after(r0)...)
	r1 := deadlock.Add(1, recv(0, 0))
	deadlock.Add(1, send(0, 0, 8), after(r1)...)

	mixed := &sched.Schedule{}
	c := mixed.Add(0, calc(3*ns))
	rv := mixed.Add(0, recv(1, 0))
	mixed.Add(0, send(1, 0, 8), after(c, rv)...)
	mixed.Add(1, send(0, 0, 8))
	mixed.Add(1, recv(0, 0))

	for _, tc := range []struct {
		name string
		s    *sched.Schedule
		want []string
	}{
		{"waitall", waitall, []string{"w.goal:6: rank 1 op 2 (send)", "two message events", "op 0 (line 4)", "op 1 (line 5)"}},
		{"irequires", ireq, []string{"i.goal:9: rank 0 op 1 (send)", "irequires", "op 0 has started"}},
		{"anysource", anySrc, []string{"rank 1 op 0 (recv)", "any source"}},
		{"anytag-mixed", anyTag, []string{"rank 1 op 1 (recv)", "tag 4 from rank 0", "op 0 receives from with any tag"}},
		{"unmatched", unmatched, []string{"rank 1 op 1 (recv)", "no matching send", "rank 0 sends 1 such messages"}},
		{"deadlock", deadlock, []string{"deadlock", "rank 0 op 1", "rank 1 op 1"}},
		{"mixed", mixed, []string{"rank 0 op 2 (send)", "absolute time 3 ns", "the receive op 1"}},
		{"empty", &sched.Schedule{}, []string{"no ranks"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			err := Write(&b, tc.s)
			if err == nil {
				t.Fatalf("no error; wrote\n%s", b.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
			if b.Len() != 0 {
				t.Errorf("wrote %d bytes before refusing", b.Len())
			}
		})
	}
}

// replay writes s as VEF and replays it on an ideal network of the given
// latency and infinite bandwidth.
func replay(t *testing.T, s *sched.Schedule, latency int64) workload.Stats {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, s); err != nil {
		t.Fatal(err)
	}
	rd, err := vef.NewReader(&b, "converted", vef.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nodes := make([]int, rd.Tasks())
	for i := range nodes {
		nodes[i] = i
	}
	r, err := workload.NewReplayer(rd, nodes, workload.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := (&workload.IdealHost{Latency: latency}).Run(r); err != nil {
		t.Fatal(err)
	}
	return r.Stats()
}

// TestReplay checks the converted traces' execution time on an ideal
// network against hand calculations of the schedule's MPI semantics.
func TestReplay(t *testing.T) {
	const lat = 1 * ns
	for _, tc := range []struct {
		name     string
		s        *sched.Schedule
		exec     int64
		sends    []int64
		computed []int64
	}{
		// Ring: 5 compute, 1 hop, 3, 1, 4, 1, then 2 after the token is back.
		{"ring", ring3(), (5 + 1 + 3 + 1 + 4 + 1 + 2) * ns, []int64{1, 1, 1}, []int64{7 * ns, 3 * ns, 4 * ns}},
		// Pipeline of 4 stages, 3 items, 10 ns each, 1 ns hops: item j
		// leaves stage k at 10j + 11k + 10 ns; the last at j=2, k=3.
		{"pipeline", pipeline(4, 3, 10*ns), (20 + 33 + 10) * ns, []int64{3, 3, 3, 0}, []int64{30 * ns, 30 * ns, 30 * ns, 30 * ns}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := replay(t, tc.s, lat)
			if st.ExecTime != tc.exec {
				t.Errorf("ExecTime %d ps, want %d", st.ExecTime, tc.exec)
			}
			// The schedule's own executor, every message eager, on the
			// same ideal network.
			ex, err := sched.NewExecutor(tc.s, sched.Options{EagerThreshold: 1 << 40, IntraLatency: -1})
			if err != nil {
				t.Fatal(err)
			}
			if err := (&workload.IdealHost{Latency: lat}).Run(ex); err != nil {
				t.Fatal(err)
			}
			if et := ex.Stats().ExecTime; et != tc.exec {
				t.Errorf("executor ExecTime %d ps, want %d (the VEF replay's)", et, tc.exec)
			}
			for r, n := range tc.sends {
				if st.RankSends[r] != n {
					t.Errorf("rank %d sent %d messages, want %d", r, st.RankSends[r], n)
				}
				if st.RankBusy[r] != tc.computed[r] {
					t.Errorf("rank %d computed %d ps, want %d", r, st.RankBusy[r], tc.computed[r])
				}
			}
		})
	}
}

// TestLongChain: a ring of many laps converts without deep recursion and
// replays to the hand-calculated time.
func TestLongChain(t *testing.T) {
	const ranks, laps = 4, 20000
	s := &sched.Schedule{}
	prev := make([][]sched.Dep, ranks)
	for l := 0; l < laps; l++ {
		for r := 0; r < ranks; r++ {
			var rv []sched.Dep
			if r > 0 || l > 0 {
				rv = after(s.Add(r, recv(int32((r+ranks-1)%ranks), 0), prev[r]...))
			}
			c := s.Add(r, calc(ns), rv...)
			prev[r] = after(s.Add(r, send(int32((r+1)%ranks), 0, 8), after(c)...))
		}
	}
	s.Add(0, recv(ranks-1, 0), prev[0]...)
	st := replay(t, s, ns)
	// Every hop: 1 ns compute + 1 ns latency.
	if want := int64(laps*ranks) * 2 * ns; st.ExecTime != want {
		t.Fatalf("ExecTime %d, want %d", st.ExecTime, want)
	}
}
