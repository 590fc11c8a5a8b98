package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// lpictl runs the command line in-process and returns its exit status and output.
func lpictl(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestVersion(t *testing.T) {
	code, out, _ := lpictl(t, "version")
	if code != 0 || !strings.HasPrefix(out, "lpictl dev (commit unknown, go1.") {
		t.Errorf("version: %d %q", code, out)
	}
}

func TestPredictShippedConfigs(t *testing.T) {
	gaps := "../../configs/predict/gaps-demo.txt"
	for _, cfg := range []string{"fixed", "perfbound", "perfboundcorrect"} {
		code, out, errs := lpictl(t, "predict", "--json", "-c", "../../configs/predict/"+cfg+".yaml", gaps)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", cfg, code, errs)
		}
		var s predictSummary
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatalf("%s: %v\n%s", cfg, err, out)
		}
		if s.IdlePeriods != 2907 || s.Hits+s.Misses != s.IdlePeriods || string(s.Predictor) != cfg ||
			s.AsleepShare <= 0 || s.AsleepShare >= 1 || s.WakeTimeS != 4.48e-6 {
			t.Errorf("%s: implausible summary %+v", cfg, s)
		}
	}
}

func TestPredictDeterministicAndTrace(t *testing.T) {
	gaps := writeFile(t, "g.txt", "1us\n20us\n3us\n300us\n2us\n")
	_, a, _ := lpictl(t, "predict", "--json", gaps)
	_, b, _ := lpictl(t, "predict", "--json", gaps)
	if a != b || a == "" {
		t.Errorf("two runs differ:\n%s\n%s", a, b)
	}
	code, out, _ := lpictl(t, "predict", "--trace", "--predictor", "fixed", "--pdt", "10us", gaps)
	if code != 0 || strings.Count(out, " miss ") != 2 || strings.Count(out, " hit ") != 3 {
		t.Errorf("trace: exit %d\n%s", code, out)
	}
}

func TestPredictStdinAndFlagsOverFile(t *testing.T) {
	cfg := writeFile(t, "p.yaml", "predictor:\n  kind: fixed\n  pdt: 1ms\n")
	gaps := writeFile(t, "g.txt", "5us\n")
	_, out, _ := lpictl(t, "predict", "--json", "-c", cfg, "--pdt", "1us", gaps)
	if !strings.Contains(out, `"misses": 1`) {
		t.Errorf("--pdt did not override the file: %s", out)
	}
	_, out, _ = lpictl(t, "predict", "--json", "-c", cfg, "--set", "predictor.pdt=2us", gaps)
	if !strings.Contains(out, `"pdt_max_s": 0.000002`) {
		t.Errorf("--set did not override the file: %s", out)
	}
}

func TestPredictBadInput(t *testing.T) {
	gaps := writeFile(t, "g.txt", "1us\n2us\n")
	badGaps := writeFile(t, "bad.txt", "1us\n-3us\n")
	junkGaps := writeFile(t, "junk.txt", "1us\n\nquick\n")
	unknownKey := writeFile(t, "k.yaml", "predictor:\n  kind: perfbound\n  histogram:\n    bins: 3\n")
	badType := writeFile(t, "t.yaml", "predictor:\n  bound: lots\n")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown predictor", []string{"predict", "--predictor", "oracle", gaps}, `--predictor: unknown predictor "oracle"`},
		{"unknown predictor in file", []string{"predict", "--set", "predictor.kind=oracle", gaps}, `predictor.kind: unknown predictor "oracle"`},
		{"negative duration flag", []string{"predict", "--pdt", "-1us", "--predictor", "fixed", gaps}, `--pdt: negative duration "-1us"`},
		{"unparseable duration flag", []string{"predict", "--wake-time", "soon", gaps}, `--wake-time: invalid duration "soon"`},
		{"negative gap", []string{"predict", badGaps}, "bad.txt:2: negative duration"},
		{"unparseable gap", []string{"predict", junkGaps}, `junk.txt:3: invalid duration "quick"`},
		{"unknown YAML key", []string{"predict", "-c", unknownKey, gaps}, `k.yaml: line 4: unknown key "predictor.histogram.bins"`},
		{"YAML type error", []string{"predict", "-c", badType, gaps}, "t.yaml: line 2: cannot unmarshal"},
		{"missing gap file", []string{"predict", filepath.Join(t.TempDir(), "none.txt")}, "none.txt: no such file"},
		{"missing config", []string{"predict", "-c", "/nonexistent/p.yaml", gaps}, "/nonexistent/p.yaml: no such file"},
		{"no file", []string{"predict"}, "want exactly one FILE"},
		{"unknown flag", []string{"predict", "--bogus", gaps}, "unknown flag: --bogus"},
		{"always-on", []string{"predict", "--mode", "always-on", gaps}, "mode: always-on never sleeps"},
		{"unknown preset", []string{"predict", "--preset", "eee-9000g", gaps}, `unknown power preset "eee-9000g"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := lpictl(t, tc.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", code, errs)
			}
			if !strings.Contains(errs, tc.want) {
				t.Errorf("stderr %q, want it to contain %q", errs, tc.want)
			}
			if n := strings.Count(strings.TrimRight(errs, "\n"), "\n"); n != 0 {
				t.Errorf("error is %d lines, want one: %q", n+1, errs)
			}
			if out != "" {
				t.Errorf("stdout not empty on error: %q", out)
			}
		})
	}
}
