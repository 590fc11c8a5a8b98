// Package whatif is `lpictl ports --what-if`: it observes a host's ports
// for a while (hwlink's eBPF or counter observers), feeds every egress idle
// period to the shadow EEE estimator (sim/estimate) under several policies
// — always-on, plain EEE, the driver's default timer, a fixed timer and
// the agent's default predictor — and recommends what fits each port's
// driver: a timer where it can be set, EEE on or off where only that
// exists, the saving it would have where the NIC has no EEE (docs/agent.md
// "What EEE would save"; the model is docs/model.md §1.1 and §3.3).
package whatif
