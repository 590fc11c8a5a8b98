//go:build !amd64

package cache

// Prefetch would start loading the cache line at p; there is no prefetch
// instruction the simulator uses on this architecture, so it does nothing.
func Prefetch(p uintptr) {}

// PrefetchLines would prefetch lines cache lines from p.
func PrefetchLines(p uintptr, lines int) {}

// Prefetch2 would prefetch the lines at a and b.
func Prefetch2(a, b uintptr) {}

// Prefetch3 would prefetch the lines at a, b and c.
func Prefetch3(a, b, c uintptr) {}
