package replay

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/predictor"
)

const us = time.Microsecond

func fixedPort(t *testing.T, pdt time.Duration) *controller.Port {
	t.Helper()
	p, err := controller.NewPort(controller.Config{}, predictor.NewFixed(pdt), 0)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReplayTimerModel(t *testing.T) {
	r := New(fixedPort(t, 10*us), Timing{Wake: 4 * us, Sleep: 2 * us})
	want := []Step{
		{Index: 1, Start: 0, Gap: 5 * us, PDT: 10 * us},                                                    // hit
		{Index: 2, Start: 5 * us, Gap: 20 * us, PDT: 10 * us, Missed: true, Asleep: 8 * us, Delay: 4 * us}, // down at 12 µs
		{Index: 3, Start: 29 * us, Gap: 11 * us, PDT: 10 * us, Missed: true, Delay: 5 * us},                // still going down: 1 µs + t_w
		{Index: 4, Start: 45 * us, Gap: 10 * us, PDT: 10 * us},                                             // gap = t_PDT: hit
	}
	for i, g := range []time.Duration{5 * us, 20 * us, 11 * us, 10 * us} {
		if got := r.Gap(g); got != want[i] {
			t.Errorf("gap %d: %+v, want %+v", i, got, want[i])
		}
	}
	res := r.Result()
	if res.IdlePeriods != 4 || res.Hits != 2 || res.Misses != 2 || res.IdleTime != 46*us ||
		res.Asleep != 8*us || res.Delay != 9*us || res.MeanPDT != 10*us || r.Now() != 55*us {
		t.Errorf("result %+v now %v", res, r.Now())
	}
	if res.Port.Misses != 2 || res.Port.Hits != 2 {
		t.Errorf("port stats %+v", res.Port)
	}
}

func TestReplayInstantSleep(t *testing.T) {
	// t_s = 0: a miss sleeps gap − t_PDT and pays t_w (the plain model).
	r := New(fixedPort(t, 0), Timing{Wake: 3 * us})
	st := r.Gap(7 * us)
	if !st.Missed || st.Asleep != 7*us || st.Delay != 3*us {
		t.Errorf("%+v", st)
	}
}

func TestReadGaps(t *testing.T) {
	in := "# header\n12.5us\n\n3ms # trailing comment\n  2500  \n1s\n"
	var got []time.Duration
	var lines []int
	err := ReadGaps(strings.NewReader(in), "g.txt", func(line int, d time.Duration) error {
		got = append(got, d)
		lines = append(lines, line)
		return nil
	})
	want := []time.Duration{12500, 3 * time.Millisecond, 2500, time.Second}
	if err != nil || len(got) != len(want) {
		t.Fatalf("got %v, %v", got, err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("gap %d = %v, want %v", i, got[i], want[i])
		}
	}
	if lines[3] != 6 {
		t.Errorf("line numbers %v", lines)
	}
}

func TestReadGapsErrors(t *testing.T) {
	for in, want := range map[string]string{
		"1us\n-5us\n":              "g.txt:2: negative duration",
		"1us\n2us\nfast\n":         `g.txt:3: invalid duration "fast"`,
		strings.Repeat("9", 70000): "g.txt:1: line longer than",
	} {
		err := ReadGaps(strings.NewReader(in), "g.txt", func(int, time.Duration) error { return nil })
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadGaps(%.20q) = %v, want %q", in, err, want)
		}
	}
	stop := errors.New("stop")
	if err := ReadGaps(strings.NewReader("1\n2\n"), "x", func(int, time.Duration) error { return stop }); err != stop {
		t.Errorf("callback error not returned: %v", err)
	}
}

func FuzzReadGaps(f *testing.F) {
	for _, s := range []string{"12.5us\n3ms\n", "# c\n\n2500\n", "-1\n", "1e9\n1s#x\n", "\xff\xfe", "µs\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		r := New(fixedPort(t, us), Timing{Wake: us, Sleep: us})
		err := ReadGaps(strings.NewReader(in), "fuzz", func(_ int, d time.Duration) error {
			if d < 0 {
				t.Fatalf("negative gap %v accepted", d)
			}
			r.Gap(d)
			return nil
		})
		if err != nil && (!strings.HasPrefix(err.Error(), "fuzz:") || strings.Contains(err.Error(), "\n")) {
			t.Fatalf("error %q does not name the input on one line", err)
		}
	})
}
