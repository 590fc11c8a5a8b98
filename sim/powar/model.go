package powar

import "fmt"

// Params are the power model's parameters (paper 002 Table 2), fractions
// in [0, 1].
type Params struct {
	// SleepPort (ωSport) is the fraction of a port's power it draws asleep.
	SleepPort float64
	// Ports (ωports) is the share of a switch's power due to its ports.
	Ports float64
	// Net (ωnet) is the share of the system's power due to the network.
	Net float64
	// SleepNodes (ωSnodes) is the fraction of a node's power it draws idle.
	SleepNodes float64
}

// DefaultParams are Table 2's values: ωSport 0.1, ωports 0.65, ωnet 0.15,
// ωSnodes 0.5.
func DefaultParams() Params {
	return Params{SleepPort: 0.1, Ports: 0.65, Net: 0.15, SleepNodes: 0.5}
}

// Validate checks that every parameter is a fraction; errors name the
// scenario key under routing.powar.model.
func (p Params) Validate() error {
	for _, f := range []struct {
		key string
		v   float64
	}{{"sleep_port", p.SleepPort}, {"ports", p.Ports}, {"net", p.Net}, {"sleep_nodes", p.SleepNodes}} {
		if !(f.v >= 0 && f.v <= 1) {
			return fmt.Errorf("routing.powar.model.%s: must be in [0, 1], got %v", f.key, f.v)
		}
	}
	return nil
}

// PortsPower is Eq. 1, W_ports of one switch: ωSport + (1 − ωSport) times
// the mean on-time fraction U of its ports. With floor false it is the
// reading of the paper's worked example (§2.3.4, Eq. 9), which puts the
// mean U straight into Eq. 3 (a sleeping port draws nothing).
func (p Params) PortsPower(meanU float64, floor bool) float64 {
	if !floor {
		return meanU
	}
	return p.SleepPort + (1-p.SleepPort)*meanU
}

// MeanOn is the mean of on-time fractions (0 for none).
func MeanOn(u []float64) float64 {
	if len(u) == 0 {
		return 0
	}
	var s float64
	for _, v := range u {
		s += v
	}
	return s / float64(len(u))
}

// SwitchPower is Eq. 2, W_sw = (1 − ωports) + ωports · W_ports.
func (p Params) SwitchPower(wPorts float64) float64 {
	return (1 - p.Ports) + p.Ports*wPorts
}

// NetPower is Eq. 3, W_net: the mean of the switches' W_sw, given their
// W_ports (1 for no switch).
func (p Params) NetPower(wPorts []float64) float64 {
	if len(wPorts) == 0 {
		return 1
	}
	return p.SwitchPower(MeanOn(wPorts))
}

// NodesPower is Eq. 4, W_nodes = ωSnodes + (1 − ωSnodes) · mean U_cpu.
func (p Params) NodesPower(meanCPU float64) float64 {
	return p.SleepNodes + (1-p.SleepNodes)*meanCPU
}

// ClusterPower is Eq. 5, W_cluster = ωnet · W_net + (1 − ωnet) · W_nodes.
func (p Params) ClusterPower(wNet, wNodes float64) float64 {
	return p.Net*wNet + (1-p.Net)*wNodes
}

// Run is one run as the model sees it.
type Run struct {
	RunTime float64 // any unit, the same for the runs compared
	WNet    float64 // Eq. 3
	WNodes  float64 // Eq. 4
}

// Cluster is the run's W_cluster (Eq. 5).
func (p Params) Cluster(r Run) float64 { return p.ClusterPower(r.WNet, r.WNodes) }

// Normalised are a run's figures against a reference run.
type Normalised struct {
	RunTime float64 // RunTime / RunTime_ref
	Net     float64 // E_net / E_net,ref (Eq. 6)
	Cluster float64 // E_cluster / E_cluster,ref (Eq. 7)
}

// Normalise compares run r with the reference ref: energies are power
// times run time (Eqs. 6, 7), so the factors are the powers' ratios times
// the run times' ratio.
func (p Params) Normalise(r, ref Run) Normalised {
	t := r.RunTime / ref.RunTime
	return Normalised{
		RunTime: t,
		Net:     r.WNet / ref.WNet * t,
		Cluster: p.Cluster(r) / p.Cluster(ref) * t,
	}
}
