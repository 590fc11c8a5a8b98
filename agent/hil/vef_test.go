package hil

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/lpictl/lpictl/sim/workload/vef"
)

const us = time.Microsecond

// handMsgs: a probe a→b answered after 3.5 µs, a datagram b→a, a TCP
// write a→b, a second probe.
var handMsgs = []Msg{
	{Src: 0, Dst: 1, Bytes: 106, At: 10 * us, ReplyTo: -1},
	{Src: 1, Dst: 0, Bytes: 242, At: 12*us + 250, ReplyTo: -1},
	{Src: 1, Dst: 0, Bytes: 106, At: 40 * us, ReplyTo: 0, Delay: 3500},
	{Src: 0, Dst: 1, Bytes: 68000, At: 100 * us, ReplyTo: -1},
	{Src: 0, Dst: 1, Bytes: 106, At: 2000 * us, ReplyTo: -1},
	{Src: 1, Dst: 0, Bytes: 106, At: 2030 * us, ReplyTo: 4, Delay: 2 * us},
}

func TestWriteVEFReadsBack(t *testing.T) {
	var b bytes.Buffer
	if err := WriteVEF(&b, handMsgs); err != nil {
		t.Fatal(err)
	}
	want := `VEF 2 6 1 0 0 FALSE
C0 0 1
0 0 1 106 0 10000 -1
1 1 0 242 0 12250 -1
2 1 0 106 2 3500 0
3 0 1 68000 0 100000 -1
4 0 1 106 0 2000000 -1
5 1 0 106 2 2000 4
`
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
	r, err := vef.NewReader(strings.NewReader(b.String()), "t.vef", vef.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h := r.Header()
	if h.Tasks != 2 || h.Messages != 6 || h.OnlySend {
		t.Errorf("header %+v", h)
	}
	n := 0
	for {
		var rec vef.Record
		err := r.Next(&rec)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		m := handMsgs[n]
		if rec.Src != m.Src || rec.Dst != m.Dst || rec.Bytes != m.Bytes {
			t.Errorf("record %d: %+v, want %+v", n, rec, m)
		}
		switch {
		case m.ReplyTo >= 0 && (rec.Dep != vef.DepRecv || rec.DepID != int64(m.ReplyTo) || rec.Time != int64(m.Delay)*1000):
			t.Errorf("record %d: %+v, want a receive dependency on %d after %v", n, rec, m.ReplyTo, m.Delay)
		case m.ReplyTo < 0 && (rec.Dep != vef.DepNone || rec.Time != int64(m.At)*1000):
			t.Errorf("record %d: %+v, want sent at %v", n, rec, m.At)
		}
		n++
	}
	if n != len(handMsgs) {
		t.Errorf("read %d records", n)
	}
	// Only sends: onlySend TRUE.
	b.Reset()
	if err := WriteVEF(&b, []Msg{{Src: 0, Dst: 1, Bytes: 1, ReplyTo: -1}}); err != nil || !strings.HasPrefix(b.String(), "VEF 2 1 1 0 0 TRUE\n") {
		t.Errorf("%v %q", err, b.String())
	}
	if err := WriteVEF(io.Discard, []Msg{{Src: 0, Dst: 1, Bytes: 1, ReplyTo: 0}}); err == nil {
		t.Error("a reply to itself accepted")
	}
}

func TestMergeMsgs(t *testing.T) {
	flows := []FlowResult{
		{msgs: []Msg{{At: 10, ReplyTo: -1}, {At: 30, ReplyTo: -1}, {At: 35, ReplyTo: 0}, {At: 50, ReplyTo: 1}}},
		{msgs: []Msg{{At: 5, ReplyTo: -1}, {At: 31, ReplyTo: -1}}},
	}
	got := mergeMsgs(flows)
	var at []time.Duration
	for _, m := range got {
		at = append(at, m.At)
	}
	if want := []time.Duration{5, 10, 30, 31, 35, 50}; !slicesEqual(at, want) {
		t.Fatalf("order %v, want %v", at, want)
	}
	if got[4].ReplyTo != 1 || got[5].ReplyTo != 2 || got[0].ReplyTo != -1 {
		t.Errorf("replies %+v", got)
	}
}

func slicesEqual[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
