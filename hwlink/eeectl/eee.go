package eeectl

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/lpictl/lpictl/hwlink"
)

// EEEState is a port's Energy Efficient Ethernet state as the kernel
// reports it (ETHTOOL_MSG_EEE_GET_REPLY or ETHTOOL_GEEE).
type EEEState struct {
	// Supported, Advertised and LinkPartner are EEE link modes by ethtool
	// name ("1000baseT/Full"). Over the ioctl only the first 32 legacy
	// modes exist.
	Supported   []string `json:"supported"`
	Advertised  []string `json:"advertised"`
	LinkPartner []string `json:"link_partner"`
	// Enabled is the administrative switch (advertise EEE).
	Enabled bool `json:"enabled"`
	// Active: EEE was negotiated on the current link. A potential, not
	// proof of LPI residency.
	Active bool `json:"active"`
	// TxLPIEnabled: the MAC may assert tx LPI.
	TxLPIEnabled bool `json:"tx_lpi_enabled"`
	// TxLPITimer is the delay after the last frame before tx LPI (t_PDT).
	TxLPITimer time.Duration `json:"tx_lpi_timer_ns"`
	// Source is "netlink" or "ioctl".
	Source string `json:"source"`
}

// EEESet is a raw EEE change. Nil fields are not sent; the advertisement
// is never part of it.
type EEESet struct {
	TxLPITimer   *time.Duration
	TxLPIEnabled *bool
}

// EEEBackend is the kernel-facing side: it reads and writes EEE settings
// and names a port's driver. [EthtoolBackend] talks to the kernel; package
// fakedriver models drivers for tests.
type EEEBackend interface {
	GetEEE(ctx context.Context, ifname string) (EEEState, error)
	SetEEE(ctx context.Context, ifname string, set EEESet) error
	DriverName(ctx context.Context, ifname string) (string, error)
}

// TxLPIRequest asks for a tx LPI timer (and, optionally, tx LPI on/off).
type TxLPIRequest struct {
	Timer time.Duration
	// TxLPIEnabled, when non-nil, is sent too.
	TxLPIEnabled *bool
}

// TxLPIResult reports what an apply did.
type TxLPIResult struct {
	Driver    string        `json:"driver"`
	Requested time.Duration `json:"requested_ns"`
	// Sent is the value after rounding and clamping to the driver's range.
	Sent time.Duration `json:"sent_ns"`
	// Applied is what the kernel reports afterwards (read back).
	Applied time.Duration `json:"applied_ns"`
	Rounded bool          `json:"rounded"`
	Clamped bool          `json:"clamped"`
	// Unchanged: the port already had the value; nothing was sent.
	Unchanged bool `json:"unchanged"`
	// LinkFlapExpected: the driver is known or assumed to bounce the link
	// on a change; callers should rate-limit and watch carrier changes.
	LinkFlapExpected bool `json:"link_flap_expected"`
}

// EEEController reads a port's EEE state and applies the tx LPI timer. It
// is what the agent drives, one port at a time; [Actuator] implements it.
type EEEController interface {
	GetEEE(ctx context.Context, ifname string) (EEEState, error)
	SetTxLPI(ctx context.Context, ifname string, req TxLPIRequest) (TxLPIResult, error)
}

// Capability is what lpictl can do with a port's EEE.
type Capability struct {
	// CanSetTimer: the tx LPI timer can be driven on this port.
	CanSetTimer bool `json:"can_set_timer"`
	// Reason explains an observe-only port (or notes about an actuated one).
	Reason string     `json:"reason"`
	Caps   DriverCaps `json:"-"`
	// Known: the driver is in lpictl's table.
	Known bool `json:"driver_known"`
}

// Actuator applies tx LPI timers through an EEEBackend, using the
// per-driver table: known refusals are not sent, values are rounded and
// clamped to the driver's range, the result is read back. It holds no state
// beyond its configuration and is safe for concurrent use if the backend is.
type Actuator struct {
	backend EEEBackend
	log     *slog.Logger
}

// NewActuator returns an Actuator over backend. A nil logger discards.
func NewActuator(backend EEEBackend, log *slog.Logger) (*Actuator, error) {
	if backend == nil {
		return nil, errors.New("hwlink: NewActuator: nil backend")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Actuator{backend: backend, log: log}, nil
}

var _ EEEController = (*Actuator)(nil)

// GetEEE reads the port's EEE state.
func (a *Actuator) GetEEE(ctx context.Context, ifname string) (EEEState, error) {
	return a.backend.GetEEE(ctx, ifname)
}

// Probe says whether the timer can be driven on ifname, without changing
// anything (no test write: on phylib drivers even a no-op set may bounce the
// link).
func (a *Actuator) Probe(ctx context.Context, ifname string) (Capability, error) {
	driver, err := a.backend.DriverName(ctx, ifname)
	if err != nil {
		return Capability{Reason: err.Error()}, err
	}
	caps, known := LookupDriver(driver)
	c := Capability{Caps: caps, Known: known}
	if !caps.TimerSettable {
		c.Reason = fmt.Sprintf("observe-only: %s: %s", driver, caps.Refusal)
		return c, nil
	}
	if _, err := a.backend.GetEEE(ctx, ifname); err != nil {
		switch {
		case errors.Is(err, hwlink.ErrNotSupported):
			c.Reason = fmt.Sprintf("observe-only: driver %s reports no EEE support (EOPNOTSUPP)", driver)
			return c, nil
		case errors.Is(err, hwlink.ErrPermission):
			c.Reason = "observe-only: no permission to read EEE state"
			return c, nil
		}
		c.Reason = "observe-only: " + err.Error()
		return c, err
	}
	c.CanSetTimer = true
	c.Reason = fmt.Sprintf("tx LPI timer %s", caps.Range())
	if caps.LinkFlap {
		c.Reason += "; a change bounces the link"
	}
	if !known {
		c.Reason += "; driver not in table"
	}
	return c, nil
}

// SetTxLPI sets the tx LPI timer (and tx LPI enabled if requested) without
// touching the EEE advertisement. Drivers known to refuse get an error
// matching ErrNotSupported without a write; the value is fitted to the
// driver's range first (Rounded/Clamped say so) and read back afterwards.
func (a *Actuator) SetTxLPI(ctx context.Context, ifname string, req TxLPIRequest) (TxLPIResult, error) {
	res := TxLPIResult{Requested: req.Timer}
	driver, err := a.backend.DriverName(ctx, ifname)
	if err != nil {
		return res, err
	}
	res.Driver = driver
	caps, _ := LookupDriver(driver)
	res.LinkFlapExpected = caps.LinkFlap
	if !caps.TimerSettable {
		return res, fmt.Errorf("%s: set tx LPI timer: driver %s: %s: %w", ifname, driver, caps.Refusal, hwlink.ErrNotSupported)
	}
	res.Sent, res.Rounded, res.Clamped = caps.Fit(req.Timer)
	cur, err := a.backend.GetEEE(ctx, ifname)
	if err != nil {
		return res, err
	}
	if cur.TxLPITimer == res.Sent && (req.TxLPIEnabled == nil || *req.TxLPIEnabled == cur.TxLPIEnabled) {
		res.Applied, res.Unchanged = cur.TxLPITimer, true
		return res, nil
	}
	set := EEESet{TxLPITimer: &res.Sent, TxLPIEnabled: req.TxLPIEnabled}
	if err := a.backend.SetEEE(ctx, ifname, set); err != nil {
		return res, err
	}
	after, err := a.backend.GetEEE(ctx, ifname)
	if err != nil {
		return res, fmt.Errorf("%s: read back after set: %w", ifname, err)
	}
	res.Applied = after.TxLPITimer
	if res.Clamped || res.Rounded || res.Applied != res.Sent {
		a.log.Info("tx LPI timer adjusted", "device", ifname, "driver", driver,
			"requested", req.Timer, "sent", res.Sent, "applied", res.Applied,
			"clamped", res.Clamped, "rounded", res.Rounded)
	}
	return res, nil
}
