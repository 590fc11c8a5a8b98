package tcbpf

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/lpictl/lpictl/hwlink"
)

// Attachment is the clsact + cls_bpf way of running BPF programs at a
// port's TC hooks (where TCX is missing): it remembers what it added so
// that detaching removes exactly that.
type Attachment struct {
	Ifindex int
	// AddedQdisc: the clsact qdisc was added by this attachment (and is
	// removed by Detach if nothing else uses it).
	AddedQdisc bool
	// Filters are the cls_bpf filters added.
	Filters      []*netlink.BpfFilter
	qdiscChecked bool
}

// Clsact is the clsact qdisc of ifindex (handle ffff:).
func Clsact(ifindex int) *netlink.GenericQdisc {
	return &netlink.GenericQdisc{
		QdiscAttrs: netlink.QdiscAttrs{
			LinkIndex: ifindex,
			Handle:    netlink.MakeHandle(0xffff, 0),
			Parent:    netlink.HANDLE_CLSACT,
		},
		QdiscType: "clsact",
	}
}

// Attach adds a direct-action cls_bpf filter running prog at the egress
// hook (ingress if ingress is set) with the given priority, adding a
// clsact qdisc first if the port has none.
func (t *Attachment) Attach(h *netlink.Handle, prog *ebpf.Program, ingress bool, priority uint16) error {
	if !t.qdiscChecked {
		qs, err := h.QdiscList(&netlink.Device{LinkAttrs: netlink.LinkAttrs{Index: t.Ifindex}})
		if err != nil {
			return fmt.Errorf("list qdiscs: %w", hwlink.ClassifyErrno(err))
		}
		have := false
		for _, q := range qs {
			if q.Type() == "clsact" {
				have = true
			}
		}
		if !have {
			if err := h.QdiscAdd(Clsact(t.Ifindex)); err != nil {
				return fmt.Errorf("add clsact qdisc: %w", hwlink.ClassifyErrno(err))
			}
			t.AddedQdisc = true
		}
		t.qdiscChecked = true
	}
	parent := uint32(netlink.HANDLE_MIN_EGRESS)
	name := "lpictl_egress"
	dir := "egress"
	if ingress {
		parent, name, dir = netlink.HANDLE_MIN_INGRESS, "lpictl_ingress", "ingress"
	}
	f := &netlink.BpfFilter{
		FilterAttrs: netlink.FilterAttrs{
			LinkIndex: t.Ifindex,
			Parent:    parent,
			Handle:    1,
			Protocol:  unix.ETH_P_ALL,
			Priority:  priority,
		},
		Fd:           prog.FD(),
		Name:         name,
		DirectAction: true,
	}
	if err := h.FilterAdd(f); err != nil {
		return fmt.Errorf("add %s filter: %w", dir, hwlink.ClassifyErrno(err))
	}
	t.Filters = append(t.Filters, f)
	return nil
}

// Detach removes the filters, and the clsact qdisc if this attachment added
// it and no filter is left on it. Filters or a port already gone are not
// errors.
func (t *Attachment) Detach(h *netlink.Handle) error {
	var errs []error
	for _, f := range t.Filters {
		if err := h.FilterDel(f); err != nil && !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.ENODEV) {
			errs = append(errs, fmt.Errorf("delete filter: %w", err))
		}
	}
	t.Filters = nil
	if t.AddedQdisc {
		// Remove the qdisc only if nobody else put filters on it meanwhile.
		lk := &netlink.Device{LinkAttrs: netlink.LinkAttrs{Index: t.Ifindex}}
		eg, err1 := h.FilterList(lk, netlink.HANDLE_MIN_EGRESS)
		in, err2 := h.FilterList(lk, netlink.HANDLE_MIN_INGRESS)
		if err1 == nil && err2 == nil && len(eg) == 0 && len(in) == 0 {
			if err := h.QdiscDel(Clsact(t.Ifindex)); err != nil && !errors.Is(err, unix.ENOENT) &&
				!errors.Is(err, unix.ENODEV) && !errors.Is(err, unix.EINVAL) {
				errs = append(errs, fmt.Errorf("delete clsact qdisc: %w", err))
			}
		}
		t.AddedQdisc = false
	}
	return errors.Join(errs...)
}
