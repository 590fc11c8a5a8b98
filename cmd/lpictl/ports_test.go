package main

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/hwlinktest"
)

// TestPortsCommandNetns runs `lpictl ports` inside a test namespace that
// holds one end of a veth pair.
func TestPortsCommandNetns(t *testing.T) {
	p := hwlinktest.NewPair(t)

	var out bytes.Buffer
	root := newRootCommand()
	root.SetOut(&out)
	root.SetArgs([]string{"ports", "--netns", p.PathA})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if len(lines) != 2 {
		t.Fatalf("want header and one port:\n%s", text)
	}
	for _, want := range []string{p.NameA, "veth", "10G", "up", "n/a", "no: ", "EOPNOTSUPP"} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("port line lacks %q:\n%s", want, text)
		}
	}

	out.Reset()
	root = newRootCommand()
	root.SetOut(&out)
	root.SetArgs([]string{"ports", "--json", "--netns", p.PathB})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	var ports []hwlink.PortInfo
	if err := json.Unmarshal(out.Bytes(), &ports); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if len(ports) != 1 {
		t.Fatalf("ports %+v", ports)
	}
	got := ports[0]
	if got.Name != p.NameB || got.Index != p.IndexB || got.Driver.Driver != "veth" || !got.Carrier ||
		got.Speed != 10_000_000_000 || got.EEE != nil || got.Actuation.CanSetTimer {
		t.Errorf("port %+v", got)
	}
}

func TestPortsCommandBadNetns(t *testing.T) {
	root := newRootCommand()
	root.SetOut(&bytes.Buffer{})
	root.SetArgs([]string{"ports", "--netns", "no-such-namespace-lpictl"})
	err := root.Execute()
	if err == nil {
		t.Fatal("accepted a missing namespace")
	}
	if code := run([]string{"ports", "--netns", "no-such-namespace-lpictl"}, io.Discard, io.Discard); code != 2 {
		t.Errorf("exit status %d, want 2", code)
	}
}

// TestPortsWhatIfVeth observes a veth end for 3 s while the test sends 200
// datagrams 5 ms apart from its namespace, and checks the estimates
// against a hand estimate under eee-1000base-t (t_s 182 µs, t_w 16.5 µs,
// P_wake 0.5 W, LPI 10 %). Every 5 ms gap outlasts the fixed 10 µs t_PDT,
// so every idle period is a miss and pays t_w.
func TestPortsWhatIfVeth(t *testing.T) {
	p := hwlinktest.NewPair(t)
	hwlinktest.RequireBPF(t)
	type result struct {
		code     int
		out, err string
	}
	done := make(chan result, 1)
	go func() {
		var out, errb bytes.Buffer
		code := run([]string{"ports", "--netns", p.PathA, "--what-if", "3s", "--json", "--port", p.NameA,
			"--preset", "eee-1000base-t"}, &out, &errb)
		done <- result{code, out.String(), errb.String()}
	}()
	time.Sleep(500 * time.Millisecond) // attach
	const count, gap = 200, 5 * time.Millisecond
	hwlinktest.SendUDP(t, p.NSA, p.AddrA, p.NSB, p.AddrB, hwlinktest.Traffic{Count: count, Interval: gap, Payload: 64})
	r := <-done
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.err)
	}
	var rep portsWhatIfReport
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	var table bytes.Buffer
	if err := writePortsWhatIfTable(&table, rep); err != nil {
		t.Fatal(err)
	}
	t.Logf("table form:\n%s", table.String())
	if len(rep.Ports) != 1 {
		t.Fatalf("ports: %+v", rep.Ports)
	}
	pt := rep.Ports[0]
	if pt.Device != p.NameA || pt.Observation != "ebpf" || pt.Preset != "eee-1000base-t" || pt.EEE != "none" {
		t.Errorf("port %+v", pt)
	}
	if pt.Packets < count || pt.Packets > count+5 {
		t.Errorf("packets %d, want %d (+ at most 5 strays)", pt.Packets, count)
	}
	// Idle share ≈ 1 − busy: 200 × ~106 B at 10 Gb/s is ~17 µs in 3 s.
	busy := float64(pt.Bytes) * 8 / float64(pt.SpeedBps) / pt.ElapsedS
	if d := pt.IdleShare - (1 - busy); d < -1e-6 || d > 1e-6 || pt.IdleShare < 0.9999 {
		t.Errorf("idle share %v, want 1 − %v", pt.IdleShare, busy)
	}
	const ts, tw = 182 * time.Microsecond, 16500 * time.Nanosecond
	var fixed *portsWhatIfEstimate
	for i, e := range pt.Estimates {
		if e.Mode != "deep-sleep" {
			t.Errorf("mode %q: 1000BASE-T has deep-sleep only", e.Mode)
		}
		if e.Policy == "fixed" {
			fixed = &pt.Estimates[i]
		}
		if e.Policy == "always-on" && (e.SavedW != 0 || e.WakeUps != 0 || e.AddedDelayS != 0) {
			t.Errorf("always-on saves or delays: %+v", e)
		}
	}
	if fixed == nil {
		t.Fatalf("no fixed policy: %+v", pt.Estimates)
	}
	// Hand estimate: each of the ~count+1 sleeps (count periods and the
	// trailing one) costs pdt + t_s awake before going down and t_w
	// waking up; the rest of the window is in low power.
	downs := float64(fixed.WakeUps + 1)
	wantLow := pt.ElapsedS - downs*(10e-6+ts.Seconds()+tw.Seconds()) - busy*pt.ElapsedS
	if rel := (fixed.LowPowerS - wantLow) / wantLow; rel < -0.02 || rel > 0.02 {
		t.Errorf("fixed: low power %.4f s, hand estimate %.4f s (tolerance 2 %%)", fixed.LowPowerS, wantLow)
	}
	if fixed.Misses != fixed.IdlePeriods || fixed.WakeUps < count-2 || fixed.WakeUps > count+5 {
		t.Errorf("fixed: %d periods, %d misses, %d wake-ups; want every period a miss, ~%d", fixed.IdlePeriods, fixed.Misses, fixed.WakeUps, count)
	}
	wantW := 0.5 * 0.9 * fixed.LowPowerS / pt.ElapsedS
	if d := fixed.SavedW - wantW; d < -1e-3 || d > 1e-3 {
		t.Errorf("fixed: saved %.4f W, want (P_wake − P_lpi) × low-power share = %.4f W", fixed.SavedW, wantW)
	}
	// Each miss delays its packet by t_w (the port is fully down by then).
	if perPkt := fixed.AddedDelayPerPacketS; perPkt < 0.9*tw.Seconds() || perPkt > 1.1*tw.Seconds() {
		t.Errorf("fixed: added delay per packet %v s, want t_w %v ± 10 %%", perPkt, tw)
	}
	if pt.Recommendation.Action != recNoEEE || !strings.Contains(pt.Recommendation.Text, "no EEE on this NIC") {
		t.Errorf("recommendation %+v", pt.Recommendation)
	}
}

func TestPortsWhatIfBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"ports", "--what-if", "2h"},
		{"ports", "--what-if", "0s"},
		{"ports", "--what-if", "1s", "--preset", "no-such-preset"},
		{"ports", "--what-if", "1s", "--observe", "magic"},
		{"ports", "--max-delay", "1us"},
	} {
		code, _, errs := lpictl(t, args...)
		if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line", args, code, errs)
		}
	}
}
