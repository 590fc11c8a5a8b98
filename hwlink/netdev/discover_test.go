package netdev

import (
	"testing"

	"github.com/lpictl/lpictl/hwlink/eeectl"
	"github.com/lpictl/lpictl/hwlink/observe"
)

func TestPlanObservationSwitchdev(t *testing.T) {
	p := PortInfo{Switchdev: true, Driver: eeectl.DriverInfo{Driver: "mlxsw_spectrum2"}}
	plan := planObservation(p, bpfSupport{ok: true, attach: "tcx"}, observe.PSampleSupport{OK: true}, 10e6)
	if plan.Method != observe.MethodPSample || plan.Fallback != observe.MethodHWCounters {
		t.Errorf("mlxsw with psample: %+v", plan)
	}
	plan = planObservation(p, bpfSupport{ok: true}, observe.PSampleSupport{Reason: "kernel lacks psample (CONFIG_PSAMPLE)"}, 10e6)
	if plan.Method != observe.MethodHWCounters || plan.Resolution != 10e6 {
		t.Errorf("mlxsw without psample: %+v", plan)
	}
	dsa := PortInfo{Switchdev: true, Driver: eeectl.DriverInfo{Driver: "dsa", SwitchDriver: "mt7530-mdio"}}
	if plan := planObservation(dsa, bpfSupport{ok: true}, observe.PSampleSupport{OK: true}, 10e6); plan.Method != observe.MethodHWCounters {
		t.Errorf("DSA (no sample offload): %+v", plan)
	}
	if plan := planObservation(PortInfo{}, bpfSupport{ok: true, attach: "tcx"}, observe.PSampleSupport{}, 10e6); plan.Method != observe.MethodEBPF {
		t.Errorf("host port: %+v", plan)
	}
}
