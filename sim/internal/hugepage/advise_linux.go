package hugepage

import "golang.org/x/sys/unix"

// advise asks for huge pages on b (whole huge pages). An error (a kernel
// without transparent huge pages says EINVAL) leaves the memory as it is.
func advise(b []byte) { _ = unix.Madvise(b, unix.MADV_HUGEPAGE) }
