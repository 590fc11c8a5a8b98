package powar

import (
	"math"
	"testing"
)

// TestWorkedExample reproduces the paper's worked example (§2.3.4,
// Table 3): two switches whose ports are on 70 % and 80 % of the run,
// CPUs busy 75 % over 685 000 time units, against the reference (ports
// always on, CPUs 80 %, 650 000).
//
// Hand calculation, the example's reading (Eq. 9 puts U straight into
// Eq. 3, no sleep floor):
//
//	W_net      = 0.35 + 0.65·(0.7 + 0.8)/2 = 0.35 + 0.4875   = 0.8375
//	W_nodes    = 0.5 + 0.5·0.75                              = 0.875
//	W_cluster  = 0.15·0.8375 + 0.85·0.875 = 0.125625 + 0.74375 = 0.869375
//	reference: W_net = 1, W_nodes = 0.5 + 0.5·0.8 = 0.9, W_cluster = 0.15 + 0.765 = 0.915
//	E_net      = 0.8375·685000 / (1·650000)       = 573687.5 / 650000   = 0.88260 (paper: 0.8826)
//	E_cluster  = 0.869375·685000 / (0.915·650000) = 595521.875 / 594750 = 1.00130 (paper: 1.0013)
//
// With Eq. 1 applied (floor ωSport = 0.1): W_ports = 0.1 + 0.9·U = 0.73
// and 0.82, so
//
//	W_net      = 0.35 + 0.65·0.775                  = 0.85375
//	W_cluster  = 0.15·0.85375 + 0.74375             = 0.8718125
//	E_net      = 0.85375·685000 / 650000            = 584818.75 / 650000  = 0.89972
//	E_cluster  = 0.8718125·685000 / 594750          = 597191.5625 / 594750 = 1.00411
//
// The reference is the same under both readings (U = 1 gives W_ports = 1).
func TestWorkedExample(t *testing.T) {
	p := DefaultParams()
	for _, c := range []struct {
		name                     string
		floor                    bool
		wNet, wCluster           float64 // exact
		eNet, eCluster           float64 // exact
		paperENet, paperECluster float64 // as printed (4 decimals)
	}{
		{"example reading (no floor)", false, 0.8375, 0.869375, 573687.5 / 650000, 595521.875 / 594750, 0.8826, 1.0013},
		{"Eq. 1 applied", true, 0.85375, 0.8718125, 584818.75 / 650000, 597191.5625 / 594750, 0.8997, 1.0041},
	} {
		wPorts := []float64{p.PortsPower(0.7, c.floor), p.PortsPower(0.8, c.floor)}
		run := Run{RunTime: 685000, WNet: p.NetPower(wPorts), WNodes: p.NodesPower(0.75)}
		refPorts := []float64{p.PortsPower(1, c.floor), p.PortsPower(1, c.floor)}
		ref := Run{RunTime: 650000, WNet: p.NetPower(refPorts), WNodes: p.NodesPower(0.8)}
		near := func(got, want, tol float64) bool { return math.Abs(got-want) <= tol }
		if !near(run.WNet, c.wNet, 1e-12) || !near(p.Cluster(run), c.wCluster, 1e-12) {
			t.Errorf("%s: W_net %v W_cluster %v, want %v %v", c.name, run.WNet, p.Cluster(run), c.wNet, c.wCluster)
		}
		if !near(ref.WNet, 1, 1e-12) || !near(p.Cluster(ref), 0.915, 1e-12) {
			t.Errorf("%s: reference W_net %v W_cluster %v, want 1 0.915", c.name, ref.WNet, p.Cluster(ref))
		}
		n := p.Normalise(run, ref)
		if !near(n.Net, c.eNet, 1e-12) || !near(n.Cluster, c.eCluster, 1e-12) {
			t.Errorf("%s: E_net %v E_cluster %v, want %v %v", c.name, n.Net, n.Cluster, c.eNet, c.eCluster)
		}
		if !near(n.Net, c.paperENet, 5e-5) || !near(n.Cluster, c.paperECluster, 5e-5) {
			t.Errorf("%s: E_net %.4f E_cluster %.4f, the paper's figures %v %v", c.name, n.Net, n.Cluster, c.paperENet, c.paperECluster)
		}
		if !near(n.RunTime, 1.054, 5e-4) {
			t.Errorf("%s: run time %v, want 1.054", c.name, n.RunTime)
		}
	}
}

// TestModelBounds checks the model's extremes: all ports asleep the whole
// run gives the lowest W_net, 0.35 + 0.65·0.1 = 0.415 (so at equal run time
// no more than 58.5 % network saving with the floor), 0.35 without it.
func TestModelBounds(t *testing.T) {
	p := DefaultParams()
	if w := p.NetPower([]float64{p.PortsPower(0, true)}); math.Abs(w-0.415) > 1e-12 {
		t.Errorf("floor: W_net %v, want 0.415", w)
	}
	if w := p.NetPower([]float64{p.PortsPower(0, false)}); math.Abs(w-0.35) > 1e-12 {
		t.Errorf("no floor: W_net %v, want 0.35", w)
	}
	if w := p.NetPower(nil); w != 1 {
		t.Errorf("no switch: W_net %v, want 1", w)
	}
	if MeanOn(nil) != 0 || MeanOn([]float64{0.2, 0.4}) != 0.30000000000000004 {
		t.Errorf("MeanOn: %v %v", MeanOn(nil), MeanOn([]float64{0.2, 0.4}))
	}
}

func TestParamsValidate(t *testing.T) {
	if err := DefaultParams().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		p    Params
		want string
	}{
		{Params{SleepPort: -0.1, Ports: 0.65, Net: 0.15, SleepNodes: 0.5}, "routing.powar.model.sleep_port: must be in [0, 1], got -0.1"},
		{Params{SleepPort: 0.1, Ports: 1.5, Net: 0.15, SleepNodes: 0.5}, "routing.powar.model.ports: must be in [0, 1], got 1.5"},
		{Params{SleepPort: 0.1, Ports: 0.65, Net: math.NaN(), SleepNodes: 0.5}, "routing.powar.model.net: must be in [0, 1], got NaN"},
		{Params{SleepPort: 0.1, Ports: 0.65, Net: 0.15, SleepNodes: 2}, "routing.powar.model.sleep_nodes: must be in [0, 1], got 2"},
	} {
		if err := c.p.Validate(); err == nil || err.Error() != c.want {
			t.Errorf("%+v: %v, want %q", c.p, err, c.want)
		}
	}
}
