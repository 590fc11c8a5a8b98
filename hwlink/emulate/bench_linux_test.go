package emulate

import (
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/ringbuf"

	"github.com/lpictl/lpictl/bpf"
	"github.com/lpictl/lpictl/hwlink/hwlinktest"
	"github.com/lpictl/lpictl/hwlink/observe"
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
//
// In "awake" and "wake-up" every packet ends an idle period and writes its
// event to the ring buffer; the packets run in chunks the ring holds, and
// the ring is emptied between chunks (outside the kernel's measurement),
// so every event is written: the case checks that none was lost.
// benchChunk packets' events fit the 1 MiB ring (56 bytes each).
const benchChunk = 16384

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
		mode Mode
		tm   emuTiming
		pdt  uint64
		path func(st *bpf.EeeemuEmuState) bool
	}{
		{"awake", ModeAlwaysOn, emuTiming{}, 0, func(st *bpf.EeeemuEmuState) bool { return st.Hits >= st.Packets-1 }},
		{"wake-up", ModeDeepSleep, emuTiming{sleepDS: 0, wakeDS: 1}, 0, func(st *bpf.EeeemuEmuState) bool {
			return st.Wakeups >= st.Packets*9/10 && st.Delayed >= st.Wakeups
		}},
		{"queued", ModeDeepSleep, emuTiming{sleepDS: 1e12, wakeDS: 1e12}, 0, func(st *bpf.EeeemuEmuState) bool {
			return st.IdlePeriods <= 1 && st.Delayed == st.Packets
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p := newTestEmulator(b, bc.tm, bc.mode, bc.pdt, 0, uint64(observe.MonotonicNow()))
			st := benchPackets(b, p)
			if !bc.path(&st) || st.EventsLost != 0 {
				b.Fatalf("did not run the %s path, or lost events: %+v", bc.name, st)
			}
		})
	}
}

// benchPackets runs b.N 64-byte frames through p's program in chunks of
// benchChunk, draining its event ring between chunks (outside the timer),
// reports ns/packet and returns the port's state afterwards.
func benchPackets(b *testing.B, p *Port) bpf.EeeemuEmuState {
	rd, err := ringbuf.NewReader(p.evMap)
	if err != nil {
		b.Fatal(err)
	}
	defer rd.Close()
	rd.SetDeadline(time.Unix(0, 1))
	var rec ringbuf.Record
	frame := ipv4Frame(64)
	b.ReportAllocs()
	b.ResetTimer()
	var total time.Duration
	for done := 0; done < b.N; {
		n := min(b.N-done, benchChunk)
		_, per, err := p.prog.Benchmark(frame, n, nil)
		if err != nil {
			b.Fatal(err)
		}
		total += per * time.Duration(n)
		done += n
		b.StopTimer()
		for rd.AvailableBytes() > 0 && rd.ReadInto(&rec) == nil {
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "ns/packet")
	var st bpf.EeeemuEmuState
	if err := p.readState(&st); err != nil {
		b.Fatal(err)
	}
	return st
}
