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
// that event's state: a large model is bound by memory latency). Objects
// of a model talk to one another through events scheduled at least a
// lookahead ahead, or through state they order explicitly (Engine.Sync),
// so that a partitioned conservative engine ([Parallel], "Parallel runs"
// below) runs them on several goroutines with the sequential engine's
// results.
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
// [SourceBits] of the 64-bit key (below its top bit, which marks a late
// event) and the count the low [CountBits], so that keys compare as one
// integer; keys are unique.
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
// both objects in one partition, or the receiver's kind late.
//
// # Late events
//
// The events of a late kind ([Engine.SetLate]; the key's top bit) run
// after every other event of the same time, among themselves in key order.
// A model makes late the events of an object that only reacts to the rest
// (a workload driver told of deliveries): if it schedules other objects'
// events only a lookahead or more ahead, and nothing else reads what it
// changes within the picosecond, making its kinds late changes no result,
// and a Parallel run can run them apart, after the other events of a
// window, even though other objects schedule them with no delay.
//
// # Parallel runs
//
// [Parallel] runs an engine's pending events on Plan.Parts goroutines, one
// partition each (Plan.Part: the partition of every object), in windows of
// Plan.Lookahead, exchanging the events partitions schedule for one
// another, with their keys, between windows: each partition takes those
// sent it as its next window starts, while the senders fill a second
// buffer (Parallel.Export and Parallel.Import let the model move what
// they address). It gives every event the key and the
// position among its object's events that the sequential engine gives it,
// by the argument above, with two additions:
//   - State two objects of different partitions share with no delay
//     (Plan.Conflict) is touched only after Engine.Sync, which waits until
//     the other partitions have run every event before the running one in
//     the sequential order, and none after: an event precedes another
//     partition's of the same picosecond exactly when the largest key its
//     own partition has run at that picosecond so far is less than the
//     other's (the sequential engine merges the partitions' sequences by
//     running the least pending event), so each partition publishes that
//     position (every few events, and as soon as it passes the position a
//     waiting partition posted) and the least one never waits;
//   - late events run apart, after the other events of their window, on
//     whichever goroutine would otherwise wait, during the next windows
//     as long as what they schedule for the partitions cannot arrive
//     before the window ends (Plan.LateLookahead), else first, alone.
//
// Only the kinds in Plan.Crossing (and the late kinds) are looked up on
// their way to a queue: a model names the kinds it may schedule for
// another partition's objects, and race-detector builds check it.
package engine
