package observe

import (
	"context"
	"testing"
	"time"
)

type scriptedCounts struct {
	seq []PacketCounts
	i   int
}

func (s *scriptedCounts) ReadCounts(context.Context) (PacketCounts, error) {
	c := s.seq[min(s.i, len(s.seq)-1)]
	s.i++
	return c, nil
}

func TestCounterObserverGaps(t *testing.T) {
	tx := []uint64{10, 12, 12, 12, 15, 16, 16, 20, 20, 20, 20, 20, 21}
	src := &scriptedCounts{}
	for _, v := range tx {
		src.seq = append(src.seq, PacketCounts{TxPackets: v, RxPackets: 5})
	}
	o, err := NewCounterObserver(CounterConfig{Interface: "eth0", Interval: 10 * time.Millisecond, Source: src, RingSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	ctx := context.Background()
	for i := range tx {
		if err := o.Poll(ctx, time.Duration(i)*10*time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	var st GapStats
	if err := o.ReadStats(Egress, &st); err != nil {
		t.Fatal(err)
	}
	// Idle runs: 2 polls (→ 20 ms, ended at poll 4), 1 (10 ms, poll 7),
	// 4 (40 ms, poll 12; the ring of 2 is full by then).
	if st.Packets != 11 || st.Gaps != 3 || st.Idle != 70*time.Millisecond || st.Samples != 2 || st.SamplesLost != 1 {
		t.Errorf("stats %+v", st)
	}
	if st.Hist[HistBucket(uint64(20*time.Millisecond))] != 1 || st.Hist[HistBucket(uint64(40*time.Millisecond))] != 1 {
		t.Error("histogram")
	}
	buf := make([]GapSample, 8)
	n, _ := o.DrainGaps(buf)
	if n != 2 || buf[0].Length != 20*time.Millisecond || buf[0].End != 40*time.Millisecond ||
		buf[1].Length != 10*time.Millisecond || buf[1].End != 70*time.Millisecond {
		t.Errorf("samples %v", buf[:n])
	}
	var in GapStats
	if err := o.ReadStats(Ingress, &in); err != nil || in.Packets != 0 || in.Gaps != 0 {
		t.Errorf("ingress %+v %v", in, err)
	}
	if o.Method() != MethodCounters || o.Resolution() != 10*time.Millisecond {
		t.Error("method/resolution")
	}
	if _, err := NewCounterObserver(CounterConfig{Interface: "eth0", Interval: time.Microsecond, Source: src}); err == nil {
		t.Error("sub-millisecond interval accepted")
	}
}

func BenchmarkCounterDrain(b *testing.B) {
	src := &scriptedCounts{seq: []PacketCounts{{}}}
	o, _ := NewCounterObserver(CounterConfig{Interface: "eth0", Source: src})
	buf := make([]GapSample, 64)
	var st GapStats
	b.ReportAllocs()
	for b.Loop() {
		_, _ = o.DrainGaps(buf)
		_ = o.ReadStats(Egress, &st)
	}
}
