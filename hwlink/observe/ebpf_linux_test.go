package observe

import (
	"context"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/hwlinktest"
)

// runProg runs prog once on a minimal Ethernet frame of n bytes.
func runProg(t *testing.T, prog *ebpf.Program, n int) uint32 {
	t.Helper()
	ret, err := prog.Run(&ebpf.RunOptions{Data: make([]byte, n)})
	if err != nil {
		t.Fatalf("BPF_PROG_TEST_RUN: %v", err)
	}
	return ret
}

// TestIdlegapProgram checks the program's arithmetic through
// BPF_PROG_TEST_RUN: verdict, gap, busy detection, histogram bucket
// (against HistBucket) and samples.
func TestIdlegapProgram(t *testing.T) {
	hwlinktest.RequireBPF(t)
	objs, err := LoadIdlegap(0)
	if err != nil {
		t.Fatal(err)
	}
	o := &EBPFObserver{ifname: "test", ns: netns.None()}
	if err := o.init(objs, 0, 0); err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	// 1 Mb/s: a 100-byte packet keeps the link busy for (100+24)*8 µs.
	if err := o.SetSpeed(1_000_000); err != nil {
		t.Fatal(err)
	}
	if err := o.SetSampleFloor(0); err != nil {
		t.Fatal(err)
	}
	first0 := MonotonicNow()
	ret := runProg(t, objs.LpiEgress, 100)
	first1 := MonotonicNow()
	if ret != 0xFFFFFFFF {
		t.Fatalf("verdict %#x, want TCX_NEXT/TC_ACT_UNSPEC (-1)", ret)
	}
	runProg(t, objs.LpiEgress, 100) // arrives while the first is on the wire
	var st GapStats
	if err := o.ReadStats(Egress, &st); err != nil {
		t.Fatal(err)
	}
	if st.Packets != 2 || st.Busy != 1 || st.Gaps != 0 || st.Bytes != 200 {
		t.Fatalf("after two back-to-back packets: %+v", st)
	}
	// Unknown speed: transmissions take no time; a 2 ms pause is a gap of
	// about 2 ms after the estimated end of the second packet.
	if err := o.SetSpeed(0); err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * time.Millisecond) // both packets (≈2 ms on the wire) are done
	before := MonotonicNow()
	runProg(t, objs.LpiEgress, 100)
	after := MonotonicNow()
	if err := o.ReadStats(Egress, &st); err != nil {
		t.Fatal(err)
	}
	if st.Gaps != 1 || st.Samples != 1 {
		t.Fatalf("want one gap and one sample: %+v", st)
	}
	buf := make([]GapSample, 4)
	n, err := o.DrainGaps(buf)
	if err != nil || n != 1 {
		t.Fatalf("DrainGaps = %d, %v", n, err)
	}
	s := buf[0]
	if s.End < before || s.End > after {
		t.Errorf("sample end %v outside [%v, %v]", s.End, before, after)
	}
	// The first packet started at some time in [first0, first1]; two
	// 100-byte packets at 1 Mb/s occupy (100+24)·8 µs each, so the link
	// was busy until start + 1.984 ms and the gap is End minus that. These
	// bounds do not depend on how long the sleep above really took.
	const busy = 2 * 992 * time.Microsecond
	if lo, hi := s.End-first1-busy, s.End-first0-busy; s.Length < lo || s.Length > hi {
		t.Errorf("gap %v, want within [%v, %v] (end %v minus the end of 2 ms of transmission)", s.Length, lo, hi, s.End)
	}
	if s.PacketLen != 100 || s.Dir != Egress {
		t.Errorf("sample %+v", s)
	}
	if st.Idle != s.Length {
		t.Errorf("idle sum %v != sample %v", st.Idle, s.Length)
	}
	b := HistBucket(uint64(s.Length))
	if st.Hist[b] != 1 {
		t.Errorf("histogram bucket %d (of %v) = %d; program and HistBucket disagree", b, s.Length, st.Hist[b])
	}
	if n, _ := o.DrainGaps(buf); n != 0 {
		t.Errorf("second drain returned %d samples", n)
	}
	// The ingress program keeps separate state.
	runProg(t, objs.LpiIngress, 60)
	var in GapStats
	if err := o.ReadStats(Ingress, &in); err != nil {
		t.Fatal(err)
	}
	if in.Packets != 1 || in.Bytes != 60 {
		t.Errorf("ingress stats %+v", in)
	}
}

// TestIdlegapPerCPUStats runs the program pinned to each CPU in turn: the
// counters land in that CPU's copy and ReadStats sums them, without
// allocating.
func TestIdlegapPerCPUStats(t *testing.T) {
	hwlinktest.RequireBPF(t)
	objs, err := LoadIdlegap(0)
	if err != nil {
		t.Fatal(err)
	}
	o := &EBPFObserver{ifname: "test", ns: netns.None()}
	if err := o.init(objs, 10_000_000_000, time.Hour); err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	var cpus unix.CPUSet
	if err := unix.SchedGetaffinity(0, &cpus); err != nil {
		t.Fatal(err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer unix.SchedSetaffinity(0, &cpus)
	const perCPU = 3
	want, used := 0, 0
	for cpu := range len(o.percpu) {
		if !cpus.IsSet(cpu) {
			continue
		}
		var one unix.CPUSet
		one.Set(cpu)
		if err := unix.SchedSetaffinity(0, &one); err != nil {
			t.Fatal(err)
		}
		for range perCPU {
			runProg(t, objs.LpiEgress, 100)
			want++
		}
		used++
	}
	var st GapStats
	if err := o.ReadStats(Egress, &st); err != nil {
		t.Fatal(err)
	}
	if st.Packets != uint64(want) || st.Bytes != uint64(100*want) || st.Gaps+st.Busy != uint64(want-1) || st.Races != 0 {
		t.Fatalf("%d runs on %d CPUs: %+v", want, used, st)
	}
	var hist uint64
	for _, n := range st.Hist {
		hist += n
	}
	if hist != st.Gaps {
		t.Errorf("histogram holds %d gaps, counter %d", hist, st.Gaps)
	}
	withPackets := 0
	for i := range o.percpu {
		if n := o.percpu[i].Packets; n == perCPU {
			withPackets++
		} else if n != 0 {
			t.Errorf("CPU %d counted %d packets, want 0 or %d", i, n, perCPU)
		}
	}
	if withPackets != used {
		t.Errorf("%d CPUs counted packets, %d ran the program", withPackets, used)
	}
	if a := testing.AllocsPerRun(100, func() { _ = o.ReadStats(Egress, &st) }); a != 0 {
		t.Errorf("ReadStats: %v allocations", a)
	}
}

// TestEBPFObserverVeth sends paced UDP through a veth pair between two
// test namespaces and checks the gaps measured at the sender's egress and
// the receiver's ingress, over TCX and over the clsact fallback.
func TestEBPFObserverVeth(t *testing.T) {
	hwlinktest.RequireBPF(t)
	cases := []struct {
		name     string
		mode     AttachMode
		interval time.Duration
		count    int
	}{
		{"tcx/1ms", AttachTCX, time.Millisecond, 120},
		{"tcx/100us", AttachTCX, 100 * time.Microsecond, 800},
		{"tc/1ms", AttachTC, time.Millisecond, 80},
		{"tc/100us", AttachTC, 100 * time.Microsecond, 500},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := hwlinktest.NewPair(t)
			ctx := context.Background()
			// Egress of the sender's end (B) and ingress of the receiver's (A).
			eg, err := AttachEBPF(ctx, EBPFConfig{Interface: p.NameB, NetNS: hwlink.NetNS(p.PathB), Mode: tc.mode,
				Speed: 10_000_000_000, SampleFloor: time.Microsecond})
			if err != nil {
				t.Fatalf("attach egress: %v", err)
			}
			in, err := AttachEBPF(ctx, EBPFConfig{Interface: p.NameA, NetNS: hwlink.NetNS(p.PathA), Mode: tc.mode,
				Ingress: true, Speed: 10_000_000_000, SampleFloor: time.Microsecond})
			if err != nil {
				eg.Close()
				t.Fatalf("attach ingress: %v", err)
			}
			if eg.AttachedVia() != tc.mode || in.AttachedVia() != tc.mode {
				t.Fatalf("attached via %v/%v, want %v", eg.AttachedVia(), in.AttachedVia(), tc.mode)
			}
			sent := hwlinktest.SendUDPTimed(t, p.NSB, p.AddrB, p.NSA, p.AddrA,
				hwlinktest.Traffic{Count: tc.count, Interval: tc.interval, Payload: 64})

			checkGaps(t, "egress", eg, Egress, sent, tc.interval, 10)
			// Ingress runs in the receiving softirq, which a loaded machine
			// may defer past the send call: most gaps, not all.
			checkGaps(t, "ingress", in, Ingress, sent, tc.interval, 8)

			if err := eg.Close(); err != nil {
				t.Errorf("close egress: %v", err)
			}
			if err := in.Close(); err != nil {
				t.Errorf("close ingress: %v", err)
			}
			hwlinktest.AssertDetached(t, p.NSB, p.IndexB)
			hwlinktest.AssertDetached(t, p.NSA, p.IndexA)
		})
	}
}

// gapTolerance is the slack around a gap's bracket (see checkGaps): the
// transmission estimate and the hook's position in the send path.
const gapTolerance = 5 * time.Microsecond

// medianTolerance bounds the median gap against the median send spacing.
const medianTolerance = 25 * time.Microsecond

// checkGaps verifies one direction: every packet counted, one gap per
// packet after the first, every gap sampled, samples and histogram agree
// exactly, and at least tenths/10 of the gaps lie in their bracket: packet
// i passed the hook between its send call's Before and After, so gap i is
// within [Before(i+1) − After(i), After(i+1) − Before(i)] (± gapTolerance),
// however loaded the machine. The median gap is within ±25 µs of the
// median send spacing (nominal: interval).
func checkGaps(t *testing.T, what string, o *EBPFObserver, dir Direction, sent []hwlinktest.SendTime, interval time.Duration, tenths int) {
	t.Helper()
	count := len(sent)
	var st GapStats
	if err := o.ReadStats(dir, &st); err != nil {
		t.Fatal(err)
	}
	if st.Packets != uint64(count) {
		t.Errorf("%s: %d packets, want %d (stray traffic?)", what, st.Packets, count)
	}
	if st.Gaps+st.Busy != st.Packets-1 {
		t.Errorf("%s: gaps %d + busy %d != packets-1 (%d)", what, st.Gaps, st.Busy, st.Packets-1)
	}
	buf := make([]GapSample, 4096)
	n, err := o.DrainGaps(buf)
	if err != nil {
		t.Fatal(err)
	}
	samples := buf[:n]
	if uint64(n) != st.Gaps || st.Samples != st.Gaps || st.SamplesLost != 0 {
		t.Errorf("%s: drained %d samples, stats %d samples %d lost, %d gaps", what, n, st.Samples, st.SamplesLost, st.Gaps)
	}
	var hist [HistBuckets]uint64
	var sum time.Duration
	lengths := make([]time.Duration, 0, n)
	for i, s := range samples {
		if s.Dir != dir {
			t.Fatalf("%s: sample %d has direction %v", what, i, s.Dir)
		}
		if i > 0 && s.End < samples[i-1].End {
			t.Fatalf("%s: sample %d ends before its predecessor", what, i)
		}
		hist[HistBucket(uint64(s.Length))]++
		sum += s.Length
		lengths = append(lengths, s.Length)
	}
	if hist != st.Hist {
		t.Errorf("%s: histogram from samples differs from the program's", what)
	}
	if sum != st.Idle {
		t.Errorf("%s: idle sum %v != sum of samples %v", what, st.Idle, sum)
	}
	if len(lengths) == 0 {
		t.Fatalf("%s: no gaps measured", what)
	}
	slices.Sort(lengths)
	median := lengths[len(lengths)/2]
	spacing := make([]time.Duration, 0, count-1)
	for i := 1; i < count; i++ {
		spacing = append(spacing, sent[i].Before.Sub(sent[i-1].Before))
	}
	slices.Sort(spacing)
	if d := median - spacing[len(spacing)/2]; d < -medianTolerance || d > medianTolerance {
		t.Errorf("%s: median gap %v, median send spacing %v (nominal %v)", what, median, spacing[len(spacing)/2], interval)
	}
	inside := 0
	if n == count-1 {
		for i, s := range samples {
			lo := sent[i+1].Before.Sub(sent[i].After) - gapTolerance
			hi := sent[i+1].After.Sub(sent[i].Before) + gapTolerance
			if s.Length >= lo && s.Length <= hi {
				inside++
			}
		}
	}
	if inside*10 < n*tenths {
		t.Errorf("%s: only %d of %d gaps within their send brackets (±%v); want %d/10", what, inside, n, gapTolerance, tenths)
	}
	t.Logf("%s: %d packets, %d gaps, median %v, p10 %v, p90 %v, %d/%d within their send brackets ±%v",
		what, st.Packets, st.Gaps, median, lengths[len(lengths)/10], lengths[len(lengths)*9/10], inside, n, gapTolerance)
}
