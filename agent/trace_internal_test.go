package agent

import (
	"bytes"
	"encoding/binary"
	"os"
	"testing"
	"time"

	"github.com/lpictl/lpictl/controller/replay"
)

// FuzzPortTraceRows writes rows (and hop counts) from the input through a
// port trace and reads the file back with controller/replay: every row
// the writer calls replayable parses to the values written, in order, with
// its hop counts; the others are comments.
func FuzzPortTraceRows(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0, 50, 0, 0, 0, 0, 0, 0, 0, 10, 3, 7})
	f.Add(bytes.Repeat([]byte{0xff, 0x7f, 0, 1}, 40))
	f.Fuzz(func(t *testing.T, in []byte) {
		dir := t.TempDir()
		tr, err := newPortTrace(dir, "eth0")
		if err != nil {
			t.Fatal(err)
		}
		tr.start(TraceInfo{Device: "eth0"}, false)
		type want struct {
			start, gap, pdt, delay time.Duration
			missed                 bool
			hops                   map[int]uint64
		}
		var wants []want
		pendingHops := map[int]uint64{}
		var prevEnd time.Duration
		for len(in) >= 19 {
			start := time.Duration(binary.LittleEndian.Uint64(in[0:]) >> 1)
			gap := time.Duration(int64(binary.LittleEndian.Uint64(in[8:])) >> 20)
			pdt := time.Duration(in[16]) * time.Microsecond
			if in[16] == 255 {
				pdt = PDTNever
			}
			hop, cnt := int(in[17])-2, uint64(in[18])
			in = in[19:]
			tr.sent(hop, cnt)
			if cnt > 0 {
				pendingHops[min(max(hop, 0), replay.MaxHops)] += cnt
			}
			missed := gap%2 == 0
			delay := gap / 3
			ok := start >= 0 && gap > 0 && start >= prevEnd && start <= time.Duration(replay.MaxTime/1000)-gap
			tr.row(start, gap, pdt, missed, delay)
			if ok {
				wants = append(wants, want{start, gap, pdt, max(delay, 0), missed, pendingHops})
				prevEnd = start + gap
			}
			pendingHops = map[int]uint64{}
		}
		if err := tr.finish(); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(PortTraceFile(dir, "eth0"))
		if err != nil {
			t.Fatal(err)
		}
		rows, err := replay.ParseTrace(bytes.NewReader(data), "trace")
		if err != nil {
			t.Fatalf("%v\n%s", err, data)
		}
		if len(rows) != len(wants) {
			t.Fatalf("%d rows read, %d written", len(rows), len(wants))
		}
		for i, r := range rows {
			w := wants[i]
			pdt := replay.PS(w.pdt) * 1000
			if w.pdt == PDTNever {
				pdt = replay.Never
			}
			if r.Start != replay.PS(w.start)*1000 || r.Gap != replay.PS(w.gap)*1000 || r.PDT != pdt ||
				r.Missed != w.missed || r.Delay != replay.PS(w.delay)*1000 {
				t.Fatalf("row %d: read %+v, wrote %+v", i, r, w)
			}
			n := 0
			for _, h := range r.Sent {
				if w.hops[h.Hops] != h.Packets {
					t.Fatalf("row %d: hops %v, wrote %v", i, r.Sent, w.hops)
				}
				n++
			}
			if n != len(w.hops) {
				t.Fatalf("row %d: hops %v, wrote %v", i, r.Sent, w.hops)
			}
		}
	})
}
