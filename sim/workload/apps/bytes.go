package apps

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Bytes is a size in bytes that YAML may give as a number or with a unit:
// "64KiB", "1MiB", "1.5MB", "512B" (K/M/G = 10³…, Ki/Mi/Gi = 2¹⁰…).
type Bytes int64

var byteUnits = []struct {
	suffix string
	mult   float64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"kB", 1e3}, {"B", 1},
}

// ParseBytes reads a size such as "4096", "64KiB" or "1.5MB" (≥ 0).
func ParseBytes(s string) (Bytes, error) {
	s = strings.TrimSpace(s)
	mult := 1.0
	for _, u := range byteUnits {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("invalid size %q (want e.g. 4096, 64KiB or 1.5MB)", s)
	}
	v := f * mult
	if v < 0 || v >= math.MaxInt64/2 {
		return 0, fmt.Errorf("size %q out of range", s)
	}
	return Bytes(math.Round(v)), nil
}

// UnmarshalYAML accepts a number or a string with a unit.
func (b *Bytes) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a size such as 64KiB", n.Line)
	}
	v, err := ParseBytes(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*b = v
	return nil
}
