// Package sched holds schedules of MPI programs — per-rank send, receive
// and compute operations with dependencies on the same rank's operations —
// their GOAL reader and writer, and the Executor that replays a schedule
// with MPI semantics on the simulator's network through workload.Host.
//
// A Schedule is the one in-memory form that user programs become: the
// textual GOAL schedules of LogGOPSim, Schedgen and ATLAHS (ParseGOAL,
// WriteGOAL) and, through their readers, other trace formats. Time is
// int64 picoseconds; GOAL's calc is in ns and is kept ×1000.
//
// The executor's model, and the choices that are ours:
//   - An op starts when its dependencies are met ("requires": the other op
//     completed; "irequires": it started); ops without dependencies start
//     at time 0. A rank may run many ops at once: only the dependencies
//     order them (GOAL's model; blocking calls are chains of requires).
//   - Sends of at most Options.EagerThreshold bytes (DefaultEagerThreshold,
//     64 KiB) are eager and complete when handed to the network; larger
//     sends are rendezvous (RTS, CTS once the receive is posted, data) and
//     complete when the data is delivered. RTS and CTS are 0-byte messages
//     (the host sends them as one minimum-size packet).
//   - Matching is MPI's, non-overtaking between each pair of ranks; the
//     receive's size is not checked against the message's.
//   - Ranks on one node (Options.Nodes) talk through an intra-node path
//     (IntraLatency, default 0.5 µs as workload.IntraNode; IntraBandwidth,
//     0 = infinite) that never reaches the host; a rank's messages to
//     itself arrive at once.
//   - A replay whose events run out with ops left fails with an error that
//     names the first stuck op (its rank, index and FILE:LINE).
package sched
