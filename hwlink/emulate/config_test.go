package emulate

import (
	"strings"
	"testing"
)

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
