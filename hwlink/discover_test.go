package hwlink

import (
	"testing"
)

func TestPlanObservationSwitchdev(t *testing.T) {
	p := PortInfo{Switchdev: true, Driver: DriverInfo{Driver: "mlxsw_spectrum2"}}
	plan := planObservation(p, bpfSupport{ok: true, attach: "tcx"}, PSampleSupport{OK: true}, 10e6)
	if plan.Method != MethodPSample || plan.Fallback != MethodHWCounters {
		t.Errorf("mlxsw with psample: %+v", plan)
	}
	plan = planObservation(p, bpfSupport{ok: true}, PSampleSupport{Reason: "kernel lacks psample (CONFIG_PSAMPLE)"}, 10e6)
	if plan.Method != MethodHWCounters || plan.Resolution != 10e6 {
		t.Errorf("mlxsw without psample: %+v", plan)
	}
	dsa := PortInfo{Switchdev: true, Driver: DriverInfo{Driver: "dsa", SwitchDriver: "mt7530-mdio"}}
	if plan := planObservation(dsa, bpfSupport{ok: true}, PSampleSupport{OK: true}, 10e6); plan.Method != MethodHWCounters {
		t.Errorf("DSA (no sample offload): %+v", plan)
	}
	if plan := planObservation(PortInfo{}, bpfSupport{ok: true, attach: "tcx"}, PSampleSupport{}, 10e6); plan.Method != MethodEBPF {
		t.Errorf("host port: %+v", plan)
	}
}
