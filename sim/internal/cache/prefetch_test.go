package cache

import (
	"testing"
	"unsafe"
)

// TestPrefetchAnyAddress checks that hints are harmless: prefetching a
// real line, nil, or an address nothing is mapped at neither faults nor
// changes memory.
func TestPrefetchAnyAddress(t *testing.T) {
	buf := make([]byte, 256)
	for i := range buf {
		buf[i] = byte(i)
	}
	p := uintptr(unsafe.Pointer(&buf[0]))
	Prefetch(p)
	PrefetchLines(p, 4)
	PrefetchLines(p, 0)
	Prefetch2(p, p+64)
	Prefetch3(p, p+64, 0)
	Prefetch(0)
	Prefetch(^uintptr(0) &^ 63)
	for i := range buf {
		if buf[i] != byte(i) {
			t.Fatalf("byte %d changed", i)
		}
	}
}
