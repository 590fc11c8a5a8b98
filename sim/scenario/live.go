package scenario

import "github.com/lpictl/lpictl/sim/network"

// NewNetwork builds the scenario's network with its workload attached,
// ready to run — Run's wiring without running it, for a caller that
// advances the network itself (network.RunUntil: the agent's sim backend
// runs it live). release frees the workload's resources (an open trace);
// call it when done with the network. Each call gives a fresh network
// that replays the workload from the start.
func (b *Built) NewNetwork() (n *network.Network, release func() error, err error) {
	n, err = network.New(b.Topology, b.Params)
	if err != nil {
		return nil, nil, b.scenario.named(err)
	}
	r, err := b.Workload.NewDriver()
	if err != nil {
		return nil, nil, err
	}
	if err := n.AttachWorkload(r); err != nil {
		r.Close()
		return nil, nil, err
	}
	return n, r.Close, nil
}
