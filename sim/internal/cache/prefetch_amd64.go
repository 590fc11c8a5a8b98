package cache

// Prefetch asks the CPU to start loading the cache line at p without
// waiting for it (PREFETCHT0): unlike a load, it never stalls the
// instructions that follow, so the misses of the next event overlap the
// current one. p need not be a valid address.
//
//go:noescape
func Prefetch(p uintptr)

// PrefetchLines prefetches lines consecutive cache lines from p.
//
//go:noescape
func PrefetchLines(p uintptr, lines int)

// Prefetch2 is Prefetch of a and b in one call.
//
//go:noescape
func Prefetch2(a, b uintptr)

// Prefetch3 is Prefetch of a, b and c in one call.
//
//go:noescape
func Prefetch3(a, b, c uintptr)
