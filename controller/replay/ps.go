package replay

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// PS is a time in integer picoseconds, the simulator's unit (docs/model.md, "Units").
// The replay keeps its clock in PS so that a sub-nanosecond power-down
// handshake (64 B at 400 Gb/s is 1.28 ns) is modelled exactly; the
// controller and predictors still see time.Duration (ns), truncated as the
// simulator truncates it.
type PS int64

// Never is the t_PDT, in the simulator's port-trace notation, of a port
// that never sleeps (pdt_ps −1).
const Never PS = -1

// MaxTime is the latest time the replay clock can hold (2^63 − 1 ps, about
// 106.75 days), as in the simulator.
const MaxTime PS = math.MaxInt64

// FromDuration converts ns to ps; ok is false if the result overflows.
func FromDuration(d time.Duration) (p PS, ok bool) {
	if d < 0 || d > time.Duration(math.MaxInt64/1000) {
		return 0, false
	}
	return PS(d) * 1000, true
}

// D returns p as a time.Duration, truncated to the nanosecond (as the
// simulator hands its picosecond times to the controller).
func (p PS) D() time.Duration { return time.Duration(p / 1000) }

// Seconds returns p in seconds. For a whole number of nanoseconds it is
// exactly p.D().Seconds().
func (p PS) Seconds() float64 {
	sec, rem := p/1_000_000_000_000, p%1_000_000_000_000
	return float64(sec) + float64(rem)/1e12
}

// String formats p as time.Duration does ("11ns", "6.5µs", "1h0m0.5s"),
// with up to three more digits when p is not a whole number of
// nanoseconds ("11.28ns", "6.50256µs", "280ps").
func (p PS) String() string {
	if p%1000 == 0 {
		return p.D().String()
	}
	if p < 0 {
		if p == math.MinInt64 {
			return "-" + PS(math.MaxInt64).String() // off by 1 ps; never produced
		}
		return "-" + (-p).String()
	}
	v := int64(p)
	// frac writes x/unit with its fraction (unit is a power of ten, and
	// x is not a whole number of ns, so the fraction is never empty).
	frac := func(x, unit int64) string {
		f := strconv.FormatInt(x%unit+unit, 10)[1:] // zero-padded
		return strconv.FormatInt(x/unit, 10) + "." + strings.TrimRight(f, "0")
	}
	switch {
	case v < 1000:
		return strconv.FormatInt(v, 10) + "ps"
	case v < 1_000_000:
		return frac(v, 1000) + "ns"
	case v < 1_000_000_000:
		return frac(v, 1_000_000) + "µs"
	case v < 1_000_000_000_000:
		return frac(v, 1_000_000_000) + "ms"
	}
	const sec, minute, hour = 1_000_000_000_000, 60 * 1_000_000_000_000, 3600 * 1_000_000_000_000
	h, m := v/hour, v%hour/minute
	s := frac(v%minute, sec) + "s"
	switch {
	case h > 0:
		return strconv.FormatInt(h, 10) + "h" + strconv.FormatInt(m, 10) + "m" + s
	case m > 0:
		return strconv.FormatInt(m, 10) + "m" + s
	}
	return s
}

var psPerUnit = map[string]int64{
	"ps": 1, "ns": 1e3, "us": 1e6, "µs": 1e6, "μs": 1e6, "ms": 1e9,
	"s": 1e12, "m": 60e12, "h": 3600e12,
}

// ParsePS reads a duration with picosecond resolution: "11.28ns", "280ps",
// "1.5us" (or µs), "1h2m0.5s" — what String writes — or a plain number of
// nanoseconds ("11.28"). Digits below a picosecond are rounded half up.
// Negative values, and values above MaxTime, are refused.
func ParsePS(s string) (PS, error) {
	in := s
	s = strings.TrimSpace(s)
	invalid := func() error {
		return fmt.Errorf("invalid duration %q (want e.g. 11.28ns, 280ps, 1.5us or nanoseconds)", in)
	}
	if s == "" {
		return 0, errors.New("empty duration")
	}
	if s[0] == '-' {
		return 0, fmt.Errorf("negative duration %q", in)
	}
	if s[0] == '+' {
		s = s[1:]
	}
	if s == "" {
		return 0, invalid()
	}
	var total PS
	plain := true
	for s != "" {
		i := 0
		digits := 0
		dot := false
		for ; i < len(s); i++ {
			c := s[i]
			if c >= '0' && c <= '9' {
				digits++
			} else if c == '.' && !dot {
				dot = true
			} else {
				break
			}
		}
		if digits == 0 {
			return 0, invalid()
		}
		num := s[:i]
		j := i
		for j < len(s) && s[j] != '.' && (s[j] < '0' || s[j] > '9') {
			j++
		}
		unit := s[i:j]
		s = s[j:]
		if unit == "" {
			if !plain || s != "" {
				return 0, invalid()
			}
			unit = "ns"
		}
		plain = false
		scale, ok := psPerUnit[unit]
		if !ok {
			return 0, invalid()
		}
		v, ok := decimalPS(num, scale)
		if !ok || v > MaxTime-total {
			return 0, fmt.Errorf("duration %q out of range (at most %v)", in, MaxTime)
		}
		total += v
	}
	return total, nil
}

// decimalPS returns round(num × scale) for a decimal number num
// (digits with at most one '.').
func decimalPS(num string, scale int64) (PS, bool) {
	if strings.HasSuffix(num, ".") {
		num += "0"
	}
	if strings.HasPrefix(num, ".") {
		num = "0" + num
	}
	r, ok := new(big.Rat).SetString(num)
	if !ok {
		return 0, false
	}
	r.Mul(r, new(big.Rat).SetInt64(scale))
	// Round half up: ⌊r + 1/2⌋ (r ≥ 0).
	r.Add(r, big.NewRat(1, 2))
	q := new(big.Int).Quo(r.Num(), r.Denom())
	if !q.IsInt64() {
		return 0, false
	}
	return PS(q.Int64()), true
}

// UnmarshalYAML reads what ParsePS reads.
func (p *PS) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a duration such as 11.28ns", n.Line)
	}
	v, err := ParsePS(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*p = v
	return nil
}

// MarshalText writes String's form.
func (p PS) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText reads what ParsePS reads.
func (p *PS) UnmarshalText(b []byte) error {
	v, err := ParsePS(string(b))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// add returns a + b for a, b ≥ 0, and false if the sum exceeds MaxTime.
func add(a, b PS) (PS, bool) {
	if b > MaxTime-a {
		return 0, false
	}
	return a + b, true
}
