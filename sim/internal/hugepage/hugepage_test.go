package hugepage

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

type line [64]byte

func TestMakeSmallIsPlain(t *testing.T) {
	s := Make[line](MinBytes/64 - 1)
	if len(s) != MinBytes/64-1 || cap(s) != len(s) {
		t.Fatalf("len %d cap %d, want %d", len(s), cap(s), MinBytes/64-1)
	}
	if Make[struct{}](10) == nil || len(Make[struct{}](10)) != 10 {
		t.Fatal("zero-size elements: want a plain slice of 10")
	}
	if len(Make[line](0)) != 0 {
		t.Fatal("n = 0: want an empty slice")
	}
}

// A large slice starts less than one element past a huge page boundary,
// has exactly n zero elements, and cannot be appended to in place (which
// would write into the allocation's unused rest).
func TestMakeLargeStartsOnBoundary(t *testing.T) {
	for _, n := range []int{MinBytes/960 + 1, 2048, 3*Size/960 + 7} {
		s := Make[[960]byte](n)
		if len(s) != n || cap(s) != n {
			t.Fatalf("n %d: len %d cap %d", n, len(s), cap(s))
		}
		if off := uintptr(unsafe.Pointer(&s[0])) % Size; off >= 960 {
			t.Errorf("n %d: starts %d B past a huge page boundary, want < 960", n, off)
		}
		for i := range s {
			for _, b := range s[i] {
				if b != 0 {
					t.Fatalf("n %d: element %d is not zero", n, i)
				}
			}
		}
	}
}

// On Linux with transparent huge pages, the kernel records the advice on
// the slice's memory: the mapping that holds it has the "hg" flag
// (MADV_HUGEPAGE) in /proc/self/smaps. Whether it then gets huge pages
// depends on the kernel's free memory, so that is not asserted.
func TestMakeAdvisesKernel(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("madvise(MADV_HUGEPAGE) is Linux's")
	}
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil {
		t.Skipf("this kernel has no transparent huge pages (%v)", err)
	}
	if strings.Contains(string(mode), "[never]") {
		t.Skip("transparent huge pages are disabled on this host ([never])")
	}
	s := Make[line](4 * Size / 64)
	for i := range s {
		s[i][0] = 1
	}
	addr := uintptr(unsafe.Pointer(&s[len(s)/2]))
	flags := vmFlags(t, addr)
	if !strings.Contains(" "+flags+" ", " hg ") {
		t.Errorf("the mapping holding the slice has VmFlags %q, want hg (MADV_HUGEPAGE)", flags)
	}
	runtime.KeepAlive(s)
}

// vmFlags returns the VmFlags of the mapping of /proc/self/smaps that
// holds addr.
func vmFlags(t *testing.T, addr uintptr) string {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if r, _, ok := strings.Cut(l, " "); ok && strings.Contains(r, "-") && !strings.HasSuffix(r, ":") {
			lo, hi, _ := strings.Cut(r, "-")
			a, err1 := strconv.ParseUint(lo, 16, 64)
			b, err2 := strconv.ParseUint(hi, 16, 64)
			in = err1 == nil && err2 == nil && uint64(addr) >= a && uint64(addr) < b
			continue
		}
		if in && strings.HasPrefix(l, "VmFlags:") {
			return strings.TrimSpace(strings.TrimPrefix(l, "VmFlags:"))
		}
	}
	t.Fatalf("no mapping in /proc/self/smaps holds %#x", addr)
	return ""
}

// Unused grows by what a large Make allocates around its slice (at most
// one huge page and one element), and not at all for a small one.
func TestUnused(t *testing.T) {
	u := Unused()
	Make[line](16)
	if d := Unused() - u; d != 0 {
		t.Errorf("a small slice: Unused grew by %d", d)
	}
	u = Unused()
	Make[[960]byte](4096)
	if d := Unused() - u; d < Size || d > Size+960 {
		t.Errorf("a large slice: Unused grew by %d, want %d to %d", d, Size, Size+960)
	}
}
