package emulate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/eeectl"
)

// DefaultDriver is the driver profile an emulated port takes when
// none is given: stmmac (st_gmac), common on 1000BASE-T SoC ports; the
// timer in µs up to 0xFFFFF µs.
const DefaultDriver = "st_gmac"

// defaultEmulatedTimer is the tx LPI timer an emulated port starts with
// when none is given: stmmac's default (1000 µs), fitted to the profile.
const defaultEmulatedTimer = time.Millisecond

// emuDriver is how an emulated port's EEE interface behaves: the driver
// table's entry and the profile derived from it (eeectl.ProfileFor, the
// same one package fakedriver models), with no range wider than the ABI's.
type emuDriver struct {
	caps eeectl.DriverCaps
	prof eeectl.DriverProfile
}

// emulatedDriver returns the profile of a driver in lpictl's table. Names
// outside it are refused: the emulator is the kernel, so "the kernel
// decides" has no meaning here.
func emulatedDriver(name string) (emuDriver, error) {
	caps, known := eeectl.LookupDriver(name)
	if !known {
		return emuDriver{}, fmt.Errorf("driver profile %q is not in lpictl's driver table (e.g. st_gmac, mvneta, tg3, an8855, igc; docs/hwlink.md)", name)
	}
	d := emuDriver{caps: caps, prof: eeectl.ProfileFor(name)}
	if d.prof.Max <= 0 || d.prof.Max > eeectl.MaxTxLPITimer {
		d.prof.Max = eeectl.MaxTxLPITimer
	}
	return d, nil
}

// emuRegs are the emulated port's EEE registers.
type emuRegs struct {
	timer        time.Duration
	eeeEnabled   bool
	txLPIEnabled bool
}

// apply is what the driver makes of a set request: the new registers, or
// the kernel's error (wrapped in hwlink's sentinels). A timer the ABI
// cannot carry (u32 µs) is EINVAL before the driver sees it.
func (d emuDriver) apply(ifname string, cur emuRegs, set eeectl.EEESet) (emuRegs, error) {
	if v := set.TxLPITimer; v != nil && !d.prof.NoEEE && (*v < 0 || *v > eeectl.MaxTxLPITimer) {
		return cur, fmt.Errorf("%s: EEE set: %w (%s)", ifname, hwlink.ClassifyErrno(unix.EINVAL),
			fmt.Sprintf("tx_lpi_timer %v outside the ABI's u32 µs", *v))
	}
	lpi, err := d.prof.Apply(ifname, eeectl.TxLPI{Timer: cur.timer, Enabled: cur.txLPIEnabled}, set)
	if err != nil {
		return cur, err
	}
	cur.timer, cur.txLPIEnabled = lpi.Timer, lpi.Enabled
	return cur, nil
}

// BackendOptions configure a Backend.
type BackendOptions struct {
	// NetNS is the namespace whose interfaces are addressed ("" = own).
	NetNS hwlink.NetNS
	// BPFFS is the bpffs mount holding the emulators' pins ("" =
	// DefaultBPFFS).
	BPFFS string
	// Fallback answers for interfaces that are not emulated (typically
	// the EthtoolBackend); nil: they report ErrNotSupported.
	Fallback eeectl.EEEBackend
	Logger   *slog.Logger
}

// Backend is the EEEBackend of emulated EEE ports (Attach):
// it reads and writes the tx LPI timer, tx LPI enabled and EEE enabled in
// the emulator's map, with the refusals, rounding and clamping of the
// driver profile chosen at attach, so that an Actuator (and the agent's
// enforce mode) drives an emulated port exactly as it drives a NIC. The
// emulator may have been attached by another process (`lpictl emulate
// attach`); it is found by its pins. Safe for concurrent use.
type Backend struct {
	opts BackendOptions
	log  *slog.Logger
	ns   netns.NsHandle

	mu    sync.Mutex
	ports map[string]*Port // by pin directory
}

var _ eeectl.EEEBackend = (*Backend)(nil)

// NewBackend returns a backend for the emulated ports of
// opts.NetNS.
func NewBackend(opts BackendOptions) (*Backend, error) {
	b := &Backend{opts: opts, log: opts.Logger, ns: netns.None(), ports: map[string]*Port{}}
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	if b.opts.BPFFS == "" {
		b.opts.BPFFS = DefaultBPFFS
	}
	ns, err := opts.NetNS.Open() // "" gives the caller's own (no handle)
	if err != nil {
		return nil, err
	}
	b.ns = ns
	return b, nil
}

// Close releases the backend's handles (the emulators stay attached).
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	var errs []error
	for dir, p := range b.ports {
		errs = append(errs, p.Close())
		delete(b.ports, dir)
	}
	if b.ns.IsOpen() {
		errs = append(errs, b.ns.Close())
		b.ns = netns.None()
	}
	return errors.Join(errs...)
}

// port returns the emulated port behind ifname, or nil if ifname is not
// emulated. Callers hold b.mu. The pin directory is looked up on every
// call (an interface can be detached, renamed or re-created meanwhile).
func (b *Backend) port(ifname string) (*Port, error) {
	if err := hwlink.CheckIfname(ifname); err != nil {
		return nil, err
	}
	dir, ifindex, ino, err := emulatorDir(b.ns, b.opts.BPFFS, ifname)
	if err != nil {
		return nil, err
	}
	if p, ok := b.ports[dir]; ok {
		if _, err := os.Stat(dir); err == nil {
			return p, nil
		}
		p.Close()
		delete(b.ports, dir)
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, nil
	}
	p, err := openEmulatorDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ifname, err)
	}
	if p.ifindex != ifindex || p.nsIno != ino {
		p.Close()
		return nil, fmt.Errorf("%s: pins at %s belong to ifindex %d: %w", ifname, dir, p.ifindex, hwlink.ErrNoDevice)
	}
	p.ifname = ifname
	b.ports[dir] = p
	return p, nil
}

// Emulated reports whether ifname carries an emulated EEE port.
func (b *Backend) Emulated(_ context.Context, ifname string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	p, err := b.port(ifname)
	return err == nil && p != nil
}

func (b *Backend) notEmulated(ifname string) error {
	return fmt.Errorf("%s: not an emulated EEE port (no emulator attached, `lpictl emulate attach`): %w", ifname, hwlink.ErrNotSupported)
}

// DriverName implements EEEBackend: the emulated port's driver profile.
func (b *Backend) DriverName(ctx context.Context, ifname string) (string, error) {
	b.mu.Lock()
	p, err := b.port(ifname)
	b.mu.Unlock()
	switch {
	case err != nil:
		return "", err
	case p == nil && b.opts.Fallback != nil:
		return b.opts.Fallback.DriverName(ctx, ifname)
	case p == nil:
		return "", b.notEmulated(ifname)
	}
	return p.Driver(), nil
}

// GetEEE implements EEEBackend.
func (b *Backend) GetEEE(ctx context.Context, ifname string) (eeectl.EEEState, error) {
	if err := ctx.Err(); err != nil {
		return eeectl.EEEState{}, err
	}
	b.mu.Lock()
	p, err := b.port(ifname)
	b.mu.Unlock()
	switch {
	case err != nil:
		return eeectl.EEEState{}, err
	case p == nil && b.opts.Fallback != nil:
		return b.opts.Fallback.GetEEE(ctx, ifname)
	case p == nil:
		return eeectl.EEEState{}, b.notEmulated(ifname)
	}
	return p.GetEEE()
}

// SetEEE implements EEEBackend.
func (b *Backend) SetEEE(ctx context.Context, ifname string, set eeectl.EEESet) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b.mu.Lock()
	p, err := b.port(ifname)
	b.mu.Unlock()
	switch {
	case err != nil:
		return err
	case p == nil && b.opts.Fallback != nil:
		return b.opts.Fallback.SetEEE(ctx, ifname, set)
	case p == nil:
		return b.notEmulated(ifname)
	}
	if err := p.SetEEE(set); err != nil {
		return err
	}
	b.log.Debug("emulated EEE set", "device", ifname, "timer", set.TxLPITimer, "tx_lpi", set.TxLPIEnabled)
	return nil
}

// SetHold sets an emulated port's hybrid hold (Port.SetHold).
// Real NICs have no such register: ifname must be emulated.
func (b *Backend) SetHold(ctx context.Context, ifname string, hold time.Duration) error {
	return b.withEmulated(ctx, ifname, func(p *Port) error {
		if err := p.SetHold(hold); err != nil {
			return err
		}
		b.log.Debug("emulated hybrid hold set", "device", ifname, "hold", hold)
		return nil
	})
}

// Status reports an emulated port's state times, transitions and energy up
// to now (CLOCK_MONOTONIC), e.g. for the agent's low-power time and LPI
// entry counters (Times.FastWake + Times.DeepSleep, Wakeups).
func (b *Backend) Status(ctx context.Context, ifname string, now time.Duration) (Status, error) {
	var st Status
	err := b.withEmulated(ctx, ifname, func(p *Port) (err error) {
		st, err = p.Status(now)
		return err
	})
	return st, err
}

// withEmulated runs f on ifname's emulated port with b.mu held: the one
// way the emulator-only registers (hold, ledger, status) are reached.
func (b *Backend) withEmulated(ctx context.Context, ifname string, f func(*Port) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	p, err := b.emulated(ifname)
	if err != nil {
		return err
	}
	return f(p)
}

// emulated is ifname's emulated port, ErrNotEmulated when it has none;
// b.mu is held.
func (b *Backend) emulated(ifname string) (*Port, error) {
	p, err := b.port(ifname)
	switch {
	case err != nil:
		return nil, err
	case p == nil:
		return nil, fmt.Errorf("%s: %w", ifname, ErrNotEmulated)
	}
	return p, nil
}

// ethtoolModeForRate names the EEE link mode of an emulated port from its
// preset's rate (empty for rates without a BASE-T/CR mode here).
func ethtoolModeForRate(bps uint64) string {
	switch bps {
	case 100_000_000:
		return "100baseT/Full"
	case 1_000_000_000:
		return "1000baseT/Full"
	case 10_000_000_000:
		return "10000baseT/Full"
	case 25_000_000_000:
		return "25000baseCR/Full"
	case 40_000_000_000:
		return "40000baseCR4/Full"
	case 100_000_000_000:
		return "100000baseCR4/Full"
	case 400_000_000_000:
		return "400000baseCR4/Full"
	}
	return ""
}
