// Package engine is the simulator's discrete-event core (docs/model.md §3, "Units"):
// time is an int64 count of picoseconds, events are small typed values
// ordered by time and a key that each object gives the events it schedules
// (see "Event order"), so that a run is reproducible bit for bit from its
// seed, and the pending-event set is a pluggable [Queue]: a typed 4-ary
// heap ([Heap], the default) or a calendar queue with a bitmap of
// non-empty buckets and a far-future heap ([Calendar]). In front of the
// queue, lanes ([Engine.UseLane]) take the events of kinds the model
// schedules at a constant delay: FIFOs sorted by construction, merged with
// the queue by (time, key), so they change the cost of a run, not its
// order.
//
// Events carry no interface value: a kind, an object index and an argument
// index, dispatched by one [Handler] the model registers (which may also be
// a [Prefetcher], told the next event ahead so that it can start loading
// that event's state: a large model is bound by memory latency). Models talk to
// each other only through events scheduled at least one link latency ahead,
// so that a partitioned conservative engine (lookahead = the minimum link
// latency) could run them later without a model rewrite; this package is
// the sequential engine only.
//
// # Event order
//
// Every event is run by an object of the model, its owner: object
// base + Obj or object base alone, by the event's kind ([Engine.SetOwner];
// by default 1 + Obj). Object 0, [Outside], stands for the code that runs
// while no event does (a model's set-up, what a driver does between calls
// of [Engine.Run]). An event's key ([Event].Seq) is the pair (source,
// count): its source is the owner of the event that was running when it
// was scheduled (Outside if none), and count is how many events that
// source had scheduled, this one included. The source takes the high
// [SourceBits] of the 64-bit key and the count the low [CountBits], so
// that keys compare as one integer; keys are unique.
//
// The engine runs, again and again, the pending event with the least
// (At, source, count). So events that are pending together run in that
// order: by time, ties by source, ties of one source in the order it
// scheduled them. An event scheduled for the current picosecond runs after
// the event that scheduled it (it did not exist before), before any
// pending event with a larger key. The heap, the calendar and the lanes
// all give this order: the queues order by (At, key); a lane keeps its
// events in that order (it takes an event after its last one, or one of
// the same time that it can insert among its last ones; the queue takes
// the others), and the engine runs the least of the lanes' heads and the
// queue's.
//
// The order depends on no global counter: an object's keys depend only on
// the order in which that object ran its own events. It is therefore the
// same whichever objects share a thread, and a partitioned engine running
// the objects on any number of threads reproduces it, and the run, event
// for event, if it
//   - places every object in one partition, which runs all the events that
//     object owns (the owner is a function of the kind and Obj only);
//   - keeps each object's count where the object lives and keys every
//     event as here: from the owner of the event running, Outside for set-up
//     and between runs (done by one thread, in the same order as here);
//     an event sent to another partition keeps its key;
//   - runs, in each partition, the least pending (At, key) first, with every
//     event another partition sends with an At inside the current window
//     already in its pending set: true of a conservative engine whose window
//     is at most the least delay of an event between partitions (the
//     lookahead), since such an event was scheduled in an earlier window.
//
// Then a partition's pending events with an At in the window are those of
// the sequential run, and its least is the sequential run's next event of
// that partition: events of other partitions in the same picosecond cannot
// touch its state, whatever their keys. Events an object schedules for
// another object with less delay than the lookahead (zero included) need
// both objects in one partition.
package engine
