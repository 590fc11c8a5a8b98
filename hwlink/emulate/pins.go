package emulate

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/lpictl/lpictl/hwlink"
)

// emuPinDir is the pin directory of ifindex in the namespace with inode ino.
func emuPinDir(bpffs string, ino uint64, ifindex int) string {
	return filepath.Join(bpffs, emuPinSubdir, fmt.Sprintf("ns%d-if%d", ino, ifindex))
}

// emulatorDir resolves ifname in ns to its pin directory.
func emulatorDir(ns netns.NsHandle, bpffs, ifname string) (dir string, ifindex int, ino uint64, err error) {
	nlh, err := hwlink.NetlinkHandleIn(ns)
	if err != nil {
		return "", 0, 0, err
	}
	defer nlh.Close()
	lk, err := nlh.LinkByName(ifname)
	if err != nil {
		return "", 0, 0, fmt.Errorf("%s: %w", ifname, hwlink.ClassifyLinkErr(err))
	}
	if ino, err = hwlink.NetNSInode(ns); err != nil {
		return "", 0, 0, err
	}
	return emuPinDir(bpffs, ino, lk.Attrs().Index), lk.Attrs().Index, ino, nil
}

// ensureBPFFS checks that dir is a bpffs mount and, if mountIt, mounts one
// there when it is not.
func ensureBPFFS(dir string, mountIt bool, log *slog.Logger) error {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return fmt.Errorf("bpffs %s: %w", dir, hwlink.ClassifyErrno(err))
	}
	if st.Type == unix.BPF_FS_MAGIC {
		return nil
	}
	if !mountIt {
		return fmt.Errorf("%s is not a bpffs mount (mount -t bpf bpf %s)", dir, dir)
	}
	if err := unix.Mount("bpf", dir, "bpf", 0, "mode=0700"); err != nil {
		return fmt.Errorf("mount bpffs at %s: %w", dir, hwlink.ClassifyErrno(err))
	}
	log.Info("mounted bpffs", "path", dir)
	return nil
}

func (p *Port) pin() error {
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
