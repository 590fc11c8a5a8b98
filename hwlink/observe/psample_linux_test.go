package observe

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/hwlinktest"
	"github.com/lpictl/lpictl/hwlink/internal/tcbpf"
)

// qdiscsAndFilters lists ifindex's clsact qdisc and the filters on its
// hooks.
func qdiscsAndFilters(t *testing.T, ns netns.NsHandle, ifindex int) (clsact bool, filters []netlink.Filter) {
	t.Helper()
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
			clsact = true
		}
	}
	if !clsact {
		return false, nil
	}
	for _, parent := range []uint32{netlink.HANDLE_MIN_EGRESS, netlink.HANDLE_MIN_INGRESS} {
		fs, err := h.FilterList(lk, parent)
		if err != nil {
			t.Fatal(err)
		}
		filters = append(filters, fs...)
	}
	return clsact, filters
}

// TestPSampleVeth is the end-to-end test: sample every packet of a paced
// UDP stream on a veth and compare the gaps with the send spacing. Kernels
// without psample (CONFIG_PSAMPLE), act_sample or cls_matchall skip it,
// after checking that the failed attach left nothing behind.
func TestPSampleVeth(t *testing.T) {
	p := hwlinktest.NewPair(t)
	ctx := context.Background()
	obs, err := AttachPSample(ctx, PSampleConfig{Interface: p.NameA, NetNS: hwlink.NetNS(p.PathA), Rate: 1, Ingress: true, Speed: 10e9})
	if errors.Is(err, hwlink.ErrNotSupported) {
		if clsact, _ := qdiscsAndFilters(t, p.NSA, p.IndexA); clsact {
			t.Error("failed attach left a clsact qdisc behind")
		}
		if ps := ProbePSample(hwlink.NetNS(p.PathA)); ps.OK {
			t.Errorf("ProbePSample says OK but attach failed: %v", err)
		}
		t.Skipf("kernel lacks psample (CONFIG_PSAMPLE) or act_sample/cls_matchall (CONFIG_NET_ACT_SAMPLE, CONFIG_NET_CLS_MATCHALL): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer obs.Close()
	if obs.Method() != MethodPSample || obs.Offloaded() || obs.Statistical() {
		t.Errorf("method %s offloaded %v statistical %v", obs.Method(), obs.Offloaded(), obs.Statistical())
	}
	if clsact, fs := qdiscsAndFilters(t, p.NSA, p.IndexA); !clsact || len(fs) != 2 {
		t.Errorf("after attach: clsact %v, %d filters, want 2 matchall filters", clsact, len(fs))
	}
	const n, interval = 200, time.Millisecond
	hwlinktest.SendUDP(t, p.NSB, p.AddrB, p.NSA, p.AddrA, hwlinktest.Traffic{Count: n, Interval: interval, Payload: 64})
	sent := hwlinktest.SendUDP(t, p.NSA, p.AddrA, p.NSB, p.AddrB, hwlinktest.Traffic{Count: n, Interval: interval, Payload: 64})
	time.Sleep(100 * time.Millisecond) // let the last samples arrive
	var gaps []time.Duration
	buf := make([]GapSample, 1024)
	for {
		k, err := obs.DrainGaps(buf)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range buf[:k] {
			if g.Dir == Egress {
				gaps = append(gaps, g.Length)
			}
		}
		if k == 0 {
			break
		}
	}
	var eg, in GapStats
	if err := obs.ReadStats(Egress, &eg); err != nil {
		t.Fatal(err)
	}
	if err := obs.ReadStats(Ingress, &in); err != nil {
		t.Fatal(err)
	}
	if eg.Packets < n || in.Packets < n {
		t.Errorf("sampled %d egress / %d ingress packets, sent %d each way", eg.Packets, in.Packets, n)
	}
	if len(gaps) < n*9/10 {
		t.Fatalf("%d egress gaps for %d packets", len(gaps), n)
	}
	sort.Slice(gaps, func(i, j int) bool { return gaps[i] < gaps[j] })
	med := gaps[len(gaps)/2]
	if d := med - interval; d < -50*time.Microsecond || d > 50*time.Microsecond {
		t.Errorf("median gap %v, sent every %v (%d sends)", med, interval, len(sent))
	}
	t.Logf("psample on veth: %d gaps, median %v, status %q, resolution %v", len(gaps), med, obs.Status(), obs.Resolution())
	if err := obs.Close(); err != nil {
		t.Fatal(err)
	}
	if clsact, _ := qdiscsAndFilters(t, p.NSA, p.IndexA); clsact {
		t.Error("clsact qdisc left behind after Close")
	}
}

// TestPSampleTCInstall exercises the tc part alone (no psample
// subscription): on a kernel with cls_matchall and act_sample the filter is
// installed and removed again; without them the kernel's refusal maps to
// ErrNotSupported. Either way Close removes exactly what was added: a
// clsact qdisc that was there before stays.
func TestPSampleTCInstall(t *testing.T) {
	p := hwlinktest.NewPair(t)
	ctx := context.Background()
	for _, preexisting := range []bool{false, true} {
		if preexisting {
			h, err := netlink.NewHandleAt(p.NSA)
			if err != nil {
				t.Fatal(err)
			}
			if err := h.QdiscAdd(tcbpf.Clsact(p.IndexA)); err != nil {
				t.Fatal(err)
			}
			h.Close()
		}
		obs, err := attachPSample(ctx, PSampleConfig{Interface: p.NameA, NetNS: hwlink.NetNS(p.PathA), Rate: 1}, false)
		switch {
		case errors.Is(err, hwlink.ErrNotSupported):
			if !strings.Contains(err.Error(), "act_sample") {
				t.Errorf("error does not name the missing module: %v", err)
			}
			t.Logf("preexisting clsact %v: %v", preexisting, err)
		case err != nil:
			t.Fatal(err)
		default:
			_, fs := qdiscsAndFilters(t, p.NSA, p.IndexA)
			found := false
			for _, f := range fs {
				if f.Type() == "matchall" && f.Attrs().Priority == psampleFilterPriority {
					found = true
				}
			}
			if !found {
				t.Errorf("matchall filter not installed: %+v", fs)
			}
			if err := obs.Close(); err != nil {
				t.Fatal(err)
			}
		}
		clsact, fs := qdiscsAndFilters(t, p.NSA, p.IndexA)
		if clsact != preexisting {
			t.Errorf("preexisting clsact %v: clsact after detach %v", preexisting, clsact)
		}
		if len(fs) != 0 {
			t.Errorf("filters left: %+v", fs)
		}
	}
}

func TestProbePSample(t *testing.T) {
	ps := ProbePSample("")
	if !ps.OK && ps.Reason == "" {
		t.Error("no reason given")
	}
	t.Logf("psample here: %+v", ps)
}
