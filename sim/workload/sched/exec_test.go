package sched

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lpictl/lpictl/sim/workload"
)

// L is the one-way latency of the test network (1 µs), with no bandwidth
// term, so every time below is a sum of latencies and calcs.
const L = 1_000_000 // ps

type opKey struct {
	rank int
	op   uint32
}

// countingHost is a workload.Host that counts what reaches the network.
type countingHost struct {
	workload.Host
	sends int
}

func (c *countingHost) Send(src, dst int, bytes int64, tag uint64) {
	c.sends++
	c.Host.Send(src, dst, bytes, tag)
}

// viaCounter runs a driver through a countingHost.
type viaCounter struct {
	workload.Driver
	h *countingHost
}

func (v *viaCounter) Start(h workload.Host) {
	v.h.Host = h
	v.Driver.Start(v.h)
}

type result struct {
	e       *Executor
	done    map[opKey]int64 // completion time of each op
	err     error
	netSend int // messages the host saw
}

func execute(t *testing.T, s *Schedule, opts Options, host *workload.IdealHost) result {
	t.Helper()
	e, err := NewExecutor(s, opts)
	if err != nil {
		t.Fatalf("NewExecutor: %v", err)
	}
	res := result{e: e, done: make(map[opKey]int64)}
	e.onComplete = func(r int, i uint32, at int64) { res.done[opKey{r, i}] = at }
	v := &viaCounter{Driver: e, h: &countingHost{}}
	res.err = host.Run(v)
	res.netSend = v.h.sends
	return res
}

func parseFile(t *testing.T, name string) *Schedule {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := ParseGOAL(f, name)
	if err != nil {
		t.Fatalf("ParseGOAL: %v", err)
	}
	return s
}

func parseText(t *testing.T, text string) *Schedule {
	t.Helper()
	s, err := ParseGOAL(strings.NewReader(text), "t.goal")
	if err != nil {
		t.Fatalf("ParseGOAL: %v", err)
	}
	return s
}

// TestExecGOAL replays the GOAL files of testdata on a network of latency
// L (1 µs) and no bandwidth limit. The expected times are worked out by
// hand in the comments (ps).
func TestExecGOAL(t *testing.T) {
	tests := []struct {
		file    string
		opts    Options
		exec    int64
		finish  []int64
		busy    []int64
		ops     map[opKey]int64
		msgs    int64 // through the host
		bytes   int64
		p2p     int64
		recvByt []int64 // RankStats.BytesReceived
	}{{
		// rank 0: calc 100 ns [0, 100_000]; eager send at 100_000 (completes
		// at once) arrives at 1_100_000; rank 1's receive (posted at 0)
		// completes then; calc 200 ns to 1_300_000; its send arrives at
		// 2_300_000, rank 0's receive completes; calc 50 ns: 2_350_000.
		file:   "pingpong.goal",
		exec:   2_350_000,
		finish: []int64{2_350_000, 1_300_000},
		busy:   []int64{150_000, 200_000},
		ops: map[opKey]int64{{0, 0}: 100_000, {0, 1}: 100_000, {0, 2}: 2_300_000, {0, 3}: 2_350_000,
			{1, 0}: 1_100_000, {1, 1}: 1_300_000, {1, 2}: 1_300_000},
		msgs: 2, bytes: 16, p2p: 2,
		recvByt: []int64{8, 8},
	}, {
		// 100000 b > 65536: rendezvous. Rank 0's RTS leaves at 0, arrives
		// at L; rank 1's receive is posted (at 0), its CTS arrives at 2L;
		// the data arrives at 3L = 3_000_000: the send and the receive
		// complete. c irequires s: the calc runs [0, 3_000_000] meanwhile.
		// Rank 1 sends 8 b at 3_000_000 → rank 2 at 4_000_000; calc 500
		// ns → 4_500_000; its send reaches rank 0 at 5_500_000, where the
		// receive (posted at 3_000_000 after c) completes.
		file:   "overlap.goal",
		exec:   5_500_000,
		finish: []int64{5_500_000, 3_000_000, 4_500_000},
		busy:   []int64{3_000_000, 0, 500_000},
		ops: map[opKey]int64{{0, 0}: 3_000_000, {0, 1}: 3_000_000, {0, 2}: 5_500_000,
			{1, 0}: 3_000_000, {1, 1}: 3_000_000,
			{2, 0}: 4_000_000, {2, 1}: 4_500_000, {2, 2}: 4_500_000},
		msgs: 5, bytes: 100_016, p2p: 3, // RTS, CTS, data, 8 b, 8 b
		recvByt: []int64{8, 100_000, 8},
	}, {
		// waitall: w requires a, b and c. c (from rank 3, sent at 0)
		// arrives at L; a (rank 1 computes 1 µs first) at 2 µs; b (3 µs
		// first) at 4 µs = 4_000_000; w: calc 10 ns → 4_010_000.
		file:   "waitall.goal",
		exec:   4_010_000,
		finish: []int64{4_010_000, 1_000_000, 3_000_000, 0},
		busy:   []int64{10_000, 1_000_000, 3_000_000, 0},
		ops:    map[opKey]int64{{0, 0}: 2_000_000, {0, 1}: 4_000_000, {0, 2}: 1_000_000, {0, 3}: 4_010_000},
		msgs:   3, bytes: 24, p2p: 3,
		recvByt: []int64{24, 0, 0, 0},
	}, {
		// Rank 0 posts e (any source, tag 9), a (any, any), b (rank 2,
		// any tag) at 0. Rank 1's 16 b tag 7 arrives at L: e does not take
		// tag 7, a does: a at 1_000_000. Rank 2 computes 2 µs, sends 32 b
		// tag 9 (arrives 3_000_000: e and b accept it, e was posted first:
		// e at 3_000_000), computes 1 µs more and sends 8 b tag 3 (arrives
		// 4_000_000: b).
		file:   "anysource.goal",
		exec:   4_000_000,
		finish: []int64{4_000_000, 0, 3_000_000},
		busy:   []int64{0, 0, 3_000_000},
		ops:    map[opKey]int64{{0, 0}: 3_000_000, {0, 1}: 1_000_000, {0, 2}: 4_000_000},
		msgs:   3, bytes: 56, p2p: 3,
		recvByt: []int64{56, 0, 0},
	}, {
		// Binomial broadcast: rank 0 sends to 1, 2, 4 at 0 (arrive at L);
		// 1 forwards to 3, 5 and 2 to 6 at L (arrive 2L); 3 forwards to 7
		// at 2L (arrives 3L).
		file:   "bcast8.goal",
		exec:   3 * L,
		finish: []int64{0, L, L, 2 * L, L, 2 * L, 2 * L, 3 * L},
		busy:   make([]int64, 8),
		ops:    map[opKey]int64{{7, 0}: 3 * L, {3, 0}: 2 * L, {3, 1}: 2 * L},
		msgs:   7, bytes: 56, p2p: 7,
		recvByt: []int64{0, 8, 8, 8, 8, 8, 8, 8},
	}}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			s := parseFile(t, tt.file)
			res := execute(t, s, tt.opts, &workload.IdealHost{Latency: L})
			if res.err != nil {
				t.Fatalf("run: %v", res.err)
			}
			st := res.e.Stats()
			if st.ExecTime != tt.exec {
				t.Errorf("ExecTime = %d, want %d", st.ExecTime, tt.exec)
			}
			for r := range tt.finish {
				if st.RankFinish[r] != tt.finish[r] {
					t.Errorf("RankFinish[%d] = %d, want %d", r, st.RankFinish[r], tt.finish[r])
				}
				if st.RankBusy[r] != tt.busy[r] {
					t.Errorf("RankBusy[%d] = %d, want %d", r, st.RankBusy[r], tt.busy[r])
				}
				if got := res.e.RankStats()[r].BytesReceived; got != tt.recvByt[r] {
					t.Errorf("rank %d BytesReceived = %d, want %d", r, got, tt.recvByt[r])
				}
			}
			for k, want := range tt.ops {
				if got, ok := res.done[k]; !ok || got != want {
					t.Errorf("rank %d op %d completed at %d (ok %v), want %d", k.rank, k.op, got, ok, want)
				}
			}
			if st.Messages != tt.msgs || st.Bytes != tt.bytes || int64(res.netSend) != tt.msgs {
				t.Errorf("host messages %d (saw %d), bytes %d; want %d, %d", st.Messages, res.netSend, st.Bytes, tt.msgs, tt.bytes)
			}
			if st.P2P != tt.p2p {
				t.Errorf("P2P = %d, want %d", st.P2P, tt.p2p)
			}
		})
	}
}

// TestIRequiresVersusRequires: with "c requires s" instead of irequires,
// rank 0 computes only after its rendezvous send completed at 3_000_000:
// c ends at 6_000_000; rank 2's message arrived at 5_500_000 unexpected
// and the receive posted at 6_000_000 takes it at once: 6_000_000.
func TestIRequiresVersusRequires(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "overlap.goal"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(b), "c irequires s   //", "c requires s   //", 1)
	res := execute(t, parseText(t, text), Options{}, &workload.IdealHost{Latency: L})
	if res.err != nil {
		t.Fatal(res.err)
	}
	if got := res.e.Stats().ExecTime; got != 6_000_000 {
		t.Errorf("ExecTime = %d, want 6_000_000", got)
	}
	if got := res.done[opKey{0, 1}]; got != 6_000_000 {
		t.Errorf("calc completed at %d, want 6_000_000", got)
	}
}

// TestRendezvous: a message above the eager threshold takes RTS + CTS +
// data, three one-way latencies, when the receive is posted first; posted
// late, the CTS waits for it.
func TestRendezvous(t *testing.T) {
	tests := []struct {
		name         string
		text         string
		opts         Options
		send, recv   int64 // completion of rank 0's send and rank 1's receive
		exec         int64
		hostMessages int64
	}{{
		// RTS arrives at L, CTS back at 2L, data at 3L.
		name: "posted first",
		text: "num_ranks 2\nrank 0 {\ns: send 100000b to 1 tag 0\n}\nrank 1 {\nr: recv 100000b from 0 tag 0\n}\n",
		send: 3 * L, recv: 3 * L, exec: 3 * L, hostMessages: 3,
	}, {
		// The RTS arrives at L (unexpected); rank 1 computes 5 µs and
		// posts the receive at 5_000_000: CTS at 6_000_000, data at
		// 7_000_000.
		name: "posted late",
		text: "num_ranks 2\nrank 0 {\ns: send 100000b to 1 tag 0\n}\nrank 1 {\nc: calc 5000\nr: recv 100000b from 0 tag 0\nr requires c\n}\n",
		send: 7 * L, recv: 7 * L, exec: 7 * L, hostMessages: 3,
	}, {
		// The same but eager (threshold raised): the send completes at
		// 0, the data waits at rank 1 from L, the receive takes it when
		// posted at 5_000_000.
		name: "eager posted late",
		text: "num_ranks 2\nrank 0 {\ns: send 100000b to 1 tag 0\n}\nrank 1 {\nc: calc 5000\nr: recv 100000b from 0 tag 0\nr requires c\n}\n",
		opts: Options{EagerThreshold: 1 << 20},
		send: 0, recv: 5 * L, exec: 5 * L, hostMessages: 1,
	}, {
		// A negative threshold: even 0 bytes go rendezvous.
		name: "all rendezvous",
		text: "num_ranks 2\nrank 0 {\ns: send 0b to 1 tag 0\n}\nrank 1 {\nr: recv 0b from 0 tag 0\n}\n",
		opts: Options{EagerThreshold: -1},
		send: 3 * L, recv: 3 * L, exec: 3 * L, hostMessages: 3,
	}, {
		// Exactly the threshold is still eager: one latency.
		name: "at the threshold",
		text: "num_ranks 2\nrank 0 {\ns: send 65536b to 1 tag 0\n}\nrank 1 {\nr: recv 65536b from 0 tag 0\n}\n",
		send: 0, recv: L, exec: L, hostMessages: 1,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := execute(t, parseText(t, tt.text), tt.opts, &workload.IdealHost{Latency: L})
			if res.err != nil {
				t.Fatal(res.err)
			}
			if got := res.done[opKey{0, 0}]; got != tt.send {
				t.Errorf("send completed at %d, want %d", got, tt.send)
			}
			last := uint32(len(res.e.s.Ranks[1].Ops) - 1)
			if got := res.done[opKey{1, last}]; got != tt.recv {
				t.Errorf("recv completed at %d, want %d", got, tt.recv)
			}
			st := res.e.Stats()
			if st.ExecTime != tt.exec {
				t.Errorf("ExecTime = %d, want %d", st.ExecTime, tt.exec)
			}
			if st.Messages != tt.hostMessages || int64(res.netSend) != tt.hostMessages {
				t.Errorf("host messages %d (saw %d), want %d", st.Messages, res.netSend, tt.hostMessages)
			}
		})
	}
}

// TestIntraNode: ranks 0 and 1 share node 0 and exchange 1000 b each way
// (ping-pong). One way takes IntraLatency 200 ns + 1000 b / 1e9 B/s (1 µs)
// = 1_200_000 ps; the round trip ends at 2_400_000. A rendezvous of
// 100000 b takes RTS and CTS (200 ns each, 0 bytes) and the data (200 ns
// + 100 µs): 100_600_000. The host sees nothing.
func TestIntraNode(t *testing.T) {
	opts := Options{Nodes: []int{0, 0}, IntraLatency: 200_000, IntraBandwidth: 1e9}
	tests := []struct {
		name   string
		text   string
		exec   int64
		intra  int64 // IntraMessages
		ibytes int64
	}{{
		name: "ping-pong",
		text: `num_ranks 2
rank 0 {
s: send 1000b to 1 tag 0
r: recv 1000b from 1 tag 0
r requires s
}
rank 1 {
r: recv 1000b from 0 tag 0
s: send 1000b to 0 tag 0
s requires r
}
`,
		exec: 2_400_000, intra: 2, ibytes: 2000,
	}, {
		name: "rendezvous",
		text: "num_ranks 2\nrank 0 {\ns: send 100000b to 1 tag 0\n}\nrank 1 {\nr: recv 100000b from 0 tag 0\n}\n",
		exec: 100_600_000, intra: 3, ibytes: 100_000,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := execute(t, parseText(t, tt.text), opts, &workload.IdealHost{Latency: L, Bandwidth: 1e9})
			if res.err != nil {
				t.Fatal(res.err)
			}
			st := res.e.Stats()
			if st.ExecTime != tt.exec {
				t.Errorf("ExecTime = %d, want %d", st.ExecTime, tt.exec)
			}
			if res.netSend != 0 || st.Messages != 0 || st.Bytes != 0 {
				t.Errorf("the host saw %d messages (Stats %d, %d bytes), want none", res.netSend, st.Messages, st.Bytes)
			}
			if st.IntraMessages != tt.intra || st.IntraBytes != tt.ibytes {
				t.Errorf("intra %d messages %d bytes, want %d, %d", st.IntraMessages, st.IntraBytes, tt.intra, tt.ibytes)
			}
			rs := res.e.RankStats()
			if rs[0].IntraBytes == 0 || rs[0].NetworkBytes != 0 {
				t.Errorf("rank 0 IntraBytes %d NetworkBytes %d, want >0 and 0", rs[0].IntraBytes, rs[0].NetworkBytes)
			}
		})
	}
}

// TestNonOvertaking: rank 0 sends 60000 b then 8 b on one tag; at 1 byte
// per ns the 8 b arrives first (L + 8 ns) but must not overtake: rank 1's
// first receive takes the 60000 b when it arrives (L + 60 µs =
// 61_000_000), its second the 8 b right after.
func TestNonOvertaking(t *testing.T) {
	s := parseText(t, `num_ranks 2
rank 0 {
a: send 60000b to 1 tag 0
b: send 8b to 1 tag 0
}
rank 1 {
a: recv 60000b from 0 tag 0
b: recv 8b from 0 tag 0
b requires a
}
`)
	res := execute(t, s, Options{}, &workload.IdealHost{Latency: L, Bandwidth: 8e9})
	if res.err != nil {
		t.Fatal(res.err)
	}
	if got := res.done[opKey{1, 0}]; got != 61_000_000 {
		t.Errorf("first receive completed at %d, want 61_000_000", got)
	}
	if got := res.done[opKey{1, 1}]; got != 61_000_000 {
		t.Errorf("second receive completed at %d, want 61_000_000", got)
	}
}

// TestSelfMessage: a rank's message to itself arrives at once.
func TestSelfMessage(t *testing.T) {
	var s Schedule
	c := s.Add(0, Op{Kind: Calc, Time: 700})
	s.Add(0, Op{Kind: Send, Peer: 0, Bytes: 5}, Dep{Op: c})
	r := s.Add(0, Op{Kind: Recv, Peer: 0, Bytes: 5})
	s.Add(0, Op{Kind: Calc, Time: 300}, Dep{Op: r})
	res := execute(t, &s, Options{}, &workload.IdealHost{Latency: L})
	if res.err != nil {
		t.Fatal(res.err)
	}
	st := res.e.Stats()
	if st.ExecTime != 1000 || st.SelfMessages != 1 || st.Messages != 0 || res.netSend != 0 {
		t.Errorf("ExecTime %d SelfMessages %d Messages %d host %d; want 1000, 1, 0, 0", st.ExecTime, st.SelfMessages, st.Messages, res.netSend)
	}
}

// TestDeadlock: the error names the stuck rank and op (and the line).
func TestDeadlock(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string
	}{{
		name: "recv without send",
		text: "num_ranks 2\nrank 0 {\nc: calc 10\n}\nrank 1 {\nc: calc 10\nr: recv 8b from 0 tag 3\nr requires c\n}\n",
		want: []string{"t.goal:7: rank 1: deadlock: op r (recv 8b from 0 tag 3)", "1 ops of 1 ranks unfinished"},
	}, {
		name: "rendezvous send without recv",
		text: "num_ranks 2\nrank 0 {\ns: send 100000b to 1 tag 2\n}\nrank 1 {\nr: recv 8b from 0 tag 1\n}\n",
		want: []string{"t.goal:3: rank 0: deadlock: op s (send 100000b to 1 tag 2, rendezvous) waits for a matching receive"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := execute(t, parseText(t, tt.text), Options{}, &workload.IdealHost{Latency: L})
			if res.err == nil || res.e.Done() != true {
				t.Fatalf("err %v, Done %v; want a deadlock", res.err, res.e.Done())
			}
			for _, w := range tt.want {
				if !strings.Contains(res.err.Error(), w) {
					t.Errorf("error %q does not contain %q", res.err, w)
				}
			}
			if strings.Contains(res.err.Error(), "\n") {
				t.Errorf("error %q has more than one line", res.err)
			}
		})
	}
	// Built without a file: "rank R op I".
	var s Schedule
	s.Add(0, Op{Kind: Calc, Time: 5})
	s.Add(1, Op{Kind: Recv, Peer: AnySource, Tag: AnyTag})
	res := execute(t, &s, Options{}, &workload.IdealHost{Latency: L})
	if want := "sched: rank 1 op 0: deadlock: op 0 (recv 0b from any tag any)"; res.err == nil || !strings.HasPrefix(res.err.Error(), want) {
		t.Errorf("error %v, want prefix %q", res.err, want)
	}
}

func TestNewExecutorOptions(t *testing.T) {
	var s Schedule
	s.Add(0, Op{Kind: Send, Peer: 1})
	s.Add(1, Op{Kind: Recv, Peer: 0})
	for _, tt := range []struct {
		opts Options
		want string
	}{
		{Options{Nodes: []int{0}}, "1 nodes given for 2 ranks"},
		{Options{Nodes: []int{0, -1}}, "rank 1 on node -1"},
		{Options{IntraBandwidth: -1}, "intra-node bandwidth -1"},
	} {
		if _, err := NewExecutor(&s, tt.opts); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: error %v, want %q", tt.opts, err, tt.want)
		}
	}
	e, err := NewExecutor(&s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if e.opts.EagerThreshold != DefaultEagerThreshold || e.opts.IntraLatency != DefaultIntraLatency {
		t.Errorf("defaults %+v", e.opts)
	}
}

// TestEmpty: a schedule without ops is done at once, at time 0.
func TestEmpty(t *testing.T) {
	res := execute(t, parseText(t, "num_ranks 3\n"), Options{}, workload.NewIdealHost())
	if res.err != nil || !res.e.Done() || res.e.Stats().ExecTime != 0 {
		t.Errorf("err %v done %v exec %d", res.err, res.e.Done(), res.e.Stats().ExecTime)
	}
}

// TestCalcsSerialisedPerRank: calcs of one rank that do not depend on each
// other ran at once (four 1 µs calcs finished together at 1 µs); a rank
// has one CPU, which runs them one at a time in the order they became
// ready, as LogGOPSim does (issue 24 item 19). An irequires on a queued
// calc waits for its start; a calc of another rank runs beside them.
func TestCalcsSerialisedPerRank(t *testing.T) {
	s := parseText(t, `num_ranks 2
rank 0 {
a: calc 1000
b: calc 1000
c: calc 1000
d: calc 1000
s: send 8b to 1 tag 0
s irequires c
}
rank 1 {
r: recv 8b from 0 tag 0
x: calc 1000
}`)
	res := execute(t, s, Options{}, &workload.IdealHost{Latency: L})
	if res.err != nil {
		t.Fatal(res.err)
	}
	for op, want := range map[opKey]int64{
		{0, 0}: 1_000_000, {0, 1}: 2_000_000, {0, 2}: 3_000_000, {0, 3}: 4_000_000,
		{0, 4}: 2_000_000,     // the send starts with c (at 2 µs), eager: done then
		{1, 0}: 2_000_000 + L, // received one latency later
		{1, 1}: 1_000_000,     // rank 1's own CPU
	} {
		if got := res.done[op]; got != want {
			t.Errorf("rank %d op %d completed at %d ps, want %d", op.rank, op.op, got, want)
		}
	}
	st := res.e.Stats()
	if st.ExecTime != 4_000_000 || st.RankBusy[0] != 4_000_000 || st.RankBusy[1] != 1_000_000 {
		t.Errorf("exec %d, busy %v; want 4 µs and [4 µs 1 µs]", st.ExecTime, st.RankBusy)
	}
}
