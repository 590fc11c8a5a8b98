package hwlinktest

import (
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// assertDetached checks that no TCX program, clsact qdisc or tc filter is
// left on the interface.
// AssertDetached fails the test if a TCX program or a clsact qdisc is left
// on ifindex in ns (after an observer or emulator was closed).
func AssertDetached(t *testing.T, ns netns.NsHandle, ifindex int) {
	t.Helper()
	err := Do(ns, func() error {
		for _, at := range []ebpf.AttachType{ebpf.AttachTCXEgress, ebpf.AttachTCXIngress} {
			res, err := link.QueryPrograms(link.QueryOptions{Target: ifindex, Attach: at})
			if err != nil {
				return err
			}
			if len(res.Programs) != 0 {
				t.Errorf("ifindex %d: %d TCX programs left at %v", ifindex, len(res.Programs), at)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("query TCX programs: %v", err)
	}
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	lk := &netlink.Device{LinkAttrs: netlink.LinkAttrs{Index: ifindex}}
	qs, err := h.QdiscList(lk)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range qs {
		if q.Type() == "clsact" {
			t.Errorf("ifindex %d: clsact qdisc left behind", ifindex)
		}
	}
}
