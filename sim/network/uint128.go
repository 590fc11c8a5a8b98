package network

import (
	"math"
	"math/bits"
)

// uint128 is an unsigned 128-bit sum, for totals of picosecond times over
// many links that would overflow int64.
type uint128 struct{ hi, lo uint64 }

func (u *uint128) add(v uint64) {
	var c uint64
	u.lo, c = bits.Add64(u.lo, v, 0)
	u.hi += c
}

func (u *uint128) add128(v uint128) {
	var c uint64
	u.lo, c = bits.Add64(u.lo, v.lo, 0)
	u.hi, _ = bits.Add64(u.hi, v.hi, c)
}

func (u uint128) zero() bool { return u.hi == 0 && u.lo == 0 }

func (u uint128) float() float64 { return float64(u.hi)*math.Exp2(64) + float64(u.lo) }

// ratio is u/d in [0, 1] for u ≤ d.
func (u uint128) ratio(d uint128) float64 { return min(1, u.float()/d.float()) }
