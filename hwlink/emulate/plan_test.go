package emulate

import (
	"strings"
	"testing"
	"time"

	"github.com/lpictl/lpictl/hwlink/observe"
)

// TestEmulateConfigPlan checks the validation of Attach's
// configuration (done before anything is changed) and what it programs.
func TestEmulateConfigPlan(t *testing.T) {
	ds := &LowPower{PowerW: 0.05, Wake: 16500 * time.Nanosecond, Sleep: 182 * time.Microsecond}
	fw := &LowPower{PowerW: 0.2, Wake: 1650 * time.Nanosecond, Sleep: 18 * time.Microsecond}
	base := Config{Interface: "eth0", Mode: ModeDeepSleep,
		Preset: Preset{Name: "p", RateBps: 1e9, WakePowerW: 0.5, DeepSleep: ds}}
	pdt := 1500 * time.Nanosecond
	bad := []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Mode = ModeFastWake }, "has no fast_wake state, so mode fast-wake is not available"},
		{func(c *Config) { c.Mode = ModeHybrid }, "has no fast_wake state"},
		{func(c *Config) { c.Preset.FastWake = fw; c.Preset.DeepSleep = nil }, "has no deep_sleep state"},
		{func(c *Config) { c.Scale = -1 }, "scale"},
		{func(c *Config) { c.Scale = 2e6 }, "scale"},
		{func(c *Config) { c.Driver = "nope" }, "driver table"},
		{func(c *Config) { c.Interface = "" }, "invalid interface name"},
		{func(c *Config) { c.Preset.WakePowerW = 0 }, "wake power"},
		{func(c *Config) { d := -pdt; c.PDT = &d }, "t_PDT"},
		{func(c *Config) { c.HybridHold = -1 }, "hybrid hold"},
		{func(c *Config) { c.Delay = 7 }, "delay method"},
		{func(c *Config) { c.SpinMax = time.Second }, "spin max"},
	}
	for i, tc := range bad {
		c := base
		c.Preset.DeepSleep = ds
		tc.edit(&c)
		if _, err := c.plan(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("case %d: %v, want %q", i, err, tc.want)
		}
	}
	c := base
	c.PDT, c.Scale, c.Rate, c.Driver = &pdt, 100, 1e9, "an8855"
	pl, err := c.plan()
	if err != nil {
		t.Fatal(err)
	}
	cfg := pl.cfg
	if cfg.PdtNs != 2000 || !pl.rounded || cfg.WakeDsNs != 1_650_000 || cfg.SleepDsNs != 18_200_000 ||
		cfg.PowerWakeUw != 500_000 || cfg.PowerDsUw != 50_000 || cfg.NsPerByteQ16 != observe.SpeedQ16(1e9) ||
		cfg.Mode != uint32(ModeDeepSleep) || cfg.Flags != emuFlagEEE|emuFlagTxLPI || cfg.ScaleMilli != 100_000 ||
		cString(cfg.Driver[:]) != "an8855" || cString(cfg.Preset[:]) != "p" || cfg.PresetRateBps != 1e9 {
		t.Errorf("plan %+v (rounded %v)", cfg, pl.rounded)
	}
	c = base
	c.Mode = ModeAlwaysOn
	if pl, err := c.plan(); err != nil || pl.cfg.Flags != 0 || pl.cfg.PdtNs != uint64(time.Millisecond) {
		t.Errorf("always-on: EEE off, default timer 1 ms: %+v, %v", pl.cfg, err)
	}
	c = base
	c.Driver = "mvneta"
	if pl, err := c.plan(); err != nil || pl.cfg.PdtNs != uint64(255*time.Microsecond) || !pl.clamped {
		t.Errorf("mvneta default timer fitted to 255 µs: %+v, %v", pl.cfg, err)
	}
}
