package hwlink

import (
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/vishvananda/netns"

	"github.com/lpictl/lpictl/hwlink/hwlinktest"
)

func newBenchObserver(b *testing.B, floor time.Duration) *EBPFObserver {
	b.Helper()
	hwlinktest.RequireBPF(b)
	objs, err := LoadIdlegap(1 << 20)
	if err != nil {
		b.Fatal(err)
	}
	o := &EBPFObserver{ifname: "bench", ns: netns.None()}
	if err := o.init(objs, 10_000_000_000, floor); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { o.Close() })
	return o
}

// BenchmarkEBPFPerPacket measures the idlegap program per packet with
// BPF_PROG_TEST_RUN (ns/packet). Every run finds the link idle, so the
// gap/histogram path runs each time; "sampled" also writes every gap to
// the ring buffer (until it is full, then counts the loss). "baseline" is
// an empty sched_cls program: the harness's own cost per run, to subtract.
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
		floor time.Duration
	}{{"histogram-only", time.Hour}, {"sampled", 0}} {
		b.Run(bc.name, func(b *testing.B) {
			o := newBenchObserver(b, bc.floor)
			pkt := make([]byte, 64)
			b.ResetTimer()
			_, per, err := o.objs.LpiEgress.Benchmark(pkt, b.N, b.ResetTimer)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(per.Nanoseconds()), "ns/packet")
		})
	}
}

// BenchmarkDrainGaps measures user-space cost of draining gap samples
// (ns and allocations per sample).
func BenchmarkDrainGaps(b *testing.B) {
	o := newBenchObserver(b, 0)
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
	o := newBenchObserver(b, 0)
	buf := make([]GapSample, 64)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := o.DrainGaps(buf); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadStats is the cost of reading one direction's counters and
// histogram (one locked map lookup).
func BenchmarkReadStats(b *testing.B) {
	o := newBenchObserver(b, 0)
	var st GapStats
	b.ReportAllocs()
	for b.Loop() {
		if err := o.ReadStats(Egress, &st); err != nil {
			b.Fatal(err)
		}
	}
}
