package replay

import (
	"strings"
	"testing"
	"time"

	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/predictor"
)

// TestReplayInput: a gap file replays into a summary and a per-decision
// table; inputs without idle periods say why.
func TestReplayInput(t *testing.T) {
	newReplayer := func() *Replayer {
		pred, err := predictor.New(predictor.Config{Kind: predictor.KindFixed, PDT: ptr(predictor.Duration(time.Microsecond)), WakeTime: predictor.Duration(time.Microsecond)})
		if err != nil {
			t.Fatal(err)
		}
		port, err := controller.NewPort(controller.Config{}, pred, 0)
		if err != nil {
			t.Fatal(err)
		}
		return New(port, Timing{Wake: time.Microsecond})
	}
	var rows [][]string
	res, err := ReplayInput(strings.NewReader("500ns\n0\n3us\n"), "g.txt", newReplayer(), func(c ...string) { rows = append(rows, c) })
	if err != nil {
		t.Fatal(err)
	}
	s := NewSummary(predictor.KindFixed, Timing{Wake: time.Microsecond}, res)
	if s.IdlePeriods != 2 || s.ZeroGapsSkipped != 1 || s.Hits != 1 || s.Misses != 1 || len(rows) != 3 || rows[0][0] != "#" || rows[2][5] != "miss" {
		t.Errorf("summary %+v, rows %q", s, rows)
	}
	var out strings.Builder
	s.Print(&out)
	if !strings.Contains(out.String(), "hits / misses                 1 / 1") {
		t.Errorf("table:\n%s", out.String())
	}
	for in, want := range map[string]string{
		"# none\n":         "g.txt: no idle periods to replay: the gap file has no gaps",
		"0\n0\n":           "g.txt: no idle periods to replay: all 2 gaps are 0",
		TraceHeader + "\n": "g.txt: no idle periods to replay: the port trace has no rows",
	} {
		if _, err := ReplayInput(strings.NewReader(in), "g.txt", newReplayer(), nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// TestAgentTraceHeader: the agent's "# controller:" line counts only in
// the comment block before a port trace's header.
func TestAgentTraceHeader(t *testing.T) {
	ctl := "# controller: {}"
	for in, want := range map[string]bool{
		"\ufeff# port eth0\n" + ctl + "\n" + TraceHeader + "\n1,2\n": true,
		ctl + "\n1us\n":                    false, // a gap file
		TraceHeader + "\n" + ctl + "\n":    false, // among the rows
		"# nothing\n" + TraceHeader + "\n": false,
	} {
		line, ok := AgentTraceHeader([]byte(in))
		if ok != want || ok && string(line) != ctl {
			t.Errorf("%q: %q %v, want %v", in, line, ok, want)
		}
	}
}
