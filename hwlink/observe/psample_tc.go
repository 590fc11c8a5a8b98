package observe

import (
	"errors"
	"fmt"

	"github.com/mdlayher/netlink"
	vnl "github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/internal/tcbpf"
)

// classifyTCErr maps the kernel's answer to a filter with an unknown
// classifier or action kind (ENOENT, "Specified filter kind not found",
// "Failed to load TC action module") to ErrNotSupported.
func classifyTCErr(err error) error {
	if errors.Is(err, unix.ENOENT) {
		msg := ""
		var op *netlink.OpError
		if errors.As(err, &op) && op.Message != "" {
			msg = " (" + op.Message + ")"
		}
		return fmt.Errorf("kernel lacks cls_matchall or act_sample (CONFIG_NET_CLS_MATCHALL, CONFIG_NET_ACT_SAMPLE)%s: %w: %w", msg, hwlink.ErrNotSupported, err)
	}
	return hwlink.ClassifyErrno(err)
}

func (o *PSampleObserver) ensureClsact(h *vnl.Handle) error {
	qs, err := h.QdiscList(&vnl.Device{LinkAttrs: vnl.LinkAttrs{Index: o.ifindex}})
	if err != nil {
		return fmt.Errorf("%s: list qdiscs: %w", o.ifname, hwlink.ClassifyErrno(err))
	}
	for _, q := range qs {
		if q.Type() == "clsact" {
			return nil
		}
	}
	if err := h.QdiscAdd(tcbpf.Clsact(o.ifindex)); err != nil {
		return fmt.Errorf("%s: add clsact qdisc: %w", o.ifname, hwlink.ClassifyErrno(err))
	}
	o.addedQdisc = true
	return nil
}

// getFilter reads one installed filter back (for its TCA_CLS_FLAGS_IN_HW).
func (o *PSampleObserver) getFilter(f tcFilterSpec) (matchallInfo, error) {
	req, err := encodeFilterRef(f)
	if err != nil {
		return matchallInfo{}, err
	}
	msgs, err := o.route.Execute(netlink.Message{
		Header: netlink.Header{Type: unix.RTM_GETTFILTER, Flags: netlink.Request},
		Data:   req,
	})
	if err != nil {
		return matchallInfo{}, err
	}
	for _, m := range msgs {
		if m.Header.Type == unix.RTM_NEWTFILTER {
			return decodeMatchallFilter(m.Data)
		}
	}
	return matchallInfo{}, errors.New("no filter in reply")
}

// removeClsactIfUnused deletes the clsact qdisc of ifindex if no filter is
// left on either of its hooks.
func removeClsactIfUnused(h *vnl.Handle, ifindex int) error {
	lk := &vnl.Device{LinkAttrs: vnl.LinkAttrs{Index: ifindex}}
	eg, err1 := h.FilterList(lk, vnl.HANDLE_MIN_EGRESS)
	in, err2 := h.FilterList(lk, vnl.HANDLE_MIN_INGRESS)
	if err1 != nil || err2 != nil || len(eg) > 0 || len(in) > 0 {
		return nil
	}
	if err := h.QdiscDel(tcbpf.Clsact(ifindex)); err != nil && !errors.Is(err, unix.ENOENT) &&
		!errors.Is(err, unix.ENODEV) && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("delete clsact qdisc: %w", err)
	}
	return nil
}

// addFilter adds the matchall filter with a sample action for one
// direction and reads back whether the driver offloaded it (in_hw).
func (o *PSampleObserver) addFilter(dir Direction, cfg PSampleConfig) error {
	parent := uint32(vnl.HANDLE_MIN_EGRESS)
	if dir == Ingress {
		parent = vnl.HANDLE_MIN_INGRESS
	}
	f := tcFilterSpec{ifindex: o.ifindex, parent: parent, priority: psampleFilterPriority, handle: 1}
	req, err := encodeMatchallSample(f, sampleAction{group: o.groups[dir], rate: cfg.Rate, truncSize: cfg.TruncSize, skipSW: cfg.HardwareOnly})
	if err != nil {
		return fmt.Errorf("%s: %w", o.ifname, err)
	}
	_, err = o.route.Execute(netlink.Message{
		Header: netlink.Header{Type: unix.RTM_NEWTFILTER,
			Flags: netlink.Request | netlink.Acknowledge | netlink.Create | netlink.Excl},
		Data: req,
	})
	if err != nil {
		return fmt.Errorf("%s: add %s matchall/sample filter: %w", o.ifname, dir, classifyTCErr(err))
	}
	o.filters = append(o.filters, f)
	if info, err := o.getFilter(f); err == nil {
		o.offloaded[dir] = info.flags&tcaClsFlagsInHW != 0
	} else {
		o.log.Debug("read back psample filter", "device", o.ifname, "error", err)
	}
	return nil
}
