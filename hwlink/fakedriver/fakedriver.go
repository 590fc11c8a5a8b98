package fakedriver

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/eeectl"
)

// Behaviour is how a modelled driver reacts to EEE requests. Derive it
// from the table with BehaviourFor and adjust fields to model variants.
type Behaviour struct {
	// NoEEE: the driver has no EEE operations (get and set: EOPNOTSUPP).
	NoEEE bool
	// RefuseTimer: any timer change is EINVAL (igc, igb, ixgbe, e1000e).
	RefuseTimer bool
	// IgnoreTimer: the set succeeds but the timer stays (r8169).
	IgnoreTimer bool
	// Unit: the hardware keeps multiples of Unit (rounds down).
	Unit time.Duration
	// Min, Max: range; outside it EINVAL, or clamping if ClampSilently.
	Min, Max      time.Duration
	ClampSilently bool
	// LinkFlap: a change takes the link down and up (two carrier changes).
	LinkFlap bool
}

// BehaviourFor derives a driver's behaviour from hwlink's table. Unknown
// drivers accept any value.
func BehaviourFor(driver string) Behaviour {
	caps, _ := eeectl.LookupDriver(driver)
	b := Behaviour{Unit: caps.Unit, Min: caps.Min, Max: caps.Max, LinkFlap: caps.LinkFlap}
	if !caps.TimerSettable {
		switch {
		case strings.Contains(caps.Refusal, "EOPNOTSUPP"):
			b.NoEEE = true
		case strings.Contains(caps.Refusal, "report-only"):
			b.IgnoreTimer = true
		default:
			b.RefuseTimer = true
		}
	}
	if driver == "mvpp2" {
		b.ClampSilently = true // older kernels clamp to 255 µs
	}
	if driver == "bnxt_en" {
		// A plausible firmware range; tests may change it.
		b.Min, b.Max = time.Microsecond, 0xFFFF*time.Microsecond
	}
	return b
}

// Port is the modelled state of one port.
type Port struct {
	Name      string
	Driver    string
	Behaviour Behaviour
	EEE       eeectl.EEEState
	Carrier   bool
	// CarrierChanges counts carrier transitions (as /sys/…/carrier_changes).
	CarrierChanges int
	// Sets counts SetEEE calls that reached the driver.
	Sets int
}

// Model is a set of ports behind one fake backend. Safe for concurrent use.
type Model struct {
	mu    sync.Mutex
	ports map[string]*Port
}

var _ eeectl.EEEBackend = (*Model)(nil)

// New returns an empty model.
func New() *Model { return &Model{ports: make(map[string]*Port)} }

// AddPort adds a port with the driver's table behaviour, carrier up, EEE
// enabled and active on 1000baseT/Full, and the given initial timer.
func (m *Model) AddPort(name, driver string, timer time.Duration) {
	m.AddPortWith(name, driver, BehaviourFor(driver), eeectl.EEEState{
		Supported: []string{"100baseT/Full", "1000baseT/Full"}, Advertised: []string{"100baseT/Full", "1000baseT/Full"},
		LinkPartner: []string{"1000baseT/Full"}, Enabled: true, Active: true, TxLPIEnabled: true,
		TxLPITimer: timer, Source: "fake",
	})
}

// AddPortWith adds a port with explicit behaviour and state.
func (m *Model) AddPortWith(name, driver string, b Behaviour, st eeectl.EEEState) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ports[name] = &Port{Name: name, Driver: driver, Behaviour: b, EEE: st, Carrier: true}
}

// Port returns a copy of a port's state.
func (m *Model) Port(name string) (Port, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.ports[name]
	if !ok {
		return Port{}, false
	}
	c := *p
	c.EEE.Supported = slices.Clone(p.EEE.Supported)
	c.EEE.Advertised = slices.Clone(p.EEE.Advertised)
	c.EEE.LinkPartner = slices.Clone(p.EEE.LinkPartner)
	return c, true
}

func (m *Model) port(name string) (*Port, error) {
	p, ok := m.ports[name]
	if !ok {
		return nil, fmt.Errorf("%s: %w", name, hwlink.ClassifyErrno(unix.ENODEV))
	}
	return p, nil
}

// DriverName implements hwlink.EEEBackend.
func (m *Model) DriverName(_ context.Context, ifname string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, err := m.port(ifname)
	if err != nil {
		return "", err
	}
	return p.Driver, nil
}

// GetEEE implements hwlink.EEEBackend.
func (m *Model) GetEEE(_ context.Context, ifname string) (eeectl.EEEState, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, err := m.port(ifname)
	if err != nil {
		return eeectl.EEEState{}, err
	}
	if p.Behaviour.NoEEE {
		return eeectl.EEEState{}, fmt.Errorf("%s: EEE get: %w", ifname, hwlink.ClassifyErrno(unix.EOPNOTSUPP))
	}
	st := p.EEE
	st.Supported = slices.Clone(st.Supported)
	st.Advertised = slices.Clone(st.Advertised)
	st.LinkPartner = slices.Clone(st.LinkPartner)
	return st, nil
}

// SetEEE implements hwlink.EEEBackend with the port's driver behaviour.
func (m *Model) SetEEE(_ context.Context, ifname string, set eeectl.EEESet) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, err := m.port(ifname)
	if err != nil {
		return err
	}
	b := p.Behaviour
	einval := func(why string) error {
		return fmt.Errorf("%s: EEE set: %w (%s)", ifname, hwlink.ClassifyErrno(unix.EINVAL), why)
	}
	if b.NoEEE {
		return fmt.Errorf("%s: EEE set: %w", ifname, hwlink.ClassifyErrno(unix.EOPNOTSUPP))
	}
	p.Sets++
	next := p.EEE
	if set.TxLPITimer != nil {
		v := *set.TxLPITimer
		switch {
		case b.RefuseTimer && v != p.EEE.TxLPITimer:
			return einval("Setting EEE Tx LPI timer is not supported")
		case b.IgnoreTimer:
		default:
			if b.Max > 0 && v > b.Max {
				if !b.ClampSilently {
					return einval(fmt.Sprintf("tx_lpi_timer %v above %v", v, b.Max))
				}
				v = b.Max
			}
			if v < b.Min {
				if !b.ClampSilently {
					return einval(fmt.Sprintf("tx_lpi_timer %v below %v", v, b.Min))
				}
				v = b.Min
			}
			if b.Unit > 0 {
				v = v.Truncate(b.Unit)
			}
			next.TxLPITimer = v
		}
	}
	if set.TxLPIEnabled != nil {
		if b.RefuseTimer && *set.TxLPIEnabled != p.EEE.TxLPIEnabled {
			return einval("tx-lpi change not supported")
		}
		next.TxLPIEnabled = *set.TxLPIEnabled
	}
	changed := next.TxLPITimer != p.EEE.TxLPITimer || next.TxLPIEnabled != p.EEE.TxLPIEnabled
	p.EEE = next
	if changed && b.LinkFlap && p.Carrier {
		p.CarrierChanges += 2
	}
	return nil
}
