package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/lpictl/lpictl/agent/whatif"
	"github.com/lpictl/lpictl/hwlink/hwlinktest"
	"github.com/lpictl/lpictl/hwlink/netdev"
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
	var ports []netdev.PortInfo
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

// TestPortsWhatIfVeth observes a veth end for 5 s while the test sends 200
// datagrams 5 ms apart from its namespace, and checks the estimates
// against a hand estimate under eee-1000base-t (t_s 182 µs, t_w 16.5 µs,
// P_wake 0.5 W, LPI 10 %). Every 5 ms gap outlasts the fixed 10 µs t_PDT,
// so every idle period is a miss and pays t_w. On a loaded machine a send
// can come late and the next one early: the sends' own time brackets say
// which gaps were surely long enough to be plain misses, and only the
// others are given slack.
func TestPortsWhatIfVeth(t *testing.T) {
	p := hwlinktest.NewPair(t)
	hwlinktest.RequireBPF(t)
	type result struct {
		code     int
		out, err string
	}
	const window = 5 * time.Second
	done := make(chan result, 1)
	cmdStart := time.Now()
	go func() {
		var out, errb bytes.Buffer
		code := run([]string{"ports", "--netns", p.PathA, "--what-if", window.String(), "--json", "--port", p.NameA,
			"--preset", "eee-1000base-t"}, &out, &errb)
		done <- result{code, out.String(), errb.String()}
	}()
	waitObserverAttached(t, p)
	const count, gap = 200, 5 * time.Millisecond
	sent := hwlinktest.SendUDPTimed(t, p.NSA, p.AddrA, p.NSB, p.AddrB, hwlinktest.Traffic{Count: count, Interval: gap, Payload: 64})
	r := <-done
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.err)
	}
	if last := sent[len(sent)-1].After; last.After(cmdStart.Add(window - 100*time.Millisecond)) {
		t.Fatalf("the machine is too loaded: the last datagram left %v after the %v observation started", last.Sub(cmdStart), window)
	}
	var rep whatif.Report
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	var table bytes.Buffer
	if err := rep.WriteText(&table); err != nil {
		t.Fatal(err)
	}
	t.Logf("table form:\n%s", table.String())
	if len(rep.Ports) != 1 {
		t.Fatalf("ports: %+v", rep.Ports)
	}
	pt := rep.Ports[0]
	if pt.Device != p.NameA || pt.Observation != "ebpf" || pt.Preset != "eee-1000base-t" || pt.PresetFrom != "configured" || pt.EEE != "none" {
		t.Errorf("port %+v", pt)
	}
	if pt.Packets < count || pt.Packets > count+5 {
		t.Errorf("packets %d, want %d (+ at most 5 strays)", pt.Packets, count)
	}
	// Idle share ≈ 1 − busy: 200 × ~106 B at the preset's 1 Gb/s (a veth's
	// 10 Gb/s means nothing) is ~170 µs in 5 s.
	busy := float64(pt.Bytes) * 8 / 1e9 / pt.ElapsedS
	if d := pt.IdleShare - (1 - busy); d < -1e-6 || d > 1e-6 || pt.IdleShare < 0.999 {
		t.Errorf("idle share %v, want 1 − %v", pt.IdleShare, busy)
	}
	const pdt, ts, tw = 10 * time.Microsecond, 182 * time.Microsecond, 16500 * time.Nanosecond
	// sure: gaps between sends that were at least pdt + t_s + t_w however
	// the sends were scheduled (next send's start − previous send's end):
	// the port was down and the packet paid exactly t_w.
	sure, unsure := 1, 0 // the first datagram ends the idle period the observation starts with
	for i := 1; i < len(sent); i++ {
		if sent[i].Before.Sub(sent[i-1].After) >= pdt+ts+tw {
			sure++
		} else {
			unsure++
		}
	}
	t.Logf("%d gaps surely ≥ t_PDT + t_s + t_w, %d not surely", sure, unsure)
	var fixed *whatif.Estimate
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
	wantLow := pt.ElapsedS - downs*(pdt.Seconds()+ts.Seconds()+tw.Seconds()) - busy*pt.ElapsedS
	if rel := (fixed.LowPowerS - wantLow) / wantLow; rel < -0.02 || rel > 0.02 {
		t.Errorf("fixed: low power %.4f s, hand estimate %.4f s (tolerance 2 %%)", fixed.LowPowerS, wantLow)
	}
	if fixed.IdlePeriods-fixed.Misses > uint64(unsure) || fixed.WakeUps < uint64(sure) || fixed.WakeUps > count+5 {
		t.Errorf("fixed: %d periods, %d misses, %d wake-ups; want every period a miss but for at most %d short gaps, %d–%d wake-ups",
			fixed.IdlePeriods, fixed.Misses, fixed.WakeUps, unsure, sure, count+5)
	}
	wantW := 0.5 * 0.9 * fixed.LowPowerS / pt.ElapsedS
	if d := fixed.SavedW - wantW; d < -1e-3 || d > 1e-3 {
		t.Errorf("fixed: saved %.4f W, want (P_wake − P_lpi) × low-power share = %.4f W", fixed.SavedW, wantW)
	}
	// Each sure miss delays its packet by exactly t_w (the port is fully
	// down by then); a gap that was not surely long may add up to t_s + t_w
	// or nothing; strays (ARP) at most t_w each.
	lo := 0.9 * float64(sure) * tw.Seconds()
	hi := 1.1*float64(sure+5)*tw.Seconds() + float64(unsure)*(ts+tw).Seconds()
	if d := fixed.AddedDelayS; d < lo || d > hi {
		t.Errorf("fixed: added delay %v s, want %v–%v s (%d × t_w …)", d, lo, hi, sure)
	}
	if perPkt := fixed.AddedDelayPerPacketS; unsure == 0 && (perPkt < 0.9*tw.Seconds() || perPkt > 1.1*tw.Seconds()) {
		t.Errorf("fixed: added delay per packet %v s, want t_w %v ± 10 %%", perPkt, tw)
	}
	if pt.Recommendation.Action != whatif.ActionNoEEE || !strings.Contains(pt.Recommendation.Text, "no EEE on this NIC") {
		t.Errorf("recommendation %+v", pt.Recommendation)
	}
}

// waitObserverAttached waits until a program is on the TCX egress hook of
// the pair's first end (the what-if observer), so that no datagram is sent
// before it observes; without TCX (kernels < 6.6) it waits 2 s.
func waitObserverAttached(t *testing.T, p *hwlinktest.Pair) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		n := -1
		err := hwlinktest.Do(p.NSA, func() error {
			res, err := link.QueryPrograms(link.QueryOptions{Target: p.IndexA, Attach: ebpf.AttachTCXEgress})
			if err == nil {
				n = len(res.Programs)
			}
			return err
		})
		switch {
		case err != nil:
			time.Sleep(2 * time.Second)
			return
		case n > 0:
			time.Sleep(20 * time.Millisecond) // the observer's first read of its stats follows the attach
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the what-if observer did not attach within 30 s")
}

// TestPortsWhatIfVethNoPreset: a veth (no emulator) reports 10 Gb/s, which
// means nothing for power: without --preset the estimate says so instead
// of guessing 10GBASE-T.
func TestPortsWhatIfVethNoPreset(t *testing.T) {
	p := hwlinktest.NewPair(t)
	hwlinktest.RequireBPF(t)
	code, out, errs := lpictl(t, "ports", "--netns", p.PathA, "--what-if", "300ms", "--json", "--port", p.NameA)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep whatif.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(rep.Ports) != 1 {
		t.Fatalf("ports: %+v", rep.Ports)
	}
	pt := rep.Ports[0]
	if pt.Preset != "" || pt.PresetFrom != "unknown" || len(pt.Estimates) != 0 || pt.Recommendation.Action != whatif.ActionNoEstimates {
		t.Errorf("port %+v", pt)
	}
	for _, w := range []string{"preset unknown", "veth reports 10 Gb/s, which means nothing for a virtual device", "--preset"} {
		if !strings.Contains(pt.PresetNote, w) || !strings.Contains(pt.Recommendation.Text, w) {
			t.Errorf("note %q / recommendation %q lacks %q", pt.PresetNote, pt.Recommendation.Text, w)
		}
	}
	// --fallback-preset covers such ports.
	code, out, errs = lpictl(t, "ports", "--netns", p.PathA, "--what-if", "300ms", "--json", "--port", p.NameA, "--fallback-preset", "eee-100base-tx")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rep = whatif.Report{}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Ports) != 1 {
		t.Fatalf("%v\n%s", err, out)
	}
	if pt := rep.Ports[0]; pt.Preset != "eee-100base-tx" || pt.PresetFrom != "fallback" || len(pt.Estimates) == 0 || pt.PresetNote != "" {
		t.Errorf("with --fallback-preset: %+v", pt)
	}
}

// TestPortsWhatIfEmulated: an emulated 1 G port (`lpictl emulate attach
// --preset eee-1000base-t` on a veth, which reports 10 Gb/s) is estimated
// with its own preset, named as the emulator's, not 10GBASE-T's.
func TestPortsWhatIfEmulated(t *testing.T) {
	hwlinktest.RequireBPF(t)
	pair := hwlinktest.NewPair(t)
	bpffs := t.TempDir()
	if err := unix.Mount("bpf", bpffs, "bpf", 0, "mode=0700"); err != nil {
		t.Skipf("needs BPF: cannot mount a bpffs: %v", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(bpffs, 0) })
	attach := []string{"emulate", "attach", pair.NameA, "--netns", pair.PathA, "--preset", "eee-1000base-t",
		"--mode", "deep-sleep", "--delay", "spin", "--bpffs", bpffs}
	if code, _, stderr := lpictl(t, attach...); code != 0 {
		t.Fatalf("attach: exit %d: %s", code, stderr)
	}
	t.Cleanup(func() { lpictl(t, "emulate", "detach", pair.NameA, "--netns", pair.PathA, "--bpffs", bpffs) })
	done := make(chan [3]string, 1)
	go func() {
		var out, errb bytes.Buffer
		code := run([]string{"ports", "--netns", pair.PathA, "--what-if", "3s", "--json", "--port", pair.NameA, "--bpffs", bpffs}, &out, &errb)
		done <- [3]string{fmt.Sprint(code), out.String(), errb.String()}
	}()
	waitObserverAttached(t, pair)
	hwlinktest.SendUDP(t, pair.NSA, pair.AddrA, pair.NSB, pair.AddrB, hwlinktest.Traffic{Count: 50, Interval: 5 * time.Millisecond, Payload: 64})
	r := <-done
	if r[0] != "0" {
		t.Fatalf("exit %s: %s", r[0], r[2])
	}
	var rep whatif.Report
	if err := json.Unmarshal([]byte(r[1]), &rep); err != nil || len(rep.Ports) != 1 {
		t.Fatalf("%v\n%s", err, r[1])
	}
	var table bytes.Buffer
	if err := rep.WriteText(&table); err != nil {
		t.Fatal(err)
	}
	t.Logf("table form:\n%s", table.String())
	pt := rep.Ports[0]
	if pt.Preset != "eee-1000base-t" || pt.PresetFrom != "emulator" || pt.Driver != "emulated/st_gmac" || pt.EEE != "on" || pt.PresetNote != "" {
		t.Errorf("port %+v", pt)
	}
	if !strings.Contains(table.String(), "preset eee-1000base-t (emulator)") {
		t.Errorf("the table does not name the emulator's preset")
	}
	if len(pt.Estimates) == 0 {
		t.Fatal("no estimates")
	}
	for _, e := range pt.Estimates {
		// 1000BASE-T: Deep Sleep only, 0.5 W awake; 10GBASE-T would
		// save tens of watts.
		if e.Mode != "deep-sleep" || e.SavedW > 0.5 {
			t.Errorf("estimate %+v: not 1000BASE-T's", e)
		}
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
