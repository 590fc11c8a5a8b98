package predictor

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Duration is a time.Duration that reads and writes human units in YAML and
// JSON ("12.5us", "3ms"); a bare number is nanoseconds.
type Duration time.Duration

// ParseDuration reads "12.5us", "3ms", "1s", "375ns", "4.48µs" or a plain
// number of nanoseconds ("2500", "12.5"). Negative values are refused:
// every duration lpictl reads (gaps, thresholds, transition times) is ≥ 0.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("empty duration")
	}
	var d time.Duration
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(f) || math.IsInf(f, 0) || f >= math.MaxInt64 || f <= math.MinInt64 {
			return 0, fmt.Errorf("duration %q out of range", s)
		}
		d = time.Duration(math.Round(f))
		if f < 0 {
			d = -1
		}
	} else {
		d, err = time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("invalid duration %q (want e.g. 12.5us, 3ms or nanoseconds)", s)
		}
	}
	if d < 0 {
		return 0, fmt.Errorf("negative duration %q", s)
	}
	return d, nil
}

// D returns the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

func (d Duration) String() string { return time.Duration(d).String() }

// UnmarshalYAML accepts a string with units or a number of nanoseconds.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a duration such as 10us, got a %s", n.Line, kindName(n.Kind))
	}
	v, err := ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes the Go duration string ("10µs").
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// MarshalText writes the Go duration string, for JSON and flags.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads what ParseDuration reads.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	default:
		return "non-scalar"
	}
}
