package workload

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/lpictl/lpictl/sim/workload/apps"
	"github.com/lpictl/lpictl/sim/workload/vef"
)

// writeRingTrace writes an n-message trace on p tasks: in round k every task
// s sends 4 KiB to s+1, 100 ns after receiving the previous round's message
// from s−1 (dependency 2), so about p messages are in flight.
func writeRingTrace(tb testing.TB, path string, n int64, p int) {
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	b := make([]byte, 0, 64)
	b = append(b, "VEF "...)
	b = strconv.AppendInt(b, int64(p), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, n, 10)
	b = append(b, " 1 0 0 FALSE\nC0"...)
	w.Write(b)
	for i := 0; i < p; i++ {
		w.WriteString(" " + strconv.Itoa(i))
	}
	w.WriteString("\n")
	P := int64(p)
	for i := int64(0); i < n; i++ {
		s := i % P
		b = strconv.AppendInt(b[:0], i, 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, s, 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, (s+1)%P, 10)
		if i > P {
			b = append(b, " 4096 2 100 "...)
			b = strconv.AppendInt(b, i-P-1, 10)
		} else {
			b = append(b, " 4096 0 0 -1"...)
		}
		b = append(b, '\n')
		w.Write(b)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	f.Close()
}

// BenchmarkReplayVEF streams a generated trace of b.N messages (1024
// tasks) from a file through the reader and the replayer on IdealHost. It
// reports messages/s and the peak heap in use, which stays bounded by the
// replay window whatever b.N is (run with -benchtime=10000000x for 10⁷).
func BenchmarkReplayVEF(b *testing.B) {
	path := filepath.Join(b.TempDir(), "ring.vef")
	writeRingTrace(b, path, int64(b.N), 1024)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	rd, err := vef.Open(path, vef.ReaderOptions{})
	if err != nil {
		b.Fatal(err)
	}
	r, err := NewReplayer(rd, identity(1024), Options{})
	if err != nil {
		b.Fatal(err)
	}
	h := NewIdealHost()
	r.Start(h)
	var peak uint64
	for n := 0; len(h.heap) > 0 && r.Err() == nil; n++ {
		e := h.pop()
		h.now = e.at
		if e.timer {
			r.Timer(e.tag)
		} else {
			r.Delivered(e.tag)
		}
		if n&(1<<16-1) == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
	}
	el := time.Since(start)
	b.StopTimer()
	rd.Close()
	if r.Err() != nil || !r.Done() {
		b.Fatal(r.Err(), r.Done())
	}
	if got := r.Stats().P2P; got != int64(b.N) {
		b.Fatalf("replayed %d of %d", got, b.N)
	}
	b.ReportMetric(float64(b.N)/el.Seconds(), "msgs/s")
	b.ReportMetric(float64(peak-min(peak, base))/(1<<20), "peak-heap-MiB")
}

// BenchmarkGenerateLAMMPS4160 measures generating and replaying one LAMMPS
// step at the paper's scale (4160 ranks) on IdealHost.
func BenchmarkGenerateLAMMPS4160(b *testing.B) {
	b.ReportAllocs()
	var msgs int64
	start := time.Now()
	for i := 0; i < b.N; i++ {
		w, err := Build(Config{Kind: apps.KindLAMMPS, Steps: 5}, 4160, 1)
		if err != nil {
			b.Fatal(err)
		}
		r, _ := w.NewReplayer()
		if err := NewIdealHost().Run(r); err != nil {
			b.Fatal(err)
		}
		msgs += r.Stats().Messages
	}
	b.ReportMetric(float64(msgs)/time.Since(start).Seconds(), "msgs/s")
}

// BenchmarkCollectiveExpansion measures the replayer's per-message cost
// for collectives (a 256-task Bruck alltoall per step).
func BenchmarkCollectiveExpansion(b *testing.B) {
	w, err := Build(Config{Kind: apps.KindAlltoall, Ranks: 256, Steps: 20, Params: apps.Params{Alltoall: &apps.Alltoall{Bytes: 8}}}, 256, 1)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var msgs int64
	start := time.Now()
	for i := 0; i < b.N; i++ {
		r, _ := w.NewReplayer()
		if err := NewIdealHost().Run(r); err != nil {
			b.Fatal(err)
		}
		msgs += r.Stats().Messages
	}
	b.ReportMetric(float64(msgs)/time.Since(start).Seconds(), "msgs/s")
}
