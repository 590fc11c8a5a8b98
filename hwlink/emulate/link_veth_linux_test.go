package emulate

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netns"

	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/hwlinktest"
	"github.com/lpictl/lpictl/hwlink/observe"
)

// linkSnap is both ends' status at one instant.
func linkSnap(t *testing.T, a, b *Port) [2]Status {
	t.Helper()
	now := observe.MonotonicNow()
	var s [2]Status
	for i, p := range []*Port{a, b} {
		var err error
		if s[i], err = p.Status(now); err != nil {
			t.Fatal(err)
		}
	}
	if s[0].Times != s[1].Times || s[0].State != s[1].State {
		t.Errorf("the ends see two links: %s %+v, %s %+v", s[0].State, s[0].Times, s[1].State, s[1].Times)
	}
	return s
}

// linkSockets are a UDP sender and a receiver in each namespace of the
// pair, opened once so that a send is one system call.
type linkSockets struct{ tx, rx [2]*net.UDPConn }

func openLinkSockets(t *testing.T, pair *hwlinktest.Pair) *linkSockets {
	t.Helper()
	s := &linkSockets{}
	ns := [2]netns.NsHandle{pair.NSA, pair.NSB}
	addr := [2]netip.Addr{pair.AddrA, pair.AddrB}
	for i := range 2 {
		err := hwlinktest.Do(ns[i], func() error {
			var err error
			if s.rx[i], err = net.ListenUDP("udp4", &net.UDPAddr{IP: addr[i].AsSlice(), Port: 9999}); err != nil {
				return err
			}
			s.tx[i], err = net.DialUDP("udp4", nil, &net.UDPAddr{IP: addr[1-i].AsSlice(), Port: 9999})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for i := range 2 {
			s.tx[i].Close()
			s.rx[i].Close()
		}
	})
	return s
}

// send sends n datagrams 500 µs apart from end i (0: A, 1: B).
func (s *linkSockets) send(t *testing.T, i, n int) {
	t.Helper()
	buf := make([]byte, 64)
	for k := range n {
		if k > 0 {
			time.Sleep(500 * time.Microsecond)
		}
		if _, err := s.tx[i].Write(buf); err != nil {
			t.Fatal(err)
		}
	}
}

// TestEmulatorLinkVeth (privileged: its own namespaces and veth pair,
// real eBPF) attaches the two ends of a veth pair as the two ends of one
// emulated link (per link, Deep Sleep, t_PDT 20 ms, t_w 150 µs, t_s
// 500 µs) and shows that they sleep together only when both are idle:
//   - traffic on A's egress only (400 datagrams 500 µs apart) keeps the
//     link awake for B, whose egress sends nothing (per direction B would
//     sleep through it);
//   - idle on both: both ends report the link asleep, one sleep;
//   - a packet on either end wakes both: it pays t_w, and a packet on the
//     other end 1 ms later finds the link awake and pays nothing;
//   - detaching one end leaves the link's pins for the other, the last
//     removes them.
func TestEmulatorLinkVeth(t *testing.T) {
	hwlinktest.RequireBPF(t)
	pair := hwlinktest.NewPair(t)
	bpffs := tempBPFFS(t)
	pdt := 20 * time.Millisecond
	cfg := Config{Preset: testPreset100, Mode: ModeDeepSleep, PDT: &pdt, Scale: 5, Delay: delayMethods(t, pair, bpffs)[0],
		LPI: PerLink, Link: "veth", Handshake: 6 * time.Microsecond}
	socks := openLinkSockets(t, pair)
	a, b := attachBoth(t, pair, bpffs, cfg)
	defer func() {
		if a != nil {
			detachAll(t, a)
		}
		if b != nil {
			detachAll(t, b)
		}
	}()

	// One end's traffic keeps the link awake for the other.
	socks.send(t, 0, 1)
	time.Sleep(2 * time.Millisecond) // the first datagram's wake-up is over
	s0 := linkSnap(t, a, b)
	socks.send(t, 0, 400)
	s1 := linkSnap(t, a, b)
	span := s1[0].Now - s0[0].Now
	woke := s1[0].Link.Wakeups - s0[0].Link.Wakeups
	slept := s1[1].Times.DeepSleep - s0[1].Times.DeepSleep
	t.Logf("A sends for %v: the link woke %d times, B saw it in Deep Sleep for %v; B sent %d packets", span, woke, slept, s1[1].Packets)
	if woke > 8 || slept > span/10 || s1[0].Packets < s0[0].Packets+400 {
		t.Errorf("traffic on A only: the link woke %d times and slept %v of %v for B (A sent %d)", woke, slept, span, s1[0].Packets-s0[0].Packets)
	}

	// Idle on both: one sleep.
	time.Sleep(4 * pdt)
	s2 := linkSnap(t, a, b)
	if s2[0].State != StateDeepSleep.String() || s2[1].Times.DeepSleep-s1[1].Times.DeepSleep < 2*pdt {
		t.Errorf("idle on both: the link is %s, Deep Sleep %v since", s2[0].State, s2[1].Times.DeepSleep-s1[1].Times.DeepSleep)
	}

	// A packet on either end wakes both.
	for _, fromA := range []bool{false, true} {
		first, other := b, a
		if fromA {
			first, other = a, b
		}
		before := linkSnap(t, a, b)
		fi, oi := 1, 0
		if fromA {
			fi, oi = 0, 1
		}
		socks.send(t, fi, 1)
		time.Sleep(time.Millisecond)
		socks.send(t, oi, 1)
		after := linkSnap(t, a, b)
		if after[fi].Wakeups != before[fi].Wakeups+1 || after[fi].Misses != before[fi].Misses+1 ||
			after[oi].Wakeups != before[oi].Wakeups || after[oi].Delayed != before[oi].Delayed ||
			after[oi].Hits != before[oi].Hits+1 || after[0].Link.Wakeups != before[0].Link.Wakeups+1 {
			t.Errorf("%s then %s: first %d→%d wake-ups, %d→%d misses; other %d→%d delayed, %d→%d hits; link %d→%d wake-ups",
				first.Interface(), other.Interface(), before[fi].Wakeups, after[fi].Wakeups, before[fi].Misses, after[fi].Misses,
				before[oi].Delayed, after[oi].Delayed, before[oi].Hits, after[oi].Hits, before[0].Link.Wakeups, after[0].Link.Wakeups)
		}
		time.Sleep(4 * pdt)
	}

	// The link's pins stay while one end does.
	dir := filepath.Join(bpffs, emuLinkSubdir, "veth")
	detachAll(t, a)
	a = nil
	if _, err := os.Stat(filepath.Join(dir, "state")); err != nil {
		t.Errorf("after detaching one end: %v", err)
	}
	if s, err := b.Status(observe.MonotonicNow()); err != nil || s.Link == nil || s.Link.PeerAttached {
		t.Errorf("the remaining end: %+v, %v", s.Link, err)
	}
	detachAll(t, b)
	b = nil
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after detaching both ends: %v", err)
	}
}

// TestEmulatorLinkRefusals (privileged) checks that the second end must
// agree with the first: another scale is refused, naming it, and leaves
// the first end's link as it was.
func TestEmulatorLinkRefusals(t *testing.T) {
	hwlinktest.RequireBPF(t)
	pair := hwlinktest.NewPair(t)
	bpffs := tempBPFFS(t)
	cfg := Config{Preset: testPreset100, Mode: ModeDeepSleep, Scale: 5, Delay: DelayNone, LPI: PerLink, Link: "l1", BPFFS: bpffs,
		Interface: pair.NameA, NetNS: hwlink.NetNS(pair.PathA)}
	a, err := Attach(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer detachAll(t, a)
	cfg.Interface, cfg.NetNS, cfg.Scale = pair.NameB, hwlink.NetNS(pair.PathB), 4
	if b, err := Attach(context.Background(), cfg); err == nil {
		b.Detach()
		b.Close()
		t.Fatal("an end with another scale joined the link")
	} else if !strings.Contains(err.Error(), "scale") {
		t.Errorf("error %v does not name the scale", err)
	}
	if _, err := os.Stat(endClaim(filepath.Join(bpffs, emuLinkSubdir, "l1"), 1)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused end's claim: %v", err)
	}
	if _, err := os.Stat(filepath.Join(bpffs, emuLinkSubdir, "l1", "state")); err != nil {
		t.Errorf("the first end's link: %v", err)
	}
}
