package agent_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/lpictl/lpictl/agent"
)

// TestEmulatedHWConfig: the emulated EEE backend and observation, the
// bpffs and the trace directory load, default and validate as documented.
func TestEmulatedHWConfig(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "traces"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "agent.yaml")
	yaml := "mode: enforce\nports: {drivers: [\"emulated/*\"]}\ntrace_dir: traces\n" +
		"hw: {netns: lpihila, eee_backend: emulated, observe: emulated, bpffs: /run/lpictl/bpf}\n"
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := agent.Load(agent.LoadOptions{File: file})
	if err != nil {
		t.Fatal(err)
	}
	h := l.Config.HW
	if h.EEEBackend != "emulated" || h.Observe != "emulated" || h.BPFFS != "/run/lpictl/bpf" || h.NetNS != "lpihila" {
		t.Errorf("hw %+v", h)
	}
	if want := filepath.Join(dir, "traces"); l.Config.TraceDir != want {
		t.Errorf("trace_dir %q, want %q (relative to the config file)", l.Config.TraceDir, want)
	}
	if !l.Config.Ports.Selected("veth0", "emulated/st_gmac") || l.Config.Ports.Selected("lo", "") {
		t.Error(`ports.drivers ["emulated/*"] does not select exactly the emulated ports`)
	}
	d := agent.Default()
	if d.HW.BPFFS != "/sys/fs/bpf" || d.TraceDir != "" {
		t.Errorf("defaults: bpffs %q, trace_dir %q", d.HW.BPFFS, d.TraceDir)
	}
	for _, c := range []struct {
		name string
		mut  func(*agent.Config)
		key  string
	}{
		{"eee backend", func(c *agent.Config) { c.HW.EEEBackend = "bpf" }, "hw.eee_backend"},
		{"observe", func(c *agent.Config) { c.HW.Observe = "emulator" }, "hw.observe"},
		{"bpffs", func(c *agent.Config) { c.HW.BPFFS = "bpf" }, "hw.bpffs"},
		{"trace dir", func(c *agent.Config) { c.TraceDir = "a\x00b" }, "trace_dir"},
	} {
		cfg := agent.Default()
		c.mut(&cfg)
		if err := cfg.Validate(); err == nil || err.Error()[:len(c.key)+1] != c.key+":" {
			t.Errorf("%s: %v, want an error naming %s", c.name, err, c.key)
		}
	}
	// agent.New checks the trace directory too.
	cfg := agent.Default()
	cfg.TraceDir = filepath.Join(dir, "missing")
	if _, err := agent.New(agent.Options{Config: cfg, Backend: newFake()}); err == nil {
		t.Error("agent.New accepted a missing trace_dir")
	}
}
