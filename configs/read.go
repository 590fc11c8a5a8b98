package configs

import (
	"fmt"
	"io"
	"os"
)

// MaxFileSize bounds a configuration file read from a path (a scenario, a
// sweep file, a power preset, a predict or workload config): 4 MiB, far
// more than any of them needs, so that `-c /dev/zero` or a trace given by
// mistake stops at once instead of filling the memory.
const MaxFileSize = 4 << 20

// ReadFile reads the configuration file at path, at most MaxFileSize bytes.
func ReadFile(path string) ([]byte, error) {
	return ReadFileLimit(path, MaxFileSize, "a configuration file")
}

// ReadFileLimit reads the file at path if it holds at most limit bytes;
// a longer one (or a device that never ends, such as /dev/zero) is an
// error that names the path, the limit and what the file should have been
// (what, e.g. "a configuration file"). Nothing beyond limit+1 bytes is read.
func ReadFileLimit(path string, limit int64, what string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: longer than %s: not %s", path, sizeString(limit), what)
	}
	return data, nil
}

// sizeString writes a byte count in MiB or KiB when it is a whole number
// of them.
func sizeString(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
