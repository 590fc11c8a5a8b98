package hil

import (
	"encoding/binary"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lpictl/lpictl/controller/replay"
	"github.com/lpictl/lpictl/hwlink/emulate"
	"github.com/lpictl/lpictl/predictor"
)

// TestVerdict: the tolerance is 10 % of the measured value, or ±20 for
// counts below 200, ±1 point for shares below 10 %, ±1 ms for delays below
// 10 ms.
func TestVerdict(t *testing.T) {
	v := func(x float64) *float64 { return &x }
	for _, c := range []struct {
		m, g float64
		unit string
		want string
	}{
		{1000, 1100, "", VerdictAgrees},
		{1000, 1101, "", VerdictDiffers},
		{150, 170, "", VerdictAgrees},
		{150, 171, "", VerdictDiffers},
		{250, 280, "", VerdictDiffers},
		{4.0, 5.0, "%", VerdictAgrees},
		{4.0, 5.1, "%", VerdictDiffers},
		{40, 44, "%", VerdictAgrees},
		{5, 6, "ms", VerdictAgrees},
		{50, 56, "ms", VerdictDiffers},
		{0, 0, "", VerdictAgrees},
	} {
		if got := verdict(v(c.m), v(c.g), c.unit); got != c.want {
			t.Errorf("verdict(%v, %v, %q) = %s, want %s", c.m, c.g, c.unit, got, c.want)
		}
	}
	if verdict(nil, v(1), "") != VerdictNone || verdict(v(1), nil, "") != VerdictNone {
		t.Error("a missing side has no verdict")
	}
}

// TestComparePorts: a port's rows from hand-made status, replay and sim;
// the measured wake-up delay is the run's beyond the always-on run's.
func TestComparePorts(t *testing.T) {
	st := emulate.Status{IdlePeriods: 1000, Misses: 100, DelayTotal: 30 * time.Millisecond, Saving: 0.05}
	st.Fractions.DeepSleep = 0.06
	run := &RunReport{Ports: []PortReport{{Port: "a0", Status: st}}}
	base := &RunReport{Ports: []PortReport{{Port: "a0", Status: emulate.Status{DelayTotal: 10 * time.Millisecond}}}}
	rep := []PortReplay{{Port: "a0", Rows: 1000, IdlePeriods: 1000, Misses: 130, SpanS: 1, AsleepS: 0.06, DelayS: 0.02}}
	sim := &SimResult{Ports: []SimPort{{Port: "a0", IdlePeriods: 990, Misses: 105, SleepShare: 0.065, DelayS: 0.021, Saving: 5.5}}}
	rows := comparePorts(run, base, rep, sim)
	want := map[string][2]string{
		"idle periods":  {VerdictAgrees, VerdictAgrees},
		"misses":        {VerdictDiffers, VerdictAgrees},
		"sleep share":   {VerdictAgrees, VerdictAgrees},
		"wake-up delay": {VerdictAgrees, VerdictAgrees},
		"energy saving": {VerdictNone, VerdictAgrees},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(rows), len(want))
	}
	for _, r := range rows {
		if w := want[r.Metric]; r.PredictVerdict != w[0] || r.SimVerdict != w[1] {
			t.Errorf("%s: verdicts %s, %s; want %v", r.Metric, r.PredictVerdict, r.SimVerdict, w)
		}
		if r.Metric == "wake-up delay" && (r.Measured == nil || math.Abs(*r.Measured-20) > 1e-9) {
			t.Errorf("measured wake-up delay %v, want 30 − 10 ms", r.Measured)
		}
	}
	if u := unexplained(rows); len(u) != 1 || u[0] != "a0 misses: predict 130 against 100 measured" {
		t.Errorf("unexplained %q", u)
	}
}

// TestParseFrame: the generator's datagrams (magic) are told from TCP
// segments with and without payload.
func TestParseFrame(t *testing.T) {
	frame := func(proto byte, l4 []byte) []byte {
		b := make([]byte, 14+20)
		binary.BigEndian.PutUint16(b[12:], 0x0800)
		b[14] = 0x45
		binary.BigEndian.PutUint16(b[16:], uint16(20+len(l4)))
		b[14+9] = proto
		return append(b, l4...)
	}
	udp := make([]byte, 8+headerLen)
	binary.BigEndian.PutUint16(udp[2:], 47001)
	putHeader(udp[8:], header{flow: 1})
	if f := parseFrame(frame(17, udp), 100); !f.gen || f.tcp || f.ports[1] != 47001 || f.bytes != 100 {
		t.Errorf("generator datagram: %+v", f)
	}
	tcp := make([]byte, 32)
	tcp[12] = 8 << 4 // 32-byte header: an ACK
	binary.BigEndian.PutUint16(tcp, 47003)
	if f := parseFrame(frame(6, tcp), 66); f.gen || !f.tcp || f.data || f.ports[0] != 47003 {
		t.Errorf("ACK: %+v", f)
	}
	if f := parseFrame(frame(6, append(tcp, make([]byte, 100)...)), 166); !f.data {
		t.Errorf("data segment: %+v", f)
	}
	if f := parseFrame([]byte{1, 2, 3}, 60); f.gen || f.tcp {
		t.Errorf("runt: %+v", f)
	}
	m := capturedMsgs([]tapFrame{{at: 5, bytes: 60}, {at: 20, bytes: 66, tcp: true}, {at: 30, gen: true}}, 1, 10)
	if len(m) != 1 || m[0].Src != 1 || m[0].Dst != 0 || m[0].At != 10 || m[0].Bytes != 66 || m[0].ReplyTo != -1 {
		t.Errorf("captured messages %+v", m)
	}
}

// The measured wake-up delay is the port's own per-idle-period waits (its
// trace's delay column) when the replay read a trace, as predict and the
// simulator count it; without one, the wait total beyond always-on.
func TestMeasuredDelay(t *testing.T) {
	pr := &PortReplay{Rows: 10, IdlePeriods: 8, TraceDelayS: 0.0404, PortOutcomes: true}
	if got := measuredDelay(pr, 0.0504); got == nil || *got < 40.39 || *got > 40.41 {
		t.Errorf("with a trace: %v, want 40.4 ms", got)
	}
	for _, p := range []*PortReplay{nil, {}, {Rows: 10, IdlePeriods: 8, TraceDelayS: 0.0404}} {
		if got := measuredDelay(p, 0.0504); got == nil || *got < 50.39 || *got > 50.41 {
			t.Errorf("without a trace (%+v): %v, want 50.4 ms", p, got)
		}
	}
	if got := measuredDelay(nil, -0.001); got == nil || *got != 0 {
		t.Errorf("below always-on: %v, want 0", got)
	}
}

// TestPredictPerLink: per link each cable's two ends are replayed
// jointly (a0 with s0, s1 with b0), with a note saying so; per direction
// there is none. Hand-made traces of cable a (fixed t_PDT 100 µs, the
// emulated 1000BASE-T port ×10: t_w 165 µs, t_s 1.82 ms, H 522 ns at
// 1 Gb/s):
//
//	a0 idle 0–5 ms, s0 idle 1–5.1 ms: the link is idle from 1 ms, s0
//	owns it, expiry 1.1 ms, down at 1.1 ms + 2H, low from 2.921044 ms;
//	a0's packet at 5 ms wakes it (2.078956 ms asleep, t_w: up at 5.165
//	ms); s0's at 5.1 ms waits 65 µs. Both count the sleep; alone, a0
//	would have slept 3.08 ms.
func TestPredictPerLink(t *testing.T) {
	pd := fixedConfig(t)
	if n := pd.predictNote(); n != "" {
		t.Errorf("per direction: note %q", n)
	}
	c, err := Parse([]byte("predictors: [fixed]\npredictor: {pdt: 100us}\ntraffic: {flows: [{kind: probe}]}\n"), "hand.yaml", []string{"port.lpi=per-link"})
	if err != nil {
		t.Fatal(err)
	}
	if n := c.predictNote(); !strings.Contains(n, "a0+s0, s1+b0") || !strings.Contains(n, "522ns") {
		t.Errorf("per link: note %q", n)
	}
	if got := linkEnds(); !reflect.DeepEqual(got, [][2]string{{"a0", "s0"}, {"s1", "b0"}}) {
		t.Errorf("linkEnds %v", got)
	}
	a0, err := replay.ParseTrace(strings.NewReader(replay.TraceHeader+"\n0,5000000000,100000000,miss,165000000,\n"), "a0")
	if err != nil {
		t.Fatal(err)
	}
	s0, err := replay.ParseTrace(strings.NewReader(replay.TraceHeader+"\n1000000000,4100000000,100000000,miss,65000000,\n"), "s0")
	if err != nil {
		t.Fatal(err)
	}
	prs, err := c.replayLink(predictor.KindFixed, [2]string{"a0", "s0"}, [2][]replay.TraceRow{a0, s0}, [2]replay.PS{}, [2]replay.AgentPort{})
	if err != nil {
		t.Fatal(err)
	}
	want := [2]PortReplay{
		{Port: "a0", Rows: 1, IdlePeriods: 1, Misses: 1, SpanS: 5e-3, AsleepS: 2078956e-9, DelayS: 165e-6, MeanPDTS: 100e-6, Decisions: 1, Matching: 1},
		{Port: "s0", Rows: 1, IdlePeriods: 1, Misses: 1, SpanS: 4.1e-3, AsleepS: 2078956e-9, DelayS: 65e-6, MeanPDTS: 100e-6, Decisions: 1, Matching: 1},
	}
	for k := range prs {
		if !closeReplay(prs[k], want[k]) {
			t.Errorf("%s\n got %+v\nwant %+v", want[k].Port, prs[k], want[k])
		}
	}
	alone, err := c.replayPort(predictor.KindFixed, "a0", a0, [2]replay.PS{}, replay.AgentPort{})
	if err != nil || !closeReplay(alone, PortReplay{Port: "a0", Rows: 1, IdlePeriods: 1, Misses: 1, SpanS: 5e-3, AsleepS: 3.08e-3, DelayS: 165e-6,
		MeanPDTS: 100e-6, Decisions: 1, Matching: 1}) {
		t.Errorf("a0 alone: %+v, %v", alone, err)
	}
	// One end's trace missing: nothing is replayed.
	if _, err := c.replayLink(predictor.KindFixed, [2]string{"a0", "s0"}, [2][]replay.TraceRow{a0, nil}, [2]replay.PS{}, [2]replay.AgentPort{}); err == nil {
		t.Error("a link replayed without one end's trace")
	}
}

// TestUnholdCaptured: a frame captured on a0 within a wake-up of a0 (the
// agent's trace: an idle period ending at 100 µs that cost 165 µs) goes
// back to the idle period's end; one that left 50 µs after the wake-up, a
// frame on b0 (whose trace shows no wait) and the generator's own
// datagrams stay; the messages are in send order again, the probe's
// response still naming its request.
func TestUnholdCaptured(t *testing.T) {
	const t0 = 10 * time.Millisecond
	ps := func(d time.Duration) replay.PS { return replay.PS(t0+d) * 1000 }
	traces := map[string][]replay.TraceRow{
		"a0": {{Start: ps(0), Gap: ps(100*us) - ps(0), Delay: replay.PS(165 * us * 1000)}},
		"b0": {{Start: ps(0), Gap: ps(200*us) - ps(0)}},
	}
	msgs := []Msg{
		{Src: 0, Dst: 1, Sender: 1, At: 100 * us, ReplyTo: -1},               // 0: a probe request, held by a0's wake-up
		{Src: 0, Dst: 1, Sender: 2, At: 150 * us, ReplyTo: -1},               // 1: a datagram: not captured, stays
		{Src: 1, Dst: 0, Sender: 0, At: 210 * us, ReplyTo: -1},               // 2: an ACK on b0, no wait there: stays
		{Src: 0, Dst: 1, Sender: 0, At: 266 * us, ReplyTo: -1},               // 3: a segment left 1 µs after a0's wake-up: back to 100 µs
		{Src: 1, Dst: 0, Sender: 1, At: 300 * us, ReplyTo: 0, Delay: 5 * us}, // 4: the response
		{Src: 0, Dst: 1, Sender: 0, At: 315 * us, ReplyTo: -1},               // 5: 50 µs after the wake-up: stays
	}
	got, moved := unholdCaptured(msgs, t0, traces)
	if moved != 1 {
		t.Errorf("moved %d, want 1", moved)
	}
	want := []Msg{msgs[0], {Src: 0, Dst: 1, Sender: 0, At: 100 * us, ReplyTo: -1}, msgs[1], msgs[2], msgs[4], msgs[5]}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%+v\nwant\n%+v", got, want)
	}
	// Without traces (the always-on run) nothing moves.
	if got, moved := unholdCaptured(msgs, t0, nil); moved != 0 || !slices.Equal(got, msgs) {
		t.Errorf("no traces: moved %d: %+v", moved, got)
	}
}

// TestUnblockSends: a burst's first datagram waits 165 µs at a0 and 165
// µs at s1, so its sender's next four, due every 100 µs meanwhile, left
// late in a train; each goes back to when it was due (less the wake-ups
// and what its predecessor moved, never before due), and the one after
// the train, sent on its own time, stays. On b, a sender held 300 µs of
// which b0's wake-up was 100 µs keeps the other 200 µs (not a wake-up).
// Captured frames and a datagram not held stay; the order is by time again.
func TestUnblockSends(t *testing.T) {
	const t0 = 10 * time.Millisecond
	ps := func(d time.Duration) replay.PS { return replay.PS(t0+d) * 1000 }
	w := replay.PS(165 * us * 1000)
	traces := map[string][]replay.TraceRow{
		"a0": {{Start: ps(0), Gap: ps(102*us) - ps(0), Delay: w}},
		"s1": {{Start: ps(0), Gap: ps(102*us+165*us+10*us) - ps(0), Delay: w}},
		"b0": {{Start: ps(0), Gap: ps(1003*us) - ps(0), Delay: replay.PS(100 * us * 1000)}},
	}
	msgs := []Msg{
		{Src: 0, Dst: 1, Sender: 2, At: 100 * us, ReplyTo: -1},                  // 0: paid 330 µs of wake-ups
		{Src: 0, Dst: 1, Sender: 2, At: 510 * us, Due: 200 * us, ReplyTo: -1},   // 1: back to 200 µs
		{Src: 0, Dst: 1, Sender: 2, At: 520 * us, Due: 300 * us, ReplyTo: -1},   // 2: 300 µs
		{Src: 0, Dst: 1, Sender: 0, At: 525 * us, ReplyTo: -1},                  // 3: a captured frame: stays
		{Src: 0, Dst: 1, Sender: 2, At: 530 * us, Due: 400 * us, ReplyTo: -1},   // 4: 400 µs
		{Src: 0, Dst: 1, Sender: 2, At: 540 * us, Due: 500 * us, ReplyTo: -1},   // 5: 500 µs
		{Src: 0, Dst: 1, Sender: 2, At: 605 * us, ReplyTo: -1},                  // 6: on its own time: stays
		{Src: 1, Dst: 0, Sender: 3, At: 1000 * us, ReplyTo: -1},                 // 7: paid 100 µs at b0
		{Src: 1, Dst: 0, Sender: 3, At: 1300 * us, Due: 1050 * us, ReplyTo: -1}, // 8: keeps 200 µs: 1200 µs
	}
	got, moved := unblockSends(msgs, t0, traces)
	if moved != 5 {
		t.Errorf("moved %d, want 5", moved)
	}
	at := func(m Msg, d time.Duration) Msg { m.At = d; return m }
	want := []Msg{msgs[0], at(msgs[1], 200*us), at(msgs[2], 300*us), at(msgs[4], 400*us), at(msgs[5], 500*us),
		msgs[3], msgs[6], msgs[7], at(msgs[8], 1200*us)}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%+v\nwant\n%+v", got, want)
	}
	// Without traces (the always-on run) no wake-up held anyone.
	if got, moved := unblockSends(msgs, t0, nil); moved != 0 || !slices.Equal(got, msgs) {
		t.Errorf("no traces: moved %d: %+v", moved, got)
	}
}

// TestHeldSince: a send is held when its sender's previous send returned
// after it was due.
func TestHeldSince(t *testing.T) {
	const t0 = time.Second
	if got := heldSince(t0+200*us, t0+510*us, t0); got != 200*us {
		t.Errorf("held: %v, want 200µs", got)
	}
	if got := heldSince(t0+200*us, t0+150*us, t0); got != 0 {
		t.Errorf("not held: %v, want 0", got)
	}
}
