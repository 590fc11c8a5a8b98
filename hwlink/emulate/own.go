package emulate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/lpictl/lpictl/hwlink"
)

// ErrPhysicalDevice: Attach refuses a device that is not virtual
// unless Config.AllowPhysical is set.
var ErrPhysicalDevice = errors.New("not a virtual device")

// ErrPrivateBPFFS: the bpffs the pins would go to exists only in this
// process's own mount namespace (as under `ip netns exec`), so the pins,
// and the port with them, would vanish when the process exits.
var ErrPrivateBPFFS = errors.New("bpffs private to this command's mount namespace")

// emuProgName is the emulator's program name as the kernel reports it
// (per direction); emuLinkProgName the link mode's.
const (
	emuProgName     = "eee_egress"
	emuLinkProgName = "eee_egress_link"
)

// emuFilterName is the cls_bpf filter name of the emulator (emuTCFilter).
const emuFilterName = "lpictl_eeeemu"

// VirtualKinds are the rtnetlink link kinds Attach takes without
// Config.AllowPhysical: devices whose egress carries no physical
// NIC's queues.
var VirtualKinds = []string{"veth", "dummy", "netkit", "ifb"}

// mountAnchor returns the /proc/PID/root of a process whose mount
// namespace outlives this one when this process runs in a mount namespace
// of its own (`ip netns exec` and `unshare -m` make one per command): PID 1
// where it can be read, else the parent. "" when this process shares the
// anchor's mount namespace or none can be read.
func mountAnchor() string {
	self, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		return ""
	}
	for _, pid := range []int{1, os.Getppid()} {
		if pid <= 0 {
			continue
		}
		ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", pid))
		if err != nil {
			continue
		}
		if ns == self {
			return ""
		}
		return fmt.Sprintf("/proc/%d/root", pid)
	}
	return ""
}

// bpffsDev says whether dir is a bpffs mount and gives its device (one per
// bpffs instance).
func bpffsDev(dir string) (bool, uint64) {
	var sfs unix.Statfs_t
	if unix.Statfs(dir, &sfs) != nil || sfs.Type != unix.BPF_FS_MAGIC {
		return false, 0
	}
	var st unix.Stat_t
	if unix.Stat(dir, &st) != nil {
		return false, 0
	}
	return true, st.Dev
}

// resolveBPFFS returns where the pins under bpffs live for good. In the
// caller's own mount namespace that is bpffs itself. In a mount namespace
// of its own (`ip netns exec NS lpictl …` unshares one and mounts a fresh
// /sys, whose fs/bpf is empty) it is the anchor's bpffs at the same path,
// reached through /proc/PID/root, when that is a bpffs: pins there outlive
// the command, and status and detach find them from anywhere. When the
// anchor has none and attach is set, the pins could only go to a bpffs of
// this namespace, which vanishes with it: ErrPrivateBPFFS.
func resolveBPFFS(bpffs string, attach bool) (string, error) {
	anchor := mountAnchor()
	if anchor == "" {
		return bpffs, nil
	}
	abs, err := filepath.Abs(bpffs)
	if err != nil {
		return "", fmt.Errorf("bpffs %s: %w", bpffs, err)
	}
	there := anchor + abs
	hostOK, hostDev := bpffsDev(there)
	ourOK, ourDev := bpffsDev(abs)
	switch {
	case hostOK && ourOK && hostDev == ourDev:
		return bpffs, nil
	case hostOK:
		return there, nil
	case !attach:
		return bpffs, nil
	}
	return "", fmt.Errorf("%w: %s is not a bpffs outside this mount namespace (`ip netns exec` gives each command its own /sys), so the pins, and the emulated port with them, would vanish when this command exits; mount one outside (mount -t bpf bpf %s) or use --netns NS instead of ip netns exec",
		ErrPrivateBPFFS, abs, abs)
}

// emuExisting describes the emulators already on ifindex's egress, whatever
// bpffs their pins are in: TCX programs named eee_egress and cls_bpf
// filters of the emulator's priority or name. "" if there is none.
func emuExisting(nlh *netlink.Handle, ns netns.NsHandle, ifindex int) (string, error) {
	var found []string
	err := hwlink.InNetNS(ns, func() error {
		res, err := link.QueryPrograms(link.QueryOptions{Target: ifindex, Attach: ebpf.AttachTCXEgress})
		if err != nil {
			if errors.Is(hwlink.ClassifyBPFErr(err), hwlink.ErrNotSupported) {
				return nil // no TCX on this kernel: nothing attached that way
			}
			return fmt.Errorf("query TCX programs: %w", hwlink.ClassifyBPFErr(err))
		}
		for _, ap := range res.Programs {
			prog, err := ebpf.NewProgramFromID(ap.ID)
			if err != nil {
				continue // gone meanwhile
			}
			info, err := prog.Info()
			prog.Close()
			if err == nil && (info.Name == emuProgName || info.Name == emuLinkProgName) {
				found = append(found, fmt.Sprintf("TCX program %s (id %d)", info.Name, ap.ID))
			}
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	filters, err := nlh.FilterList(&netlink.Device{LinkAttrs: netlink.LinkAttrs{Index: ifindex}}, netlink.HANDLE_MIN_EGRESS)
	if err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return "", fmt.Errorf("list egress filters: %w", hwlink.ClassifyErrno(err))
	}
	for _, f := range filters {
		bf, ok := f.(*netlink.BpfFilter)
		if ok && (bf.Priority == emuTCPriority || bf.Name == emuFilterName) {
			found = append(found, fmt.Sprintf("clsact filter %s (priority %#x)", bf.Name, bf.Priority))
		}
	}
	return strings.Join(found, ", "), nil
}

// linkKind is a device's rtnetlink kind ("device" when it has none: a
// physical NIC or loopback).
func linkKind(lk netlink.Link) string {
	return lk.Type()
}

// checkVirtual refuses a device that is not virtual unless allowed.
func checkVirtual(ifname string, lk netlink.Link, allow bool) error {
	kind := linkKind(lk)
	if allow || slices.Contains(VirtualKinds, kind) {
		return nil
	}
	return fmt.Errorf("%s: kind %q: %w (the emulator takes %s): the spin delay holds the sending CPU with bottom halves off for up to the spin maximum per packet, and edt replaces a multi-queue NIC's root qdisc with one fq; pass --allow-physical to attach anyway",
		ifname, kind, ErrPhysicalDevice, strings.Join(VirtualKinds, ", "))
}

// CheckResult is what Attach would do on a device, found without
// changing anything (Check).
type CheckResult struct {
	Device  string `json:"device"`
	Kind    string `json:"kind"`
	Virtual bool   `json:"virtual"`
	// Refused: why attach would refuse ("" = it would go ahead).
	Refused string `json:"refused"`
	// RootQdisc is the root qdisc in place ("" = none listed), and
	// RootQdiscAction what attach would do with it.
	RootQdisc       string `json:"root_qdisc"`
	RootQdiscAction string `json:"root_qdisc_action"`
	// Clsact: a clsact qdisc is there (the tc attach point adds one
	// otherwise).
	Clsact bool `json:"clsact"`
	// EgressFilters are the filters on clsact egress, TCXPrograms the TCX
	// egress programs: attach adds to them, replacing none.
	EgressFilters []string `json:"egress_filters"`
	TCXPrograms   []string `json:"tcx_programs"`
	// Existing names an emulator already on the device (attach refuses).
	Existing string `json:"existing"`
	PinDir   string `json:"pin_dir"`
}

// Check reports what Attach(cfg) would replace and add on
// cfg.Interface, and whether it would refuse, without changing anything.
// Errors are those of cfg (bad input) and of reading the device.
func Check(cfg Config) (CheckResult, error) {
	c := CheckResult{Device: cfg.Interface, EgressFilters: []string{}, TCXPrograms: []string{}}
	pl, err := cfg.plan()
	if err != nil {
		return c, fmt.Errorf("%s: %w", cfg.Interface, err)
	}
	ns := netns.None()
	if cfg.NetNS != "" {
		if ns, err = cfg.NetNS.Open(); err != nil {
			return c, err
		}
		defer ns.Close()
	}
	nlh, err := hwlink.NetlinkHandleIn(ns)
	if err != nil {
		return c, err
	}
	defer nlh.Close()
	lk, err := nlh.LinkByName(cfg.Interface)
	if err != nil {
		return c, fmt.Errorf("%s: %w", cfg.Interface, hwlink.ClassifyLinkErr(err))
	}
	ifindex := lk.Attrs().Index
	c.Kind = linkKind(lk)
	c.Virtual = slices.Contains(VirtualKinds, c.Kind)
	var refused []string
	if err := checkVirtual(cfg.Interface, lk, cfg.AllowPhysical); err != nil {
		refused = append(refused, fmt.Sprintf("kind %s is not virtual (--allow-physical)", c.Kind))
	}
	if bpffs, err := resolveBPFFS(pl.bpffs, true); err != nil {
		refused = append(refused, err.Error())
	} else if ino, err := hwlink.NetNSInode(ns); err == nil {
		c.PinDir = emuPinDir(bpffs, ino, ifindex)
	}
	if c.Existing, err = emuExisting(nlh, ns, ifindex); err != nil {
		return c, fmt.Errorf("%s: %w", cfg.Interface, err)
	}
	if c.Existing != "" {
		refused = append(refused, "already emulated: "+c.Existing)
	}
	qs, err := nlh.QdiscList(&netlink.Device{LinkAttrs: netlink.LinkAttrs{Index: ifindex}})
	if err != nil {
		return c, fmt.Errorf("%s: list qdiscs: %w", cfg.Interface, hwlink.ClassifyErrno(err))
	}
	c.RootQdiscAction = "kept (delay " + cfg.Delay.String() + " needs no qdisc)"
	for _, q := range qs {
		a := q.Attrs()
		switch {
		case q.Type() == "clsact":
			c.Clsact = true
		case a.Parent == netlink.HANDLE_ROOT:
			major, _ := netlink.MajorMinor(a.Handle)
			c.RootQdisc = fmt.Sprintf("%s %x: (%d tx queues)", q.Type(), major, lk.Attrs().NumTxQueues)
		}
	}
	if cfg.Delay == DelayEDT || cfg.Delay == DelayAuto {
		root, _ := emuRootQdisc(nlh, ifindex)
		switch {
		case root != nil && root.Type() == "fq":
			c.RootQdiscAction = "kept (already fq)"
		case root != nil && rootConfigured(root):
			c.RootQdiscAction = "refused: a configured root qdisc (the emulator needs fq and replaces only the kernel's default)"
			if cfg.Delay == DelayEDT {
				refused = append(refused, "configured root qdisc "+c.RootQdisc)
			}
		default:
			c.RootQdiscAction = "replaced by one fq root qdisc (the kernel's default comes back at detach)"
		}
		if cfg.Delay == DelayAuto {
			c.RootQdiscAction += "; delay auto: spin instead if the kernel has no fq"
		}
	}
	c.EgressFilters = append(c.EgressFilters, egressFilters(nlh, ifindex)...)
	_ = hwlink.InNetNS(ns, func() error {
		res, err := link.QueryPrograms(link.QueryOptions{Target: ifindex, Attach: ebpf.AttachTCXEgress})
		if err != nil {
			return nil
		}
		for _, ap := range res.Programs {
			name := "?"
			if prog, err := ebpf.NewProgramFromID(ap.ID); err == nil {
				if info, err := prog.Info(); err == nil {
					name = info.Name
				}
				prog.Close()
			}
			c.TCXPrograms = append(c.TCXPrograms, fmt.Sprintf("%s (id %d)", name, ap.ID))
		}
		return nil
	})
	c.Refused = strings.Join(refused, "; ")
	return c, nil
}

// rootConfigured: the root qdisc has a handle of its own (not the kernel's
// default, handle 0).
func rootConfigured(q netlink.Qdisc) bool {
	major, _ := netlink.MajorMinor(q.Attrs().Handle)
	return major != 0
}

// egressFilters lists the clsact egress filters of ifindex (none on error).
func egressFilters(nlh *netlink.Handle, ifindex int) []string {
	filters, err := nlh.FilterList(&netlink.Device{LinkAttrs: netlink.LinkAttrs{Index: ifindex}}, netlink.HANDLE_MIN_EGRESS)
	if err != nil {
		return nil
	}
	var out []string
	for _, f := range filters {
		a := f.Attrs()
		name := ""
		if bf, ok := f.(*netlink.BpfFilter); ok {
			name = " " + bf.Name
		}
		out = append(out, fmt.Sprintf("%s%s priority %#x", f.Type(), name, a.Priority))
	}
	return out
}

// CheckBPFFS says whether dir is a bpffs mount where emulated ports' pins
// can be (outside this process's own mount namespace, as resolveBPFFS
// finds it): nil, or an error saying what dir is instead.
func CheckBPFFS(dir string) error {
	resolved, err := resolveBPFFS(dir, false)
	if err != nil {
		return err
	}
	var sfs unix.Statfs_t
	if err := unix.Statfs(resolved, &sfs); err != nil {
		return fmt.Errorf("%s: %w", dir, hwlink.ClassifyErrno(err))
	}
	if sfs.Type != unix.BPF_FS_MAGIC {
		return fmt.Errorf("%s is not a bpffs mount (filesystem magic %#x; mount -t bpf bpf %s, or name the bpffs `lpictl emulate attach --bpffs` used)", dir, sfs.Type, dir)
	}
	return nil
}
