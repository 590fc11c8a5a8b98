package observe

import (
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/vishvananda/netns"

	"github.com/lpictl/lpictl/hwlink/hwlinktest"
)

// newBenchObserver loads the program for BPF_PROG_TEST_RUN at the given
// link speed (bits/s, 0 = unknown) and sample floor.
func newBenchObserver(b *testing.B, speed uint64, floor time.Duration) *EBPFObserver {
	b.Helper()
	hwlinktest.RequireBPF(b)
	objs, err := LoadIdlegap(1 << 20)
	if err != nil {
		b.Fatal(err)
	}
	o := &EBPFObserver{ifname: "bench", ns: netns.None()}
	if err := o.init(objs, speed, floor); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { o.Close() })
	return o
}

// BenchmarkEBPFPerPacket measures the idlegap program per packet with
// BPF_PROG_TEST_RUN (ns/packet). "baseline" is an empty sched_cls program:
// the harness's own cost per run, to subtract.
//
// "histogram-only" and "sampled" run at unknown speed, so that a packet's
// transmission takes no time and every run finds the link idle: the
// gap/histogram path runs each time (checked). At a real speed the runs,
// tens of ns apart, would find the link still sending the previous packet
// (64+24 bytes take 70 ns at 10 Gb/s) and mostly measure the busy path.
// "sampled" also writes every gap to the ring buffer (1 MiB, 32 Ki
// samples) until it is full, then counts the loss. "busy" runs at 1 Mb/s:
// every run after the first finds the link busy (the common path under
// load).
func BenchmarkEBPFPerPacket(b *testing.B) {
	b.Run("baseline", func(b *testing.B) {
		hwlinktest.RequireBPF(b)
		prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
			Type:         ebpf.SchedCLS,
			Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, -1), asm.Return()},
			License:      "MIT",
		})
		if err != nil {
			b.Fatal(err)
		}
		defer prog.Close()
		_, per, err := prog.Benchmark(make([]byte, 64), b.N, b.ResetTimer)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(per.Nanoseconds()), "ns/packet")
	})
	for _, bc := range []struct {
		name  string
		speed uint64
		floor time.Duration
		busy  bool
	}{
		{"histogram-only", 0, time.Hour, false},
		{"sampled", 0, 0, false},
		{"busy", 1_000_000, time.Hour, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			o := newBenchObserver(b, bc.speed, bc.floor)
			pkt := make([]byte, 64)
			b.ResetTimer()
			_, per, err := o.objs.LpiEgress.Benchmark(pkt, b.N, b.ResetTimer)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(per.Nanoseconds()), "ns/packet")
			var st GapStats
			if err := o.ReadStats(Egress, &st); err != nil {
				b.Fatal(err)
			}
			path := st.Gaps
			if bc.busy {
				path = st.Busy
			}
			// All runs but the first (which has no gap to measure) must
			// have taken the path this case is about.
			if st.Packets > 1 && path*100 < (st.Packets-1)*99 {
				b.Fatalf("%d packets: %d gaps, %d busy: not the path measured here", st.Packets, st.Gaps, st.Busy)
			}
		})
	}
}

// BenchmarkDrainGaps measures user-space cost of draining gap samples
// (ns and allocations per sample).
func BenchmarkDrainGaps(b *testing.B) {
	o := newBenchObserver(b, 0, 0) // unknown speed: every run is a gap, so 256 samples a batch
	pkt := make([]byte, 64)
	buf := make([]GapSample, 256)
	const batch = 256
	b.ReportAllocs()
	b.ResetTimer()
	drained := 0
	for drained < b.N {
		b.StopTimer()
		if _, _, err := o.objs.LpiEgress.Benchmark(pkt, batch, nil); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		n, err := o.DrainGaps(buf)
		if err != nil {
			b.Fatal(err)
		}
		if n == 0 {
			b.Fatal("no samples drained")
		}
		drained += n
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(drained), "ns/sample")
}

// BenchmarkDrainEmpty is the cost of a drain with nothing pending (the
// common case when polling often).
func BenchmarkDrainEmpty(b *testing.B) {
	o := newBenchObserver(b, 10_000_000_000, 0)
	buf := make([]GapSample, 64)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := o.DrainGaps(buf); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadStats is the cost of reading one direction's counters and
// histogram (one per-CPU map lookup, summed over the CPUs).
func BenchmarkReadStats(b *testing.B) {
	o := newBenchObserver(b, 10_000_000_000, 0)
	var st GapStats
	b.ReportAllocs()
	for b.Loop() {
		if err := o.ReadStats(Egress, &st); err != nil {
			b.Fatal(err)
		}
	}
}
