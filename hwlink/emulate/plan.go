package emulate

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/lpictl/lpictl/bpf"
	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/eeectl"
	"github.com/lpictl/lpictl/hwlink/observe"
)

// emuPlan is a validated Config turned into the program's
// configuration.
type emuPlan struct {
	cfg     bpf.EeeemuEmuConfig
	drv     emuDriver
	regs    emuRegs
	rounded bool
	clamped bool
	bpffs   string
	attach  observe.AttachMode
}

func scaled(d time.Duration, k float64) uint64 {
	return uint64(math.Round(float64(d) * k))
}

func microwatts(w float64) uint64 { return uint64(math.Round(w * 1e6)) }

func setCString(dst []int8, s string) {
	clear(dst)
	for i := 0; i < len(s) && i < len(dst)-1; i++ {
		dst[i] = int8(s[i])
	}
}

func cString(src []int8) string {
	var b strings.Builder
	for _, c := range src {
		if c == 0 {
			break
		}
		b.WriteByte(byte(c))
	}
	return b.String()
}

// Validate checks cfg without touching the system (Attach's first
// step): its errors are the caller's mistakes (bad input), such as a mode
// the preset has no state for.
func (cfg Config) Validate() error {
	_, err := cfg.plan()
	return err
}

// plan validates cfg. Its errors are the caller's mistakes (bad input).
func (cfg Config) plan() (emuPlan, error) {
	pl := emuPlan{bpffs: cfg.BPFFS, attach: cfg.Attach}
	if pl.bpffs == "" {
		pl.bpffs = DefaultBPFFS
	}
	if err := hwlink.CheckIfname(cfg.Interface); err != nil {
		return pl, err
	}
	if err := cfg.checkPreset(len(pl.cfg.Preset) - 1); err != nil {
		return pl, err
	}
	if err := cfg.checkMode(); err != nil {
		return pl, err
	}
	k := cfg.Scale
	if k == 0 {
		k = 1
	}
	if !(k > 0) || k > emuMaxScale || math.IsInf(k, 0) {
		return pl, fmt.Errorf("scale %v: must be > 0 and ≤ %g", cfg.Scale, float64(emuMaxScale))
	}
	if cfg.HybridHold < 0 {
		return pl, fmt.Errorf("hybrid hold %v: must be ≥ 0", cfg.HybridHold)
	}
	if err := cfg.checkLink(len(pl.cfg.Link) - 1); err != nil {
		return pl, err
	}
	driver := cfg.Driver
	if driver == "" {
		driver = DefaultDriver
	}
	if err := pl.planRegs(cfg, driver); err != nil {
		return pl, err
	}
	if err := pl.planConfig(cfg, k, driver); err != nil {
		return pl, err
	}
	return pl, nil
}

// checkPreset checks the power preset: a name of at most maxName bytes, a
// wake power, and low-power states with t_w, t_s > 0 and a power within
// [0, wake power].
func (cfg Config) checkPreset(maxName int) error {
	pr := cfg.Preset
	if pr.Name == "" || !(pr.WakePowerW > 0) || math.IsInf(pr.WakePowerW, 0) {
		return fmt.Errorf("preset %q: needs a name and a wake power > 0", pr.Name)
	}
	if len(pr.Name) > maxName {
		return fmt.Errorf("preset name %q: longer than %d bytes", pr.Name, maxName)
	}
	for _, s := range []struct {
		name string
		lp   *LowPower
	}{{"fast_wake", pr.FastWake}, {"deep_sleep", pr.DeepSleep}} {
		if s.lp != nil && (s.lp.Wake <= 0 || s.lp.Sleep <= 0 || !(s.lp.PowerW >= 0) || s.lp.PowerW > pr.WakePowerW) {
			return fmt.Errorf("preset %s: %s: t_w and t_s must be > 0 and power within [0, wake power]", pr.Name, s.name)
		}
	}
	return nil
}

// checkMode checks that the preset has the states cfg.Mode sleeps in.
func (cfg Config) checkMode() error {
	pr := cfg.Preset
	need := func(lp *LowPower, state string) error {
		if lp == nil {
			return fmt.Errorf("preset %s has no %s state, so mode %s is not available (IEEE 802.3az BASE-T PHYs have Deep Sleep only; use deep-sleep)", pr.Name, state, cfg.Mode)
		}
		return nil
	}
	switch cfg.Mode {
	case ModeAlwaysOn:
	case ModeFastWake:
		return need(pr.FastWake, "fast_wake")
	case ModeDeepSleep:
		return need(pr.DeepSleep, "deep_sleep")
	case ModeHybrid:
		if err := need(pr.FastWake, "fast_wake"); err != nil {
			return err
		}
		return need(pr.DeepSleep, "deep_sleep")
	default:
		return fmt.Errorf("unknown mode %d", uint32(cfg.Mode))
	}
	return nil
}

// planRegs takes the driver profile and the initial EEE registers: the
// timer cfg.PDT (default defaultEmulatedTimer) fitted to the profile,
// EEE and tx LPI on unless the mode never sleeps.
func (pl *emuPlan) planRegs(cfg Config, driver string) error {
	drv, err := emulatedDriver(driver)
	if err != nil {
		return err
	}
	pl.drv = drv
	pdt := defaultEmulatedTimer
	if cfg.PDT != nil {
		pdt = *cfg.PDT
	}
	if pdt < 0 || pdt > eeectl.MaxTxLPITimer {
		return fmt.Errorf("t_PDT %v: outside the tx LPI timer's range (0..%v)", pdt, eeectl.MaxTxLPITimer)
	}
	// The hardware's own initial value: fitted to the profile, not refused.
	pl.regs.timer, pl.rounded, pl.clamped = drv.caps.Fit(pdt)
	if pl.regs.timer > drv.prof.Max { // a firmware range (bnxt_en) the table leaves open
		pl.regs.timer, pl.clamped = drv.prof.Max.Truncate(max(drv.caps.Unit, time.Microsecond)), true
	}
	if pl.regs.timer < drv.prof.Min {
		pl.regs.timer, pl.clamped = drv.prof.Min, true
	}
	sleeps := cfg.Mode != ModeAlwaysOn
	pl.regs.eeeEnabled, pl.regs.txLPIEnabled = sleeps, sleeps
	return nil
}

// planConfig fills the program's configuration: the preset's states scaled
// by k, the delay method, the rate, the registers and the names.
func (pl *emuPlan) planConfig(cfg Config, k float64, driver string) error {
	pr := cfg.Preset
	c := &pl.cfg
	c.PdtNs = uint64(pl.regs.timer)
	if lp := pr.FastWake; lp != nil {
		c.SleepFwNs, c.WakeFwNs, c.PowerFwUw = scaled(lp.Sleep, k), scaled(lp.Wake, k), microwatts(lp.PowerW)
	}
	if lp := pr.DeepSleep; lp != nil {
		c.SleepDsNs, c.WakeDsNs, c.PowerDsUw = scaled(lp.Sleep, k), scaled(lp.Wake, k), microwatts(lp.PowerW)
	}
	c.HoldNs = uint64(cfg.HybridHold)
	switch cfg.Delay {
	case DelayEDT, DelaySpin, DelayNone:
		c.Delay = uint32(cfg.Delay)
	case DelayAuto:
		c.Delay = uint32(DelayEDT) // spin if fq is missing (Attach)
	default:
		return fmt.Errorf("unknown delay method %d", uint32(cfg.Delay))
	}
	spin := cfg.SpinMax
	if spin == 0 {
		spin = DefaultSpinMax
	}
	if spin < 0 || spin > 100*time.Millisecond {
		return fmt.Errorf("spin max %v: must be in (0, 100ms]", spin)
	}
	c.SpinMaxNs = uint64(spin)
	c.NsPerByteQ16 = observe.SpeedQ16(cfg.Rate)
	c.Mode = uint32(cfg.Mode)
	c.Flags = pl.regs.flags()
	c.PowerWakeUw = microwatts(pr.WakePowerW)
	c.RateBps = cfg.Rate
	c.PresetRateBps = emuPresetRate(pr)
	c.ScaleMilli = uint64(math.Round(k * 1000))
	c.Version = emuLayoutVersion
	setCString(c.Preset[:], pr.Name)
	setCString(c.Driver[:], driver)
	setCString(c.Ifname[:], cfg.Interface)
	if cfg.LPI == PerLink {
		c.Lpi = uint32(PerLink)
		c.HandshakeNs = uint64(cfg.Handshake)
		setCString(c.Link[:], cfg.Link)
	}
	return nil
}

// checkLink checks the symmetry and, per link, the link's name (at most
// maxName bytes, usable as a file name) and the handshake.
func (cfg Config) checkLink(maxName int) error {
	switch cfg.LPI {
	case PerDirection:
		if cfg.Link != "" {
			return fmt.Errorf("link %q: a port per direction has no link; set per-link", cfg.Link)
		}
		return nil
	case PerLink:
	default:
		return fmt.Errorf("unknown lpi %d", uint32(cfg.LPI))
	}
	if cfg.Link == "" {
		return errors.New("per-link needs the link's name (the same on both ends)")
	}
	if len(cfg.Link) > maxName || strings.HasPrefix(cfg.Link, ".") || strings.IndexFunc(cfg.Link, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-')
	}) >= 0 {
		return fmt.Errorf("link name %q: want at most %d letters, digits, '.', '_' or '-', not starting with '.'", cfg.Link, maxName)
	}
	if cfg.Handshake < 0 || cfg.Handshake > time.Second {
		return fmt.Errorf("handshake %v: must be in [0, 1s]", cfg.Handshake)
	}
	return nil
}

func (r emuRegs) flags() uint32 {
	var f uint32
	if r.eeeEnabled {
		f |= emuFlagEEE
	}
	if r.txLPIEnabled {
		f |= emuFlagTxLPI
	}
	return f
}

// emuPresetRate is the preset's rate in bits/s, kept in the pins so that
// GetEEE can name the link mode.
func emuPresetRate(pr Preset) uint64 {
	if pr.RateBps > 0 && pr.RateBps < math.MaxUint64 {
		return uint64(math.Round(pr.RateBps))
	}
	return 0
}
