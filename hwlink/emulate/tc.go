package emulate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/internal/tcbpf"
)

// emuRootQdisc returns the interface's root qdisc (nil if none is listed).
func emuRootQdisc(h *netlink.Handle, ifindex int) (netlink.Qdisc, error) {
	qs, err := h.QdiscList(&netlink.Device{LinkAttrs: netlink.LinkAttrs{Index: ifindex}})
	if err != nil {
		return nil, fmt.Errorf("list qdiscs: %w", hwlink.ClassifyErrno(err))
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
				root.Type(), major, hwlink.ErrRejected)
		}
	}
	if err := h.QdiscReplace(emuFQ(ifindex)); err != nil {
		if errors.Is(err, unix.ENOENT) {
			// The kernel answers ENOENT for a qdisc kind it does not have.
			return false, errNoFQ
		}
		return false, fmt.Errorf("install fq root qdisc: %w", hwlink.ClassifyErrno(err))
	}
	return true, nil
}

// errNoFQ: the kernel has no fq qdisc.
var errNoFQ = fmt.Errorf("kernel lacks the fq qdisc (CONFIG_NET_SCH_FQ), which holds packets until their departure time; use the auto, spin or none delay method: %w",
	hwlink.ErrNotSupported)

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
		return fmt.Errorf("delete fq root qdisc: %w", hwlink.ClassifyErrno(err))
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
		return false, fmt.Errorf("list qdiscs: %w", hwlink.ClassifyErrno(err))
	}
	have := false
	for _, q := range qs {
		if q.Type() == "clsact" {
			have = true
		}
	}
	if !have {
		if err := h.QdiscAdd(tcbpf.Clsact(ifindex)); err != nil {
			return false, fmt.Errorf("add clsact qdisc: %w", hwlink.ClassifyErrno(err))
		}
		addedClsact = true
	}
	if err := h.FilterAdd(emuTCFilter(ifindex, prog.FD())); err != nil {
		if addedClsact {
			_ = h.QdiscDel(tcbpf.Clsact(ifindex))
		}
		return false, fmt.Errorf("add egress filter: %w", hwlink.ClassifyErrno(err))
	}
	return addedClsact, nil
}

// teardown removes what attach added, as recorded in the configuration:
// the program (TCX link or cls_bpf filter, and the clsact qdisc if it was
// added and nothing else uses it), then the fq root qdisc, then the pins.
func (p *Port) teardown(nlh *netlink.Handle) error {
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
		t := &tcbpf.Attachment{Ifindex: p.ifindex, AddedQdisc: setup&emuAddedClsact != 0,
			Filters: []*netlink.BpfFilter{emuTCFilter(p.ifindex, fd)}}
		errs = append(errs, t.Detach(nlh))
	}
	if setup&emuAddedFQ != 0 {
		errs = append(errs, emuRemoveFQ(nlh, p.ifindex))
	}
	if p.link != nil {
		errs = append(errs, p.link.leave())
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
