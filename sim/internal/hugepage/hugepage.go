package hugepage

import (
	"sync/atomic"
	"unsafe"
)

// Size is the huge page size the arrays are laid out for (x86-64's and
// arm64's transparent huge page with 4 KiB base pages).
const Size = 2 << 20

// MinBytes is the smallest array Make puts on huge pages: a smaller one
// spans few base pages, whose TLB misses cost little, and would take
// a whole huge page of memory where it uses half or less.
const MinBytes = 1 << 20

// Make returns a slice of n zero Ts like make([]T, n), whose memory the
// kernel is asked to back with huge pages when it is at least MinBytes.
// The slice starts less than one T after a huge page boundary: its
// allocation has up to one huge page more in front (T should be small
// against Size), which is never written, so it takes address space, not
// memory (Go does not write fresh memory it got from the kernel). Every
// whole huge page the slice spans is advised; the part of its last one
// past the allocation's end stays in base pages.
func Make[T any](n int) []T {
	var z T
	size := int(unsafe.Sizeof(z))
	if size == 0 || n*size < MinBytes {
		return make([]T, n)
	}
	raw := make([]T, n+(Size+size-1)/size)
	unused.Add(int64((len(raw) - n) * size))
	base := unsafe.Pointer(unsafe.SliceData(raw))
	lo := alignUp(uintptr(base)) - uintptr(base)
	first := (int(lo) + size - 1) / size
	hi := alignDown(uintptr(base)+uintptr(len(raw)*size)) - uintptr(base)
	if lo < hi {
		advise(unsafe.Slice((*byte)(unsafe.Add(base, lo)), hi-lo))
	}
	return raw[first : first+n : first+n]
}

// unused is the bytes Make has allocated around its slices.
var unused atomic.Int64

// Unused returns the bytes Make has allocated around the slices it
// returned, since the program started: the garbage collector counts them
// as heap (runtime.MemStats.HeapAlloc) while they are reachable, but they
// are never written, so never resident. A measurement of the heap a model
// takes subtracts them.
func Unused() int64 { return unused.Load() }

func alignUp(p uintptr) uintptr   { return (p + Size - 1) &^ (Size - 1) }
func alignDown(p uintptr) uintptr { return p &^ (Size - 1) }
