package hwbackend

import (
	"strings"
	"testing"

	"github.com/lpictl/lpictl/configs"
	"github.com/lpictl/lpictl/hwlink/observe"
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
