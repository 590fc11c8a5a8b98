package eeectl

import (
	"fmt"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lpictl/lpictl/hwlink"
)

// DriverProfile is how a driver's EEE interface reacts to get and set
// requests: the driver table's entry ([LookupDriver]) turned into
// behaviour. It is the one model of a driver that both package fakedriver
// (tests without hardware) and package emulate (the emulated EEE port)
// apply. Derive it with [ProfileFor] and adjust fields to model variants.
type DriverProfile struct {
	// NoEEE: the driver has no EEE operations (get and set: EOPNOTSUPP).
	NoEEE bool
	// RefuseTimer: any timer change is EINVAL (igc, igb, ixgbe, e1000e).
	RefuseTimer bool
	// IgnoreTimer: the set succeeds but the timer stays (r8169).
	IgnoreTimer bool
	// Unit: the hardware keeps multiples of Unit (rounds down).
	Unit time.Duration
	// Min, Max: range; outside it EINVAL, or clamping if ClampSilently.
	// Max 0: no limit.
	Min, Max      time.Duration
	ClampSilently bool
	// LinkFlap: a change takes the link down and up (two carrier changes).
	LinkFlap bool
}

// ProfileFor derives a driver's profile from the driver table. Unknown
// drivers accept any value.
func ProfileFor(driver string) DriverProfile {
	caps, _ := LookupDriver(driver)
	p := DriverProfile{Unit: caps.Unit, Min: caps.Min, Max: caps.Max, LinkFlap: caps.LinkFlap}
	if !caps.TimerSettable {
		switch {
		case strings.Contains(caps.Refusal, "EOPNOTSUPP"):
			p.NoEEE = true
		case strings.Contains(caps.Refusal, "report-only"):
			p.IgnoreTimer = true
		default:
			p.RefuseTimer = true
		}
	}
	switch driver {
	case "mvpp2":
		p.ClampSilently = true // older kernels clamp to 255 µs
	case "bnxt_en":
		// A plausible firmware range; tests may change it.
		p.Min, p.Max = time.Microsecond, 0xFFFF*time.Microsecond
	}
	return p
}

// TxLPI is the part of a port's EEE state that a set request changes.
type TxLPI struct {
	Timer   time.Duration
	Enabled bool
}

// Apply is what the driver makes of a set request on ifname: the new
// tx LPI timer and enable, or the kernel's error (wrapped in hwlink's
// sentinels: EOPNOTSUPP → ErrNotSupported, EINVAL → ErrRejected).
func (p DriverProfile) Apply(ifname string, cur TxLPI, set EEESet) (TxLPI, error) {
	if p.NoEEE {
		return cur, fmt.Errorf("%s: EEE set: %w", ifname, hwlink.ClassifyErrno(unix.EOPNOTSUPP))
	}
	next := cur
	if set.TxLPITimer != nil {
		v, err := p.applyTimer(ifname, cur.Timer, *set.TxLPITimer)
		if err != nil {
			return cur, err
		}
		next.Timer = v
	}
	if set.TxLPIEnabled != nil {
		if p.RefuseTimer && *set.TxLPIEnabled != cur.Enabled {
			return cur, einval(ifname, "tx-lpi change not supported")
		}
		next.Enabled = *set.TxLPIEnabled
	}
	return next, nil
}

// applyTimer is the timer the driver keeps when asked for v.
func (p DriverProfile) applyTimer(ifname string, cur, v time.Duration) (time.Duration, error) {
	switch {
	case p.RefuseTimer && v != cur:
		return cur, einval(ifname, "Setting EEE Tx LPI timer is not supported")
	case p.IgnoreTimer:
		return cur, nil
	}
	if p.Max > 0 && v > p.Max {
		if !p.ClampSilently {
			return cur, einval(ifname, fmt.Sprintf("tx_lpi_timer %v above %v", v, p.Max))
		}
		v = p.Max
	}
	if v < p.Min {
		if !p.ClampSilently {
			return cur, einval(ifname, fmt.Sprintf("tx_lpi_timer %v below %v", v, p.Min))
		}
		v = p.Min
	}
	if p.Unit > 0 {
		v = v.Truncate(p.Unit)
	}
	return v, nil
}

// einval is the kernel's EINVAL for a set on ifname, with why.
func einval(ifname, why string) error {
	return fmt.Errorf("%s: EEE set: %w (%s)", ifname, hwlink.ClassifyErrno(unix.EINVAL), why)
}
