// Package hil is the closed-loop hardware-in-the-loop experiment behind
// `lpictl hil run` (issue 13, docs/hil.md).
//
// It wires, and computes no model of its own:
//
//   - a line network in fresh network namespaces: host a, a forwarding
//     "switch" s and host b, joined by two veth pairs (a0–s0, s1–b0), with
//     addresses from 198.18.0.0/15 (RFC 2544) that exist only there;
//   - an emulated EEE port (emulate.Attach) on each of the four
//     egress ports, on a private bpffs;
//   - one `lpictl agent --backend hw --mode enforce` per namespace, the
//     binary itself as a subprocess, entering its namespace through
//     hw.netns and driving the emulated ports' tx LPI timers;
//   - a traffic generator (request/response probe, on/off and Poisson UDP,
//     bulk TCP, optionally iperf3) whose sockets live in the namespaces;
//
// and runs the same seeded traffic once always-on and once per predictor.
// The sim-to-real check replays each port's agent trace through
// controller/replay (what `lpictl predict` runs) and the traffic actually
// sent, written as a VEF trace, through sim/scenario on a host–switch–host
// topology (fbfly, dims [1], 2 nodes), and reports predicted next to
// measured figures.
//
// Everything it creates is removed on return, on error and on
// cancellation (SIGINT/SIGTERM through the context); leftovers of a run
// that was killed (named namespaces lpihil-<pid>-*, bpffs mounts of its
// work directory) are removed by the next run.
package hil
