package fakedriver

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/eeectl"
)

// Behaviour is how a modelled driver reacts to EEE requests: the driver
// profile package eeectl derives from its table, shared with the emulated
// EEE port (package emulate). Adjust fields to model variants.
type Behaviour = eeectl.DriverProfile

// BehaviourFor derives a driver's behaviour from the driver table
// (eeectl.ProfileFor). Unknown drivers accept any value.
func BehaviourFor(driver string) Behaviour { return eeectl.ProfileFor(driver) }

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

// DriverName implements eeectl.EEEBackend.
func (m *Model) DriverName(_ context.Context, ifname string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, err := m.port(ifname)
	if err != nil {
		return "", err
	}
	return p.Driver, nil
}

// GetEEE implements eeectl.EEEBackend.
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

// SetEEE implements eeectl.EEEBackend with the port's driver behaviour.
func (m *Model) SetEEE(_ context.Context, ifname string, set eeectl.EEESet) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, err := m.port(ifname)
	if err != nil {
		return err
	}
	b := p.Behaviour
	if b.NoEEE {
		return fmt.Errorf("%s: EEE set: %w", ifname, hwlink.ClassifyErrno(unix.EOPNOTSUPP))
	}
	p.Sets++
	lpi, err := b.Apply(ifname, eeectl.TxLPI{Timer: p.EEE.TxLPITimer, Enabled: p.EEE.TxLPIEnabled}, set)
	if err != nil {
		return err
	}
	next := p.EEE
	next.TxLPITimer, next.TxLPIEnabled = lpi.Timer, lpi.Enabled
	changed := next.TxLPITimer != p.EEE.TxLPITimer || next.TxLPIEnabled != p.EEE.TxLPIEnabled
	p.EEE = next
	if changed && b.LinkFlap && p.Carrier {
		p.CarrierChanges += 2
	}
	return nil
}
