// Package network is the simulator's packet-level model of an HPC network
// (docs/model.md §3, Table 6) with EEE ports (docs/model.md §1) and energy accounting
// (docs/model.md §3.3, §4):
//
//   - NICs segment messages at the MTU and inject after the NIC latency;
//     every link serialises packets at the link rate and adds its
//     propagation latency (store-and-forward at packet granularity);
//   - CIOQ switches with input and output buffers, a crossbar with speed-up,
//     aging arbitration (oldest head-of-line packet first, round-robin among
//     equals) and the switch latency as the minimum traversal time;
//   - routing: the topology's deterministic minimal routing, or ECMP
//     (routing.go): each flow hashed onto one of the equal-cost minimal
//     paths that topo.MultiPath lists, the same path for all its packets;
//   - PFC per input buffer with STOP/GO thresholds: lossless, no packet is
//     ever dropped (a violated headroom is counted, and Validate refuses
//     parameters that allow it);
//   - at every port (NIC and switch port) a controller.Port from the
//     scenario's predictor/controller configuration decides t_PDT, and the
//     link power state machine of package eee applies it lazily;
//   - workloads: the network is a sim/workload Host (workload.go): VEF
//     traces (docs/model.md §5), the application models and synthetic traffic are
//     replayed through it, with the replay's execution time (docs/model.md §4) and
//     per-node compute utilisation (docs/model.md §3.3); Inject adds single
//     messages (tests);
//   - per-state times, energy, latency and idle-period statistics.
//
// Components interact only through events scheduled at least one link
// latency ahead (packets, PFC frames) plus the link's shared power state;
// see docs/simulator.md for the model's readings and what is not modelled.
package network
