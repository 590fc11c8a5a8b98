package observe

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"runtime"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"
	"github.com/cilium/ebpf/rlimit"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/lpictl/lpictl/bpf"
	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/internal/tcbpf"
)

// AttachMode selects how the eBPF program is attached.
type AttachMode int

const (
	// AttachAuto tries TCX (Linux ≥ 6.6) and falls back to clsact + cls_bpf.
	AttachAuto AttachMode = iota
	// AttachTCX uses a TCX bpf_link only.
	AttachTCX
	// AttachTC uses a clsact qdisc and a direct-action cls_bpf filter.
	AttachTC
)

func (m AttachMode) String() string {
	switch m {
	case AttachTCX:
		return "tcx"
	case AttachTC:
		return "tc"
	default:
		return "auto"
	}
}

// EBPFConfig configures AttachEBPF.
type EBPFConfig struct {
	// Interface is the port's name in NetNS.
	Interface string
	NetNS     hwlink.NetNS
	Mode      AttachMode
	// Ingress also observes received traffic (egress is always observed).
	Ingress bool
	// Speed is the link speed in bits per second, used to estimate when a
	// transmission ends. 0 = unknown: transmissions are taken to be
	// instantaneous, so a gap is the time between packets at the hook and
	// over-estimates the true idle time by one packet's serialisation time.
	Speed uint64
	// SampleFloor: gaps at least this long are delivered as exact samples
	// through DrainGaps; shorter ones only reach the histogram. 0 = all.
	SampleFloor time.Duration
	// RingBytes is the sample ring size (power of two, ≥ page size);
	// 0 = 256 KiB (8192 samples).
	RingBytes int
	Logger    *slog.Logger
}

// tcFilterPriority is the cls_bpf filter priority lpictl uses (late, so
// other classifiers run first and our observation does not reorder them).
const tcFilterPriority = 0xC0DE

const defaultRingBytes = 256 << 10

// gapSampleSize is sizeof(struct gap_sample).
const gapSampleSize = 24

// EBPFObserver observes one interface with the idlegap eBPF program. Create
// it with AttachEBPF; Close detaches it and removes everything it added.
type EBPFObserver struct {
	ifname  string
	ifindex int
	mode    AttachMode
	log     *slog.Logger
	ns      netns.NsHandle

	objs   bpf.IdlegapObjects
	links  []link.Link
	tc     *tcbpf.Attachment
	reader *ringbuf.Reader
	rec    ringbuf.Record
	// ReadStats buffer, allocated once in init: the stats map's per-CPU
	// values (percpu, one per possible CPU) followed by one word for the
	// lookup key. The kernel writes into it through addresses passed as
	// integers, so it must be on the heap: a slice this large whose length
	// is only known at run time always is.
	statsBuf []uint64
	percpu   []bpf.IdlegapDirState
}

var _ Observer = (*EBPFObserver)(nil)

// SpeedQ16 converts a link speed (bits/s) to the program's nanoseconds per
// byte in Q16 fixed point; 0 for unknown.
func SpeedQ16(bps uint64) uint64 {
	if bps == 0 {
		return 0
	}
	return uint64(math.Round(8e9 * 65536 / float64(bps)))
}

// LoadIdlegap loads the eBPF objects without attaching them (for tests and
// benchmarks through BPF_PROG_TEST_RUN). ringBytes 0 = default.
func LoadIdlegap(ringBytes int) (*bpf.IdlegapObjects, error) {
	if ringBytes == 0 {
		ringBytes = defaultRingBytes
	}
	if ringBytes < os.Getpagesize() || ringBytes&(ringBytes-1) != 0 {
		return nil, fmt.Errorf("ring size %d: must be a power of two ≥ %d", ringBytes, os.Getpagesize())
	}
	// Only kernels < 5.11 account BPF memory to RLIMIT_MEMLOCK; on newer
	// ones this is a no-op.
	if err := rlimit.RemoveMemlock(); err != nil {
		return nil, fmt.Errorf("remove memlock limit: %w", hwlink.ClassifyErrno(err))
	}
	spec, err := bpf.LoadIdlegap()
	if err != nil {
		return nil, err
	}
	spec.Maps[bpf.IdlegapMapSamples].MaxEntries = uint32(ringBytes)
	objs := new(bpf.IdlegapObjects)
	if err := spec.LoadAndAssign(objs, nil); err != nil {
		return nil, fmt.Errorf("load eBPF program: %w", hwlink.ClassifyBPFErr(err))
	}
	return objs, nil
}

// AttachEBPF loads the idlegap program and attaches it to cfg.Interface.
// Errors match ErrNotSupported (no BPF/TCX support) or ErrPermission
// (missing capabilities): the caller then falls back to counters.
func AttachEBPF(ctx context.Context, cfg EBPFConfig) (*EBPFObserver, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := hwlink.CheckIfname(cfg.Interface); err != nil {
		return nil, err
	}
	o := &EBPFObserver{ifname: cfg.Interface, log: cfg.Logger, ns: netns.None()}
	if o.log == nil {
		o.log = slog.New(slog.DiscardHandler)
	}
	ok := false
	defer func() {
		if !ok {
			o.Close()
		}
	}()
	ns, err := cfg.NetNS.Open() // "" gives the caller's own (no handle)
	if err != nil {
		return nil, err
	}
	o.ns = ns
	nlh, err := hwlink.NetlinkHandleIn(o.ns)
	if err != nil {
		return nil, err
	}
	defer nlh.Close()
	lk, err := nlh.LinkByName(cfg.Interface)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Interface, hwlink.ClassifyLinkErr(err))
	}
	o.ifindex = lk.Attrs().Index

	objs, err := LoadIdlegap(cfg.RingBytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Interface, err)
	}
	if err := o.init(objs, cfg.Speed, cfg.SampleFloor); err != nil {
		return nil, err
	}

	progs := []struct {
		prog *ebpf.Program
		dir  Direction
	}{{o.objs.LpiEgress, Egress}}
	if cfg.Ingress {
		progs = append(progs, struct {
			prog *ebpf.Program
			dir  Direction
		}{o.objs.LpiIngress, Ingress})
	}

	mode := cfg.Mode
	if mode == AttachAuto || mode == AttachTCX {
		var links []link.Link
		var tcxErr error
		for _, p := range progs {
			l, err := o.attachTCX(p.prog, p.dir)
			if err != nil {
				tcxErr = err
				break
			}
			links = append(links, l)
		}
		if tcxErr == nil {
			o.links, o.mode = links, AttachTCX
		} else {
			for _, l := range links {
				l.Close()
			}
			if mode == AttachTCX || !errors.Is(tcxErr, hwlink.ErrNotSupported) {
				return nil, fmt.Errorf("%s: attach TCX: %w", cfg.Interface, tcxErr)
			}
			o.log.Info("TCX not supported, falling back to clsact", "device", cfg.Interface, "error", tcxErr)
			mode = AttachTC
		}
	}
	if mode == AttachTC {
		o.tc = &tcbpf.Attachment{Ifindex: o.ifindex}
		for _, p := range progs {
			if err := o.tc.Attach(nlh, p.prog, p.dir == Ingress, tcFilterPriority); err != nil {
				return nil, fmt.Errorf("%s: attach clsact filter: %w", cfg.Interface, err)
			}
		}
		o.mode = AttachTC
	}
	ok = true
	o.log.Debug("eBPF observer attached", "device", cfg.Interface, "mode", o.mode, "ingress", cfg.Ingress)
	return o, nil
}

// init takes ownership of objs, configures the program and opens the
// sample reader.
func (o *EBPFObserver) init(objs *bpf.IdlegapObjects, speed uint64, floor time.Duration) error {
	o.objs = *objs
	ncpu, err := ebpf.PossibleCPU()
	if err != nil {
		return fmt.Errorf("%s: possible CPUs: %w", o.ifname, err)
	}
	// The kernel copies one value per possible CPU, each rounded up to 8
	// bytes; struct dir_state is all u64, so that is the Go layout.
	if vs := o.objs.Stats.ValueSize(); uintptr(vs) != unsafe.Sizeof(bpf.IdlegapDirState{}) {
		return fmt.Errorf("%s: stats map value %d bytes, Go mirror %d", o.ifname, vs, unsafe.Sizeof(bpf.IdlegapDirState{}))
	}
	words := int(unsafe.Sizeof(bpf.IdlegapDirState{}) / 8)
	o.statsBuf = make([]uint64, ncpu*words+1)
	o.percpu = unsafe.Slice((*bpf.IdlegapDirState)(unsafe.Pointer(&o.statsBuf[0])), ncpu)
	if err := o.SetSpeed(speed); err != nil {
		return err
	}
	if err := o.SetSampleFloor(floor); err != nil {
		return err
	}
	o.reader, err = ringbuf.NewReader(o.objs.Samples)
	if err != nil {
		return fmt.Errorf("%s: ring buffer reader: %w", o.ifname, err)
	}
	// Draining never blocks: the program writes without wake-ups and a
	// deadline in the past makes ReadInto return at the end of the data.
	o.reader.SetDeadline(time.Unix(0, 1))
	return nil
}

func (o *EBPFObserver) attachTCX(prog *ebpf.Program, dir Direction) (link.Link, error) {
	at := ebpf.AttachTCXEgress
	if dir == Ingress {
		at = ebpf.AttachTCXIngress
	}
	var l link.Link
	// The ifindex is resolved in the namespace of the calling thread.
	err := hwlink.InNetNS(o.ns, func() error {
		var err error
		l, err = link.AttachTCX(link.TCXOptions{Interface: o.ifindex, Program: prog, Attach: at, Anchor: link.Tail()})
		return err
	})
	if err != nil {
		return nil, hwlink.ClassifyBPFErr(err)
	}
	return l, nil
}

// Interface returns the observed interface's name.
func (o *EBPFObserver) Interface() string { return o.ifname }

// AttachedVia says whether TCX or clsact is in use.
func (o *EBPFObserver) AttachedVia() AttachMode { return o.mode }

// Method implements Observer.
func (o *EBPFObserver) Method() Method { return MethodEBPF }

// Resolution implements Observer: the program's clock (bpf_ktime_get_ns) is
// in nanoseconds; the gap is exact to the hook, before any qdisc queueing.
func (o *EBPFObserver) Resolution() time.Duration { return time.Nanosecond }

// SetSpeed updates the link speed (bits/s, 0 = unknown), e.g. after the
// link renegotiated.
func (o *EBPFObserver) SetSpeed(bps uint64) error {
	if err := o.objs.NsPerByteQ16.Set(SpeedQ16(bps)); err != nil {
		return fmt.Errorf("%s: set speed: %w", o.ifname, err)
	}
	return nil
}

// SetSampleFloor updates the minimum gap delivered as a sample.
func (o *EBPFObserver) SetSampleFloor(d time.Duration) error {
	if d < 0 {
		d = 0
	}
	if err := o.objs.SampleFloorNs.Set(uint64(d)); err != nil {
		return fmt.Errorf("%s: set sample floor: %w", o.ifname, err)
	}
	return nil
}

// DrainGaps implements Observer. It does not block and does not allocate.
func (o *EBPFObserver) DrainGaps(dst []GapSample) (int, error) {
	n := 0
	for n < len(dst) {
		if o.reader.AvailableBytes() == 0 {
			break
		}
		if err := o.reader.ReadInto(&o.rec); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				break
			}
			return n, fmt.Errorf("%s: read gap samples: %w", o.ifname, err)
		}
		b := o.rec.RawSample
		if len(b) < gapSampleSize {
			continue
		}
		dst[n] = GapSample{
			End:       time.Duration(binary.NativeEndian.Uint64(b[0:])),
			Length:    time.Duration(binary.NativeEndian.Uint64(b[8:])),
			Dir:       Direction(binary.NativeEndian.Uint32(b[16:])),
			PacketLen: binary.NativeEndian.Uint32(b[20:]),
		}
		n++
	}
	return n, nil
}

// mapLookupAttr is the BPF_MAP_LOOKUP_ELEM part of union bpf_attr.
type mapLookupAttr struct {
	mapFD uint32
	_     uint32
	key   uint64 // pointer
	value uint64 // pointer
	flags uint64
}

// lookupPerCPU reads key's per-CPU values of the stats map into o.percpu.
// It is BPF_MAP_LOOKUP_ELEM done directly: cilium/ebpf's per-CPU Lookup
// allocates a buffer and decodes through reflection on every call, and
// ReadStats must not allocate.
func (o *EBPFObserver) lookupPerCPU(key uint32) error {
	if o.objs.Stats == nil || len(o.statsBuf) == 0 {
		return os.ErrClosed
	}
	k := &o.statsBuf[len(o.statsBuf)-1]
	*k = 0
	*(*uint32)(unsafe.Pointer(k)) = key // the map's key is a u32 at that address
	attr := mapLookupAttr{
		mapFD: uint32(o.objs.Stats.FD()),
		key:   uint64(uintptr(unsafe.Pointer(k))),
		value: uint64(uintptr(unsafe.Pointer(&o.statsBuf[0]))),
	}
	_, _, errno := unix.Syscall(unix.SYS_BPF, unix.BPF_MAP_LOOKUP_ELEM,
		uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr))
	// The buffer and the map's file descriptor must outlive the call.
	runtime.KeepAlive(o.statsBuf)
	runtime.KeepAlive(o.objs.Stats)
	if errno != 0 {
		return hwlink.ClassifyErrno(errno)
	}
	return nil
}

// ReadStats implements Observer: one per-CPU map lookup, summed over the
// CPUs (each CPU counts into its own copy). Counters are read one by one
// while the program runs, so the set is not a snapshot.
func (o *EBPFObserver) ReadStats(dir Direction, st *GapStats) error {
	if err := o.lookupPerCPU(uint32(dir)); err != nil {
		return fmt.Errorf("%s: read %s stats: %w", o.ifname, dir, err)
	}
	*st = GapStats{}
	for i := range o.percpu {
		c := &o.percpu[i]
		st.Packets += c.Packets
		st.Bytes += c.Bytes
		st.Gaps += c.Gaps
		st.Busy += c.Busy
		st.Idle += time.Duration(c.IdleNs)
		st.Samples += c.Samples
		st.SamplesLost += c.SamplesLost
		st.Races += c.Races
		for b, n := range &c.Hist {
			st.Hist[b] += n
		}
	}
	return nil
}

// Close detaches the program (TCX links or the clsact filters, and the
// clsact qdisc if it added it) and releases all objects.
func (o *EBPFObserver) Close() error {
	var errs []error
	for _, l := range o.links {
		errs = append(errs, l.Close())
	}
	o.links = nil
	if o.tc != nil {
		h, err := hwlink.NetlinkHandleIn(o.ns)
		if err != nil {
			errs = append(errs, err)
		} else {
			errs = append(errs, o.tc.Detach(h))
			h.Close()
		}
		o.tc = nil
	}
	if o.reader != nil {
		errs = append(errs, o.reader.Close())
		o.reader = nil
	}
	errs = append(errs, o.objs.Close())
	o.objs = bpf.IdlegapObjects{}
	if o.ns.IsOpen() {
		errs = append(errs, o.ns.Close())
		o.ns = netns.None()
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%s: detach: %w", o.ifname, err)
	}
	return nil
}
