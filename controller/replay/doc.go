// Package replay drives one controller.Port over a recorded sequence of idle
// periods and simulates the port's PDT timer over them with the simulator's
// link model (docs/model.md §1.1, sim/eee): an idle period of exactly t_PDT is a
// miss, going down starts 2H after t_PDT (the power-down handshake), a gap
// of 0 is no idle period. Time is kept in picoseconds (PS), as in the
// simulator.
//
// Two inputs: a gap file (ReadGaps: one idle period length per line, the
// periods back to back on the replay's own clock) and a simulator port
// trace (ReadTrace, port_trace.csv: absolute start times, hop counts and
// the simulator's own t_PDT and outcome, which Replayer.Row and ReplayTrace
// compare decision by decision). Read detects which one it is given. The
// package backs `lpictl predict`.
package replay
