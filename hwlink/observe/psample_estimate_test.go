package observe

import (
	"testing"
	"time"
)

// scripted is one sample of a scripted stream: time (µs), sequence number,
// packet size, rate.
type scripted struct {
	us   int64
	seq  uint32
	size uint32
	rate uint32
}

func runScript(e *psampleEstimator, dir Direction, script []scripted) []GapSample {
	var out []GapSample
	for _, s := range script {
		if g, ok := e.add(dir, PSample{Seq: s.seq, OrigSize: s.size, Rate: s.rate}, time.Duration(s.us)*time.Microsecond); ok {
			out = append(out, g)
		}
	}
	return out
}

func TestPSampleGapsEveryPacket(t *testing.T) {
	us := time.Microsecond
	// Unknown speed: gaps are the times between samples.
	var e psampleEstimator
	got := runScript(&e, Egress, []scripted{
		{1000, 10, 100, 1}, {1100, 11, 100, 1}, {1100, 12, 100, 1}, {1350, 13, 1500, 1},
	})
	want := []time.Duration{100 * us, 250 * us} // the packet at the same time is busy
	if len(got) != len(want) {
		t.Fatalf("gaps %+v, want lengths %v", got, want)
	}
	for i, g := range got {
		if g.Length != want[i] || g.Dir != Egress {
			t.Errorf("gap %d: %+v, want %v", i, g, want[i])
		}
	}
	if got[1].End != 1350*us || got[1].PacketLen != 1500 {
		t.Errorf("end/packet of last gap: %+v", got[1])
	}
	st := e.dirs[Egress].stats
	if st.Packets != 4 || st.Bytes != 1800 || st.Gaps != 2 || st.Busy != 1 || st.Idle != 350*us {
		t.Errorf("stats %+v", st)
	}
	if st.Hist[HistBucket(uint64(100*us))] != 1 || st.Hist[HistBucket(uint64(250*us))] != 1 {
		t.Error("histogram")
	}

	// At 1 Gb/s a 1476-byte packet (+24 B overhead) takes 12 µs: a packet
	// 10 µs after it finds the link busy, one 20 µs after it a gap of 8 µs.
	e = psampleEstimator{nsPerByteQ16: SpeedQ16(1e9)}
	got = runScript(&e, Egress, []scripted{{0, 0, 1476, 1}, {10, 1, 1476, 1}, {42, 2, 100, 1}})
	// second packet starts at 12, ends at 24; third at 42 → gap 18 µs.
	if len(got) != 1 || got[0].Length != 18*us {
		t.Errorf("with speed: %+v", got)
	}
	if e.dirs[Egress].stats.Busy != 1 {
		t.Errorf("busy %d", e.dirs[Egress].stats.Busy)
	}
}

func TestPSampleGapsLostAndBackwards(t *testing.T) {
	us := time.Microsecond
	var e psampleEstimator
	got := runScript(&e, Egress, []scripted{
		{0, 100, 60, 1},
		{50, 101, 60, 1},  // gap 50
		{500, 104, 60, 1}, // 2 samples lost: not measured
		{600, 105, 60, 1}, // gap 100
		{550, 106, 60, 1}, // clock stepped back: restart
		{580, 107, 60, 1}, // gap 30
	})
	if len(got) != 3 || got[0].Length != 50*us || got[1].Length != 100*us || got[2].Length != 30*us {
		t.Errorf("gaps %+v", got)
	}
	if st := e.dirs[Egress].stats; st.SamplesLost != 2 || st.Packets != 6 {
		t.Errorf("stats %+v", st)
	}
	// Sequence wrap-around is not a loss.
	e = psampleEstimator{}
	got = runScript(&e, Ingress, []scripted{{0, 0xFFFFFFFF, 60, 1}, {10, 0, 60, 1}})
	if len(got) != 1 || got[0].Length != 10*us || got[0].Dir != Ingress || e.dirs[Ingress].stats.SamplesLost != 0 {
		t.Errorf("wrap: %+v %+v", got, e.dirs[Ingress].stats)
	}
	// Directions are independent.
	if e.dirs[Egress].stats.Packets != 0 {
		t.Error("ingress samples counted on egress")
	}
	// reset forgets the previous sample.
	e.reset()
	if got := runScript(&e, Ingress, []scripted{{20, 1, 60, 1}}); len(got) != 0 {
		t.Errorf("gap across reset: %+v", got)
	}
}

func TestPSampleGapsStatistical(t *testing.T) {
	us := time.Microsecond
	// 1 in 100 packets, unknown speed: 1 ms between samples → mean gap
	// 10 µs, standing for 100 packets and 100 gaps.
	var e psampleEstimator
	got := runScript(&e, Egress, []scripted{{0, 0, 1000, 100}, {1000, 1, 1000, 100}, {3000, 2, 1000, 100}})
	if len(got) != 2 || got[0].Length != 10*us || got[1].Length != 20*us {
		t.Fatalf("gaps %+v", got)
	}
	st := e.dirs[Egress].stats
	if st.Packets != 300 || st.Bytes != 300_000 || st.Gaps != 200 || st.Idle != 3000*us {
		t.Errorf("stats %+v", st)
	}
	if st.Hist[HistBucket(uint64(10*us))] != 100 || st.Hist[HistBucket(uint64(20*us))] != 100 {
		t.Error("histogram weights")
	}
	if e.meanInterval(Egress) != 1500*us {
		t.Errorf("mean interval %v", e.meanInterval(Egress))
	}

	// At 1 Gb/s 100 packets of 1226 B (+24) take 1 ms: an interval of 1 ms
	// is all busy; one of 1.5 ms holds 500 µs of idle → mean 5 µs.
	e = psampleEstimator{nsPerByteQ16: SpeedQ16(1e9)}
	got = runScript(&e, Egress, []scripted{{0, 0, 1226, 100}, {1000, 1, 1226, 100}, {2500, 2, 1226, 100}})
	if len(got) != 1 || got[0].Length != 5*us {
		t.Errorf("with speed: %+v", got)
	}
	if st := e.dirs[Egress].stats; st.Busy != 100 || st.Gaps != 100 || st.Idle != 500*us {
		t.Errorf("stats with speed %+v", st)
	}
	if s := describeRate(100); s == describeRate(1) {
		t.Error("rate description does not say statistical")
	}
}

func TestSampleTime(t *testing.T) {
	recv := 100 * time.Second
	off := 1_700_000_000 * time.Second // realtime − monotonic
	s := PSample{Timestamp: int64(off + recv - 30*time.Microsecond), HasTimestamp: true}
	if got, ok := sampleTime(s, recv, off); !ok || got != recv-30*time.Microsecond {
		t.Errorf("stamped: %v %v", got, ok)
	}
	if got, ok := sampleTime(PSample{}, recv, off); ok || got != recv {
		t.Errorf("no timestamp: %v %v", got, ok)
	}
	s.Timestamp = int64(recv) // a clock that is not CLOCK_REALTIME
	if got, ok := sampleTime(s, recv, off); ok || got != recv {
		t.Errorf("implausible: %v %v", got, ok)
	}
}

// TestPSampleObserverIngest drives an observer without a kernel: group and
// port filtering, ring, drain, stats, status.
func TestPSampleObserverIngest(t *testing.T) {
	o := &PSampleObserver{ifname: "swp1", ifindex: 7, groups: [2]uint32{20, 21}, dirs: 2, rate: 1, ring: newGapRing(2)}
	if o.Resolution() != time.Nanosecond || o.Statistical() || o.Method() != MethodPSample {
		t.Error("initial resolution/method")
	}
	_, off := clockOffset()
	base := 50 * time.Second
	ts := func(d time.Duration) int64 { return int64(off + base + d) }
	for i, s := range []PSample{
		{Group: 20, OIfIndex: 7, Seq: 0, Rate: 1, OrigSize: 60, Timestamp: ts(0), HasTimestamp: true},
		{Group: 20, OIfIndex: 7, Seq: 1, Rate: 1, OrigSize: 60, Timestamp: ts(time.Millisecond), HasTimestamp: true},
		{Group: 20, OIfIndex: 9, Seq: 2, Rate: 1, OrigSize: 60, Timestamp: ts(2 * time.Millisecond), HasTimestamp: true}, // another port
		{Group: 99, OIfIndex: 7, Seq: 3, Rate: 1, OrigSize: 60},                                                          // another group
		{Group: 21, IIfIndex: 7, Seq: 0, Rate: 1, OrigSize: 60, Timestamp: ts(0), HasTimestamp: true},
		{Group: 21, IIfIndex: 7, Seq: 1, Rate: 1, OrigSize: 60, Timestamp: ts(3 * time.Millisecond), HasTimestamp: true},
		{Group: 20, OIfIndex: 7, Seq: 2, Rate: 1, OrigSize: 60, Timestamp: ts(4 * time.Millisecond), HasTimestamp: true}, // ring full
	} {
		o.ingest(s, base+time.Duration(i)*time.Millisecond, off)
	}
	dst := make([]GapSample, 4)
	n, err := o.DrainGaps(dst)
	if err != nil || n != 2 || dst[0].Length != time.Millisecond || dst[0].Dir != Egress ||
		dst[1].Length != 3*time.Millisecond || dst[1].Dir != Ingress {
		t.Fatalf("drained %d %+v %v", n, dst[:n], err)
	}
	if dst[0].End != base+time.Millisecond {
		t.Errorf("End %v, want the sample's timestamp on CLOCK_MONOTONIC %v", dst[0].End, base+time.Millisecond)
	}
	var st GapStats
	if err := o.ReadStats(Egress, &st); err != nil || st.Gaps != 2 || st.Samples != 1 || st.SamplesLost != 1 || st.Packets != 3 {
		t.Errorf("egress stats %+v %v", st, err)
	}
	if err := o.ReadStats(Direction(2), &st); err == nil {
		t.Error("bad direction accepted")
	}
	if o.foreign.Load() != 1 {
		t.Errorf("foreign %d", o.foreign.Load())
	}
	if s := o.Status(); s == "" || o.Resolution() != time.Nanosecond {
		t.Errorf("status %q resolution %v", s, o.Resolution())
	}
	// Statistical: rate from the samples.
	o.ingest(PSample{Group: 20, OIfIndex: 7, Seq: 3, Rate: 50, OrigSize: 60}, base+10*time.Millisecond, off)
	o.ingest(PSample{Group: 20, OIfIndex: 7, Seq: 4, Rate: 50, OrigSize: 60}, base+20*time.Millisecond, off)
	if !o.Statistical() || o.Resolution() < 100*time.Microsecond {
		t.Errorf("statistical %v resolution %v status %q", o.Statistical(), o.Resolution(), o.Status())
	}
}
