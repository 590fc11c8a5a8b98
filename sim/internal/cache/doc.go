// Package cache holds the simulator's cache hints: prefetch instructions
// that start loading the memory the next events will need while the
// current one runs (a large model is bound by memory latency, not by its
// instructions). They never change what a program computes.
package cache
