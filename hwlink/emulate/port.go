package emulate

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/rlimit"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/lpictl/lpictl/bpf"
	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/eeectl"
	"github.com/lpictl/lpictl/hwlink/observe"
)

// Port is an emulated EEE port: the eeeemu program on an
// interface's egress with fq as root qdisc, pinned so that it outlives the
// process that attached it. Close releases this process's handles and
// leaves the port attached; Detach removes it.
type Port struct {
	dir     string
	ifname  string
	ifindex int
	nsIno   uint64
	ns      netns.NsHandle

	cfgMap *ebpf.Map
	stMap  *ebpf.Map
	evMap  *ebpf.Map // the events ring buffer (ended idle periods)
	lkMap  *ebpf.Map // link mode: the link's shared state (nil per direction)
	link   *linkEnd  // link mode: the port's end of its link
	prog   *ebpf.Program
	lnk    link.Link
	mem    []byte
	cfg    *bpf.EeeemuEmuConfig

	mu  sync.Mutex // serialises SetEEE's read-modify-write in this process
	drv emuDriver
	// ownsPins: dir is this port's (opened from it, or created by pin), so
	// teardown may remove it.
	ownsPins bool
}

// Load loads the emulator's objects without attaching them (for
// tests and benchmarks through BPF_PROG_TEST_RUN): both programs.
func Load() (*bpf.EeeemuObjects, error) {
	objs := new(bpf.EeeemuObjects)
	if err := loadInto(objs, nil); err != nil {
		return nil, err
	}
	return objs, nil
}

// portObjects are the objects one emulated port needs: per direction its
// program and maps; in link mode the link program and the lpi_link map
// too (Attach loads only the program of its mode: each has its own
// verification cost).
type portObjects struct {
	Config *ebpf.Map `ebpf:"config"`
	State  *ebpf.Map `ebpf:"state"`
	Events *ebpf.Map `ebpf:"events"`
}

type dirObjects struct {
	portObjects
	Prog *ebpf.Program `ebpf:"eee_egress"`
}

type linkObjects struct {
	portObjects
	Link *ebpf.Map     `ebpf:"lpi_link"`
	Prog *ebpf.Program `ebpf:"eee_egress_link"`
}

// loadInto loads the emulator's objects into objs, with link the lpi_link
// map to use instead of a new one (link mode, the second end), if not nil.
func loadInto(objs any, link *ebpf.Map) error {
	if err := rlimit.RemoveMemlock(); err != nil {
		return fmt.Errorf("remove memlock limit: %w", hwlink.ClassifyErrno(err))
	}
	spec, err := bpf.LoadEeeemu()
	if err != nil {
		return err
	}
	var opts *ebpf.CollectionOptions
	if link != nil {
		opts = &ebpf.CollectionOptions{MapReplacements: map[string]*ebpf.Map{bpf.EeeemuMapLpiLink: link}}
	}
	if err := spec.LoadAndAssign(objs, opts); err != nil {
		return fmt.Errorf("load eBPF emulator: %w", hwlink.ClassifyBPFErr(err))
	}
	return nil
}

// newEmulatedPort maps the configuration of freshly loaded or pinned maps.
// It takes ownership of the maps only when it succeeds.
func newEmulatedPort(cfgMap, stMap, evMap *ebpf.Map) (*Port, error) {
	if evMap == nil || evMap.Type() != ebpf.RingBuf {
		return nil, errors.New("emulator events map missing or not a ring buffer (pins from another lpictl version?)")
	}
	if vs := cfgMap.ValueSize(); uintptr(vs) != unsafe.Sizeof(bpf.EeeemuEmuConfig{}) {
		return nil, fmt.Errorf("emulator config map value %d bytes, Go mirror %d (pins from another lpictl version?)", vs, unsafe.Sizeof(bpf.EeeemuEmuConfig{}))
	}
	if vs := stMap.ValueSize(); uintptr(vs) != unsafe.Sizeof(bpf.EeeemuEmuState{}) {
		return nil, fmt.Errorf("emulator state map value %d bytes, Go mirror %d (pins from another lpictl version?)", vs, unsafe.Sizeof(bpf.EeeemuEmuState{}))
	}
	size := (int(cfgMap.ValueSize()) + os.Getpagesize() - 1) &^ (os.Getpagesize() - 1)
	mem, err := unix.Mmap(cfgMap.FD(), 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("map emulator config: %w", hwlink.ClassifyErrno(err))
	}
	return &Port{cfgMap: cfgMap, stMap: stMap, evMap: evMap, mem: mem, ns: netns.None(),
		cfg: (*bpf.EeeemuEmuConfig)(unsafe.Pointer(&mem[0]))}, nil
}

// newTestEmulatedPort wraps loaded objects (BPF_PROG_TEST_RUN, benchmarks).
func newTestEmulatedPort(objs *bpf.EeeemuObjects) (*Port, error) {
	p, err := newEmulatedPort(objs.Config, objs.State, objs.Events)
	if err != nil {
		objs.Close()
		return nil, err
	}
	p.prog = objs.EeeEgress
	p.ifname = "test"
	return p, nil
}

// Interface is the emulated interface's name (as attached).
func (p *Port) Interface() string { return p.ifname }

// Index is its ifindex in its namespace.
func (p *Port) Index() int { return p.ifindex }

// NetNSInode is the inode of the port's network namespace.
func (p *Port) NetNSInode() uint64 { return p.nsIno }

// PinDir is where its pins are.
func (p *Port) PinDir() string { return p.dir }

// Driver is the driver profile of its EEE interface.
func (p *Port) Driver() string { return cString(p.cfg.Driver[:]) }

// AttachedVia says whether TCX or clsact carries the program.
func (p *Port) AttachedVia() observe.AttachMode {
	if p.cfg.Attach == emuViaTC {
		return observe.AttachTC
	}
	return observe.AttachTCX
}

func (p *Port) regs() emuRegs {
	f := atomic.LoadUint32(&p.cfg.Flags)
	return emuRegs{timer: time.Duration(atomic.LoadUint64(&p.cfg.PdtNs)),
		eeeEnabled: f&emuFlagEEE != 0, txLPIEnabled: f&emuFlagTxLPI != 0}
}

// GetEEE reads the port's EEE registers as ethtool would report them: the
// emulated link partner supports EEE, so active follows enabled.
func (p *Port) GetEEE() (eeectl.EEEState, error) {
	if p.cfg == nil {
		return eeectl.EEEState{}, fmt.Errorf("%s: %w", p.ifname, os.ErrClosed)
	}
	if p.drv.prof.NoEEE {
		return eeectl.EEEState{}, fmt.Errorf("%s: EEE get: %w", p.ifname, hwlink.ClassifyErrno(unix.EOPNOTSUPP))
	}
	r := p.regs()
	st := eeectl.EEEState{Enabled: r.eeeEnabled, Active: r.eeeEnabled, TxLPIEnabled: r.txLPIEnabled,
		TxLPITimer: r.timer, Source: "emulated",
		Supported: []string{}, Advertised: []string{}, LinkPartner: []string{}}
	if mode := ethtoolModeForRate(p.cfg.PresetRateBps); mode != "" {
		st.Supported = []string{mode}
		st.LinkPartner = []string{mode}
		if r.eeeEnabled {
			st.Advertised = []string{mode}
		}
	}
	return st, nil
}

// SetEEE applies a change to the port's EEE registers with the driver
// profile's behaviour (refusal, range, unit). A new timer takes effect at
// the port's next idle period, as a PDT timer armed when the queue
// empties.
func (p *Port) SetEEE(set eeectl.EEESet) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cfg == nil {
		return fmt.Errorf("%s: %w", p.ifname, os.ErrClosed)
	}
	cur := p.regs()
	next, err := p.drv.apply(p.ifname, cur, set)
	if err != nil {
		return err
	}
	// One aligned store per field: the program never sees half a value.
	atomic.StoreUint64(&p.cfg.PdtNs, uint64(next.timer))
	atomic.StoreUint32(&p.cfg.Flags, next.flags())
	return nil
}

// SetHold sets the hybrid hold: the time in Fast Wake before Deep Sleep,
// as a predictor that chooses holds wants it (predictor.HoldChooser). The
// program reads it when a packet ends an idle period, so a new hold
// applies to the idle period in progress. NeverHold-sized values keep the
// port in Fast Wake.
func (p *Port) SetHold(d time.Duration) error {
	if p.cfg == nil {
		return fmt.Errorf("%s: %w", p.ifname, os.ErrClosed)
	}
	if d < 0 {
		return fmt.Errorf("%s: hybrid hold %v: must be ≥ 0", p.ifname, d)
	}
	atomic.StoreUint64(&p.cfg.HoldNs, uint64(d))
	return nil
}

// Hold returns the hybrid hold in force.
func (p *Port) Hold() time.Duration {
	return time.Duration(atomic.LoadUint64(&p.cfg.HoldNs))
}

// setClock sets the program's clock (tests: BPF_PROG_TEST_RUN); 0 = the
// kernel's.
func (p *Port) setClock(ns uint64) { atomic.StoreUint64(&p.cfg.ClockOverrideNs, ns) }
