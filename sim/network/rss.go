package network

import (
	"syscall"
	"time"
)

// peakRSS returns the process's peak resident set size in bytes (Linux
// reports ru_maxrss in KiB), or 0 when unavailable.
func peakRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return int64(ru.Maxrss) * 1024
}

// processCPU is the process's user and system CPU time, or 0 when
// unavailable.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
