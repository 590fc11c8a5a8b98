package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/google/renameio/v2"
	"golang.org/x/sys/unix"
)

// StateFileName is the state file in the state directory.
const StateFileName = "state.json"

const stateVersion = 1

// Settings are the EEE settings lpictl changes (and restores): never the
// advertisement.
type Settings struct {
	TxLPITimer   time.Duration `json:"tx_lpi_timer_ns"`
	TxLPIEnabled bool          `json:"tx_lpi_enabled"`
}

// PortRecord is what the state file keeps for a port lpictl has changed:
// its identity (to find it again after a rename) and its original settings.
type PortRecord struct {
	Name       string    `json:"name"`
	Index      int       `json:"ifindex,omitempty"`
	MAC        string    `json:"mac,omitempty"`
	Driver     string    `json:"driver,omitempty"`
	Backend    string    `json:"backend"`
	Original   Settings  `json:"original"`
	RecordedAt time.Time `json:"recorded_at"`
}

type stateDoc struct {
	Version int                   `json:"version"`
	Ports   map[string]PortRecord `json:"ports"`
}

// StateFile is the agent's record of original EEE settings, kept in
// StateDir/state.json. Every change is written atomically (temporary file,
// fsync, rename, fsync of the directory) before the port is touched, so a
// crash at any point leaves either the old or the new record. A lock file
// keeps a second agent off the same directory.
type StateFile struct {
	path string
	lock *os.File

	mu  sync.Mutex
	doc stateDoc
}

// OpenState opens (creating) the state directory and file and takes the
// lock. A corrupt file is an error: its records may be the only copy of a
// port's original settings; the operator decides (docs/agent.md).
func OpenState(dir string) (*StateFile, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	lf, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("state lock: %w", err)
	}
	if err := unix.Flock(int(lf.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		lf.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("state directory %s is locked by another lpictl agent", dir)
		}
		return nil, fmt.Errorf("state lock: %w", err)
	}
	s := &StateFile{path: filepath.Join(dir, StateFileName), lock: lf}
	doc, err := readStateDoc(s.path)
	if err != nil {
		s.Close()
		return nil, err
	}
	s.doc = doc
	return s, nil
}

// ReadState returns the records of the state file in dir without taking
// the lock (for inspection while an agent runs); none if there is no file.
func ReadState(dir string) (map[string]PortRecord, error) {
	doc, err := readStateDoc(filepath.Join(dir, StateFileName))
	return doc.Ports, err
}

// readStateDoc parses a state file; a missing file is an empty record.
func readStateDoc(path string) (stateDoc, error) {
	doc := stateDoc{Version: stateVersion, Ports: map[string]PortRecord{}}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return doc, nil
	case err != nil:
		return doc, fmt.Errorf("state file: %w", err)
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return doc, fmt.Errorf("state file %s is corrupt (%v): move it away after checking the ports' EEE settings by hand", path, err)
	}
	if doc.Version != stateVersion {
		return doc, fmt.Errorf("state file %s: version %d, want %d", path, doc.Version, stateVersion)
	}
	if doc.Ports == nil {
		doc.Ports = map[string]PortRecord{}
	}
	return doc, nil
}

// Path is the state file's path.
func (s *StateFile) Path() string { return s.path }

// Pending returns the records left by a previous run, sorted by name.
func (s *StateFile) Pending() []PortRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]PortRecord, 0, len(s.doc.Ports))
	for _, r := range s.doc.Ports {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup returns the record of a port.
func (s *StateFile) Lookup(name string) (PortRecord, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.doc.Ports[name]
	return r, ok
}

// Record stores a port's original settings durably. An existing record of
// the port is kept (the first original wins).
func (s *StateFile) Record(r PortRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.doc.Ports[r.Name]; ok {
		return nil
	}
	s.doc.Ports[r.Name] = r
	if err := s.write(); err != nil {
		delete(s.doc.Ports, r.Name)
		return err
	}
	return nil
}

// Forget drops a port's record after its settings were restored.
func (s *StateFile) Forget(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.doc.Ports[name]
	if !ok {
		return nil
	}
	delete(s.doc.Ports, name)
	if err := s.write(); err != nil {
		s.doc.Ports[name] = r
		return err
	}
	return nil
}

// write replaces the file atomically.
func (s *StateFile) write() error {
	data, err := json.MarshalIndent(s.doc, "", "  ")
	if err != nil {
		return err
	}
	if err := renameio.WriteFile(s.path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("state file: %w", err)
	}
	// The rename is durable only once the directory is synced.
	dir := filepath.Dir(s.path)
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("state file: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("state file: sync directory: %w", err)
	}
	return nil
}

// Close releases the lock.
func (s *StateFile) Close() error {
	if s.lock == nil {
		return nil
	}
	err := s.lock.Close()
	s.lock = nil
	return err
}
