package vef

import (
	"bytes"
	"errors"
	"fmt"
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
		{"missing comm", "VEF 2 1 2 0 0 TRUE\nC0 0 1\n", "t.vef:1: header says 2 communicators, the trace ends after 1"},
		{"world", "VEF 3 0 1 0 0 TRUE\nC0 0 1\n", "t.vef:2: C0 must be the world"},
		{"comm task", "VEF 2 0 1 0 0 TRUE\nC0 0 5\n", "t.vef:2: task 5 out of range"},
		{"too few messages", hdr, "t.vef:1: header says 1 point-to-point messages, the trace has 0"},
		{"too many messages", hdr + "0 0 1 8 0 0 -1\n1 0 1 8 0 0 -1\n", "t.vef:4: more point-to-point messages"},
		{"id order", hdr + "1 0 1 8 0 0 -1\n", "t.vef:3: message id 1 out of order"},
		{"rank range", hdr + "0 0 2 8 0 0 -1\n", "t.vef:3: destination task 2 out of range [0, 1]"},
		{"malformed size", hdr + "0 0 1 8k 0 0 -1\n", "t.vef:3: malformed size \"8k\""},
		{"malformed time", hdr + "0 0 1 8 0 1e3 -1\n", "t.vef:3: malformed time"},
		{"negative time", hdr + "0 0 1 8 0 -5 -1\n", "t.vef:3: malformed time"},
		{"dep kind", hdr + "0 0 1 8 4 0 -1\n", "t.vef:3: unknown dependency kind 4"},
		{"dep0 iddep", hdr + "0 0 1 8 0 0 3\n", "t.vef:3: independent record (dependency 0) wants iddep -1"},
		{"dangling", hdr + "0 0 1 8 1 0 7\n", "t.vef:3: dangling dependency: message 7"},
		{"self", hdr + "0 0 1 8 2 0 0\n", "t.vef:3: cyclic dependency: message 0 depends on itself"},
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
		{"coll dep not member", "VEF 3 1 2 1 2 TRUE\nC0 0 1 2\nC1 0 1\nG0 1 6 0 0 0 0 0 -1\nG0 1 6 1 0 0 0 0 -1\n0 2 1 8 3 0 G0\n", "t.vef:6: task 2 depends on collective G0 but has no record in it"},
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
	// Forward references (item 13), a cycle through a collective (15), a
	// foreign receive (16), a wrong header count (17).
	f.Add(forwardColl())
	f.Add("VEF 2 2 1 0 0 FALSE\nC0 0 1\n0 0 1 8 2 0 1\n1 1 0 8 0 0 -1\n")
	f.Add("VEF 2 1 1 1 2 TRUE\nC0 0 1\nG0 0 6 0 0 0 0 0 -1\n0 1 0 8 3 0 G0\nG0 0 6 1 0 0 0 0 -1\n")
	f.Add("VEF 2 1 1 1 2 FALSE\nC0 0 1\nG0 0 6 0 0 0 0 0 -1\n0 0 1 64 3 0 G0\nG0 0 6 1 0 0 2 0 0\n")
	f.Add("VEF 2 2 1 0 0 FALSE\nC0 0 1\n0 0 1 64 0 0 -1\n1 0 1 64 2 0 0\n")
	f.Add("VEF 2 3 1 0 0 TRUE\nC0 0 1\n0 0 1 64 0 0 -1\n")
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

func readAllWindow(t testing.TB, text string, window int64) ([]Record, error) {
	r, err := NewReader(strings.NewReader(text), "t.vef", ReaderOptions{Window: window})
	if err != nil {
		return nil, err
	}
	var recs []Record
	for {
		var rec Record
		err := r.Next(&rec)
		if errors.Is(err, io.EOF) {
			return recs, nil
		}
		if err != nil {
			return recs, err
		}
		recs = append(recs, rec)
	}
}

// forwardColl is item 13's layout: a point-to-point block whose first
// record (line 3) depends on G7, then the collective block defining G0…G7.
func forwardColl() string {
	var b strings.Builder
	b.WriteString("VEF 8 2 1 8 64 FALSE\nC0 0 1 2 3 4 5 6 7\n0 0 7 65536 3 100 G7\n1 7 0 8 2 0 0\n")
	for g := 0; g < 8; g++ {
		for t := 0; t < 8; t++ {
			fmt.Fprintf(&b, "G%d 0 6 %d 0 0 0 0 -1\n", g, t)
		}
	}
	return b.String()
}

// TestVEFForwardCollectiveReference: docs/model.md §5 does not order records by
// their dependencies, so a reference to a record later in the file is
// resolved when that record comes (item 13); references that never
// resolve, or resolve wrongly, are reported at the referencing line.
func TestVEFForwardCollectiveReference(t *testing.T) {
	tests := []struct {
		name   string
		text   string
		window int64
		want   string // "" = valid
	}{
		{"p2p block then collectives", forwardColl(), 0, ""},
		{"message ahead", "VEF 2 2 1 0 0 FALSE\nC0 0 1\n0 0 1 8 2 0 1\n1 1 0 8 0 0 -1\n", 0, ""},
		{"send ahead", "VEF 2 2 1 0 0 TRUE\nC0 0 1\n0 0 1 8 1 0 1\n1 1 0 8 0 0 -1\n", 0, ""},
		{"collective record ahead", "VEF 2 1 1 1 2 TRUE\nC0 0 1\nG0 0 6 0 0 0 1 0 0\nG0 0 6 1 0 0 0 0 -1\n0 0 1 8 0 0 -1\n", 0, ""},
		{"started operation, member later", "VEF 2 1 1 1 2 TRUE\nC0 0 1\nG0 0 6 0 0 0 0 0 -1\n0 1 0 8 3 0 G0\nG0 0 6 1 0 0 0 0 -1\n", 0, ""},
		{"within the window", "VEF 2 3 1 1 2 TRUE\nC0 0 1\n0 0 1 8 3 0 G0\n1 0 1 8 0 0 -1\nG0 0 6 0 0 0 0 0 -1\nG0 0 6 1 0 0 0 0 -1\n2 0 1 8 0 0 -1\n", 2, ""},
		{"dangling collective", "VEF 2 1 1 2 2 TRUE\nC0 0 1\n0 0 1 8 3 0 G1\nG0 0 6 0 0 0 0 0 -1\nG0 0 6 1 0 0 0 0 -1\n",
			0, "t.vef:3: dangling dependency: task 0's record in collective G1 never comes in the trace"},
		{"dangling message", "VEF 2 3 1 0 0 TRUE\nC0 0 1\n0 0 1 8 1 0 2\n1 0 1 8 0 0 -1\n",
			0, "t.vef:3: dangling dependency: message 2 never comes in the trace"},
		{"not a member, operation later", "VEF 3 1 2 1 2 TRUE\nC0 0 1 2\nC1 0 1\n0 2 1 8 3 0 G0\nG0 1 6 0 0 0 0 0 -1\nG0 1 6 1 0 0 0 0 -1\n",
			0, "t.vef:4: task 2 depends on collective G0, which it is not part of (G0 is on C1)"},
		{"not a member, operation started", "VEF 3 1 2 1 2 TRUE\nC0 0 1 2\nC1 0 1\nG0 1 6 0 0 0 0 0 -1\n0 2 1 8 3 0 G0\nG0 1 6 1 0 0 0 0 -1\n",
			0, "t.vef:5: task 2 depends on collective G0, which it is not part of (G0 is on C1)"},
		{"message beyond the window", "VEF 2 4 1 0 0 TRUE\nC0 0 1\n0 0 1 8 1 0 3\n1 0 1 8 0 0 -1\n2 0 1 8 0 0 -1\n3 0 1 8 0 0 -1\n",
			2, "t.vef:3: dependency on message 3 reaches 3 messages ahead, beyond the replay window of 2"},
		{"collective beyond the window", "VEF 2 3 1 1 2 TRUE\nC0 0 1\n0 0 1 8 3 0 G0\n1 0 1 8 0 0 -1\n2 0 1 8 0 0 -1\nG0 0 6 0 0 0 0 0 -1\nG0 0 6 1 0 0 0 0 -1\n",
			2, "t.vef:3: dependency on collective G0: task 0's record in it does not come within the replay window of 2 messages"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			recs, err := readAllWindow(t, tc.text, tc.window)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if len(recs) == 0 {
					t.Fatal("no records")
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("got  %v\nwant %s…", err, tc.want)
			}
		})
	}
}

// TestVEFReceiveDependencyIsOwn: a task can only wait (dependency 2) for a
// message it receives (item 16); a message's sender, or a third task,
// depending on its receipt is rejected at the dependent record's line,
// whether the message comes before or after it.
func TestVEFReceiveDependencyIsOwn(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"own receive", "VEF 3 2 1 0 0 FALSE\nC0 0 1 2\n0 0 1 8 0 0 -1\n1 1 2 8 2 0 0\n", ""},
		{"self message", "VEF 3 2 1 0 0 FALSE\nC0 0 1 2\n0 1 1 8 0 0 -1\n1 1 2 8 2 0 0\n", ""},
		{"collective after own receive", "VEF 2 1 1 1 2 FALSE\nC0 0 1\n0 0 1 8 0 0 -1\nG0 0 6 0 0 0 0 0 -1\nG0 0 6 1 0 0 2 0 0\n", ""},
		{"sender waits for its receipt", "VEF 2 2 1 0 0 FALSE\nC0 0 1\n0 0 1 64 0 0 -1\n1 0 1 64 2 0 0\n",
			"t.vef:4: task 0 depends on the receipt of message 0, which task 1 receives (a task can only wait for its own receives)"},
		{"third task", "VEF 3 2 1 0 0 FALSE\nC0 0 1 2\n0 0 1 8 0 0 -1\n1 2 0 8 2 0 0\n",
			"t.vef:4: task 2 depends on the receipt of message 0, which task 1 receives"},
		{"collective record", "VEF 2 1 1 1 2 FALSE\nC0 0 1\n0 0 1 8 0 0 -1\nG0 0 6 0 0 0 2 0 0\nG0 0 6 1 0 0 0 0 -1\n",
			"t.vef:4: task 0 depends on the receipt of message 0, which task 1 receives"},
		{"message ahead", "VEF 2 2 1 0 0 FALSE\nC0 0 1\n0 0 1 8 2 0 1\n1 0 1 8 0 0 -1\n",
			"t.vef:3: task 0 depends on the receipt of message 1, which task 1 receives"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, _, err := readAll(t, tc.text)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("got  %v\nwant %s…", err, tc.want)
			}
		})
	}
}

// TestVEFHeaderCountLine: a header count that the body does not match is
// reported at the header, line 1, not at the line after the end of the
// file (item 17); errors found in the body name their own line.
func TestVEFHeaderCountLine(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"messages", "VEF 2 3 1 0 0 TRUE\nC0 0 1\n0 0 1 64 0 0 -1\n", "t.vef:1: header says 3 point-to-point messages, the trace has 1"},
		{"messages, blank lines after", "VEF 2 3 1 0 0 TRUE\nC0 0 1\n0 0 1 64 0 0 -1\n\n\n", "t.vef:1: header says 3 point-to-point messages, the trace has 1"},
		{"collective records", "VEF 2 0 1 1 3 TRUE\nC0 0 1\nG0 0 6 0 0 0 0 0 -1\nG0 0 6 1 0 0 0 0 -1\n", "t.vef:1: header says 3 collective records, the trace has 2"},
		{"collective operations", "VEF 2 0 1 2 2 TRUE\nC0 0 1\nG0 0 6 0 0 0 0 0 -1\nG0 0 6 1 0 0 0 0 -1\n", "t.vef:1: header says 2 collective operations, the trace has 1"},
		{"communicators", "VEF 2 0 3 0 0 TRUE\nC0 0 1\nC1 0\n", "t.vef:1: header says 3 communicators, the trace ends after 2"},
		{"too many messages", "VEF 2 1 1 0 0 TRUE\nC0 0 1\n0 0 1 8 0 0 -1\n1 0 1 8 0 0 -1\n", "t.vef:4: more point-to-point messages than the header's 1"},
		{"incomplete collective", "VEF 2 0 1 1 1 TRUE\nC0 0 1\nG0 0 6 0 0 0 0 0 -1\n", "t.vef:3: collective G0 on C0 has 1 of its 2 records"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, _, err := readAll(t, tc.text)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("got  %v\nwant %s", err, tc.want)
			}
			var ve *Error
			if !errors.As(err, &ve) {
				t.Errorf("%T is not a *vef.Error", err)
			}
		})
	}
}
