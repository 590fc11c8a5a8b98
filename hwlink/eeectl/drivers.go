package eeectl

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// DriverCaps says what a driver does with the EEE tx LPI timer
// (read from each driver's kernel source, named per row in DefaultSource;
// docs/hwlink.md has the same table).
type DriverCaps struct {
	// Driver is the name ethtool reports (ETHTOOL_GDRVINFO).
	Driver string
	// TimerSettable: the driver takes a new tx_lpi_timer.
	TimerSettable bool
	// Refusal says why not, when TimerSettable is false.
	Refusal string
	// Unit is the resolution the driver keeps (the ethtool value is in µs;
	// a coarser hardware unit rounds).
	Unit time.Duration
	// Min and Max bound the accepted timer; Max 0 means no known limit
	// (the kernel ABI's u32 µs).
	Min, Max time.Duration
	// RangeFromFirmware: the real range is only known to the firmware
	// (bnxt); values outside it come back as ErrRejected.
	RangeFromFirmware bool
	// LinkFlap: a change is known (or, for unverified drivers, assumed) to
	// take the link down and up again, or to restart autonegotiation.
	LinkFlap bool
	// Verified is false where the entry rests on indirect evidence.
	Verified bool
	// Note is a short free-text remark shown in status output.
	Note string
	// DefaultTimer is the tx LPI timer the driver programs by itself
	// (0 = not known); DefaultSource says where that value comes from.
	// `lpictl ports --what-if` and the agent's estimates use it for the
	// driver-default policy.
	DefaultTimer  time.Duration
	DefaultSource string
}

// MaxTxLPITimer is the largest timer the ABI carries: u32 microseconds.
const MaxTxLPITimer = time.Duration(math.MaxUint32) * time.Microsecond

// driverTable is the per-driver knowledge read from the kernel's driver
// sources (each row names its file). Keys
// are ethtool driver names; aliases point to the same entry.
var driverTable = func() map[string]DriverCaps {
	intelRefusal := "driver rejects any tx_lpi_timer change (\"Setting EEE Tx LPI timer is not supported\"); only EEE on/off, which reinitialises the link"
	entries := []DriverCaps{
		{Driver: "igc", Refusal: intelRefusal, LinkFlap: true, Verified: true, Note: "LPI counters tx_lpi_counter/rx_lpi_counter"},
		{Driver: "igb", Refusal: intelRefusal, LinkFlap: true, Note: "assumed identical to igc"},
		{Driver: "ixgbe", Refusal: intelRefusal, LinkFlap: true, Verified: true},
		{Driver: "e1000e", Refusal: "tx LPI timer fixed in hardware; any different value is rejected (EINVAL)", Verified: true},
		{Driver: "mlx5_core", Refusal: "driver has no EEE operations (EOPNOTSUPP)"},
		{Driver: "r8169", Refusal: "driver programs its own idle timer; the value is report-only", Verified: true},
		{Driver: "st_gmac", TimerSettable: true, Unit: time.Microsecond, Max: 0xFFFFF * time.Microsecond, LinkFlap: true, Verified: true,
			Note:          "default 1000 µs; above 0xFFFFF µs a software timer is used, so the table clamps to the hardware timer",
			DefaultTimer:  1000 * time.Microsecond,
			DefaultSource: "drivers/net/ethernet/stmicro/stmmac/stmmac_main.c: STMMAC_DEFAULT_LPI_TIMER 1000, applied in µs (module parameter eee_timer)"},
		{Driver: "lan743x", TimerSettable: true, Unit: time.Microsecond, LinkFlap: true, Verified: true, Note: "a change restarts autonegotiation"},
		{Driver: "lan78xx", TimerSettable: true, Unit: time.Microsecond, LinkFlap: true, Verified: true, Note: "USB; phylink-managed EEE"},
		{Driver: "mvneta", TimerSettable: true, Unit: time.Microsecond, Max: 255 * time.Microsecond, LinkFlap: true, Verified: true, Note: "8-bit register; default 250 µs; EINVAL above 255",
			DefaultTimer:  250 * time.Microsecond,
			DefaultSource: "drivers/net/ethernet/marvell/mvneta.c: tx_lpi_timer initialised to 250 µs at probe"},
		{Driver: "mvpp2", TimerSettable: true, Unit: time.Microsecond, Max: 255 * time.Microsecond, LinkFlap: true, Verified: true, Note: "8-bit register; older kernels clamp to 255 silently"},
		{Driver: "mt7530", TimerSettable: true, Unit: time.Microsecond, Max: 0xFFF * time.Microsecond, LinkFlap: true, Verified: true, Note: "DSA switch; hardware unit unspecified, taken as µs"},
		{Driver: "bnxt_en", TimerSettable: true, Unit: time.Microsecond, RangeFromFirmware: true, LinkFlap: true, Verified: true, Note: "needs autoneg; single PF only; link reconfiguration assumed"},
		{Driver: "tg3", TimerSettable: true, Unit: time.Microsecond, Max: 0xFFFF * time.Microsecond, LinkFlap: true, Verified: true, Note: "set resets the PHY"},
		{Driver: "bnx2x", TimerSettable: true, Unit: time.Microsecond, Min: 0x100 * time.Microsecond, Max: 0xFFFFF * time.Microsecond, LinkFlap: true, Note: "minimum applies with tx LPI on; advertisement not settable"},
		{Driver: "an8855", TimerSettable: true, Unit: 2 * time.Microsecond, LinkFlap: true, Note: "DSA switch; hardware unit 2 µs"},
		{Driver: "fec", TimerSettable: true, Unit: time.Microsecond, LinkFlap: true, Note: "unverified"},
		{Driver: "bcmgenet", TimerSettable: true, Unit: time.Microsecond, LinkFlap: true, Note: "unverified"},
		{Driver: "macb", TimerSettable: true, Unit: time.Microsecond, LinkFlap: true, Note: "unverified; software-timed TX LPI is recent"},
	}
	aliases := map[string]string{
		"st_mac100":   "st_gmac",
		"stmmac":      "st_gmac",
		"mt7530-mdio": "mt7530",
		"mt7530-mmio": "mt7530",
		"mt7531":      "mt7530",
		// The an8855 switch's driver as sysfs names it (MFD child
		// "an8855-switch"; unverified).
		"an8855-switch": "an8855",
	}
	virtual := []string{"veth", "bridge", "bond", "team", "dummy", "tun", "vxlan", "macvlan", "ipvlan", "8021q", "openvswitch", "virtio_net", "vrf", "geneve", "wireguard", "nlmon"}
	t := make(map[string]DriverCaps, len(entries)+len(aliases)+len(virtual))
	for _, e := range entries {
		if e.Unit == 0 {
			e.Unit = time.Microsecond
		}
		t[e.Driver] = e
	}
	for alias, name := range aliases {
		e := t[name]
		e.Driver = alias
		t[alias] = e
	}
	for _, name := range virtual {
		t[name] = DriverCaps{Driver: name, Unit: time.Microsecond, Verified: true,
			Refusal: "virtual device without EEE (the kernel answers EOPNOTSUPP)"}
	}
	return t
}()

// LookupDriver returns the table entry for driver. Unknown drivers get a
// permissive default (settable, µs, the ABI's range, link flap assumed) and
// known=false: the kernel's answer decides.
func LookupDriver(driver string) (caps DriverCaps, known bool) {
	if c, ok := driverTable[driver]; ok {
		return c, true
	}
	return DriverCaps{Driver: driver, TimerSettable: true, Unit: time.Microsecond, LinkFlap: true,
		Note: "driver not in lpictl's table; kernel decides, link flap assumed"}, false
}

// DriverTable returns a copy of the table sorted by driver name, aliases
// included, for documentation and status output.
func DriverTable() []DriverCaps {
	out := make([]DriverCaps, 0, len(driverTable))
	for _, c := range driverTable {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b DriverCaps) int { return strings.Compare(a.Driver, b.Driver) })
	return out
}

// Fit rounds d to the driver's unit and clamps it to its range. It reports
// whether it had to round or clamp.
func (c DriverCaps) Fit(d time.Duration) (fitted time.Duration, rounded, clamped bool) {
	unit := c.Unit
	if unit <= 0 {
		unit = time.Microsecond
	}
	fitted = d
	if d < 0 {
		fitted, clamped = 0, true
	}
	if r := fitted.Round(unit); r != fitted {
		fitted, rounded = r, true
	}
	maxT := c.Max
	if maxT <= 0 || maxT > MaxTxLPITimer {
		maxT = MaxTxLPITimer
	}
	if fitted > maxT {
		fitted, clamped = maxT.Truncate(unit), true
	}
	if fitted < c.Min {
		fitted, clamped = c.Min, true
	}
	return fitted, rounded, clamped
}

// Range describes the accepted timer range for status output.
func (c DriverCaps) Range() string {
	if !c.TimerSettable {
		return "-"
	}
	if c.RangeFromFirmware {
		return "firmware-defined (µs)"
	}
	maxT := c.Max
	if maxT <= 0 {
		maxT = MaxTxLPITimer
	}
	return fmt.Sprintf("%v..%v step %v", c.Min, maxT, c.Unit)
}
