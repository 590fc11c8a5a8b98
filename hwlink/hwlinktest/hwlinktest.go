package hwlinktest

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/features"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// RequireRoot skips the test unless it runs as root and can create network
// namespaces.
func RequireRoot(tb testing.TB) {
	tb.Helper()
	if os.Geteuid() != 0 {
		tb.Skip("needs root: creates network namespaces and veth pairs (run `make test` as root)")
	}
}

// RequireBPF skips the test unless sched_cls eBPF programs can be loaded.
func RequireBPF(tb testing.TB) {
	tb.Helper()
	RequireRoot(tb)
	if err := features.HaveProgramType(ebpf.SchedCLS); err != nil {
		tb.Skipf("needs BPF: cannot load sched_cls programs: %v", err)
	}
}

// Pair is a veth pair between two fresh network namespaces A and B.
// Addresses are from 198.18.0.0/15 (RFC 2544 benchmarking), reachable
// only inside the pair.
type Pair struct {
	NSA, NSB       netns.NsHandle
	PathA, PathB   string // usable as hwlink.NetNS
	NameA, NameB   string
	IndexA, IndexB int
	AddrA, AddrB   netip.Addr
}

// NewPair creates the namespaces and the veth pair, brings both ends up
// with addresses and static neighbour entries (no ARP) and IPv6 disabled
// (no router solicitations or MLD reports), so the only traffic on the
// link is what the test sends. Cleanup removes everything.
func NewPair(tb testing.TB) *Pair {
	tb.Helper()
	RequireRoot(tb)
	// The namespaces are new, so fixed names cannot collide.
	p := &Pair{
		NameA: "lpia0", NameB: "lpib0",
		AddrA: netip.MustParseAddr("198.18.0.1"), AddrB: netip.MustParseAddr("198.18.0.2"),
		NSA: netns.None(), NSB: netns.None(),
	}
	var err error
	if p.NSA, err = newNS(); err != nil {
		tb.Skipf("needs root: cannot create a network namespace: %v", err)
	}
	tb.Cleanup(func() { p.NSA.Close() })
	if p.NSB, err = newNS(); err != nil {
		tb.Fatalf("create network namespace: %v", err)
	}
	tb.Cleanup(func() { p.NSB.Close() })
	p.PathA = fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), int(p.NSA))
	p.PathB = fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), int(p.NSB))

	ha, err := netlink.NewHandleAt(p.NSA)
	if err != nil {
		tb.Fatalf("netlink handle: %v", err)
	}
	defer ha.Close()
	hb, err := netlink.NewHandleAt(p.NSB)
	if err != nil {
		tb.Fatalf("netlink handle: %v", err)
	}
	defer hb.Close()

	veth := &netlink.Veth{
		LinkAttrs:     netlink.LinkAttrs{Name: p.NameA, TxQLen: 1000},
		PeerName:      p.NameB,
		PeerNamespace: netlink.NsFd(int(p.NSB)),
	}
	if err := ha.LinkAdd(veth); err != nil {
		tb.Fatalf("create veth pair %s/%s: %v", p.NameA, p.NameB, err)
	}
	tb.Cleanup(func() {
		if h, err := netlink.NewHandleAt(p.NSA); err == nil {
			if l, err := h.LinkByName(p.NameA); err == nil {
				_ = h.LinkDel(l)
			}
			h.Close()
		}
	})
	la, err := ha.LinkByName(p.NameA)
	if err != nil {
		tb.Fatal(err)
	}
	lb, err := hb.LinkByName(p.NameB)
	if err != nil {
		tb.Fatal(err)
	}
	p.IndexA, p.IndexB = la.Attrs().Index, lb.Attrs().Index
	for _, side := range []struct {
		ns         netns.NsHandle
		h          *netlink.Handle
		l          netlink.Link
		own, other netip.Addr
		otherMAC   net.HardwareAddr
	}{
		{p.NSA, ha, la, p.AddrA, p.AddrB, lb.Attrs().HardwareAddr},
		{p.NSB, hb, lb, p.AddrB, p.AddrA, la.Attrs().HardwareAddr},
	} {
		name := side.l.Attrs().Name
		if err := Do(side.ns, func() error {
			return os.WriteFile(filepath.Join("/proc/sys/net/ipv6/conf", name, "disable_ipv6"), []byte("1"), 0)
		}); err != nil && !errors.Is(err, os.ErrNotExist) {
			tb.Fatalf("disable IPv6 on %s: %v", name, err)
		}
		addr := &netlink.Addr{IPNet: &net.IPNet{IP: side.own.AsSlice(), Mask: net.CIDRMask(30, 32)}}
		if err := side.h.AddrAdd(side.l, addr); err != nil {
			tb.Fatalf("address on %s: %v", name, err)
		}
		neigh := &netlink.Neigh{LinkIndex: side.l.Attrs().Index, Family: netlink.FAMILY_V4,
			State: netlink.NUD_PERMANENT, IP: side.other.AsSlice(), HardwareAddr: side.otherMAC}
		if err := side.h.NeighAdd(neigh); err != nil {
			tb.Fatalf("static neighbour on %s: %v", name, err)
		}
		if err := side.h.LinkSetUp(side.l); err != nil {
			tb.Fatalf("set %s up: %v", name, err)
		}
	}
	return p
}

// newNS creates a network namespace without leaving the calling thread in it.
func newNS() (netns.NsHandle, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	if err != nil {
		return netns.None(), err
	}
	defer orig.Close()
	ns, err := netns.New()
	if err != nil {
		return netns.None(), err
	}
	if err := netns.Set(orig); err != nil {
		ns.Close()
		runtime.LockOSThread() // the thread is unusable: let it die
		return netns.None(), err
	}
	return ns, nil
}

// Do runs fn on a locked OS thread inside ns.
func Do(ns netns.NsHandle, fn func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	if err != nil {
		return err
	}
	defer orig.Close()
	if err := netns.Set(ns); err != nil {
		return err
	}
	ferr := fn()
	if err := netns.Set(orig); err != nil {
		runtime.LockOSThread()
		return err
	}
	return ferr
}

// Traffic describes a paced UDP stream.
type Traffic struct {
	Count    int           // packets, at most 100000
	Interval time.Duration // spacing between packet starts
	Payload  int           // UDP payload bytes
	Port     int           // destination port (default 9)
}

// SendUDP sends t from namespace src (address from) to the address to in
// namespace dst, where it opens a receiving socket so that no ICMP errors
// come back. Sends are paced against absolute deadlines (sleep, then spin
// for the last 2 ms). It returns the send times (monotonic).
func SendUDP(tb testing.TB, src netns.NsHandle, from netip.Addr, dst netns.NsHandle, to netip.Addr, t Traffic) []time.Time {
	tb.Helper()
	timed := SendUDPTimed(tb, src, from, dst, to, t)
	sent := make([]time.Time, len(timed))
	for i, s := range timed {
		sent[i] = s.Before
	}
	return sent
}

// SendTime brackets one send: the packet passed the sender's hooks between
// Before and After (the write system call), however loaded the machine is.
type SendTime struct{ Before, After time.Time }

// SendUDPTimed is SendUDP, returning each send's bracket.
func SendUDPTimed(tb testing.TB, src netns.NsHandle, from netip.Addr, dst netns.NsHandle, to netip.Addr, t Traffic) []SendTime {
	tb.Helper()
	if t.Count <= 0 || t.Count > 100000 || t.Interval <= 0 || t.Interval*time.Duration(t.Count) > 10*time.Second {
		tb.Fatalf("traffic out of bounds: %+v", t)
	}
	if t.Port == 0 {
		t.Port = 9
	}
	var rx *net.UDPConn
	if err := Do(dst, func() error {
		var err error
		rx, err = net.ListenUDP("udp4", &net.UDPAddr{IP: to.AsSlice(), Port: t.Port})
		return err
	}); err != nil {
		tb.Fatalf("receiver in destination namespace: %v", err)
	}
	defer rx.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 2048)
		for {
			if _, err := rx.Read(buf); err != nil {
				return
			}
		}
	}()
	var tx *net.UDPConn
	if err := Do(src, func() error {
		var err error
		tx, err = net.DialUDP("udp4", &net.UDPAddr{IP: from.AsSlice()}, &net.UDPAddr{IP: to.AsSlice(), Port: t.Port})
		return err
	}); err != nil {
		tb.Fatalf("sender in source namespace: %v", err)
	}
	defer tx.Close()
	payload := make([]byte, t.Payload)
	sent := make([]SendTime, 0, t.Count)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := time.Now().Add(time.Millisecond)
	for i := range t.Count {
		due := start.Add(time.Duration(i) * t.Interval)
		// Go's timers overshoot by up to about a millisecond: sleep only
		// for long waits, spin for the rest.
		if d := time.Until(due); d > 3*time.Millisecond {
			time.Sleep(d - 2*time.Millisecond)
		}
		for time.Now().Before(due) {
		}
		before := time.Now()
		if _, err := tx.Write(payload); err != nil {
			tb.Fatalf("send packet %d: %v", i, err)
		}
		sent = append(sent, SendTime{Before: before, After: time.Now()})
	}
	// Let the last packets arrive before the receiver closes.
	time.Sleep(5 * time.Millisecond)
	rx.Close()
	<-done
	return sent
}
