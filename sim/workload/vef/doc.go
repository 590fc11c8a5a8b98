// Package vef reads and writes VEF traces (docs/model.md §5; Andújar et al., "VEF
// Traces", CLUSTER 2015), the self-related MPI trace format of paper 000.
//
// It implements:
//   - §5 header, communicators, point-to-point and collective records
//     (Record, Header, Op, Dep);
//   - a streaming Reader that validates as it goes (counts, ranges, dense
//     IDs, dependencies of all four kinds, backward or forward, a receive
//     dependency only on the task's own receives, collective consistency)
//     in memory bounded by the replay window, not by the trace length, and
//     reports bad input as "FILE:LINE: …" (header counts at line 1, a
//     reference at the referencing line);
//   - a Writer producing the canonical text form, so that write → read →
//     write is byte-identical;
//   - Source, the stream of records every lpictl workload is expressed as
//     (sim/workload replays it; generated models produce it), and Scan,
//     which counts a stream for the header.
//
// Times are kept in picoseconds (VEF writes nanoseconds; fractions of a
// nanosecond are kept and written back with up to three decimals).
package vef
