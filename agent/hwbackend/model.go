package hwbackend

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/google/renameio/v2"

	"github.com/lpictl/lpictl/configs"
	"github.com/lpictl/lpictl/hwlink/eeectl"
	"github.com/lpictl/lpictl/hwlink/fakedriver"
)

// ModelPort is one port of a driver-model file.
type ModelPort struct {
	Name   string `json:"name"`
	Driver string `json:"driver"`
	// MAC identifies the port across renames (optional).
	MAC string          `json:"mac,omitempty"`
	EEE eeectl.EEEState `json:"eee"`
	// CarrierChanges counts carrier transitions (a flap is two).
	CarrierChanges uint64 `json:"carrier_changes"`
	// Sets counts EEE writes that reached the modelled driver.
	Sets uint64 `json:"sets"`
	// Behaviour overrides the driver table's behaviour (optional).
	Behaviour *fakedriver.Behaviour `json:"behaviour,omitempty"`
}

// ModelDoc is the JSON form of a driver-model file.
type ModelDoc struct {
	Ports []ModelPort `json:"ports"`
}

// ModelFile is an eeectl.EEEBackend over hwlink/fakedriver whose port
// states live in a JSON file, rewritten atomically after every change, so
// they outlive the process like a NIC's registers outlive a crashed agent.
// It is how the hw backend is tried and tested without hardware
// (hw.eee_backend: model): drivers accept, refuse, clamp and bounce the
// link as hwlink's driver table says.
type ModelFile struct {
	path  string
	model *fakedriver.Model

	mu   sync.Mutex
	doc  ModelDoc
	base map[string]ModelPort // state at load, for carrier and set counts
}

var _ eeectl.EEEBackend = (*ModelFile)(nil)

// WriteModel writes a driver-model file (for tests and demos).
func WriteModel(path string, doc ModelDoc) error {
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return renameio.WriteFile(path, append(data, '\n'), 0o644)
}

// ReadModel reads a driver-model file.
func ReadModel(path string) (ModelDoc, error) {
	var doc ModelDoc
	data, err := configs.ReadFile(path)
	if err != nil {
		return doc, fmt.Errorf("driver model: %w", err)
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return doc, fmt.Errorf("driver model %s: %w", path, err)
	}
	return doc, nil
}

// OpenModel loads a driver-model file.
func OpenModel(path string) (*ModelFile, error) {
	doc, err := ReadModel(path)
	if err != nil {
		return nil, err
	}
	m := &ModelFile{path: path, model: fakedriver.New(), doc: doc, base: map[string]ModelPort{}}
	for _, p := range doc.Ports {
		if p.Name == "" {
			return nil, fmt.Errorf("driver model %s: a port without a name", path)
		}
		b := fakedriver.BehaviourFor(p.Driver)
		if p.Behaviour != nil {
			b = *p.Behaviour
		}
		m.model.AddPortWith(p.Name, p.Driver, b, p.EEE)
		m.base[p.Name] = p
	}
	return m, nil
}

// Ports returns the modelled ports as last saved.
func (m *ModelFile) Ports() []ModelPort {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]ModelPort(nil), m.doc.Ports...)
}

// CarrierChanges returns a port's carrier transitions.
func (m *ModelFile) CarrierChanges(name string) (uint64, bool) {
	p, ok := m.model.Port(name)
	if !ok {
		return 0, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.base[name].CarrierChanges + uint64(p.CarrierChanges), true
}

// DriverName implements eeectl.EEEBackend.
func (m *ModelFile) DriverName(ctx context.Context, ifname string) (string, error) {
	return m.model.DriverName(ctx, ifname)
}

// GetEEE implements eeectl.EEEBackend.
func (m *ModelFile) GetEEE(ctx context.Context, ifname string) (eeectl.EEEState, error) {
	return m.model.GetEEE(ctx, ifname)
}

// SetEEE implements eeectl.EEEBackend and saves the file.
func (m *ModelFile) SetEEE(ctx context.Context, ifname string, set eeectl.EEESet) error {
	err := m.model.SetEEE(ctx, ifname, set)
	if serr := m.save(); serr != nil && err == nil {
		err = serr
	}
	return err
}

func (m *ModelFile) save() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, d := range m.doc.Ports {
		p, ok := m.model.Port(d.Name)
		if !ok {
			continue
		}
		b := m.base[d.Name]
		d.EEE = p.EEE
		d.CarrierChanges = b.CarrierChanges + uint64(p.CarrierChanges)
		d.Sets = b.Sets + uint64(p.Sets)
		m.doc.Ports[i] = d
	}
	return WriteModel(m.path, m.doc)
}
