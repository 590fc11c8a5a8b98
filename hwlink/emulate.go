package hwlink

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/rlimit"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/lpictl/lpictl/bpf"
)

// DefaultBPFFS is where the emulator's pins live unless told otherwise;
// AttachEmulator mounts a bpffs there if none is (as bpftool does).
const DefaultBPFFS = "/sys/fs/bpf"

// emuPinSubdir is the emulators' folder inside the bpffs; each emulated
// port has one directory there, ns<netns inode>-if<ifindex>, holding the
// maps (config, state, events) and the TCX link (link) or, with clsact,
// the program (prog).
const emuPinSubdir = "lpictl/emulate"

// emuTCPriority is the emulator's cls_bpf filter priority: just before the
// observer's (tcFilterPriority), so both can share a clsact qdisc.
const emuTCPriority = 0xC0DD

// emuFQMajor is the handle major of the fq root qdisc the emulator adds
// ("LP"), so that detaching removes only its own.
const emuFQMajor = 0x4C50

// emuLayoutVersion is emu_config.version: the pins' layout (2: the events
// ring buffer and emu_state.events_lost; 3: the delay ledger).
const emuLayoutVersion = 3

// emu_config.attach and .setup values (bpf/eeeemu.c).
const (
	emuViaTCX = 1
	emuViaTC  = 2

	emuAddedFQ     = 1 << 0
	emuAddedClsact = 1 << 1
)

// emu_config.flags (bpf/eeeemu.c FLAG_*).
const (
	emuFlagEEE   = 1 << 0
	emuFlagTxLPI = 1 << 1
)

// emuMaxScale bounds the time scale factor.
const emuMaxScale = 1e6

var (
	// ErrAlreadyEmulated: the interface already carries an emulated port.
	ErrAlreadyEmulated = errors.New("already emulated")
	// ErrNotEmulated: the interface carries no emulated port.
	ErrNotEmulated = errors.New("not emulated")
)

// EmulatedDelay is how an emulated port holds a packet back.
type EmulatedDelay uint32

// Delay methods (bpf/eeeemu.c DELAY_*).
const (
	// DelayEDT sets the packet's earliest departure time (skb->tstamp) and
	// installs fq as root qdisc, which holds it until then. Needs the fq
	// qdisc (CONFIG_NET_SCH_FQ).
	DelayEDT EmulatedDelay = iota
	// DelaySpin waits in the program on the sending CPU until the departure
	// time (at most SpinMax per packet): for kernels without fq. Precise,
	// but each wait costs its CPU and blocks the sender.
	DelaySpin
	// DelayNone only accounts: states, waits and energy are computed as if
	// packets were held; traffic is not delayed.
	DelayNone
	// DelayAuto is DelayEDT where the kernel has fq, else DelaySpin
	// (decided at attach; the port records the method it got).
	DelayAuto
)

var emulatedDelayNames = [...]string{"edt", "spin", "none", "auto"}

func (d EmulatedDelay) String() string {
	if int(d) < len(emulatedDelayNames) {
		return emulatedDelayNames[d]
	}
	return fmt.Sprintf("delay(%d)", uint32(d))
}

// ParseEmulatedDelay reads a delay method name (edt, spin, none, auto).
func ParseEmulatedDelay(s string) (EmulatedDelay, error) {
	name := strings.ToLower(strings.TrimSpace(s))
	for i, n := range emulatedDelayNames {
		if n == name {
			return EmulatedDelay(i), nil
		}
	}
	return 0, fmt.Errorf("unknown delay method %q (want auto, edt, spin or none)", s)
}

// DefaultSpinMax bounds one packet's wait with DelaySpin.
const DefaultSpinMax = 10 * time.Millisecond

// EmulatedLowPower is one low-power state of an emulated port: its power
// and transition times, unscaled (a power preset's fast_wake or
// deep_sleep, sim/power).
type EmulatedLowPower struct {
	PowerW float64
	Wake   time.Duration // t_w
	Sleep  time.Duration // t_s
}

// EmulatedPreset is what the emulator takes from a power preset
// (configs/presets, loaded with sim/power.Load by the caller). Powers are
// a port's.
type EmulatedPreset struct {
	Name       string
	RateBps    float64
	WakePowerW float64
	FastWake   *EmulatedLowPower
	DeepSleep  *EmulatedLowPower
}

// EmulateConfig configures AttachEmulator.
type EmulateConfig struct {
	// Interface is the netdev in NetNS whose egress becomes the port.
	Interface string
	NetNS     NetNS
	// Attach: TCX (auto falls back to clsact when TCX is missing) or TC.
	Attach AttachMode
	Preset EmulatedPreset
	Mode   EmulatedMode
	// PDT is the tx LPI timer the port starts with (t_PDT), fitted to the
	// driver profile's unit and range; nil = 1 ms fitted (stmmac's
	// default).
	PDT *time.Duration
	// HybridHold: in hybrid mode, the time in Fast Wake before Deep Sleep
	// (not scaled: a policy timer like t_PDT).
	HybridHold time.Duration
	// Rate emulates the link's serialisation (bits/s); 0 = none.
	Rate uint64
	// Delay is how packets are held (the zero value is DelayEDT, with fq;
	// DelayAuto takes spin where the kernel has no fq).
	Delay EmulatedDelay
	// SpinMax bounds one packet's wait with DelaySpin (0 =
	// DefaultSpinMax, at most 100 ms).
	SpinMax time.Duration
	// Scale multiplies the preset's transition times (t_s, t_w); 0 = 1.
	// Use it where kernel timer jitter (tens of µs) would hide µs-scale
	// wake-ups.
	Scale float64
	// Driver is the profile of the emulated EEE interface, a name from
	// the driver table ("" = DefaultEmulatedDriver).
	Driver string
	// BPFFS is the bpffs mount for the pins ("" = DefaultBPFFS).
	BPFFS string
	// AllowPhysical lets the emulator onto a device whose kind is not in
	// VirtualKinds (a physical NIC, a bond, a VLAN …): its traffic is then
	// held as an emulated port's, with the delay method's costs.
	AllowPhysical bool
	Logger        *slog.Logger
}

// EmulatorRef names an emulated port.
type EmulatorRef struct {
	Interface string
	NetNS     NetNS
	BPFFS     string // "" = DefaultBPFFS
}

// EmulatedPort is an emulated EEE port: the eeeemu program on an
// interface's egress with fq as root qdisc, pinned so that it outlives the
// process that attached it. Close releases this process's handles and
// leaves the port attached; Detach removes it.
type EmulatedPort struct {
	dir     string
	ifname  string
	ifindex int
	nsIno   uint64
	ns      netns.NsHandle

	cfgMap *ebpf.Map
	stMap  *ebpf.Map
	evMap  *ebpf.Map // the events ring buffer (ended idle periods)
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

// LoadEmulator loads the emulator's objects without attaching them (for
// tests and benchmarks through BPF_PROG_TEST_RUN).
func LoadEmulator() (*bpf.EeeemuObjects, error) {
	if err := rlimit.RemoveMemlock(); err != nil {
		return nil, fmt.Errorf("remove memlock limit: %w", classifyErrno(err))
	}
	spec, err := bpf.LoadEeeemu()
	if err != nil {
		return nil, err
	}
	objs := new(bpf.EeeemuObjects)
	if err := spec.LoadAndAssign(objs, nil); err != nil {
		return nil, fmt.Errorf("load eBPF emulator: %w", classifyBPFErr(err))
	}
	return objs, nil
}

// newEmulatedPort maps the configuration of freshly loaded or pinned maps.
// It takes ownership of the maps only when it succeeds.
func newEmulatedPort(cfgMap, stMap, evMap *ebpf.Map) (*EmulatedPort, error) {
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
		return nil, fmt.Errorf("map emulator config: %w", classifyErrno(err))
	}
	return &EmulatedPort{cfgMap: cfgMap, stMap: stMap, evMap: evMap, mem: mem, ns: netns.None(),
		cfg: (*bpf.EeeemuEmuConfig)(unsafe.Pointer(&mem[0]))}, nil
}

// newTestEmulatedPort wraps loaded objects (BPF_PROG_TEST_RUN, benchmarks).
func newTestEmulatedPort(objs *bpf.EeeemuObjects) (*EmulatedPort, error) {
	p, err := newEmulatedPort(objs.Config, objs.State, objs.Events)
	if err != nil {
		objs.Close()
		return nil, err
	}
	p.prog = objs.EeeEgress
	p.ifname = "test"
	return p, nil
}

// emuPinDir is the pin directory of ifindex in the namespace with inode ino.
func emuPinDir(bpffs string, ino uint64, ifindex int) string {
	return filepath.Join(bpffs, emuPinSubdir, fmt.Sprintf("ns%d-if%d", ino, ifindex))
}

// nsInode returns the inode of a network namespace (the caller's own for a
// closed handle): with the ifindex, it names an interface host-wide.
func nsInode(ns netns.NsHandle) (uint64, error) {
	h := ns
	if !ns.IsOpen() {
		var err error
		if h, err = netns.Get(); err != nil {
			return 0, fmt.Errorf("get current network namespace: %w", err)
		}
		defer h.Close()
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(h), &st); err != nil {
		return 0, fmt.Errorf("stat network namespace: %w", err)
	}
	return st.Ino, nil
}

// emulatorDir resolves ifname in ns to its pin directory.
func emulatorDir(ns netns.NsHandle, bpffs, ifname string) (dir string, ifindex int, ino uint64, err error) {
	nlh, err := netlinkHandleIn(ns)
	if err != nil {
		return "", 0, 0, err
	}
	defer nlh.Close()
	lk, err := nlh.LinkByName(ifname)
	if err != nil {
		return "", 0, 0, fmt.Errorf("%s: %w", ifname, classifyLinkErr(err))
	}
	if ino, err = nsInode(ns); err != nil {
		return "", 0, 0, err
	}
	return emuPinDir(bpffs, ino, lk.Attrs().Index), lk.Attrs().Index, ino, nil
}

// ensureBPFFS checks that dir is a bpffs mount and, if mountIt, mounts one
// there when it is not.
func ensureBPFFS(dir string, mountIt bool, log *slog.Logger) error {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return fmt.Errorf("bpffs %s: %w", dir, classifyErrno(err))
	}
	if st.Type == unix.BPF_FS_MAGIC {
		return nil
	}
	if !mountIt {
		return fmt.Errorf("%s is not a bpffs mount (mount -t bpf bpf %s)", dir, dir)
	}
	if err := unix.Mount("bpf", dir, "bpf", 0, "mode=0700"); err != nil {
		return fmt.Errorf("mount bpffs at %s: %w", dir, classifyErrno(err))
	}
	log.Info("mounted bpffs", "path", dir)
	return nil
}

// emuPlan is a validated EmulateConfig turned into the program's
// configuration.
type emuPlan struct {
	cfg     bpf.EeeemuEmuConfig
	drv     emuDriver
	regs    emuRegs
	rounded bool
	clamped bool
	bpffs   string
	attach  AttachMode
}

func scaled(d time.Duration, k float64) uint64 {
	return uint64(math.Round(float64(d) * k))
}

func microwatts(w float64) uint64 { return uint64(math.Round(w * 1e6)) }

func setCString(dst []int8, s string) {
	clear(dst)
	for i := 0; i < len(s) && i < len(dst)-1; i++ {
		dst[i] = int8(s[i])
	}
}

func cString(src []int8) string {
	var b strings.Builder
	for _, c := range src {
		if c == 0 {
			break
		}
		b.WriteByte(byte(c))
	}
	return b.String()
}

// Validate checks cfg without touching the system (AttachEmulator's first
// step): its errors are the caller's mistakes (bad input), such as a mode
// the preset has no state for.
func (cfg EmulateConfig) Validate() error {
	_, err := cfg.plan()
	return err
}

// plan validates cfg. Its errors are the caller's mistakes (bad input).
func (cfg EmulateConfig) plan() (emuPlan, error) {
	pl := emuPlan{bpffs: cfg.BPFFS, attach: cfg.Attach}
	if pl.bpffs == "" {
		pl.bpffs = DefaultBPFFS
	}
	if err := checkIfname(cfg.Interface); err != nil {
		return pl, err
	}
	pr := cfg.Preset
	if pr.Name == "" || !(pr.WakePowerW > 0) || math.IsInf(pr.WakePowerW, 0) {
		return pl, fmt.Errorf("preset %q: needs a name and a wake power > 0", pr.Name)
	}
	if len(pr.Name) >= len(pl.cfg.Preset) {
		return pl, fmt.Errorf("preset name %q: longer than %d bytes", pr.Name, len(pl.cfg.Preset)-1)
	}
	for _, s := range []struct {
		name string
		lp   *EmulatedLowPower
	}{{"fast_wake", pr.FastWake}, {"deep_sleep", pr.DeepSleep}} {
		if s.lp != nil && (s.lp.Wake <= 0 || s.lp.Sleep <= 0 || !(s.lp.PowerW >= 0) || s.lp.PowerW > pr.WakePowerW) {
			return pl, fmt.Errorf("preset %s: %s: t_w and t_s must be > 0 and power within [0, wake power]", pr.Name, s.name)
		}
	}
	need := func(lp *EmulatedLowPower, state string) error {
		if lp == nil {
			return fmt.Errorf("preset %s has no %s state, so mode %s is not available (IEEE 802.3az BASE-T PHYs have Deep Sleep only; use deep-sleep)", pr.Name, state, cfg.Mode)
		}
		return nil
	}
	switch cfg.Mode {
	case EmulateAlwaysOn:
	case EmulateFastWake:
		if err := need(pr.FastWake, "fast_wake"); err != nil {
			return pl, err
		}
	case EmulateDeepSleep:
		if err := need(pr.DeepSleep, "deep_sleep"); err != nil {
			return pl, err
		}
	case EmulateHybrid:
		if err := need(pr.FastWake, "fast_wake"); err != nil {
			return pl, err
		}
		if err := need(pr.DeepSleep, "deep_sleep"); err != nil {
			return pl, err
		}
	default:
		return pl, fmt.Errorf("unknown mode %d", uint32(cfg.Mode))
	}
	k := cfg.Scale
	if k == 0 {
		k = 1
	}
	if !(k > 0) || k > emuMaxScale || math.IsInf(k, 0) {
		return pl, fmt.Errorf("scale %v: must be > 0 and ≤ %g", cfg.Scale, float64(emuMaxScale))
	}
	if cfg.HybridHold < 0 {
		return pl, fmt.Errorf("hybrid hold %v: must be ≥ 0", cfg.HybridHold)
	}
	driver := cfg.Driver
	if driver == "" {
		driver = DefaultEmulatedDriver
	}
	drv, err := emulatedDriver(driver)
	if err != nil {
		return pl, err
	}
	pl.drv = drv
	pdt := defaultEmulatedTimer
	if cfg.PDT != nil {
		pdt = *cfg.PDT
	}
	if pdt < 0 || pdt > maxKernelTimer {
		return pl, fmt.Errorf("t_PDT %v: outside the tx LPI timer's range (0..%v)", pdt, maxKernelTimer)
	}
	// The hardware's own initial value: fitted to the profile, not refused.
	pl.regs.timer, pl.rounded, pl.clamped = drv.caps.Fit(pdt)
	if pl.regs.timer > drv.max { // a firmware range (bnxt_en) the table leaves open
		pl.regs.timer, pl.clamped = drv.max.Truncate(max(drv.caps.Unit, time.Microsecond)), true
	}
	if pl.regs.timer < drv.min {
		pl.regs.timer, pl.clamped = drv.min, true
	}
	sleeps := cfg.Mode != EmulateAlwaysOn
	pl.regs.eeeEnabled, pl.regs.txLPIEnabled = sleeps, sleeps

	c := &pl.cfg
	c.PdtNs = uint64(pl.regs.timer)
	if lp := pr.FastWake; lp != nil {
		c.SleepFwNs, c.WakeFwNs, c.PowerFwUw = scaled(lp.Sleep, k), scaled(lp.Wake, k), microwatts(lp.PowerW)
	}
	if lp := pr.DeepSleep; lp != nil {
		c.SleepDsNs, c.WakeDsNs, c.PowerDsUw = scaled(lp.Sleep, k), scaled(lp.Wake, k), microwatts(lp.PowerW)
	}
	c.HoldNs = uint64(cfg.HybridHold)
	switch cfg.Delay {
	case DelayEDT, DelaySpin, DelayNone:
		c.Delay = uint32(cfg.Delay)
	case DelayAuto:
		c.Delay = uint32(DelayEDT) // spin if fq is missing (AttachEmulator)
	default:
		return pl, fmt.Errorf("unknown delay method %d", uint32(cfg.Delay))
	}
	spin := cfg.SpinMax
	if spin == 0 {
		spin = DefaultSpinMax
	}
	if spin < 0 || spin > 100*time.Millisecond {
		return pl, fmt.Errorf("spin max %v: must be in (0, 100ms]", spin)
	}
	c.SpinMaxNs = uint64(spin)
	c.NsPerByteQ16 = SpeedQ16(cfg.Rate)
	c.Mode = uint32(cfg.Mode)
	c.Flags = pl.regs.flags()
	c.PowerWakeUw = microwatts(pr.WakePowerW)
	c.RateBps = cfg.Rate
	c.PresetRateBps = emuPresetRate(pr)
	c.ScaleMilli = uint64(math.Round(k * 1000))
	c.Version = emuLayoutVersion
	setCString(c.Preset[:], pr.Name)
	setCString(c.Driver[:], driver)
	setCString(c.Ifname[:], cfg.Interface)
	return pl, nil
}

func (r emuRegs) flags() uint32 {
	var f uint32
	if r.eeeEnabled {
		f |= emuFlagEEE
	}
	if r.txLPIEnabled {
		f |= emuFlagTxLPI
	}
	return f
}

// emuPresetRate is the preset's rate in bits/s, kept in the pins so that
// GetEEE can name the link mode.
func emuPresetRate(pr EmulatedPreset) uint64 {
	if pr.RateBps > 0 && pr.RateBps < math.MaxUint64 {
		return uint64(math.Round(pr.RateBps))
	}
	return 0
}

// AttachEmulator turns cfg.Interface's egress into an emulated EEE port
// (docs/model.md §1): it installs fq as the root qdisc if the interface has the
// kernel's default root qdisc (fq honours the departure times the program
// sets), loads and configures the eeeemu program, attaches it (TCX, or a
// clsact qdisc and a cls_bpf filter) and pins the maps and the link (or
// program) under cfg.BPFFS, so the port stays after the process exits. The
// returned port's Close releases the handles; Detach (or DetachEmulator
// from any process) removes everything that was added.
//
// Errors from cfg (unknown mode for the preset, bad scale, unknown driver
// profile) are returned before anything is changed; ErrNoDevice if the
// interface does not exist, ErrAlreadyEmulated if it is emulated already,
// ErrNotSupported / ErrPermission as AttachEBPF.
func AttachEmulator(ctx context.Context, cfg EmulateConfig) (*EmulatedPort, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	pl, err := cfg.plan()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Interface, err)
	}
	ns := netns.None()
	if cfg.NetNS != "" {
		if ns, err = cfg.NetNS.open(); err != nil {
			return nil, err
		}
	}
	nsKept := false
	defer func() {
		if !nsKept && ns.IsOpen() {
			ns.Close()
		}
	}()
	// The pins must outlive this process: under `ip netns exec` they go
	// to the bpffs outside its mount namespace, or attach refuses.
	mountBPFFS := pl.bpffs == DefaultBPFFS
	if pl.bpffs, err = resolveBPFFS(pl.bpffs, true); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Interface, err)
	}
	mountBPFFS = mountBPFFS && pl.bpffs == DefaultBPFFS
	dir, ifindex, ino, err := emulatorDir(ns, pl.bpffs, cfg.Interface)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(dir); err == nil {
		return nil, fmt.Errorf("%s: %w (pins at %s; `lpictl emulate detach %s` first)", cfg.Interface, ErrAlreadyEmulated, dir, cfg.Interface)
	}
	// The pins need a bpffs: checked now, mounted (if it is the default
	// place and none is there) only once the rest has worked.
	if err := ensureBPFFS(pl.bpffs, false, log); err != nil && !mountBPFFS {
		return nil, fmt.Errorf("%s: %w", cfg.Interface, err)
	}
	nlh, err := netlinkHandleIn(ns)
	if err != nil {
		return nil, err
	}
	defer nlh.Close()
	lk, err := nlh.LinkByIndex(ifindex)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Interface, classifyLinkErr(err))
	}
	if err := checkVirtual(cfg.Interface, lk, cfg.AllowPhysical); err != nil {
		return nil, err
	}
	// One emulator per device, whatever bpffs its pins are in: a second
	// one would stack its waits on the first's.
	if have, err := emuExisting(nlh, ns, ifindex); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Interface, err)
	} else if have != "" {
		return nil, fmt.Errorf("%s: %w: the device carries %s (pinned under another bpffs? `lpictl emulate status --netns NS --bpffs B` lists them; detach it first)",
			cfg.Interface, ErrAlreadyEmulated, have)
	}

	objs, err := LoadEmulator()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Interface, err)
	}
	p, err := newEmulatedPort(objs.Config, objs.State, objs.Events)
	if err != nil {
		objs.Close()
		return nil, fmt.Errorf("%s: %w", cfg.Interface, err)
	}
	p.prog, p.dir, p.ifname, p.ifindex, p.nsIno, p.drv = objs.EeeEgress, dir, cfg.Interface, ifindex, ino, pl.drv
	ok := false
	defer func() {
		if !ok {
			if err := p.teardown(nlh); err != nil {
				log.Warn("emulator: undo after a failed attach", "device", cfg.Interface, "error", err)
			}
			p.Close()
		}
	}()

	c := pl.cfg
	c.Ifindex = uint32(ifindex)
	c.NetnsIno = ino
	// The port starts idle, as if a transmission had just ended (sim/eee
	// Link.Start): accounting runs from here.
	now := uint64(MonotonicNow())
	c.AttachedNs = now
	*p.cfg = c
	st := bpf.EeeemuEmuState{T0Ns: now, FreeAtNs: now, ArmedPdtNs: c.PdtNs, ArmedMode: c.Mode}
	if pl.regs.flags() != emuFlagEEE|emuFlagTxLPI {
		st.ArmedMode = uint32(EmulateAlwaysOn)
	}
	if err := p.stMap.Update(uint32(0), &st, ebpf.UpdateAny); err != nil {
		return nil, fmt.Errorf("%s: initialise emulator state: %w", cfg.Interface, err)
	}

	if cfg.Delay == DelayEDT || cfg.Delay == DelayAuto {
		added, err := emuSetupFQ(nlh, ifindex)
		switch {
		case cfg.Delay == DelayAuto && errors.Is(err, errNoFQ):
			log.Info("the kernel has no fq qdisc: holding packets with the spin method (delay auto)", "device", cfg.Interface)
			atomic.StoreUint32(&p.cfg.Delay, uint32(DelaySpin))
		case err != nil:
			return nil, fmt.Errorf("%s: %w", cfg.Interface, err)
		case added:
			p.cfg.Setup |= emuAddedFQ
		}
	}
	mode := pl.attach
	if mode == AttachAuto || mode == AttachTCX {
		var l link.Link
		err := inNetNS(ns, func() error {
			var err error
			l, err = link.AttachTCX(link.TCXOptions{Interface: ifindex, Program: p.prog, Attach: ebpf.AttachTCXEgress, Anchor: link.Tail()})
			return err
		})
		switch {
		case err == nil:
			p.lnk = l
			p.cfg.Attach = emuViaTCX
		case mode == AttachTCX || !errors.Is(classifyBPFErr(err), ErrNotSupported):
			return nil, fmt.Errorf("%s: attach TCX: %w", cfg.Interface, classifyBPFErr(err))
		default:
			log.Info("TCX not supported, falling back to clsact", "device", cfg.Interface, "error", err)
			mode = AttachTC
		}
	}
	if mode == AttachTC {
		// Recorded only once the filter is ours: teardown deletes the
		// filter by priority and handle, which would otherwise remove
		// another emulator's.
		clsact, err := emuAttachTC(nlh, ifindex, p.prog)
		if err != nil {
			return nil, fmt.Errorf("%s: attach clsact filter: %w", cfg.Interface, err)
		}
		p.cfg.Attach = emuViaTC
		if clsact {
			p.cfg.Setup |= emuAddedClsact
		}
	}
	if err := ensureBPFFS(pl.bpffs, mountBPFFS, log); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Interface, err)
	}
	if err := p.pin(); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Interface, err)
	}
	ok, nsKept = true, true
	p.ns = ns
	log.Debug("emulated EEE port attached", "device", cfg.Interface, "via", p.AttachedVia(), "pins", dir)
	return p, nil
}

func (p *EmulatedPort) pin() error {
	if err := os.MkdirAll(filepath.Dir(p.dir), 0o700); err != nil {
		return fmt.Errorf("pin directory: %w", err)
	}
	// Mkdir, not MkdirAll: another attach of the same interface racing
	// with this one fails here instead of taking over its pins.
	if err := os.Mkdir(p.dir, 0o700); err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("pin directory %s: %w", p.dir, ErrAlreadyEmulated)
		}
		return fmt.Errorf("pin directory: %w", err)
	}
	p.ownsPins = true
	if err := p.cfgMap.Pin(filepath.Join(p.dir, "config")); err != nil {
		return fmt.Errorf("pin config map: %w", err)
	}
	if err := p.stMap.Pin(filepath.Join(p.dir, "state")); err != nil {
		return fmt.Errorf("pin state map: %w", err)
	}
	if err := p.evMap.Pin(filepath.Join(p.dir, "events")); err != nil {
		return fmt.Errorf("pin events map: %w", err)
	}
	if p.lnk != nil {
		if err := p.lnk.Pin(filepath.Join(p.dir, "link")); err != nil {
			return fmt.Errorf("pin TCX link: %w", err)
		}
		return nil
	}
	if err := p.prog.Pin(filepath.Join(p.dir, "prog")); err != nil {
		return fmt.Errorf("pin program: %w", err)
	}
	return nil
}

// emuRootQdisc returns the interface's root qdisc (nil if none is listed).
func emuRootQdisc(h *netlink.Handle, ifindex int) (netlink.Qdisc, error) {
	qs, err := h.QdiscList(&netlink.Device{LinkAttrs: netlink.LinkAttrs{Index: ifindex}})
	if err != nil {
		return nil, fmt.Errorf("list qdiscs: %w", classifyErrno(err))
	}
	for _, q := range qs {
		if q.Attrs().Parent == netlink.HANDLE_ROOT {
			return q, nil
		}
	}
	return nil, nil
}

func emuFQ(ifindex int) *netlink.Fq {
	fq := netlink.NewFq(netlink.QdiscAttrs{LinkIndex: ifindex, Parent: netlink.HANDLE_ROOT,
		Handle: netlink.MakeHandle(emuFQMajor, 0)})
	// Departure times only: no pacing of its own, room for a port's
	// backlog in one flow while it wakes, and a horizon long enough for
	// scaled transition times.
	fq.Pacing = 0
	fq.PacketLimit = 10000
	fq.FlowPacketLimit = 10000
	fq.Horizon = uint32(60 * time.Second / time.Microsecond)
	return fq
}

// emuSetupFQ makes fq the root qdisc: an fq root is used as it is; the
// kernel's default root qdisc (handle 0: noqueue, pfifo_fast, mq, …) is
// replaced; a configured root qdisc is left alone and the attach refused.
func emuSetupFQ(h *netlink.Handle, ifindex int) (added bool, err error) {
	root, err := emuRootQdisc(h, ifindex)
	if err != nil {
		return false, err
	}
	if root != nil {
		if root.Type() == "fq" {
			return false, nil
		}
		if major, _ := netlink.MajorMinor(root.Attrs().Handle); major != 0 {
			return false, fmt.Errorf("root qdisc %s %x: is configured; the emulator needs fq as root qdisc and replaces only the kernel's default (remove it, or make it fq): %w",
				root.Type(), major, ErrRejected)
		}
	}
	if err := h.QdiscReplace(emuFQ(ifindex)); err != nil {
		if errors.Is(err, unix.ENOENT) {
			// The kernel answers ENOENT for a qdisc kind it does not have.
			return false, errNoFQ
		}
		return false, fmt.Errorf("install fq root qdisc: %w", classifyErrno(err))
	}
	return true, nil
}

// errNoFQ: the kernel has no fq qdisc.
var errNoFQ = fmt.Errorf("kernel lacks the fq qdisc (CONFIG_NET_SCH_FQ), which holds packets until their departure time; use the auto, spin or none delay method: %w",
	ErrNotSupported)

// emuRemoveFQ deletes the root qdisc if it is the emulator's fq; the
// kernel then puts its default root qdisc back.
func emuRemoveFQ(h *netlink.Handle, ifindex int) error {
	root, err := emuRootQdisc(h, ifindex)
	if err != nil || root == nil {
		return err
	}
	if major, _ := netlink.MajorMinor(root.Attrs().Handle); root.Type() != "fq" || major != emuFQMajor {
		return nil
	}
	if err := h.QdiscDel(emuFQ(ifindex)); err != nil && !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.ENODEV) {
		return fmt.Errorf("delete fq root qdisc: %w", classifyErrno(err))
	}
	return nil
}

func emuTCFilter(ifindex, fd int) *netlink.BpfFilter {
	return &netlink.BpfFilter{
		FilterAttrs: netlink.FilterAttrs{
			LinkIndex: ifindex,
			Parent:    netlink.HANDLE_MIN_EGRESS,
			Handle:    1,
			Protocol:  unix.ETH_P_ALL,
			Priority:  emuTCPriority,
		},
		Fd:           fd,
		Name:         "lpictl_eeeemu",
		DirectAction: true,
	}
}

// emuAttachTC adds a clsact qdisc if there is none (addedClsact) and the
// emulator's egress filter.
func emuAttachTC(h *netlink.Handle, ifindex int, prog *ebpf.Program) (addedClsact bool, err error) {
	qs, err := h.QdiscList(&netlink.Device{LinkAttrs: netlink.LinkAttrs{Index: ifindex}})
	if err != nil {
		return false, fmt.Errorf("list qdiscs: %w", classifyErrno(err))
	}
	have := false
	for _, q := range qs {
		if q.Type() == "clsact" {
			have = true
		}
	}
	if !have {
		if err := h.QdiscAdd(clsactQdisc(ifindex)); err != nil {
			return false, fmt.Errorf("add clsact qdisc: %w", classifyErrno(err))
		}
		addedClsact = true
	}
	if err := h.FilterAdd(emuTCFilter(ifindex, prog.FD())); err != nil {
		if addedClsact {
			_ = h.QdiscDel(clsactQdisc(ifindex))
		}
		return false, fmt.Errorf("add egress filter: %w", classifyErrno(err))
	}
	return addedClsact, nil
}

// teardown removes what attach added, as recorded in the configuration:
// the program (TCX link or cls_bpf filter, and the clsact qdisc if it was
// added and nothing else uses it), then the fq root qdisc, then the pins.
func (p *EmulatedPort) teardown(nlh *netlink.Handle) error {
	var errs []error
	attach, setup := p.cfg.Attach, p.cfg.Setup
	linkPin := filepath.Join(p.dir, "link")
	if p.lnk == nil && attach == emuViaTCX {
		if l, err := link.LoadPinnedLink(linkPin, nil); err == nil {
			p.lnk = l
		} else if !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("open pinned TCX link: %w", err))
		}
	}
	if p.lnk != nil {
		if err := p.lnk.Unpin(); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("unpin TCX link: %w", err))
		}
		errs = append(errs, p.lnk.Close())
		p.lnk = nil
	}
	if attach == emuViaTC {
		fd := -1
		if p.prog != nil {
			fd = p.prog.FD()
		}
		t := &tcAttachment{ifindex: p.ifindex, addedQdisc: setup&emuAddedClsact != 0,
			filters: []*netlink.BpfFilter{emuTCFilter(p.ifindex, fd)}}
		errs = append(errs, t.detach(nlh))
	}
	if setup&emuAddedFQ != 0 {
		errs = append(errs, emuRemoveFQ(nlh, p.ifindex))
	}
	if p.dir != "" && p.ownsPins {
		for _, name := range []string{"prog", "link", "events", "state", "config"} {
			if err := os.Remove(filepath.Join(p.dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
		}
		if err := os.Remove(p.dir); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
		// The shared folders go when the last port does.
		parent := filepath.Dir(p.dir)
		for range strings.Split(emuPinSubdir, "/") {
			if os.Remove(parent) != nil {
				break
			}
			parent = filepath.Dir(parent)
		}
	}
	return errors.Join(errs...)
}

// OpenEmulator opens the emulated port of ref.Interface, attached by this
// or another process (ErrNotEmulated if there is none).
func OpenEmulator(ctx context.Context, ref EmulatorRef) (*EmulatedPort, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkIfname(ref.Interface); err != nil {
		return nil, err
	}
	bpffs := ref.BPFFS
	if bpffs == "" {
		bpffs = DefaultBPFFS
	}
	bpffs, err := resolveBPFFS(bpffs, false)
	if err != nil {
		return nil, err
	}
	ns := netns.None()
	if ref.NetNS != "" {
		var err error
		if ns, err = ref.NetNS.open(); err != nil {
			return nil, err
		}
	}
	dir, ifindex, ino, err := emulatorDir(ns, bpffs, ref.Interface)
	if err == nil {
		if _, serr := os.Stat(dir); serr != nil {
			err = fmt.Errorf("%s: %w (no emulator pinned at %s)", ref.Interface, ErrNotEmulated, dir)
		}
	}
	var p *EmulatedPort
	if err == nil {
		p, err = openEmulatorDir(dir)
	}
	if err == nil && (p.ifindex != ifindex || p.nsIno != ino) {
		p.Close()
		err = fmt.Errorf("%s: pins at %s name ifindex %d: %w", ref.Interface, dir, p.ifindex, ErrNotEmulated)
	}
	if err != nil {
		if ns.IsOpen() {
			ns.Close()
		}
		return nil, err
	}
	p.ifname, p.ns = ref.Interface, ns
	return p, nil
}

// openEmulatorDir opens the pins in dir (no namespace handle: such a port
// can report its status, not detach).
func openEmulatorDir(dir string) (*EmulatedPort, error) {
	cfgMap, err := ebpf.LoadPinnedMap(filepath.Join(dir, "config"), nil)
	if err != nil {
		return nil, fmt.Errorf("open emulator pins %s: %w", dir, classifyBPFErr(err))
	}
	stMap, err := ebpf.LoadPinnedMap(filepath.Join(dir, "state"), nil)
	if err != nil {
		cfgMap.Close()
		return nil, fmt.Errorf("open emulator pins %s: %w", dir, classifyBPFErr(err))
	}
	evMap, err := ebpf.LoadPinnedMap(filepath.Join(dir, "events"), nil)
	if errors.Is(err, os.ErrNotExist) {
		err = fmt.Errorf("no events map: pins of an older lpictl (detach and attach again): %w", err)
	}
	if err != nil {
		cfgMap.Close()
		stMap.Close()
		return nil, fmt.Errorf("open emulator pins %s: %w", dir, classifyBPFErr(err))
	}
	p, err := newEmulatedPort(cfgMap, stMap, evMap)
	if err != nil {
		cfgMap.Close()
		stMap.Close()
		evMap.Close()
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	if v := atomic.LoadUint32(&p.cfg.Version); v != emuLayoutVersion {
		p.Close()
		return nil, fmt.Errorf("%s: pins of layout version %d, this lpictl reads %d", dir, v, emuLayoutVersion)
	}
	p.dir, p.ownsPins = dir, true
	p.ifindex = int(p.cfg.Ifindex)
	p.nsIno = p.cfg.NetnsIno
	p.ifname = cString(p.cfg.Ifname[:])
	if p.drv, err = emulatedDriver(p.Driver()); err != nil {
		p.Close()
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return p, nil
}

// ListEmulators opens every emulated port pinned under bpffs ("" =
// DefaultBPFFS), in every namespace, sorted by pin directory. The caller
// closes them.
func ListEmulators(bpffs string) ([]*EmulatedPort, error) {
	if bpffs == "" {
		bpffs = DefaultBPFFS
	}
	bpffs, err := resolveBPFFS(bpffs, false)
	if err != nil {
		return nil, err
	}
	root := filepath.Join(bpffs, emuPinSubdir)
	entries, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list emulators: %w", err)
	}
	var out []*EmulatedPort
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		p, err := openEmulatorDir(filepath.Join(root, e.Name()))
		if err != nil {
			for _, q := range out {
				q.Close()
			}
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// DetachEmulator removes the emulated port of ref.Interface: program,
// pins, and the qdiscs attach added.
func DetachEmulator(ctx context.Context, ref EmulatorRef) error {
	p, err := OpenEmulator(ctx, ref)
	if err != nil {
		return err
	}
	defer p.Close()
	return p.Detach()
}

// Detach removes the emulated port (program, pins, and the fq and clsact
// qdiscs attach added). The port must have been opened with its
// namespace (AttachEmulator, OpenEmulator).
func (p *EmulatedPort) Detach() error {
	if p.dir == "" || p.cfg == nil {
		return fmt.Errorf("%s: detach: %w", p.ifname, os.ErrClosed)
	}
	if p.prog == nil && p.cfg.Attach == emuViaTC {
		if prog, err := ebpf.LoadPinnedProgram(filepath.Join(p.dir, "prog"), nil); err == nil {
			p.prog = prog
		}
	}
	// The qdiscs and filters are found by ifindex: only in the port's own
	// namespace does that name the right interface.
	if ino, err := nsInode(p.ns); err != nil || ino != p.nsIno {
		return fmt.Errorf("%s: detach: the port was opened outside its network namespace (inode %d); open it with OpenEmulator and its NetNS", p.ifname, p.nsIno)
	}
	nlh, err := netlinkHandleIn(p.ns)
	if err != nil {
		return fmt.Errorf("%s: detach: %w", p.ifname, err)
	}
	defer nlh.Close()
	if err := p.teardown(nlh); err != nil {
		return fmt.Errorf("%s: detach: %w", p.ifname, err)
	}
	return nil
}

// Close releases this process's handles; the port stays attached.
func (p *EmulatedPort) Close() error {
	var errs []error
	if p.lnk != nil {
		errs = append(errs, p.lnk.Close())
		p.lnk = nil
	}
	if p.prog != nil {
		errs = append(errs, p.prog.Close())
		p.prog = nil
	}
	if p.mem != nil {
		errs = append(errs, unix.Munmap(p.mem))
		p.mem, p.cfg = nil, nil
	}
	for _, m := range []**ebpf.Map{&p.cfgMap, &p.stMap, &p.evMap} {
		if *m != nil {
			errs = append(errs, (*m).Close())
			*m = nil
		}
	}
	if p.ns.IsOpen() {
		errs = append(errs, p.ns.Close())
		p.ns = netns.None()
	}
	return errors.Join(errs...)
}

// Interface is the emulated interface's name (as attached).
func (p *EmulatedPort) Interface() string { return p.ifname }

// Index is its ifindex in its namespace.
func (p *EmulatedPort) Index() int { return p.ifindex }

// NetNSInode is the inode of the port's network namespace.
func (p *EmulatedPort) NetNSInode() uint64 { return p.nsIno }

// PinDir is where its pins are.
func (p *EmulatedPort) PinDir() string { return p.dir }

// Driver is the driver profile of its EEE interface.
func (p *EmulatedPort) Driver() string { return cString(p.cfg.Driver[:]) }

// AttachedVia says whether TCX or clsact carries the program.
func (p *EmulatedPort) AttachedVia() AttachMode {
	if p.cfg.Attach == emuViaTC {
		return AttachTC
	}
	return AttachTCX
}

func (p *EmulatedPort) regs() emuRegs {
	f := atomic.LoadUint32(&p.cfg.Flags)
	return emuRegs{timer: time.Duration(atomic.LoadUint64(&p.cfg.PdtNs)),
		eeeEnabled: f&emuFlagEEE != 0, txLPIEnabled: f&emuFlagTxLPI != 0}
}

// GetEEE reads the port's EEE registers as ethtool would report them: the
// emulated link partner supports EEE, so active follows enabled.
func (p *EmulatedPort) GetEEE() (EEEState, error) {
	if p.cfg == nil {
		return EEEState{}, fmt.Errorf("%s: %w", p.ifname, os.ErrClosed)
	}
	if p.drv.noEEE {
		return EEEState{}, fmt.Errorf("%s: EEE get: %w", p.ifname, classifyErrno(unix.EOPNOTSUPP))
	}
	r := p.regs()
	st := EEEState{Enabled: r.eeeEnabled, Active: r.eeeEnabled, TxLPIEnabled: r.txLPIEnabled,
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
func (p *EmulatedPort) SetEEE(set EEESet) error {
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
func (p *EmulatedPort) SetHold(d time.Duration) error {
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
func (p *EmulatedPort) Hold() time.Duration {
	return time.Duration(atomic.LoadUint64(&p.cfg.HoldNs))
}

// setClock sets the program's clock (tests: BPF_PROG_TEST_RUN); 0 = the
// kernel's.
func (p *EmulatedPort) setClock(ns uint64) { atomic.StoreUint64(&p.cfg.ClockOverrideNs, ns) }

// ParseEmulatedRate reads the bit rate an emulated port serialises at: "1G", "100M", "2.5Gbit/s", "10e9", "0" or
// "none" (no serialisation); "preset" is the preset's rate.
func ParseEmulatedRate(s string, presetBps float64) (uint64, error) {
	v := strings.TrimSpace(s)
	switch strings.ToLower(v) {
	case "", "0", "none":
		return 0, nil
	case "preset":
		return uint64(math.Round(presetBps)), nil
	}
	num := strings.ToLower(v)
	for _, suffix := range []string{"bit/s", "b/s", "bps", "bit"} {
		if n, ok := strings.CutSuffix(num, suffix); ok {
			num = n
			break
		}
	}
	mult := 1.0
	if n := len(num); n > 0 {
		switch num[n-1] {
		case 'k':
			mult, num = 1e3, num[:n-1]
		case 'm':
			mult, num = 1e6, num[:n-1]
		case 'g':
			mult, num = 1e9, num[:n-1]
		case 't':
			mult, num = 1e12, num[:n-1]
		}
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(f) || f < 0 || f*mult > 1e15 {
		return 0, fmt.Errorf("invalid rate %q (want e.g. 1G, 100M, 10e9, preset or none)", s)
	}
	return uint64(math.Round(f * mult)), nil
}
