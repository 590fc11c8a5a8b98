package hwbackend

import (
	"strings"
	"testing"
	"time"

	"github.com/lpictl/lpictl/configs"
	"github.com/lpictl/lpictl/hwlink/emulate"
	"github.com/lpictl/lpictl/hwlink/observe"
	"github.com/lpictl/lpictl/sim/power"
)

// TestEmulatorSpec: each bad value is bad input naming its flag, in the
// order `lpictl emulate attach` checks them.
func TestEmulatorSpec(t *testing.T) {
	ok := EmulatorSpec{Preset: "eee-1000base-t", Mode: "deep-sleep", Rate: "none", Hold: "10us", Delay: "auto",
		SpinMax: "1ms", Attach: "tc", Scale: 1, PDT: "20us", PDTSet: true}
	cfg, err := ok.Config("veth0")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Interface != "veth0" || cfg.PDT == nil || cfg.PDT.Microseconds() != 20 || cfg.Attach != observe.AttachTC || cfg.Preset.Name != "eee-1000base-t" {
		t.Errorf("config %+v", cfg)
	}
	for _, c := range []struct {
		edit func(*EmulatorSpec)
		want string
	}{
		{func(s *EmulatorSpec) { s.Scale = 0 }, "--scale 0: must be > 0"},
		{func(s *EmulatorSpec) { s.Mode = "" }, "--preset and --mode are required"},
		{func(s *EmulatorSpec) { s.Preset = "eee-nope" }, "--preset: "},
		{func(s *EmulatorSpec) { s.Mode = "turbo" }, "--mode: "},
		{func(s *EmulatorSpec) { s.PDT = "soon" }, "--pdt: "},
		{func(s *EmulatorSpec) { s.Hold = "x" }, "--hold: "},
		{func(s *EmulatorSpec) { s.Rate = "fast" }, "--rate: "},
		{func(s *EmulatorSpec) { s.Delay = "later" }, "--delay: "},
		{func(s *EmulatorSpec) { s.SpinMax = "x" }, "--spin-max: "},
		{func(s *EmulatorSpec) { s.Attach = "xdp" }, `--attach "xdp": want auto, tcx or tc`},
	} {
		s := ok
		c.edit(&s)
		_, err := s.Config("veth0")
		if !configs.IsBadInput(err) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%+v: %v, want bad input %q", s, err, c.want)
		}
	}
	s := ok
	s.PDT, s.PDTSet = "soon", false // not given: not parsed
	if cfg, err := s.Config("veth0"); err != nil || cfg.PDT != nil {
		t.Errorf("PDT not set: %+v, %v", cfg.PDT, err)
	}
}

// TestLinkSymmetry: --lpi and --link against the preset's symmetry, and
// the default handshake.
func TestLinkSymmetry(t *testing.T) {
	perLink, err := power.Load("eee-1000base-t")
	if err != nil {
		t.Fatal(err)
	}
	perDir, err := power.Load("eee-100base-tx")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		lpi, link string
		preset    *power.Preset
		want      emulate.LPI
		err       string
	}{
		{"", "", perLink, emulate.PerDirection, ""},
		{"preset", "c0", perLink, emulate.PerLink, ""},
		{"preset", "c0", perDir, 0, "preset eee-100base-tx is per direction"},
		{"per-link", "c0", perDir, emulate.PerLink, ""},
		{"per-link", "", perLink, 0, "needs --link"},
		{"per-direction", "c0", perLink, 0, "has no link"},
		{"Per-Direction", "", perLink, emulate.PerDirection, ""},
		{"both", "", perLink, 0, "--lpi: unknown lpi"},
	} {
		got, err := LinkSymmetry(c.lpi, c.link, c.preset)
		if got != c.want || (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("--lpi %q --link %q (%s): %v, %v; want %v, %q", c.lpi, c.link, c.preset.Name, got, err, c.want, c.err)
		}
	}
	// 64 bytes at 1 Gb/s (512 ns) + 10 ns, as the simulator's default H.
	if h := LinkHandshake(1e9); h != 522*time.Nanosecond {
		t.Errorf("handshake at 1G: %v", h)
	}
	s := EmulatorSpec{Preset: "eee-1000base-t", Mode: "deep-sleep", Rate: "100M", Hold: "10us", Delay: "auto", SpinMax: "1ms",
		Scale: 1, Link: "c0", Handshake: "auto"}
	cfg, err := s.Config("veth0")
	if err != nil || cfg.LPI != emulate.PerLink || cfg.Link != "c0" || cfg.Handshake != 5130*time.Nanosecond {
		t.Errorf("per link at 100M: %v, %v, %v, %v", cfg.LPI, cfg.Link, cfg.Handshake, err)
	}
}
