// Package graph holds the small graph algorithms the simulator's checks
// share: whether a channel dependency graph has a cycle (the deadlock
// tests of sim/network and sim/scenario, docs/simulator.md "Deadlocks").
package graph
