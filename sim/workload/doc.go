// Package workload drives the network simulator with MPI-like programs:
// VEF traces (docs/model.md §5), generated application models (package apps) and
// synthetic traffic, all expressed as one stream of VEF records and
// replayed by one dependency-driven Replayer.
//
// It implements:
//   - docs/model.md §5's replay semantics: each record is released when its
//     dependency (absolute time, send or receipt of a message, the task's
//     end of a collective) has happened, plus its delay; causality, not
//     timestamps, so a slower network stretches the run (§4 execution
//     time: when the last rank finishes);
//   - the expansion of the eight VEF collectives into point-to-point
//     messages with MPI libraries' algorithms (coll.go; binomial
//     bcast/reduce, recursive doubling / ring / Rabenseifner allreduce by
//     size, linear gather/scatter, ring allgather, dissemination barrier,
//     Bruck / pairwise alltoall);
//   - rank → node mappings (linear, seeded random, file) and multi-job
//     workloads on disjoint node sets (paper 001 §3.4);
//   - per-rank compute time, the node utilisation of docs/model.md §3.3's node
//     power model.
//
// The simulator talks to a Replayer through Host (Now, Send, Schedule) and
// calls back Delivered and Timer; time is int64 picoseconds. IdealHost is a
// contention-free Host for tests, `lpictl workload describe` and
// benchmarks. Build turns a Config (the scenario's workload: section) into
// a Workload; docs/workloads.md documents the model, the algorithms, the
// application models and the measured figures.
package workload
