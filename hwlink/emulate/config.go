package emulate

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/observe"
)

// DefaultBPFFS is where the emulator's pins live unless told otherwise;
// Attach mounts a bpffs there if none is (as bpftool does).
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
// ring buffer and emu_state.events_lost; 3: the delay ledger; 4: the link
// mode, emu_config's link fields and the lpi_link map).
const emuLayoutVersion = 4

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

// Delay is how an emulated port holds a packet back.
type Delay uint32

// Delay methods (bpf/eeeemu.c DELAY_*).
const (
	// DelayEDT sets the packet's earliest departure time (skb->tstamp) and
	// installs fq as root qdisc, which holds it until then. Needs the fq
	// qdisc (CONFIG_NET_SCH_FQ).
	DelayEDT Delay = iota
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

func (d Delay) String() string {
	if int(d) < len(emulatedDelayNames) {
		return emulatedDelayNames[d]
	}
	return fmt.Sprintf("delay(%d)", uint32(d))
}

// ParseDelay reads a delay method name (edt, spin, none, auto).
func ParseDelay(s string) (Delay, error) {
	name := strings.ToLower(strings.TrimSpace(s))
	for i, n := range emulatedDelayNames {
		if n == name {
			return Delay(i), nil
		}
	}
	return 0, fmt.Errorf("unknown delay method %q (want auto, edt, spin or none)", s)
}

// LPI is an emulated port's low-power-idle symmetry (docs/model.md §1.2):
// bpf/eeeemu.c's LPI_*.
type LPI uint32

// Symmetries.
const (
	// PerDirection: the port's transmit direction goes down on its own,
	// with no handshake (the zero value).
	PerDirection LPI = iota
	// PerLink: the two ends of one link (two emulated ports attached with
	// the same Config.Link) share its power state: the link goes down when
	// both are idle, after the owner's t_PDT and the power-down handshake,
	// and a packet on either end wakes it (docs/model.md §1.1).
	PerLink
)

var lpiNames = [...]string{"per-direction", "per-link"}

func (l LPI) String() string {
	if int(l) < len(lpiNames) {
		return lpiNames[l]
	}
	return fmt.Sprintf("lpi(%d)", uint32(l))
}

// ParseLPI reads a symmetry name (per-direction, per-link).
func ParseLPI(s string) (LPI, error) {
	name := strings.ToLower(strings.TrimSpace(s))
	for i, n := range lpiNames {
		if n == name {
			return LPI(i), nil
		}
	}
	return 0, fmt.Errorf("unknown lpi %q (want per-direction or per-link)", s)
}

// DefaultSpinMax bounds one packet's wait with DelaySpin.
const DefaultSpinMax = 10 * time.Millisecond

// LowPower is one low-power state of an emulated port: its power
// and transition times, unscaled (a power preset's fast_wake or
// deep_sleep, sim/power).
type LowPower struct {
	PowerW float64
	Wake   time.Duration // t_w
	Sleep  time.Duration // t_s
}

// Preset is what the emulator takes from a power preset
// (configs/presets, loaded with sim/power.Load by the caller). Powers are
// a port's.
type Preset struct {
	Name       string
	RateBps    float64
	WakePowerW float64
	FastWake   *LowPower
	DeepSleep  *LowPower
}

// Config configures Attach.
type Config struct {
	// Interface is the netdev in NetNS whose egress becomes the port.
	Interface string
	NetNS     hwlink.NetNS
	// Attach: TCX (auto falls back to clsact when TCX is missing) or TC.
	Attach observe.AttachMode
	Preset Preset
	Mode   Mode
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
	Delay Delay
	// SpinMax bounds one packet's wait with DelaySpin (0 =
	// DefaultSpinMax, at most 100 ms).
	SpinMax time.Duration
	// Scale multiplies the preset's transition times (t_s, t_w); 0 = 1.
	// Use it where kernel timer jitter (tens of µs) would hide µs-scale
	// wake-ups.
	Scale float64
	// LPI is the port's symmetry (docs/model.md §1.2). PerLink needs
	// Link; the zero value is PerDirection.
	LPI LPI
	// Link names the link the port is one end of (PerLink): the two ends
	// attach with the same name under one bpffs and must agree on the
	// preset, mode, scale, rate and handshake. At most 31 bytes of
	// letters, digits, '.', '_' and '-'.
	Link string
	// Handshake is the one-way time H of the power-down request (PerLink,
	// docs/model.md §1.1: a control message's serialisation plus the
	// cable's propagation); not scaled, as the simulator does not scale
	// it. 0: no handshake.
	Handshake time.Duration
	// Driver is the profile of the emulated EEE interface, a name from
	// the driver table ("" = DefaultDriver).
	Driver string
	// BPFFS is the bpffs mount for the pins ("" = DefaultBPFFS).
	BPFFS string
	// AllowPhysical lets the emulator onto a device whose kind is not in
	// VirtualKinds (a physical NIC, a bond, a VLAN …): its traffic is then
	// held as an emulated port's, with the delay method's costs.
	AllowPhysical bool
	Logger        *slog.Logger
}

// Ref names an emulated port.
type Ref struct {
	Interface string
	NetNS     hwlink.NetNS
	BPFFS     string // "" = DefaultBPFFS
}

// ParseRate reads the bit rate an emulated port serialises at: "1G", "100M", "2.5Gbit/s", "10e9", "0" or
// "none" (no serialisation); "preset" is the preset's rate.
func ParseRate(s string, presetBps float64) (uint64, error) {
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
