package emulate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/cilium/ebpf"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/lpictl/lpictl/hwlink"
)

// Open opens the emulated port of ref.Interface, attached by this
// or another process (ErrNotEmulated if there is none).
func Open(ctx context.Context, ref Ref) (*Port, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := hwlink.CheckIfname(ref.Interface); err != nil {
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
		if ns, err = ref.NetNS.Open(); err != nil {
			return nil, err
		}
	}
	dir, ifindex, ino, err := emulatorDir(ns, bpffs, ref.Interface)
	if err == nil {
		if _, serr := os.Stat(dir); serr != nil {
			err = fmt.Errorf("%s: %w (no emulator pinned at %s)", ref.Interface, ErrNotEmulated, dir)
		}
	}
	var p *Port
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
func openEmulatorDir(dir string) (*Port, error) {
	cfgMap, err := ebpf.LoadPinnedMap(filepath.Join(dir, "config"), nil)
	if err != nil {
		return nil, fmt.Errorf("open emulator pins %s: %w", dir, hwlink.ClassifyBPFErr(err))
	}
	stMap, err := ebpf.LoadPinnedMap(filepath.Join(dir, "state"), nil)
	if err != nil {
		cfgMap.Close()
		return nil, fmt.Errorf("open emulator pins %s: %w", dir, hwlink.ClassifyBPFErr(err))
	}
	evMap, err := ebpf.LoadPinnedMap(filepath.Join(dir, "events"), nil)
	if errors.Is(err, os.ErrNotExist) {
		err = fmt.Errorf("no events map: pins of an older lpictl (detach and attach again): %w", err)
	}
	if err != nil {
		cfgMap.Close()
		stMap.Close()
		return nil, fmt.Errorf("open emulator pins %s: %w", dir, hwlink.ClassifyBPFErr(err))
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
	if err := p.openLink(); err != nil {
		p.Close()
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return p, nil
}

// List opens every emulated port pinned under bpffs ("" =
// DefaultBPFFS), in every namespace, sorted by pin directory. The caller
// closes them.
func List(bpffs string) ([]*Port, error) {
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
	var out []*Port
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

// Detach removes the emulated port of ref.Interface: program,
// pins, and the qdiscs attach added.
func Detach(ctx context.Context, ref Ref) error {
	p, err := Open(ctx, ref)
	if err != nil {
		return err
	}
	defer p.Close()
	return p.Detach()
}

// Detach removes the emulated port (program, pins, and the fq and clsact
// qdiscs attach added). The port must have been opened with its
// namespace (Attach, Open).
func (p *Port) Detach() error {
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
	if ino, err := hwlink.NetNSInode(p.ns); err != nil || ino != p.nsIno {
		return fmt.Errorf("%s: detach: the port was opened outside its network namespace (inode %d); open it with emulate.Open and its NetNS", p.ifname, p.nsIno)
	}
	nlh, err := hwlink.NetlinkHandleIn(p.ns)
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
func (p *Port) Close() error {
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
	if p.link != nil && p.link.shared != nil {
		errs = append(errs, p.link.shared.Close())
		p.link.shared = nil
	}
	for _, m := range []**ebpf.Map{&p.cfgMap, &p.stMap, &p.evMap, &p.lkMap} {
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
