// Package hugepage allocates the simulator's large, randomly accessed
// arrays (ports, controller slots, the replay window) so that the kernel
// can back them with 2 MiB transparent huge pages.
//
// A run touches these arrays at random, one or two cache lines per port
// per event, over tens of megabytes: with 4 KiB pages nearly every such
// access also misses the TLB and walks the page table. Most Linux
// distributions enable transparent huge pages only for memory a process
// asks for with madvise(MADV_HUGEPAGE), and the Go runtime does not ask
// for its heap; this package asks for these arrays. It is advice: where
// the kernel has no huge page at hand, where THP is disabled, or on other
// systems, the memory is ordinary and the program computes the same.
// docs/simulator.md ("Huge pages") has the measurements.
package hugepage
