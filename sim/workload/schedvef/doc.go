// Package schedvef writes a schedule (package sched: per-rank send,
// receive and compute operations with dependencies, read from SimGrid TI or
// GOAL traces) as a VEF trace (package vef), where VEF can express it.
//
// VEF has one record per message and at most one dependency per record:
// none (an absolute time), the send of a message, or the receipt of a
// message, plus a delay. Write maps a schedule onto that:
//
//   - every Send becomes a message record; Recvs are matched to Sends
//     statically in MPI order per (source, destination, tag): the k-th
//     receive a rank posts for (src, tag) takes the k-th send src posts to
//     it with tag. A Send nobody receives is still written (it is eager);
//     a Recv without a Send is an error. An AnyTag receive takes the next
//     send from its source whatever the tag (MPI's non-overtaking order
//     per pair; SimGrid TI's sendRecv receives with any tag) when every
//     receive from that source on that rank takes any tag; mixing any-tag
//     and tagged receives from one source, and AnySource receives, are
//     errors (which send they match depends on timing);
//   - a Send's dependencies are followed back through Calc ops, their Time
//     summed into the delay (a max where branches join on the same event),
//     to at most one message event: the completion of a Recv of the same
//     rank (a receive dependency on its matched message) or of an earlier
//     Send of the same rank (a send dependency). No event at all gives an
//     absolute release time (dependency none);
//   - compute no Send or Calc waits for — a rank's final compute, or
//     compute only receives wait for — is written as a 0-byte message from
//     the rank to itself released after that compute (a marker): VEF's
//     replay counts it as a self-message (delivered at once, not through
//     the network, not in the per-rank message counts), so the rank's
//     finish time and compute include it. Markers with the same event
//     merge into one (the longest compute).
//
// What VEF cannot express is an error naming the rank, the op (its index
// and source line) and what: a dependency set with two or more message
// events (a waitall), a message event and an absolute time together, an
// irequires (start) dependency, a wildcard receive, a receive with no
// matching send, and a dependency cycle through messages (a deadlock).
//
// Semantics VEF drops, by design:
//   - VEF replays eagerly: a Send completes when it is handed to the
//     network whatever its size, so the executor's rendezvous above a
//     threshold (a large Send completing on delivery) has no counterpart;
//     the conversion is exact when every message is below the threshold;
//   - a receipt in VEF is its message's arrival: a Recv's own dependencies
//     (the receive being posted after other events or compute) do not
//     delay the receipt; compute before a receive is still counted, by
//     its marker. This is exact when every message arrives after its receive
//     is posted — true whenever the sender had to wait, directly or
//     through others, for the receiver's previous events (a ring, a
//     pipeline, exchanges between neighbours).
//
// Records are written in dependency order — by depth in the forest the
// single dependencies form, then rank, then op index — so every
// dependency refers to an earlier message and the IDs are dense from 0.
// Memory is a fixed few words per op and per message besides the schedule;
// the text is streamed through vef.Writer, never held whole (writing a
// file atomically is the caller's job). The output is deterministic.
package schedvef
