package agent

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/lpictl/lpictl/sim/power"
)

// ErrNotSupported is returned (wrapped) by a backend when a port cannot do
// something (e.g. its driver refuses tx LPI timer changes). Adapters wrap
// their own sentinel errors with it, so the agent can tell "cannot" from
// "failed".
var ErrNotSupported = errors.New("not supported")

// ErrPortGone is returned (wrapped) when a port disappeared.
var ErrPortGone = errors.New("port gone")

// Backend is a source of ports the agent controls: real Linux ports
// (package agent/hwbackend over hwlink) or simulated ones (agent/simbackend
// over the simulator). The agent calls it from one goroutine.
type Backend interface {
	// Name is the value of the metrics' backend label ("hw", "sim").
	Name() string
	// Now is the backend's clock; observations' End times are on it and
	// the controllers run on it (CLOCK_MONOTONIC on hardware, simulated
	// time in the simulator).
	Now() time.Duration
	// Step lets the backend advance before each decision round (the
	// simulator runs up to the paced wall-clock time; hardware does nothing).
	Step(ctx context.Context) error
	// Ports lists the ports that could be selected now.
	Ports(ctx context.Context) ([]PortInfo, error)
	// Open starts observing a port. The Port is used until Close.
	Open(ctx context.Context, info PortInfo) (Port, error)
	// Persistent says whether changes outlive the agent (hardware): then
	// original settings are recorded in the state file before a change and,
	// with safety.restore_on_exit, restored at the next start after a crash.
	Persistent() bool
	// Restore puts back a port's original settings by name (for records
	// of a previous run; the port is not open).
	Restore(ctx context.Context, name string, s Settings) error
	// Close releases everything (it does not restore settings).
	Close() error
}

// PortInfo identifies a port and says what can be done with it.
type PortInfo struct {
	Name   string
	Index  int    // ifindex, 0 if none
	MAC    string // hardware address, "" if none
	Driver string
	// Observation names the method idle periods come from (ebpf,
	// counters, hw-counters, sim, none).
	Observation string
	// CanSet: the tx LPI timer (t_PDT) can be set; Reason says why not (or
	// notes on an actuated port).
	CanSet bool
	Reason string
	// Register is the driver's timer range and unit.
	Register Register
	// WakeTime is t_w of the port's low-power state if the backend knows
	// it (simulator), 0 otherwise.
	WakeTime time.Duration
	// MissCost is the largest delay one miss can add on the port (the
	// delay ledger's reserve c) if the backend knows it (emulated ports,
	// simulator), 0 otherwise.
	MissCost time.Duration
	// Hops is the port's hop-count distribution if known (hops → share).
	Hops map[int]float64
	// Speed is the link speed in bits per second (0 = unknown); it picks
	// the power preset of the port's estimates, unless the port has its
	// own (Preset) or is Virtual.
	Speed uint64
	// Preset is the port's own power preset (an emulated EEE port's, from
	// its emulator), nil if none: its estimates use it.
	Preset *power.Preset
	// Virtual is the kind of a virtual device (veth, dummy, netkit, ifb)
	// whose Speed means nothing for power, "" otherwise: without a preset
	// of its own or configured, it gets no estimate.
	Virtual string
	// DefaultPDT is the tx LPI timer the driver programs by itself, if
	// known (0 otherwise): the estimates' driver-default policy.
	DefaultPDT time.Duration
}

// PDTNever as Observation.PDT: the port could not go to low power during
// the period (EEE or tx LPI off, an always-on port).
const PDTNever = time.Duration(math.MaxInt64)

// Observation is one ended idle period of a port's transmit side: from the
// end of the transmission that emptied the queue (End − Length) to the
// next packet (End). A Length of 0 (back to back) is no idle period and is
// ignored (docs/model.md §1.1).
type Observation struct {
	End    time.Duration // on the backend's clock
	Length time.Duration
	// Missed reports (when MissedKnown) that the port had gone to low power
	// and the next packet paid the wake-up (emulated and simulated ports).
	// Hardware cannot tell; the agent then takes Length ≥ t_PDT in force.
	Missed      bool
	MissedKnown bool
	// PDT is the t_PDT in force during the period, if known (0 = use the
	// agent's; PDTNever: the port could not sleep).
	PDT time.Duration
	// Delay is how long the packet that ended the period waited for the
	// port's power state (wake-up), if known (0 otherwise).
	Delay time.Duration
}

// EEEState is a port's EEE state as last read.
type EEEState struct {
	Enabled, Active, TxLPIEnabled bool
	TxLPITimer                    time.Duration
}

// ApplyResult is what a change did.
type ApplyResult struct {
	Applied   time.Duration // read back
	Clamped   bool          // the driver's range cut the value
	Unchanged bool          // nothing was sent
}

// PortCounters are a port's cumulative counters.
type PortCounters struct {
	// CarrierChanges counts carrier transitions (a flap is two).
	CarrierChanges uint64
	// LowPowerTime is the time the port spent in low power, when
	// LowPowerKnown (simulator; hardware only where the driver reports it).
	LowPowerTime  time.Duration
	LowPowerKnown bool
	// LPIEntries counts entries into LPI where reported.
	LPIEntries      uint64
	LPIEntriesKnown bool
}

// Claimer is implemented by ports that can be owned by one process at a
// time (the hardware backend's: hwlink.ClaimPort). The agent claims a port
// before its first write in enforce mode and leaves it alone when another
// process owns it.
type Claimer interface {
	Claim() error
}

// HoldSetter is a Port with a hybrid hold register (an emulated EEE port):
// the agent sets it to the hold its predictor chooses with t_PDT.
type HoldSetter interface {
	SetHold(ctx context.Context, d time.Duration) error
}

// Port is one open port of a backend.
type Port interface {
	// Drain moves pending idle periods into dst and returns how many.
	Drain(dst []Observation) (int, error)
	// Hops moves the hop counts of packets sent since the last call into
	// f (hops, packets); backends without per-packet hops do nothing.
	Hops(f func(hops int, packets uint64))
	// EEE reads the port's EEE state.
	EEE(ctx context.Context) (EEEState, error)
	// SetPDT sets the tx LPI timer, and nothing else.
	SetPDT(ctx context.Context, d time.Duration) (ApplyResult, error)
	// Restore sets the timer and tx LPI enabled back to s.
	Restore(ctx context.Context, s Settings) error
	// Counters reads the cumulative counters.
	Counters(ctx context.Context) (PortCounters, error)
	// Close stops observing (it does not restore settings).
	Close() error
}
