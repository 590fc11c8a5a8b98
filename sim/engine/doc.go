// Package engine is the simulator's discrete-event core (docs/model.md §3, "Units"):
// time is an int64 count of picoseconds, events are small typed values
// ordered by (time, insertion sequence) so that a run is reproducible
// bit for bit from its seed, and the pending-event set is a pluggable
// [Queue]: a typed 4-ary heap ([Heap], the default) or a calendar queue
// with a bitmap of non-empty buckets and a far-future heap ([Calendar]).
// In front of the queue, lanes ([Engine.UseLane]) take the events of kinds
// the model schedules at a constant delay: FIFOs sorted by construction,
// merged with the queue by (time, sequence), so they change the cost of a
// run, not its order.
//
// Events carry no interface value: a kind, an object index and an argument
// index, dispatched by one [Handler] the model registers (which may also be
// a [Prefetcher], told the next event ahead so that it can start loading
// that event's state: a large model is bound by memory latency). Models talk to
// each other only through events scheduled at least one link latency ahead,
// so that a partitioned conservative engine (lookahead = the minimum link
// latency) could run them later without a model rewrite; this package is
// the sequential engine only.
package engine
