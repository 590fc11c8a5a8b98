package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
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
//
// The directory and the file must be the agent's own: owned by its user
// and writable by nobody else, since the agent applies their records with
// CAP_NET_ADMIN (checkStatePath). A record with impossible values is an
// error naming the port.
func OpenState(dir string) (*StateFile, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	if err := checkStatePath(dir, true); err != nil {
		return nil, err
	}
	if err := checkStatePath(filepath.Join(dir, StateFileName), false); err != nil {
		return nil, err
	}
	lf, err := lockFile(filepath.Join(dir, "lock"))
	if errors.Is(err, unix.EWOULDBLOCK) {
		return nil, fmt.Errorf("state directory %s is locked by another lpictl agent", dir)
	}
	if err != nil {
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

// checkStatePath refuses a state directory (dir) or file that another
// local user could write: group/world-writable, not owned by the agent's
// user, or (the file) not a regular file. A missing file is fine.
func checkStatePath(path string, dir bool) error {
	// The directory may be a symlink (systemd's DynamicUser links
	// /var/lib/NAME to /var/lib/private/NAME): its target is checked.
	stat := os.Lstat
	if dir {
		stat = os.Stat
	}
	fi, err := stat(path)
	if !dir && errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	what := "state file"
	if dir {
		what = "state directory"
	}
	switch {
	case dir && !fi.IsDir():
		return fmt.Errorf("%s %s is not a directory: point state_dir at a directory of the agent's own", what, path)
	case !dir && !fi.Mode().IsRegular():
		return fmt.Errorf("%s %s is not a regular file (%v): check the ports' EEE settings by hand, then remove it", what, path, fi.Mode().Type())
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("%s %s is group/world-writable (mode %04o), so another user could plant records the agent applies: chmod go-w %s (0700 for the directory, 0600 for the file)",
			what, path, perm, path)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		if uid := os.Geteuid(); int(st.Uid) != uid {
			return fmt.Errorf("%s %s is owned by uid %d, not the agent's user (uid %d): chown %d %s, or use a state_dir of the agent's own",
				what, path, st.Uid, uid, uid, path)
		}
	}
	return nil
}

// MaxTxLPITimer is the largest tx LPI timer a state record may hold: the
// ethtool EEE interface's 32-bit microsecond field.
const MaxTxLPITimer = time.Duration(math.MaxUint32) * time.Microsecond

// validate rejects a record no agent could have written: an impossible
// timer, identity or a name that does not match its key.
func (r PortRecord) validate(key string) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("record of port %q: %s", key, fmt.Sprintf(format, args...))
	}
	switch {
	case key == "" || strings.ContainsAny(key, "/\x00") || len(key) > 255:
		return bad("not a port name")
	case r.Name != key:
		return bad("name %q does not match its key", r.Name)
	case r.Original.TxLPITimer < 0 || r.Original.TxLPITimer > MaxTxLPITimer:
		return bad("tx_lpi_timer_ns %d is impossible (want 0 to %d)", int64(r.Original.TxLPITimer), int64(MaxTxLPITimer))
	case r.Index < 0:
		return bad("ifindex %d is impossible", r.Index)
	}
	if r.MAC != "" {
		if _, err := net.ParseMAC(r.MAC); err != nil {
			return bad("mac %q: %v", r.MAC, err)
		}
	}
	return nil
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
	keys := make([]string, 0, len(doc.Ports))
	for k := range doc.Ports {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := doc.Ports[k].validate(k); err != nil {
			return doc, fmt.Errorf("state file %s: %w: check the port's EEE settings by hand, then fix or remove the record", path, err)
		}
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
	if err := r.validate(r.Name); err != nil {
		return fmt.Errorf("state file: %w", err)
	}
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

// Rename moves a port's record to its new name (the port was renamed);
// nothing happens if it has none.
func (s *StateFile) Rename(old, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.doc.Ports[old]
	if !ok || old == name {
		return nil
	}
	if _, taken := s.doc.Ports[name]; taken {
		return fmt.Errorf("state file: port %s renamed to %s, which has a record of its own", old, name)
	}
	nr := r
	nr.Name = name
	delete(s.doc.Ports, old)
	s.doc.Ports[name] = nr
	if err := s.write(); err != nil {
		delete(s.doc.Ports, name)
		s.doc.Ports[old] = r
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

// Close releases the lock and removes its file.
func (s *StateFile) Close() error {
	if s.lock == nil {
		return nil
	}
	err := unlockFile(s.lock)
	s.lock = nil
	return err
}

// lockFile creates (or opens) path and takes an exclusive flock on it
// without waiting (unix.EWOULDBLOCK if another process holds it). The file
// is removed when the lock is released (unlockFile), so a lock taken on a
// file that was removed meanwhile is dropped and taken again on the new
// one.
func lockFile(path string) (*os.File, error) {
	for range 8 {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return nil, err
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			f.Close()
			return nil, err
		}
		var held, now unix.Stat_t
		if unix.Fstat(int(f.Fd()), &held) == nil && unix.Stat(path, &now) == nil && held.Ino == now.Ino && held.Dev == now.Dev {
			return f, nil
		}
		f.Close() // removed by its previous holder meanwhile
	}
	return nil, fmt.Errorf("%s: removed and re-created while locking it", path)
}

// unlockFile removes a file locked by lockFile, then releases the lock.
func unlockFile(f *os.File) error {
	err := os.Remove(f.Name())
	if errors.Is(err, os.ErrNotExist) {
		err = nil
	}
	return errors.Join(err, f.Close())
}
