// Package traces makes the MPI program traces — SimGrid time-independent
// traces (package ti) and GOAL schedules (package sched) — workload kinds
// of the simulator: it registers the kinds ti and goal with package
// workload (workload.RegisterProgramKind), loads a trace into a schedule,
// checks it by replaying it on a contention-free host (a deadlock is an
// error at load time, naming the rank and operation), and runs it with the
// schedule executor. Import it for its side effect wherever workloads are
// built (the simulator's scenarios, lpictl workload).
package traces
