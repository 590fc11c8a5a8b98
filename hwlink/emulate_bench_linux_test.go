package hwlink

import (
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/lpictl/lpictl/bpf"
	"github.com/lpictl/lpictl/hwlink/hwlinktest"
)

// BenchmarkEmulatorPerPacket measures the emulated port's program per
// packet with BPF_PROG_TEST_RUN (ns/packet, gross: the test-run harness
// included; "baseline" is an empty sched_cls program, to subtract). Each
// case checks afterwards that it ran the path it names:
//   - "awake": always-on, every packet a hit (clock read, lock, counters);
//   - "wake-up": t_PDT 0 and a 1 ns t_w, so every packet, tens of ns
//     after the last, finds the port asleep and gets a departure time
//     (bpf_skb_set_tstamp) — the longest path;
//   - "queued": a long t_w, so every packet after the first finds the port
//     busy and queues behind it (departure time set).
func BenchmarkEmulatorPerPacket(b *testing.B) {
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
		_, per, err := prog.Benchmark(ipv4Frame(64), b.N, b.ResetTimer)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(per.Nanoseconds()), "ns/packet")
	})
	for _, bc := range []struct {
		name string
		mode EmulatedMode
		tm   emuTiming
		pdt  uint64
		path func(st *bpf.EeeemuEmuState) bool
	}{
		{"awake", EmulateAlwaysOn, emuTiming{}, 0, func(st *bpf.EeeemuEmuState) bool { return st.Hits >= st.Packets-1 }},
		{"wake-up", EmulateDeepSleep, emuTiming{sleepDS: 0, wakeDS: 1}, 0, func(st *bpf.EeeemuEmuState) bool {
			return st.Wakeups >= st.Packets*9/10 && st.Delayed >= st.Wakeups
		}},
		{"queued", EmulateDeepSleep, emuTiming{sleepDS: 1e12, wakeDS: 1e12}, 0, func(st *bpf.EeeemuEmuState) bool {
			return st.IdlePeriods <= 1 && st.Delayed == st.Packets
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p := newTestEmulator(b, bc.tm, bc.mode, bc.pdt, 0, uint64(MonotonicNow()))
			b.ReportAllocs()
			_, per, err := p.prog.Benchmark(ipv4Frame(64), b.N, b.ResetTimer)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(per.Nanoseconds()), "ns/packet")
			var st bpf.EeeemuEmuState
			if err := p.readState(&st); err != nil {
				b.Fatal(err)
			}
			if !bc.path(&st) {
				b.Fatalf("did not run the %s path: %+v", bc.name, st)
			}
		})
	}
}
