// Package simbackend is the agent's simulator backend (backend: sim): a
// dry run of lpictl before it touches hardware. It loads a simulator
// scenario (sim/scenario), names its ports — node<i> for node i's NIC,
// sw<s>p<j> for port j of switch s, with the switch's role (leaf, spine, …)
// as the driver label — and runs each port the agent selects as the
// simulator's link power model (sim/eee.Link: power-down threshold,
// handshake, t_s and t_w of the scenario's preset and mode) under the
// scenario's workload, paced to wall-clock time × sim.speed. Each ended
// idle period reaches the agent with its length, end, the t_PDT in force
// and whether the port had gone to low power (a miss); SetPDT changes the
// t_PDT armed at the next idle period, as on hardware.
//
// Limits: the selected ports are modelled one by one at the scenario's
// per-node offered load; the network's queueing, routing and PFC
// (sim/network) do not shape their traffic, because sim/network has no
// per-port hook for an external controller yet (docs/agent.md).
package simbackend
