// Package simbackend is the agent's simulator backend (backend: sim): a
// dry run of lpictl before it touches hardware. It loads a simulator
// scenario (sim/scenario) and runs its whole network — topology, workload,
// NICs, CIOQ switches, routing, PFC and the EEE links of sim/network — paced
// to wall-clock time × sim.speed (as fast as it can when it cannot keep
// up). Ports are named node<i> (node i's NIC) and sw<s>p<j> (port j of
// switch s), with "nic" or the switch's role (leaf, spine, …) as the
// driver label.
//
// A port the agent opens is externally controlled in the network
// (network.Externalize): its t_PDT is no longer decided by the scenario's
// predictor but held at the value in force when it was opened (the
// scenario's initial t_PDT at the start) until the agent sets another
// (enforce mode), which is armed at the port's next idle period as the
// power-down threshold timer is (docs/model.md §1.1). Each ended idle period reaches
// the agent with its end, length, the t_PDT in force and whether the
// packet that ended it paid a wake-up (a miss), and the hop counts of the
// packets the port sent feed the predictor's hop factor. Ports the agent
// does not control run the scenario's predictor, as in `lpictl sim run`.
//
// When the workload has ended and the network has drained, the scenario
// starts again (sim.loop, the default: a fresh network replaying the same
// workload, on a clock that continues) or the network idles.
package simbackend
