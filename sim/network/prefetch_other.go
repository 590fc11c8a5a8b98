//go:build !amd64

package network

// prefetch would start loading the cache line at p; there is no prefetch
// instruction the simulator uses on this architecture, so it does nothing.
func prefetch(p uintptr) {}

// prefetchLines would prefetch lines cache lines from p.
func prefetchLines(p uintptr, lines int) {}
