package hwbackend

import (
	"errors"
	"fmt"
	"strings"

	"github.com/lpictl/lpictl/configs"
	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/emulate"
	"github.com/lpictl/lpictl/hwlink/observe"
	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/power"
)

// EmulatorSpec is an emulated EEE port as `lpictl emulate attach` is
// given it: every value as written (docs/hil.md).
type EmulatorSpec struct {
	Preset, Mode, PDT, Rate, Hold, Driver, Delay, SpinMax, NetNS, Attach, BPFFS string
	// PDTSet says PDT was given (else the driver profile's default timer).
	PDTSet        bool
	Scale         float64
	AllowPhysical bool
}

// Config parses s into the emulator of iface (not yet validated:
// emulate.Config.Validate). A bad value is bad input
// (configs.InputError) naming its flag.
func (s EmulatorSpec) Config(iface string) (emulate.Config, error) {
	if !(s.Scale > 0) {
		return emulate.Config{}, configs.BadInput(fmt.Errorf("--scale %v: must be > 0", s.Scale))
	}
	if s.Preset == "" || s.Mode == "" {
		return emulate.Config{}, configs.BadInput(errors.New("--preset and --mode are required (e.g. --preset eee-1000base-t --mode deep-sleep)"))
	}
	preset, err := power.Load(s.Preset)
	if err != nil {
		return emulate.Config{}, configs.BadInput(fmt.Errorf("--preset: %w", err))
	}
	cfg := emulate.Config{Interface: iface, NetNS: hwlink.NetNS(s.NetNS), Preset: EmulatedPreset(preset),
		Scale: s.Scale, Driver: s.Driver, BPFFS: s.BPFFS, AllowPhysical: s.AllowPhysical}
	for _, p := range []struct {
		flag  string
		parse func() error
	}{
		{"mode", func() (err error) { cfg.Mode, err = emulate.ParseMode(s.Mode); return err }},
		{"pdt", func() error {
			if !s.PDTSet {
				return nil
			}
			d, err := predictor.ParseDuration(s.PDT)
			cfg.PDT = &d
			return err
		}},
		{"hold", func() (err error) { cfg.HybridHold, err = predictor.ParseDuration(s.Hold); return err }},
		{"rate", func() (err error) { cfg.Rate, err = emulate.ParseRate(s.Rate, preset.RateBps); return err }},
		{"delay", func() (err error) { cfg.Delay, err = emulate.ParseDelay(s.Delay); return err }},
		{"spin-max", func() (err error) { cfg.SpinMax, err = predictor.ParseDuration(s.SpinMax); return err }},
	} {
		if err := p.parse(); err != nil {
			return cfg, configs.BadInput(fmt.Errorf("--%s: %w", p.flag, err))
		}
	}
	cfg.Attach, err = parseAttachMode(s.Attach)
	return cfg, configs.BadInput(err)
}

func parseAttachMode(s string) (observe.AttachMode, error) {
	switch strings.ToLower(s) {
	case "", "auto":
		return observe.AttachAuto, nil
	case "tcx":
		return observe.AttachTCX, nil
	case "tc", "clsact":
		return observe.AttachTC, nil
	}
	return 0, fmt.Errorf("--attach %q: want auto, tcx or tc", s)
}

// EmulatorStatuses reads the status of every emulated EEE port pinned
// under bpffs (`lpictl emulate status`), or only dev's (if given) and
// only those in the network namespace of inode netnsInode (0: every
// one). Naming a dev that has no emulator there is bad input
// (configs.InputError).
func EmulatorStatuses(bpffs string, netnsInode uint64, dev ...string) ([]emulate.Status, error) {
	ports, err := emulate.List(bpffs)
	if err != nil {
		return nil, err
	}
	now := observe.MonotonicNow()
	out := []emulate.Status{}
	var errs []error
	for _, p := range ports {
		if (len(dev) == 0 || p.Interface() == dev[0]) && (netnsInode == 0 || p.NetNSInode() == netnsInode) {
			if s, err := p.Status(now); err != nil {
				errs = append(errs, err)
			} else {
				out = append(out, s)
			}
		}
		p.Close()
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(dev) > 0 && len(out) == 0 {
		return nil, configs.BadInput(fmt.Errorf("%s: %w (no emulated port of that name under %s)", dev[0], emulate.ErrNotEmulated, bpffs))
	}
	return out, nil
}
