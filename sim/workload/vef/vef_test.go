package vef

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

const sample = `VEF 4 5 2 2 6 FALSE
C0 0 1 2 3
C1 1 3
0 0 1 1024 0 0 -1
1 1 2 2048 2 1500.5 0
G0 1 2 1 8 8 1 10 1
G0 1 2 3 8 8 0 2000 -1
2 3 0 64 3 0.25 G0
G1 0 6 0 0 0 1 0 0
G1 0 6 1 0 0 3 5 G0
G1 0 6 2 0 0 2 3 1
3 2 3 4096 3 0 G1
G1 0 6 3 0 0 3 1 G0
4 0 1 0 1 7 0
`

func readAll(t testing.TB, text string) (Header, [][]int32, []Record, error) {
	r, err := NewReader(strings.NewReader(text), "t.vef", ReaderOptions{})
	if err != nil {
		return Header{}, nil, nil, err
	}
	var recs []Record
	for {
		var rec Record
		err := r.Next(&rec)
		if errors.Is(err, io.EOF) {
			return r.Header(), r.Comms(), recs, nil
		}
		if err != nil {
			return r.Header(), nil, recs, err
		}
		recs = append(recs, rec)
	}
}

type sliceSource struct {
	tasks int
	comms [][]int32
	recs  []Record
	i     int
}

func (s *sliceSource) Tasks() int       { return s.tasks }
func (s *sliceSource) Comms() [][]int32 { return s.comms }
func (s *sliceSource) Next(r *Record) error {
	if s.i == len(s.recs) {
		return io.EOF
	}
	*r = s.recs[s.i]
	s.i++
	return nil
}

func TestReadSample(t *testing.T) {
	h, comms, recs, err := readAll(t, sample)
	if err != nil {
		t.Fatal(err)
	}
	if h.Tasks != 4 || h.Messages != 5 || h.Comms != 2 || h.CollOps != 2 || h.CollRecords != 6 || h.OnlySend {
		t.Errorf("header %+v", h)
	}
	if len(comms) != 2 || len(comms[1]) != 2 || comms[1][1] != 3 {
		t.Errorf("comms %v", comms)
	}
	if len(recs) != 11 {
		t.Fatalf("%d records", len(recs))
	}
	if r := recs[1]; r.Dep != DepRecv || r.Time != 1500500 || r.DepID != 0 {
		t.Errorf("record 1: %+v", r)
	}
	if r := recs[4]; r.Dep != DepColl || r.DepID != 0 || r.Time != 250 {
		t.Errorf("record 4: %+v", r)
	}
}

// TestRoundTrip: read → write gives the canonical text; write → read →
// write is byte-identical.
func TestRoundTrip(t *testing.T) {
	h, comms, recs, err := readAll(t, sample)
	if err != nil {
		t.Fatal(err)
	}
	write := func(h Header, comms [][]int32, recs []Record) []byte {
		var b bytes.Buffer
		if _, err := WriteAll(&b, func() (Source, error) {
			return &sliceSource{tasks: h.Tasks, comms: comms, recs: recs}, nil
		}); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	first := write(h, comms, recs)
	if string(first) != sample {
		t.Errorf("canonical form differs:\n%s\nwant\n%s", first, sample)
	}
	h2, comms2, recs2, err := readAll(t, string(first))
	if err != nil {
		t.Fatal(err)
	}
	if second := write(h2, comms2, recs2); !bytes.Equal(first, second) {
		t.Error("write → read → write is not byte-identical")
	}
}

func TestAppendTime(t *testing.T) {
	for ps, want := range map[int64]string{0: "0", 1000: "1", 1500: "1.5", 1250: "1.25", 1001: "1.001", 20: "0.02", 123456789: "123456.789"} {
		if got := string(AppendTime(nil, ps)); got != want {
			t.Errorf("%d: %q, want %q", ps, got, want)
		}
		back, ok := parseTime([]byte(want))
		if !ok || back != ps {
			t.Errorf("parseTime(%q) = %d %v", want, back, ok)
		}
	}
}

func TestBadTraces(t *testing.T) {
	hdr := "VEF 2 1 1 0 0 TRUE\nC0 0 1\n"
	tests := []struct{ name, text, want string }{
		{"empty", "", "t.vef:1: empty trace"},
		{"magic", "VEX 2 1 1 0 0 TRUE\n", "t.vef:1: want header"},
		{"header fields", "VEF 2 1 1 0 TRUE\n", "t.vef:1: header has 6 fields"},
		{"header number", "VEF 2 x 1 0 0 TRUE\n", "t.vef:1: malformed message count"},
		{"onlysend", "VEF 2 1 1 0 0 MAYBE\n", "t.vef:1: malformed onlySend"},
		{"missing comm", "VEF 2 1 2 0 0 TRUE\nC0 0 1\n", "t.vef:3: trace ends after 1 of 2 communicators"},
		{"world", "VEF 3 0 1 0 0 TRUE\nC0 0 1\n", "t.vef:2: C0 must be the world"},
		{"comm task", "VEF 2 0 1 0 0 TRUE\nC0 0 5\n", "t.vef:2: task 5 out of range"},
		{"too few messages", hdr, "t.vef:3: header says 1 point-to-point messages, the trace has 0"},
		{"too many messages", hdr + "0 0 1 8 0 0 -1\n1 0 1 8 0 0 -1\n", "t.vef:4: more point-to-point messages"},
		{"id order", hdr + "1 0 1 8 0 0 -1\n", "t.vef:3: message id 1 out of order"},
		{"rank range", hdr + "0 0 2 8 0 0 -1\n", "t.vef:3: destination task 2 out of range [0, 1]"},
		{"malformed size", hdr + "0 0 1 8k 0 0 -1\n", "t.vef:3: malformed size \"8k\""},
		{"malformed time", hdr + "0 0 1 8 0 1e3 -1\n", "t.vef:3: malformed time"},
		{"negative time", hdr + "0 0 1 8 0 -5 -1\n", "t.vef:3: malformed time"},
		{"dep kind", hdr + "0 0 1 8 4 0 -1\n", "t.vef:3: unknown dependency kind 4"},
		{"dep0 iddep", hdr + "0 0 1 8 0 0 3\n", "t.vef:3: independent record (dependency 0) wants iddep -1"},
		{"dangling", hdr + "0 0 1 8 1 0 7\n", "t.vef:3: dangling dependency: message 7"},
		{"cyclic", "VEF 2 2 1 0 0 TRUE\nC0 0 1\n0 0 1 8 1 0 1\n1 1 0 8 1 0 0\n", "t.vef:3: dependency on message 1, which is not earlier"},
		{"self", hdr + "0 0 1 8 2 0 0\n", "t.vef:3: dependency on message 0, which is not earlier"},
		{"fields", hdr + "0 0 1 8 0 0\n", "t.vef:3: point-to-point record has 6 fields"},
		{"unknown op", "VEF 2 0 1 1 2 TRUE\nC0 0 1\nG0 0 9 0 0 0 0 0 -1\n", "t.vef:3: unknown collective op 9"},
		{"coll comm", "VEF 2 0 1 1 2 TRUE\nC0 0 1\nG0 3 6 0 0 0 0 0 -1\n", "t.vef:3: communicator 3 out of range"},
		{"coll member", "VEF 3 0 2 1 1 TRUE\nC0 0 1 2\nC1 0 1\nG0 1 6 2 0 0 0 0 -1\n", "t.vef:4: task 2 is not in communicator C1"},
		{"coll twice", "VEF 2 0 1 1 2 TRUE\nC0 0 1\nG0 0 6 0 0 0 0 0 -1\nG0 0 6 0 0 0 0 0 -1\n", "t.vef:4: task 0 appears twice"},
		{"coll incomplete", "VEF 2 0 1 1 2 TRUE\nC0 0 1\nG0 0 6 0 0 0 0 0 -1\nG1 0 6 0 0 0 0 0 -1\n", "t.vef:4: more collective operations"},
		{"coll missing member", "VEF 2 0 1 1 1 TRUE\nC0 0 1\nG0 0 6 0 0 0 0 0 -1\n", "t.vef:3: collective G0 on C0 has 1 of its 2 records"},
		{"coll op mismatch", "VEF 2 0 1 1 2 TRUE\nC0 0 1\nG0 0 6 0 0 0 0 0 -1\nG0 0 5 1 0 0 0 0 -1\n", "t.vef:4: collective G0 was barrier on C0"},
		{"coll order", "VEF 2 0 1 2 4 TRUE\nC0 0 1\nG1 0 6 0 0 0 0 0 -1\n", "t.vef:3: collective G1 out of order"},
		{"coll self dep", "VEF 2 0 1 1 2 TRUE\nC0 0 1\nG0 0 6 0 0 0 3 0 G0\n", "t.vef:3: cyclic dependency: G0 depends on itself"},
		{"coll forward dep", "VEF 2 1 1 1 2 TRUE\nC0 0 1\n0 0 1 8 3 0 G0\nG0 0 6 0 0 0 0 0 -1\nG0 0 6 1 0 0 0 0 -1\n", "t.vef:3: dependency on collective G0, which is not earlier"},
		{"coll dep not member", "VEF 3 1 2 1 2 TRUE\nC0 0 1 2\nC1 0 1\nG0 1 6 0 0 0 0 0 -1\nG0 1 6 1 0 0 0 0 -1\n0 2 1 8 3 0 G0\n", "t.vef:6: task 2 depends on collective G0 but has no earlier record"},
		{"coll dangling", "VEF 2 1 1 0 0 TRUE\nC0 0 1\n0 0 1 8 3 0 G4\n", "t.vef:3: dangling dependency: collective G4"},
		{"allreduce sizes", "VEF 2 0 1 1 2 TRUE\nC0 0 1\nG0 0 2 0 8 4 0 0 -1\n", "t.vef:3: allreduce G0: send size 8 ≠ receive size 4"},
		{"two roots", "VEF 2 0 1 1 2 TRUE\nC0 0 1\nG0 0 0 0 8 0 0 0 -1\nG0 0 0 1 8 0 0 0 -1\n", "t.vef:4: bcast G0 has more than one root"},
		{"alltoall flag", "VEF 2 0 1 1 2 TRUE\nC0 0 1\nG0 0 7 0 8 2 0 0 -1\n", "t.vef:3: alltoall G0: receive field 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, _, err := readAll(t, tc.text)
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("got  %q\nwant %q…", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

func TestWindow(t *testing.T) {
	text := "VEF 2 3 1 0 0 TRUE\nC0 0 1\n0 0 1 8 0 0 -1\n1 0 1 8 0 0 -1\n2 0 1 8 1 0 0\n"
	r, err := NewReader(strings.NewReader(text), "w.vef", ReaderOptions{Window: 1})
	if err != nil {
		t.Fatal(err)
	}
	var rec Record
	for err == nil {
		err = r.Next(&rec)
	}
	if !strings.Contains(err.Error(), "w.vef:5: dependency on message 0 reaches back 2 messages, beyond the replay window of 1") {
		t.Errorf("got %v", err)
	}
}

func FuzzReader(f *testing.F) {
	f.Add(sample)
	f.Add("VEF 2 1 1 0 0 TRUE\nC0 0 1\n0 0 1 8 0 0 -1\n")
	f.Add("VEF 2 0 1 1 2 TRUE\nC0 0 1\nG0 0 7 0 8 1 0 0 -1\nG0 0 7 1 8 1 3 0 G0\n")
	f.Fuzz(func(t *testing.T, text string) {
		r, err := NewReader(strings.NewReader(text), "f.vef", ReaderOptions{Window: 64})
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		var recs []Record
		for {
			var rec Record
			err := r.Next(&rec)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				if !strings.HasPrefix(err.Error(), "f.vef:") {
					t.Fatalf("error without FILE:LINE: %q", err)
				}
				return
			}
			recs = append(recs, rec)
		}
		// A valid trace writes back and reads again to the same records.
		var b bytes.Buffer
		if _, err := WriteAll(&b, func() (Source, error) {
			return &sliceSource{tasks: r.Tasks(), comms: r.Comms(), recs: recs}, nil
		}); err != nil {
			t.Fatal(err)
		}
		_, _, recs2, err := readAll(t, b.String())
		if err != nil {
			t.Fatalf("rewritten trace does not read: %v\n%s", err, b.String())
		}
		if len(recs2) != len(recs) {
			t.Fatalf("%d records, then %d", len(recs), len(recs2))
		}
		for i := range recs {
			a, c := recs[i], recs2[i]
			a.Line, c.Line = 0, 0
			if a != c {
				t.Fatalf("record %d: %+v then %+v", i, a, c)
			}
		}
	})
}
