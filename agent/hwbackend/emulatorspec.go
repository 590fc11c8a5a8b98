package hwbackend

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lpictl/lpictl/configs"
	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/emulate"
	"github.com/lpictl/lpictl/hwlink/observe"
	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/network"
	"github.com/lpictl/lpictl/sim/power"
	"github.com/lpictl/lpictl/sim/scenario"
)

// EmulatorSpec is an emulated EEE port as `lpictl emulate attach` is
// given it: every value as written (docs/hil.md).
type EmulatorSpec struct {
	Preset, Mode, PDT, Rate, Hold, Driver, Delay, SpinMax, NetNS, Attach, BPFFS string
	// LPI is the symmetry ("", "preset", per-direction, per-link), Link
	// the link's name, Handshake "auto" or a duration (LinkSymmetry).
	LPI, Link, Handshake string
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
	if err := s.linkConfig(&cfg, preset); err != nil {
		return cfg, configs.BadInput(err)
	}
	cfg.Attach, err = parseAttachMode(s.Attach)
	return cfg, configs.BadInput(err)
}

// linkConfig sets cfg's symmetry, link and handshake (LinkSymmetry).
func (s EmulatorSpec) linkConfig(cfg *emulate.Config, preset *power.Preset) error {
	lpi, err := LinkSymmetry(s.LPI, s.Link, preset)
	if err != nil {
		return err
	}
	cfg.LPI, cfg.Link = lpi, s.Link
	if lpi != emulate.PerLink {
		return nil
	}
	switch h := strings.ToLower(strings.TrimSpace(s.Handshake)); h {
	case "", "auto":
		rate := float64(cfg.Rate)
		if rate == 0 {
			rate = preset.RateBps
		}
		cfg.Handshake = LinkHandshake(rate)
	default:
		if cfg.Handshake, err = predictor.ParseDuration(h); err != nil {
			return fmt.Errorf("--handshake: %w", err)
		}
	}
	return nil
}

// LinkSymmetry is an emulated port's symmetry (docs/model.md §1.2) from
// --lpi and --link: "" or "preset" takes the preset's when the port is
// given a link (a preset per direction then refuses the link) and per
// direction when it is not (an end alone has no peer to share a state
// with); per-link needs a link, per-direction takes none.
func LinkSymmetry(lpi, link string, preset *power.Preset) (emulate.LPI, error) {
	switch v := strings.ToLower(strings.TrimSpace(lpi)); v {
	case "", "preset":
		if link == "" {
			return emulate.PerDirection, nil
		}
		if preset.Symmetry() == power.PerDirection {
			return 0, fmt.Errorf("--link %s: preset %s is per direction (%s), so its ends share no link state; drop --link, or set --lpi per-link", link, preset.Name, preset.LPISource)
		}
		return emulate.PerLink, nil
	default:
		l, err := emulate.ParseLPI(v)
		if err != nil {
			return 0, fmt.Errorf("--lpi: %w (or preset)", err)
		}
		if l == emulate.PerLink && link == "" {
			return 0, errors.New("--lpi per-link needs --link NAME: the same name on the link's two ends")
		}
		if l == emulate.PerDirection && link != "" {
			return 0, fmt.Errorf("--link %s: a port per direction has no link (drop --link or set --lpi per-link)", link)
		}
		return l, nil
	}
}

// LinkHandshake is the one-way time H of the power-down request on a
// link at rateBps as the simulator models it (docs/model.md §1.1): the
// default control message (sim/scenario's control_bytes) serialised at
// the rate plus the default cable's propagation, rounded up to the ns.
func LinkHandshake(rateBps float64) time.Duration {
	if !(rateBps > 0) {
		return 0
	}
	ps := network.Ser(scenario.DefaultControlBytes, rateBps) + scenario.DefaultPropagation.Nanoseconds()*1000
	return time.Duration((ps + 999) / 1000)
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
