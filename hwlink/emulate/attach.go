package emulate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync/atomic"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/lpictl/lpictl/bpf"
	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/observe"
)

// Attach turns cfg.Interface's egress into an emulated EEE port
// (docs/model.md §1): it installs fq as the root qdisc if the interface has the
// kernel's default root qdisc (fq honours the departure times the program
// sets), loads and configures the eeeemu program, attaches it (TCX, or a
// clsact qdisc and a cls_bpf filter) and pins the maps and the link (or
// program) under cfg.BPFFS, so the port stays after the process exits. The
// returned port's Close releases the handles; Port.Detach (or the function Detach
// from any process) removes everything that was added.
//
// Errors from cfg (unknown mode for the preset, bad scale, unknown driver
// profile) are returned before anything is changed; ErrNoDevice if the
// interface does not exist, ErrAlreadyEmulated if it is emulated already,
// ErrNotSupported / ErrPermission as observe.AttachEBPF.
func Attach(ctx context.Context, cfg Config) (*Port, error) {
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
		if ns, err = cfg.NetNS.Open(); err != nil {
			return nil, err
		}
	}
	nsKept := false
	defer func() {
		if !nsKept && ns.IsOpen() {
			ns.Close()
		}
	}()
	tgt, err := findTarget(ns, &pl, cfg.Interface, log)
	if err != nil {
		return nil, err
	}
	nlh, err := hwlink.NetlinkHandleIn(ns)
	if err != nil {
		return nil, err
	}
	defer nlh.Close()
	if err := checkDevice(nlh, ns, cfg, tgt.ifindex); err != nil {
		return nil, err
	}
	lj, err := joinLinkOf(cfg, &pl, tgt, log)
	if err != nil {
		return nil, err
	}
	p, err := loadPort(cfg.Interface, lj)
	if err != nil {
		if lj != nil {
			err = errors.Join(err, lj.leave())
		}
		return nil, err
	}
	p.dir, p.ifname, p.ifindex, p.nsIno, p.drv = tgt.dir, cfg.Interface, tgt.ifindex, tgt.ino, pl.drv
	ok := false
	defer func() {
		if !ok {
			if err := p.teardown(nlh); err != nil {
				log.Warn("emulator: undo after a failed attach", "device", cfg.Interface, "error", err)
			}
			p.Close()
		}
	}()
	if err := p.initState(pl); err != nil {
		return nil, fmt.Errorf("%s: initialise emulator state: %w", cfg.Interface, err)
	}
	if err := p.setupDelay(nlh, cfg.Delay, log); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Interface, err)
	}
	if err := p.attachProgram(nlh, ns, pl.attach, log); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Interface, err)
	}
	if err := ensureBPFFS(pl.bpffs, tgt.mountBPFFS, log); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Interface, err)
	}
	if err := p.pin(); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Interface, err)
	}
	ok, nsKept = true, true
	p.ns = ns
	log.Debug("emulated EEE port attached", "device", cfg.Interface, "via", p.AttachedVia(), "pins", tgt.dir)
	return p, nil
}

// target is where an emulator goes: the device and its pin directory.
type target struct {
	dir        string
	ifindex    int
	ino        uint64
	mountBPFFS bool // mount a bpffs at the default place once attached
}

// findTarget resolves the bpffs (pl.bpffs) and the pin directory of ifname
// in ns, and refuses a device whose pins exist already.
func findTarget(ns netns.NsHandle, pl *emuPlan, ifname string, log *slog.Logger) (target, error) {
	// The pins must outlive this process: under `ip netns exec` they go
	// to the bpffs outside its mount namespace, or attach refuses.
	mountBPFFS := pl.bpffs == DefaultBPFFS
	var err error
	if pl.bpffs, err = resolveBPFFS(pl.bpffs, true); err != nil {
		return target{}, fmt.Errorf("%s: %w", ifname, err)
	}
	t := target{mountBPFFS: mountBPFFS && pl.bpffs == DefaultBPFFS}
	if t.dir, t.ifindex, t.ino, err = emulatorDir(ns, pl.bpffs, ifname); err != nil {
		return target{}, err
	}
	if _, err := os.Stat(t.dir); err == nil {
		return target{}, fmt.Errorf("%s: %w (pins at %s; `lpictl emulate detach %s` first)", ifname, ErrAlreadyEmulated, t.dir, ifname)
	}
	// The pins need a bpffs: checked now, mounted (if it is the default
	// place and none is there) only once the rest has worked.
	if err := ensureBPFFS(pl.bpffs, false, log); err != nil && !t.mountBPFFS {
		return target{}, fmt.Errorf("%s: %w", ifname, err)
	}
	return t, nil
}

// checkDevice refuses a physical device (unless cfg.AllowPhysical) and one
// that carries an emulator already.
func checkDevice(nlh *netlink.Handle, ns netns.NsHandle, cfg Config, ifindex int) error {
	lk, err := nlh.LinkByIndex(ifindex)
	if err != nil {
		return fmt.Errorf("%s: %w", cfg.Interface, hwlink.ClassifyLinkErr(err))
	}
	if err := checkVirtual(cfg.Interface, lk, cfg.AllowPhysical); err != nil {
		return err
	}
	// One emulator per device, whatever bpffs its pins are in: a second
	// one would stack its waits on the first's.
	if have, err := emuExisting(nlh, ns, ifindex); err != nil {
		return fmt.Errorf("%s: %w", cfg.Interface, err)
	} else if have != "" {
		return fmt.Errorf("%s: %w: the device carries %s (pinned under another bpffs? `lpictl emulate status --netns NS --bpffs B` lists them; detach it first)",
			cfg.Interface, ErrAlreadyEmulated, have)
	}
	return nil
}

// loadPort loads the emulator's objects into a port not yet attached:
// per direction, or (link not nil) an end of link, joined to its map when
// the other end made it.
func loadPort(ifname string, link *linkEnd) (*Port, error) {
	var (
		po   portObjects
		prog *ebpf.Program
		lk   *ebpf.Map
		err  error
	)
	if link == nil {
		var o dirObjects
		err = loadInto(&o, nil)
		po, prog = o.portObjects, o.Prog
	} else {
		var o linkObjects
		err = loadInto(&o, link.shared)
		po, prog, lk = o.portObjects, o.Prog, o.Link
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ifname, err)
	}
	p, err := newEmulatedPort(po.Config, po.State, po.Events)
	if err != nil {
		for _, c := range []io.Closer{po.Config, po.State, po.Events, prog, lk} {
			c.Close() // nil-safe: *ebpf.Map and *ebpf.Program
		}
		return nil, fmt.Errorf("%s: %w", ifname, err)
	}
	p.prog, p.lkMap, p.link = prog, lk, link
	return p, nil
}

// joinLinkOf claims the port's end of its link (link mode; nil per
// direction). The pins need the bpffs now, so it is mounted if it is the
// default place and none is there.
func joinLinkOf(cfg Config, pl *emuPlan, tgt target, log *slog.Logger) (*linkEnd, error) {
	if cfg.LPI != PerLink {
		return nil, nil
	}
	if err := ensureBPFFS(pl.bpffs, tgt.mountBPFFS, log); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Interface, err)
	}
	j, err := joinLink(pl.bpffs, cfg, pl)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Interface, err)
	}
	return j, nil
}

// initState writes the planned configuration and the initial state: the
// port starts idle, as if a transmission had just ended (sim/eee
// Link.Start), and accounting runs from here.
func (p *Port) initState(pl emuPlan) error {
	c := pl.cfg
	c.Ifindex = uint32(p.ifindex)
	c.NetnsIno = p.nsIno
	now := uint64(observe.MonotonicNow())
	c.AttachedNs = now
	st := bpf.EeeemuEmuState{T0Ns: now, FreeAtNs: now, ArmedPdtNs: c.PdtNs, ArmedMode: c.Mode}
	if pl.regs.flags() != emuFlagEEE|emuFlagTxLPI {
		st.ArmedMode = uint32(ModeAlwaysOn)
	}
	if p.link != nil {
		c.LinkEnd = uint32(p.link.end)
	}
	*p.cfg = c
	if err := p.stMap.Update(uint32(0), &st, ebpf.UpdateAny); err != nil {
		return err
	}
	if p.link == nil || p.link.shared != nil {
		// The second end's slot starts over at its first packet (its
		// epoch is new).
		return nil
	}
	if err := newLink(p.lkMap, p.cfg, p.link.end, st.ArmedMode, now); err != nil {
		return err
	}
	return p.link.pinLink(p.lkMap)
}

// setupDelay installs fq for DelayEDT (and DelayAuto, which falls back to
// spinning where the kernel has no fq).
func (p *Port) setupDelay(nlh *netlink.Handle, delay Delay, log *slog.Logger) error {
	if delay != DelayEDT && delay != DelayAuto {
		return nil
	}
	added, err := emuSetupFQ(nlh, p.ifindex)
	switch {
	case delay == DelayAuto && errors.Is(err, errNoFQ):
		log.Info("the kernel has no fq qdisc: holding packets with the spin method (delay auto)", "device", p.ifname)
		atomic.StoreUint32(&p.cfg.Delay, uint32(DelaySpin))
	case err != nil:
		return err
	case added:
		p.cfg.Setup |= emuAddedFQ
	}
	return nil
}

// attachProgram attaches the program at the egress: TCX, or (where TCX is
// missing, or asked for) a clsact qdisc and a cls_bpf filter.
func (p *Port) attachProgram(nlh *netlink.Handle, ns netns.NsHandle, mode observe.AttachMode, log *slog.Logger) error {
	if mode == observe.AttachAuto || mode == observe.AttachTCX {
		var l link.Link
		err := hwlink.InNetNS(ns, func() error {
			var err error
			l, err = link.AttachTCX(link.TCXOptions{Interface: p.ifindex, Program: p.prog, Attach: ebpf.AttachTCXEgress, Anchor: link.Tail()})
			return err
		})
		switch {
		case err == nil:
			p.lnk = l
			p.cfg.Attach = emuViaTCX
		case mode == observe.AttachTCX || !errors.Is(hwlink.ClassifyBPFErr(err), hwlink.ErrNotSupported):
			return fmt.Errorf("attach TCX: %w", hwlink.ClassifyBPFErr(err))
		default:
			log.Info("TCX not supported, falling back to clsact", "device", p.ifname, "error", err)
			mode = observe.AttachTC
		}
	}
	if mode == observe.AttachTC {
		// Recorded only once the filter is ours: teardown deletes the
		// filter by priority and handle, which would otherwise remove
		// another emulator's.
		clsact, err := emuAttachTC(nlh, p.ifindex, p.prog)
		if err != nil {
			return fmt.Errorf("attach clsact filter: %w", err)
		}
		p.cfg.Attach = emuViaTC
		if clsact {
			p.cfg.Setup |= emuAddedClsact
		}
	}
	return nil
}
