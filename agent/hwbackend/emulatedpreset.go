package hwbackend

import (
	"github.com/lpictl/lpictl/hwlink/emulate"
	"github.com/lpictl/lpictl/sim/power"
)

// emulate.Preset takes what an emulated EEE port needs from a power
// preset: the port's powers and transition times (docs/model.md §1). It
// is EmulatorPreset's inverse.
func EmulatedPreset(p *power.Preset) emulate.Preset {
	ep := emulate.Preset{Name: p.Name, RateBps: p.RateBps, WakePowerW: p.WakePowerW}
	low := func(l *power.LowPower) *emulate.LowPower {
		if l == nil {
			return nil
		}
		return &emulate.LowPower{PowerW: l.Power(p.WakePowerW), Wake: l.WakeTime.D(), Sleep: l.SleepTime.D()}
	}
	ep.FastWake, ep.DeepSleep = low(p.FastWake), low(p.DeepSleep)
	return ep
}
