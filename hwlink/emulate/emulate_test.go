package emulate

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/eeectl"
	"github.com/lpictl/lpictl/hwlink/observe"
)

// TestEmuTail checks the lazy accounting of an idle period in progress
// (what status adds after the last departure) against sim/eee's
// Link.Finish rule, on every boundary.
func TestEmuTail(t *testing.T) {
	tm := emuTiming{sleepFW: 200, wakeFW: 375, sleepDS: 2000, wakeDS: 4480, hold: 10_000}
	const free, pdt = 1000, 500
	type want struct {
		add          [numEmulatedStates]uint64
		cur          State
		downs, deeps uint64
	}
	tests := []struct {
		name string
		mode Mode
		now  uint64
		want want
	}{
		{"before the last departure", ModeDeepSleep, free - 1, want{cur: StateWake}},
		{"always-on never sleeps", ModeAlwaysOn, free + 1e9, want{add: [5]uint64{1e9}, cur: StateWake}},
		{"awake before t_PDT", ModeDeepSleep, free + 499, want{add: [5]uint64{499}, cur: StateWake}},
		{"at t_PDT: nothing gone down yet", ModeDeepSleep, free + 500, want{add: [5]uint64{500}, cur: StateWake}},
		{"going down", ModeDeepSleep, free + 501, want{add: [5]uint64{500, 1}, cur: StateGoingDown, downs: 1}},
		{"going down ends", ModeDeepSleep, free + 2500, want{add: [5]uint64{500, 2000}, cur: StateGoingDown, downs: 1}},
		{"deep sleep", ModeDeepSleep, free + 3000, want{add: [5]uint64{500, 2000, 0, 500}, cur: StateDeepSleep, downs: 1}},
		{"fast wake", ModeFastWake, free + 3000, want{add: [5]uint64{500, 200, 2300}, cur: StateFastWake, downs: 1}},
		{"hybrid in fast wake", ModeHybrid, free + 700 + 10_000, want{add: [5]uint64{500, 200, 10_000}, cur: StateFastWake, downs: 1}},
		{"hybrid deepened", ModeHybrid, free + 700 + 10_001, want{add: [5]uint64{500, 200, 10_000, 1}, cur: StateDeepSleep, downs: 1, deeps: 1}},
	}
	for _, tc := range tests {
		add, cur, downs, deeps := emuTail(tm, tc.mode, pdt, free, tc.now)
		got := want{add, cur, downs, deeps}
		if got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
		var sum uint64
		for _, v := range add {
			sum += v
		}
		if tc.now > free && sum != tc.now-free {
			t.Errorf("%s: tail sums to %d, want %d", tc.name, sum, tc.now-free)
		}
	}
}

// TestEmulatedDriver checks the EEE interface's driver profiles: the
// table's ranges, units and refusals, as fakedriver models them.
func TestEmulatedDriver(t *testing.T) {
	d := func(v time.Duration) *time.Duration { return &v }
	on, off := true, false
	cur := emuRegs{timer: 250 * time.Microsecond, eeeEnabled: true, txLPIEnabled: true}
	tests := []struct {
		driver string
		set    eeectl.EEESet
		want   time.Duration
		lpi    bool
		err    error
	}{
		{"st_gmac", eeectl.EEESet{TxLPITimer: d(1234567 * time.Nanosecond)}, 1234 * time.Microsecond, true, nil},
		{"st_gmac", eeectl.EEESet{TxLPITimer: d(0x100000 * time.Microsecond)}, 0, false, hwlink.ErrRejected},
		{"mvneta", eeectl.EEESet{TxLPITimer: d(255 * time.Microsecond)}, 255 * time.Microsecond, true, nil},
		{"mvneta", eeectl.EEESet{TxLPITimer: d(256 * time.Microsecond)}, 0, false, hwlink.ErrRejected},
		{"mvpp2", eeectl.EEESet{TxLPITimer: d(time.Second)}, 255 * time.Microsecond, true, nil},
		{"an8855", eeectl.EEESet{TxLPITimer: d(7 * time.Microsecond)}, 6 * time.Microsecond, true, nil},
		{"bnx2x", eeectl.EEESet{TxLPITimer: d(10 * time.Microsecond)}, 0, false, hwlink.ErrRejected},
		{"igc", eeectl.EEESet{TxLPITimer: d(10 * time.Microsecond)}, 0, false, hwlink.ErrRejected},
		{"igc", eeectl.EEESet{TxLPITimer: d(250 * time.Microsecond)}, 250 * time.Microsecond, true, nil},
		{"r8169", eeectl.EEESet{TxLPITimer: d(10 * time.Microsecond)}, 250 * time.Microsecond, true, nil},
		{"veth", eeectl.EEESet{TxLPITimer: d(10 * time.Microsecond)}, 0, false, hwlink.ErrNotSupported},
		{"tg3", eeectl.EEESet{TxLPIEnabled: &off}, 250 * time.Microsecond, false, nil},
		{"tg3", eeectl.EEESet{TxLPITimer: d(-time.Microsecond)}, 0, false, hwlink.ErrRejected},
		{"igc", eeectl.EEESet{TxLPIEnabled: &on}, 250 * time.Microsecond, true, nil},
	}
	for _, tc := range tests {
		drv, err := emulatedDriver(tc.driver)
		if err != nil {
			t.Fatalf("%s: %v", tc.driver, err)
		}
		got, err := drv.apply("emu0", cur, tc.set)
		if tc.err != nil {
			if !errors.Is(err, tc.err) || !strings.HasPrefix(err.Error(), "emu0: ") {
				t.Errorf("%s %+v: error %v, want %v", tc.driver, tc.set, err, tc.err)
			}
			if got != cur {
				t.Errorf("%s: a refused set changed the registers: %+v", tc.driver, got)
			}
			continue
		}
		if err != nil || got.timer != tc.want || got.txLPIEnabled != tc.lpi || !got.eeeEnabled {
			t.Errorf("%s %+v: %+v, %v; want timer %v, tx LPI %v", tc.driver, tc.set, got, err, tc.want, tc.lpi)
		}
	}
	if _, err := emulatedDriver("no-such-driver"); err == nil || !strings.Contains(err.Error(), "driver table") {
		t.Errorf("unknown profile: %v", err)
	}
}

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

func TestEmulatedNames(t *testing.T) {
	for _, m := range []Mode{ModeAlwaysOn, ModeFastWake, ModeDeepSleep, ModeHybrid} {
		if got, err := ParseMode(" " + strings.ToUpper(m.String())); err != nil || got != m {
			t.Errorf("mode %v: %v, %v", m, got, err)
		}
	}
	if _, err := ParseMode("turbo"); err == nil {
		t.Error("mode turbo accepted")
	}
	for _, d := range []Delay{DelayEDT, DelaySpin, DelayNone} {
		if got, err := ParseDelay(d.String()); err != nil || got != d {
			t.Errorf("delay %v: %v, %v", d, got, err)
		}
	}
	if _, err := ParseDelay("sleep"); err == nil {
		t.Error("delay sleep accepted")
	}
	for s := StateWake; s < numEmulatedStates; s++ {
		if strings.HasPrefix(s.String(), "state(") {
			t.Errorf("state %d has no name", s)
		}
	}
	var b [8]int8
	setCString(b[:], "abcdefghij")
	if got := cString(b[:]); got != "abcdefg" {
		t.Errorf("C string round trip: %q", got)
	}
	if ethtoolModeForRate(1e9) != "1000baseT/Full" || ethtoolModeForRate(123) != "" {
		t.Error("link mode names")
	}
}
