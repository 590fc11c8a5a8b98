package sched

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestParseGOAL checks a file against its reading by hand.
func TestParseGOAL(t *testing.T) {
	s := parseFile(t, "overlap.goal")
	want := &Schedule{File: "overlap.goal"}
	// rank 0: s, c, r; c irequires s (line 8), r requires c (line 9)
	s0 := want.Add(0, Op{Kind: Send, Peer: 1, Tag: 5, Bytes: 100000, Line: 5})
	c0 := want.Add(0, Op{Kind: Calc, Time: 3_000_000, Line: 6}, Dep{Op: s0, Start: true})
	want.Add(0, Op{Kind: Recv, Peer: 2, Tag: 0, Bytes: 8, Line: 7}, Dep{Op: c0})
	r1 := want.Add(1, Op{Kind: Recv, Peer: 0, Tag: 5, Bytes: 100000, Line: 12})
	want.Add(1, Op{Kind: Send, Peer: 2, Tag: 1, Bytes: 8, Line: 13}, Dep{Op: r1})
	r2 := want.Add(2, Op{Kind: Recv, Peer: 1, Tag: 1, Bytes: 8, Line: 18})
	c2 := want.Add(2, Op{Kind: Calc, Time: 500_000, Line: 19}, Dep{Op: r2})
	want.Add(2, Op{Kind: Send, Peer: 0, Tag: 0, Bytes: 8, Line: 20}, Dep{Op: c2})
	want.Ranks[0].Labels = map[uint32]string{0: "s", 1: "c", 2: "r"}
	want.Ranks[1].Labels = map[uint32]string{0: "r", 1: "s"}
	want.Ranks[2].Labels = map[uint32]string{0: "r", 1: "c", 2: "s"}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("parsed\n%+v\nwant\n%+v", s, want)
	}

	// Wildcards, defaults (tag 0), unlabelled ops, "8 b", "l1 :", ops
	// after "{" and before "}" on one line, cpu/nic ignored.
	s = parseText(t, "num_ranks 2 // two\nrank 1 { l1 : recv 8 b from -1 tag -1 cpu 2 nic 1\n calc 7 cpu 1 }\nrank 0 {\nsend 4b to 1\n}")
	want = &Schedule{File: "t.goal", Ranks: make([]Rank, 2)}
	want.Add(0, Op{Kind: Send, Peer: 1, Bytes: 4, Line: 5})
	want.Add(1, Op{Kind: Recv, Peer: AnySource, Tag: AnyTag, Bytes: 8, Line: 2})
	want.Add(1, Op{Kind: Calc, Time: 7000, Line: 3})
	want.Ranks[1].Labels = map[uint32]string{0: "l1"}
	for r := range want.Ranks {
		if want.Ranks[r].Deps == nil {
			want.Ranks[r].Deps = []Dep{}
		}
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("parsed\n%+v\nwant\n%+v", s, want)
	}
}

// TestParseGOALErrors: each error is one line naming the file, the line
// and the token or label.
func TestParseGOALErrors(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"no num_ranks", "rank 0 {\n}\n", `x.goal:1: "rank" before "num_ranks"`},
		{"empty", "// nothing\n", `x.goal: no "num_ranks N" line`},
		{"num_ranks zero", "num_ranks 0\n", `x.goal:1: num_ranks "0": out of range`},
		{"num_ranks twice", "num_ranks 2\nnum_ranks 2\n", `x.goal:2: "num_ranks" given twice`},
		{"rank out of range", "num_ranks 2\nrank 2 {\n}\n", `x.goal:2: rank "2": out of range [0, 1]`},
		{"rank twice", "num_ranks 2\nrank 1 {\n}\nrank 1 {\n}\n", `x.goal:4: rank 1: a second block`},
		{"no brace", "num_ranks 2\nrank 1\n", `x.goal:2: expected "{", got the end of the line`},
		{"unclosed", "num_ranks 2\nrank 1 {\nl1: calc 5\n", `x.goal:3: rank 1 block opened at line 2 is not closed`},
		{"nested", "num_ranks 2\nrank 1 {\nrank 0 {\n", `x.goal:3: "rank" inside the rank 1 block`},
		{"stray brace", "num_ranks 2\n}\n", `x.goal:2: "}" outside a rank block`},
		{"op outside", "num_ranks 2\nl1: calc 5\n", `x.goal:2: "l1" outside a rank block`},
		{"unlabelled op outside", "num_ranks 2\ncalc 5\n", `x.goal:2: operation outside a rank block`},
		{"size unit", "num_ranks 2\nrank 0 {\nl1: send 8kb to 1\n}\n", `x.goal:3: expected "b", got "kb"`},
		{"send from", "num_ranks 2\nrank 0 {\nl1: send 8b from 1\n}\n", `x.goal:3: expected "to", got "from"`},
		{"send any", "num_ranks 2\nrank 0 {\nl1: send 8b to -1\n}\n", `x.goal:3: rank "-1": out of range`},
		{"send any tag", "num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag -1\n}\n", `x.goal:3: tag "-1": out of range`},
		{"peer out of range", "num_ranks 2\nrank 0 {\nl1: send 8b to 2\n}\n", `x.goal:3: rank 0: send to rank 2: out of range [0, 2)`},
		{"recv -2", "num_ranks 2\nrank 0 {\nl1: recv 8b from -2\n}\n", `x.goal:3: rank "-2": out of range [-1,`},
		{"huge size", "num_ranks 2\nrank 0 {\nl1: send 99999999999999999999b to 1\n}\n", `x.goal:3: size "99999999999999999999": out of range`},
		{"huge calc", "num_ranks 2\nrank 0 {\nl1: calc 9223372036854776\n}\n", `x.goal:3: calc time (ns) "9223372036854776": out of range`},
		{"trailing", "num_ranks 2\nrank 0 {\nl1: calc 5 6\n}\n", `x.goal:3: unexpected "6" at the end of the operation`},
		{"unknown op", "num_ranks 2\nrank 0 {\nl1: put 5\n}\n", `x.goal:3: expected "send", "recv" or "calc", got "put"`},
		{"bad char", "num_ranks 2\nrank 0 {\nl1: calc 5;\n}\n", `x.goal:3: unexpected character ';'`},
		{"duplicate label", "num_ranks 2\nrank 0 {\nl1: calc 5\nl1: calc 6\n}\n", `x.goal:4: label "l1" defined twice in rank 0`},
		{"undefined label", "num_ranks 2\nrank 0 {\nl1: calc 5\nl1 requires l9\n}\n", `x.goal:4: rank 0: label "l9" is not defined in the block`},
		{"label of another block", "num_ranks 2\nrank 0 {\nl1: calc 5\n}\nrank 1 {\nl2: calc 5\nl2 requires l1\n}\n", `x.goal:7: rank 1: label "l1" is not defined`},
		{"dependency verb", "num_ranks 2\nrank 0 {\nl1: calc 5\nl1 needs l1\n}\n", `x.goal:4: expected ":", "requires" or "irequires" after "l1", got "needs"`},
		{"dependency trailing", "num_ranks 2\nrank 0 {\nl1: calc 5\nl2: calc 5\nl1 requires l2 l2\n}\n", `x.goal:5: unexpected "l2" after the dependency`},
		{"self dependency", "num_ranks 2\nrank 0 {\nl1: calc 5\nl1 requires l1\n}\n", `x.goal:3: rank 0: depends on itself`},
		{"cycle", "num_ranks 2\nrank 0 {\na: calc 5\nb: calc 5\nc: calc 5\nb requires a\nc requires b\na irequires c\n}\n",
			`x.goal:3: rank 0: dependency cycle: op a (line 3) requires op c (line 5) requires op b (line 4) requires op a (line 3)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseGOAL(strings.NewReader(tt.text), "x.goal")
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error\n%q\nwant prefix\n%q", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q is more than one line", err)
			}
			var se *Error
			if !errors.As(err, &se) {
				t.Errorf("error %T is not a *sched.Error", err)
			}
		})
	}
}

// TestValidate checks schedules built in memory (no lines: "rank R op I").
func TestValidate(t *testing.T) {
	tests := []struct {
		name  string
		build func(s *Schedule)
		want  string
	}{
		{"peer", func(s *Schedule) { s.Add(0, Op{Kind: Send, Peer: 3}) }, "sched: rank 0 op 0: send to rank 3: out of range [0, 1)"},
		{"recv peer", func(s *Schedule) { s.Add(0, Op{Kind: Recv, Peer: -2}) }, "sched: rank 0 op 0: recv from rank -2"},
		{"size", func(s *Schedule) { s.Add(0, Op{Kind: Send, Bytes: -1}) }, "sched: rank 0 op 0: send size -1: negative"},
		{"time", func(s *Schedule) { s.Add(0, Op{Kind: Calc, Time: -1}) }, "sched: rank 0 op 0: calc time -1: negative"},
		{"kind", func(s *Schedule) { s.Add(0, Op{Kind: 7}) }, "sched: rank 0 op 0: unknown kind 7"},
		{"dep range", func(s *Schedule) { s.Add(0, Op{Kind: Calc}, Dep{Op: 4}) }, "sched: rank 0 op 0: dependency on op 4: the rank has 1 ops"},
		{"cycle", func(s *Schedule) {
			s.Add(0, Op{Kind: Calc})
			s.Add(0, Op{Kind: Calc}, Dep{Op: 2})
			s.Add(0, Op{Kind: Calc}, Dep{Op: 1, Start: true})
		}, "sched: rank 0 op 1: dependency cycle: op 1 requires op 2 requires op 1"},
		{"ok", func(s *Schedule) {
			a := s.Add(1, Op{Kind: Calc})
			s.Add(1, Op{Kind: Send, Peer: 0}, Dep{Op: a}, Dep{Op: a, Start: true})
			s.Add(0, Op{Kind: Recv, Peer: AnySource, Tag: AnyTag})
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Schedule
			tt.build(&s)
			err := s.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error %v, want prefix %q", err, tt.want)
			}
		})
	}
}

// TestValidateLongChain: a chain of a million ops validates without
// recursion; closing it into a cycle is found.
func TestValidateLongChain(t *testing.T) {
	var s Schedule
	const n = 1_000_000
	s.Add(0, Op{Kind: Calc})
	for i := 1; i < n; i++ {
		s.Add(0, Op{Kind: Calc}, Dep{Op: uint32(i - 1)})
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	// op 0 requires the last: one cycle through all
	s.Ranks[0].Deps = append(s.Ranks[0].Deps, Dep{Op: n - 1})
	s.Ranks[0].Ops[0].DepFrom, s.Ranks[0].Ops[0].DepTo = uint32(len(s.Ranks[0].Deps)-1), uint32(len(s.Ranks[0].Deps))
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "dependency cycle: op 0 requires op 999999 requires") {
		t.Errorf("error %.200v, want a cycle from op 0", err)
	}
}

func stripLines(s *Schedule) {
	s.File = ""
	for r := range s.Ranks {
		for i := range s.Ranks[r].Ops {
			s.Ranks[r].Ops[i].Line = 0
		}
		s.Ranks[r].Labels = nil // names, as lines are (WriteGOAL writes its own)
		if len(s.Ranks[r].Deps) == 0 {
			s.Ranks[r].Deps = nil
		}
		if len(s.Ranks[r].Ops) == 0 {
			s.Ranks[r].Ops = nil
		}
	}
}

// TestGOALRoundTrip: ParseGOAL(WriteGOAL(s)) has s's ops and dependencies,
// and writing is deterministic (the golden file).
func TestGOALRoundTrip(t *testing.T) {
	for _, name := range []string{"pingpong.goal", "overlap.goal", "waitall.goal", "anysource.goal", "bcast8.goal"} {
		t.Run(name, func(t *testing.T) {
			s := parseFile(t, name)
			var buf bytes.Buffer
			if err := WriteGOAL(&buf, s); err != nil {
				t.Fatal(err)
			}
			back, err := ParseGOAL(bytes.NewReader(buf.Bytes()), "written")
			if err != nil {
				t.Fatalf("%v\n%s", err, buf.Bytes())
			}
			stripLines(s)
			stripLines(back)
			if !reflect.DeepEqual(s, back) {
				t.Errorf("round trip\n%+v\nwant\n%+v", back, s)
			}
		})
	}
	// An in-memory schedule with an empty rank and deps out of order.
	var s Schedule
	s.Ranks = make([]Rank, 3)
	c := s.Add(2, Op{Kind: Calc, Time: 5000})
	r := s.Add(2, Op{Kind: Recv, Peer: AnySource, Tag: 4, Bytes: 3})
	s.Add(2, Op{Kind: Send, Peer: 0, Tag: 1, Bytes: 1 << 40}, Dep{Op: r}, Dep{Op: c, Start: true})
	s.Add(0, Op{Kind: Recv, Peer: 2, Tag: AnyTag, Bytes: 1 << 40})
	var buf bytes.Buffer
	if err := WriteGOAL(&buf, &s); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "written.goal")
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("WriteGOAL:\n%s\nwant (%s):\n%s", buf.Bytes(), golden, want)
	}
	back, err := ParseGOAL(&buf, "")
	if err != nil {
		t.Fatal(err)
	}
	stripLines(&s)
	stripLines(back)
	if !reflect.DeepEqual(&s, back) {
		t.Errorf("round trip\n%+v\nwant\n%+v", back, &s)
	}
	// A calc that is not a whole number of ns cannot be written.
	var bad Schedule
	bad.Add(0, Op{Kind: Calc, Time: 1500})
	if err := WriteGOAL(&bytes.Buffer{}, &bad); err == nil || !strings.Contains(err.Error(), "calc time 1500 ps is not a whole number of ns") {
		t.Errorf("error %v", err)
	}
}

func FuzzParseGOAL(f *testing.F) {
	for _, name := range []string{"pingpong.goal", "overlap.goal", "waitall.goal", "anysource.goal", "bcast8.goal", "written.goal"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("num_ranks 1\nrank 0 { a: calc 1 }\n/* open"))
	f.Add([]byte("num_ranks 2\nrank 0 {\nb requires a\na: send 1b to 1 tag 2\nb: calc 3\n}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseGOAL(bytes.NewReader(data), "fuzz")
		s2, err2 := ParseGOAL(bytes.NewReader(data), "fuzz")
		if (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) || !reflect.DeepEqual(s, s2) {
			t.Fatalf("not deterministic: %v / %v", err, err2)
		}
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of more than one line: %q", err)
			}
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("parsed but does not validate: %v", err)
		}
		var buf bytes.Buffer
		if err := WriteGOAL(&buf, s); err != nil {
			t.Fatalf("WriteGOAL: %v", err)
		}
		back, err := ParseGOAL(&buf, "again")
		if err != nil {
			t.Fatalf("written schedule does not parse: %v", err)
		}
		stripLines(s)
		stripLines(back)
		if !reflect.DeepEqual(s, back) {
			t.Fatalf("round trip differs")
		}
	})
}
