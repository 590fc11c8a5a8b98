package hil

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// netnsDir is where named network namespaces are bound (ip netns).
const netnsDir = "/run/netns"

// namePrefix starts every namespace and work directory a run creates:
// lpihil-<pid>-….
const namePrefix = "lpihil-"

// Host is one namespace of the line: a, s (the switch) or b.
type Host struct {
	Role string // a, s, b
	// Name is the namespace's name (/run/netns/<Name>), as the agent's
	// hw.netns takes it.
	Name   string
	Handle netns.NsHandle
	// Ports are the egress ports of the host (a: a0; s: s0, s1; b: b0).
	Ports []string
}

// Port is an emulated egress port of the line.
type Port struct {
	Host string // role of its namespace
	Dev  string
	// Peer is the host its packets go to.
	Peer string
}

// The line's addresses (RFC 2544 benchmarking range, 198.18.0.0/15): only
// inside the namespaces.
var (
	addrA  = netip.MustParseAddr("198.18.1.1") // a0
	addrS0 = netip.MustParseAddr("198.18.1.2") // s0
	addrS1 = netip.MustParseAddr("198.18.2.1") // s1
	addrB  = netip.MustParseAddr("198.18.2.2") // b0
)

// LinePorts are the four egress ports in path order a→b, then b→a.
var LinePorts = []Port{
	{Host: "a", Dev: "a0", Peer: "s"},
	{Host: "s", Dev: "s1", Peer: "b"},
	{Host: "b", Dev: "b0", Peer: "s"},
	{Host: "s", Dev: "s0", Peer: "a"},
}

// Line is host a – switch s – host b in three named network namespaces,
// with a private bpffs for the emulators' pins and a work directory.
type Line struct {
	Prefix string // lpihil-<pid>
	Hosts  map[string]*Host
	// Work is the run's scratch directory; BPFFS a bpffs mounted in it.
	Work  string
	BPFFS string
	// FQ says whether the kernel has the fq qdisc (the edt delay method).
	FQ bool

	mounted bool
}

// Addr returns host role's address (a or b).
func (l *Line) Addr(role string) netip.Addr {
	if role == "b" {
		return addrB
	}
	return addrA
}

// NetNSNames lists the namespaces' names.
func (l *Line) NetNSNames() []string {
	var out []string
	for _, r := range []string{"a", "s", "b"} {
		if h := l.Hosts[r]; h != nil {
			out = append(out, h.Name)
		}
	}
	return out
}

// inNS runs fn on a locked OS thread inside ns; sockets fn creates stay in
// ns. A thread that cannot return to its namespace is left locked so that
// it dies with the goroutine.
func inNS(ns netns.NsHandle, fn func() error) error {
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("get current network namespace: %w", err)
	}
	defer orig.Close()
	if err := netns.Set(ns); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("enter network namespace: %w", err)
	}
	ferr := fn()
	if err := netns.Set(orig); err != nil {
		return fmt.Errorf("return to the original network namespace: %w", err)
	}
	runtime.UnlockOSThread()
	return ferr
}

// newNamedNS creates a named namespace (as `ip netns add`) without leaving
// the calling thread in it.
func newNamedNS(name string) (netns.NsHandle, error) {
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return netns.None(), err
	}
	defer orig.Close()
	h, nerr := netns.NewNamed(name)
	if err := netns.Set(orig); err != nil {
		if h.IsOpen() {
			h.Close()
		}
		return netns.None(), fmt.Errorf("return to the original network namespace: %w", err)
	}
	runtime.UnlockOSThread()
	if nerr != nil {
		// NewNamed may have created the file before failing to bind it.
		_ = os.Remove(filepath.Join(netnsDir, name))
		return netns.None(), nerr
	}
	return h, nil
}

// BuildLine creates the namespaces lpihil-<pid>-a|s|b, the veth pairs
// a0–s0 and s1–b0, addresses, routes and static neighbours (no ARP, IPv6
// off: the only traffic is the experiment's), forwarding in s, a work
// directory with a private bpffs, and probes for fq. On error everything
// made so far is removed.
func BuildLine() (l *Line, err error) {
	prefix := fmt.Sprintf("%s%d", namePrefix, os.Getpid())
	l = &Line{Prefix: prefix, Hosts: map[string]*Host{}}
	defer func() {
		if err != nil {
			if cerr := l.Close(); cerr != nil {
				err = errors.Join(err, fmt.Errorf("undo: %w", cerr))
			}
			l = nil
		}
	}()
	if l.Work, err = os.MkdirTemp("", prefix+"-"); err != nil {
		return l, err
	}
	l.BPFFS = filepath.Join(l.Work, "bpffs")
	if err := os.Mkdir(l.BPFFS, 0o700); err != nil {
		return l, err
	}
	if err := unix.Mount("bpf", l.BPFFS, "bpf", 0, "mode=0700"); err != nil {
		return l, fmt.Errorf("mount a bpffs at %s: %w (needs root or CAP_SYS_ADMIN)", l.BPFFS, err)
	}
	l.mounted = true
	ports := map[string][]string{"a": {"a0"}, "s": {"s0", "s1"}, "b": {"b0"}}
	for _, r := range []string{"a", "s", "b"} {
		name := prefix + "-" + r
		h, err := newNamedNS(name)
		if err != nil {
			return l, fmt.Errorf("create network namespace %s: %w (needs root or CAP_SYS_ADMIN)", name, err)
		}
		l.Hosts[r] = &Host{Role: r, Name: name, Handle: h, Ports: ports[r]}
	}
	if err := l.wire(); err != nil {
		return l, err
	}
	l.FQ, err = l.probeFQ()
	return l, err
}

// wire makes the veth pairs and configures them.
func (l *Line) wire() error {
	type end struct {
		host string
		dev  string
		addr netip.Addr
	}
	pairs := [][2]end{
		{{"a", "a0", addrA}, {"s", "s0", addrS0}},
		{{"s", "s1", addrS1}, {"b", "b0", addrB}},
	}
	handles := map[string]*netlink.Handle{}
	defer func() {
		for _, h := range handles {
			h.Close()
		}
	}()
	for _, r := range []string{"a", "s", "b"} {
		h, err := netlink.NewHandleAt(l.Hosts[r].Handle)
		if err != nil {
			return fmt.Errorf("netlink in %s: %w", l.Hosts[r].Name, err)
		}
		handles[r] = h
		lo, err := h.LinkByName("lo")
		if err == nil {
			err = h.LinkSetUp(lo)
		}
		if err != nil {
			return fmt.Errorf("%s: loopback up: %w", l.Hosts[r].Name, err)
		}
		if err := inNS(l.Hosts[r].Handle, func() error {
			for _, k := range []string{"all", "default"} {
				if err := writeSysctl("net/ipv6/conf/"+k+"/disable_ipv6", "1"); err != nil && !errors.Is(err, os.ErrNotExist) {
					return err
				}
			}
			return nil
		}); err != nil {
			return fmt.Errorf("%s: disable IPv6: %w", l.Hosts[r].Name, err)
		}
	}
	macs := map[string]net.HardwareAddr{}
	links := map[string]netlink.Link{}
	for _, p := range pairs {
		x, y := p[0], p[1]
		veth := &netlink.Veth{
			LinkAttrs:     netlink.LinkAttrs{Name: x.dev, TxQLen: 1000},
			PeerName:      y.dev,
			PeerNamespace: netlink.NsFd(int(l.Hosts[y.host].Handle)),
		}
		if err := handles[x.host].LinkAdd(veth); err != nil {
			return fmt.Errorf("create veth pair %s/%s: %w", x.dev, y.dev, err)
		}
		for _, e := range p {
			lk, err := handles[e.host].LinkByName(e.dev)
			if err != nil {
				return fmt.Errorf("%s: %w", e.dev, err)
			}
			links[e.dev], macs[e.dev] = lk, lk.Attrs().HardwareAddr
		}
	}
	for _, p := range pairs {
		for i, e := range p {
			other := p[1-i]
			h := handles[e.host]
			lk := links[e.dev]
			if err := inNS(l.Hosts[e.host].Handle, func() error {
				return writeSysctl("net/ipv6/conf/"+e.dev+"/disable_ipv6", "1")
			}); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("%s: disable IPv6: %w", e.dev, err)
			}
			addr := &netlink.Addr{IPNet: &net.IPNet{IP: e.addr.AsSlice(), Mask: net.CIDRMask(30, 32)}}
			if err := h.AddrAdd(lk, addr); err != nil {
				return fmt.Errorf("address on %s: %w", e.dev, err)
			}
			neigh := &netlink.Neigh{LinkIndex: lk.Attrs().Index, Family: netlink.FAMILY_V4,
				State: netlink.NUD_PERMANENT, IP: other.addr.AsSlice(), HardwareAddr: macs[other.dev]}
			if err := h.NeighAdd(neigh); err != nil {
				return fmt.Errorf("static neighbour on %s: %w", e.dev, err)
			}
			if err := h.LinkSetUp(lk); err != nil {
				return fmt.Errorf("set %s up: %w", e.dev, err)
			}
		}
	}
	routes := []struct {
		host, dev string
		dst       string
		via       netip.Addr
	}{
		{"a", "a0", "198.18.2.0/30", addrS0},
		{"b", "b0", "198.18.1.0/30", addrS1},
	}
	for _, r := range routes {
		_, dst, _ := net.ParseCIDR(r.dst)
		if err := handles[r.host].RouteAdd(&netlink.Route{LinkIndex: links[r.dev].Attrs().Index, Dst: dst, Gw: r.via.AsSlice()}); err != nil {
			return fmt.Errorf("route %s via %s in %s: %w", r.dst, r.via, l.Hosts[r.host].Name, err)
		}
	}
	if err := inNS(l.Hosts["s"].Handle, func() error { return writeSysctl("net/ipv4/ip_forward", "1") }); err != nil {
		return fmt.Errorf("%s: enable forwarding: %w", l.Hosts["s"].Name, err)
	}
	return nil
}

// writeSysctl writes /proc/sys/<key> of the calling thread's namespace.
func writeSysctl(key, value string) error {
	return os.WriteFile(filepath.Join("/proc/sys", key), []byte(value), 0)
}

// probeFQ adds and removes an fq root qdisc on a0: the kernel answers
// ENOENT for a qdisc kind it lacks.
func (l *Line) probeFQ() (bool, error) {
	h, err := netlink.NewHandleAt(l.Hosts["a"].Handle)
	if err != nil {
		return false, err
	}
	defer h.Close()
	lk, err := h.LinkByName("a0")
	if err != nil {
		return false, err
	}
	fq := netlink.NewFq(netlink.QdiscAttrs{LinkIndex: lk.Attrs().Index, Parent: netlink.HANDLE_ROOT, Handle: netlink.MakeHandle(0x4C51, 0)})
	if err := h.QdiscAdd(fq); err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EOPNOTSUPP) {
			return false, nil
		}
		return false, fmt.Errorf("probe for the fq qdisc on a0: %w", err)
	}
	if err := h.QdiscDel(fq); err != nil {
		return true, fmt.Errorf("remove the fq probe on a0: %w", err)
	}
	return true, nil
}

// Close removes everything BuildLine made: the namespaces (and with them
// the veth pairs, their qdiscs and programs), the bpffs mount and the work
// directory. It can be called more than once.
func (l *Line) Close() error {
	var errs []error
	for _, r := range []string{"a", "s", "b"} {
		h := l.Hosts[r]
		if h == nil {
			continue
		}
		if h.Handle.IsOpen() {
			h.Handle.Close()
			h.Handle = netns.None()
		}
		if err := netns.DeleteNamed(h.Name); err != nil && !errors.Is(err, os.ErrNotExist) && !errors.Is(err, unix.EINVAL) {
			errs = append(errs, fmt.Errorf("delete network namespace %s: %w", h.Name, err))
		} else {
			_ = os.Remove(filepath.Join(netnsDir, h.Name))
		}
		delete(l.Hosts, r)
	}
	if l.mounted {
		if err := unix.Unmount(l.BPFFS, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			if err := unix.Unmount(l.BPFFS, unix.MNT_DETACH); err != nil {
				errs = append(errs, fmt.Errorf("unmount %s: %w", l.BPFFS, err))
			}
		}
		l.mounted = false
	}
	if l.Work != "" && !isMountedUnder(l.Work) {
		if err := os.RemoveAll(l.Work); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// mountPoints lists the mount points of the caller's mount namespace.
func mountPoints() []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) > 4 {
			out = append(out, unescapeMount(fs[4]))
		}
	}
	return out
}

func unescapeMount(s string) string {
	return strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`).Replace(s)
}

// isMountedUnder says whether anything is mounted at or below dir (then
// removing dir would reach into the mount).
func isMountedUnder(dir string) bool {
	for _, m := range mountPoints() {
		if m == dir || strings.HasPrefix(m, dir+"/") {
			return true
		}
	}
	return false
}

var staleRe = regexp.MustCompile(`^` + namePrefix + `(\d+)-`)

// alive says whether process pid exists.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// CleanupStale removes what runs that died without tearing down left
// (they were killed): namespaces lpihil-<pid>-* and work directories
// $TMPDIR/lpihil-<pid>-* (with their bpffs mounts) of processes that no
// longer exist. It returns what it removed.
func CleanupStale() ([]string, error) {
	var removed []string
	var errs []error
	dead := func(name string) bool {
		m := staleRe.FindStringSubmatch(name)
		if m == nil {
			return false
		}
		pid, err := strconv.Atoi(m[1])
		return err == nil && pid != os.Getpid() && !alive(pid)
	}
	if entries, err := os.ReadDir(netnsDir); err == nil {
		for _, e := range entries {
			if !dead(e.Name()) {
				continue
			}
			if err := netns.DeleteNamed(e.Name()); err != nil && !errors.Is(err, unix.EINVAL) {
				errs = append(errs, fmt.Errorf("remove stale namespace %s: %w", e.Name(), err))
				continue
			}
			_ = os.Remove(filepath.Join(netnsDir, e.Name()))
			removed = append(removed, "namespace "+e.Name())
		}
	}
	tmp := os.TempDir()
	dirs, _ := filepath.Glob(filepath.Join(tmp, namePrefix+"*"))
	for _, d := range dirs {
		if !dead(filepath.Base(d)) {
			continue
		}
		for _, m := range mountPoints() {
			if m == d || strings.HasPrefix(m, d+"/") {
				if err := unix.Unmount(m, unix.MNT_DETACH); err != nil {
					errs = append(errs, fmt.Errorf("unmount stale %s: %w", m, err))
				} else {
					removed = append(removed, "mount "+m)
				}
			}
		}
		if isMountedUnder(d) {
			continue
		}
		if err := os.RemoveAll(d); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, "directory "+d)
	}
	return removed, errors.Join(errs...)
}
