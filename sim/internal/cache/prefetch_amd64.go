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
