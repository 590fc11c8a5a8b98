package hil

import (
	"bytes"
	"errors"
	"io"
	"slices"
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
	if nodes, err := WriteVEF(&b, handMsgs); err != nil || !slices.Equal(nodes, []int{0, 1}) {
		t.Fatal(nodes, err)
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
	if _, err := WriteVEF(&b, []Msg{{Src: 0, Dst: 1, Bytes: 1, ReplyTo: -1}}); err != nil || !strings.HasPrefix(b.String(), "VEF 2 1 1 0 0 TRUE\n") {
		t.Errorf("%v %q", err, b.String())
	}
	if _, err := WriteVEF(io.Discard, []Msg{{Src: 0, Dst: 1, Bytes: 1, ReplyTo: 0}}); err == nil {
		t.Error("a reply to itself accepted")
	}
	if _, err := WriteVEF(io.Discard, []Msg{{Src: 2, Dst: 1, Bytes: 1, ReplyTo: -1}}); err == nil {
		t.Error("a third host accepted")
	}
}

// TestWriteVEFSenders: each sender is a task on its host, numbered after
// the hosts' kernels (tasks 0 and 1) in order of first message; a message
// goes to its sender's task on the other host (a probe's responder, which
// waits for the request) where there is one, else to that host's kernel.
func TestWriteVEFSenders(t *testing.T) {
	msgs := []Msg{
		{Src: 0, Dst: 1, Sender: 1, Bytes: 106, At: 10 * us, ReplyTo: -1},      // flow 0's request: task 2 on a
		{Src: 1, Dst: 0, Sender: 1, Bytes: 106, At: 0, ReplyTo: 0, Delay: 500}, // its response: task 3 on b
		{Src: 0, Dst: 1, Sender: 0, Bytes: 66, At: 11 * us, ReplyTo: -1},       // a captured frame: task 0
		{Src: 0, Dst: 1, Sender: 2, Bytes: 512, At: 12 * us, ReplyTo: -1},      // flow 1 from a: task 4
		{Src: 0, Dst: 1, Sender: 1, Bytes: 106, At: 20 * us, ReplyTo: -1},      // flow 0 again: task 2
	}
	var b bytes.Buffer
	nodes, err := WriteVEF(&b, msgs)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(nodes, []int{0, 1, 0, 1, 0}) {
		t.Errorf("nodes %v", nodes)
	}
	want := `VEF 5 5 1 0 0 FALSE
C0 0 1 2 3 4
0 2 3 106 0 10000 -1
1 3 2 106 2 500 0
2 0 1 66 0 11000 -1
3 4 1 512 0 12000 -1
4 2 3 106 0 20000 -1
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	if got := string(mappingFile(nodes)); got != "0\n1\n0\n1\n0\n" {
		t.Errorf("mapping %q", got)
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
