package hwlink

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"

	mdnetlink "github.com/mdlayher/netlink"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/vishvananda/netns"
)

// NetNS names a network namespace: "" is the caller's own, a bare name is
// one created by `ip netns add` (/run/netns/NAME), anything with a slash is
// a path to a namespace file (/proc/PID/ns/net, /proc/self/fd/N, …).
type NetNS string

// Open returns a handle to the namespace; the caller closes it. For "" it
// returns the namespace of the calling thread.
func (n NetNS) Open() (netns.NsHandle, error) {
	s := string(n)
	if s == "" {
		// The caller's own namespace: a closed handle makes netlink stay
		// where it is, so no setns (which needs CAP_SYS_ADMIN) happens.
		return netns.None(), nil
	}
	path := s
	if !strings.Contains(s, "/") {
		path = filepath.Join("/run/netns", s)
	}
	h, err := netns.GetFromPath(path)
	if err != nil {
		return netns.None(), fmt.Errorf("open network namespace %q: %w", s, err)
	}
	return h, nil
}

// Inode is the namespace's inode ("" = the caller's): with an ifindex it
// names an interface host-wide.
func (n NetNS) Inode() (uint64, error) {
	h, err := n.Open()
	if err != nil {
		return 0, err
	}
	if h.IsOpen() {
		defer h.Close()
	}
	return NetNSInode(h)
}

// InNetNS runs fn on a locked OS thread switched into ns and switches back
// afterwards. Sockets created by fn stay in ns. A handle of -1 (netns.None)
// runs fn in the caller's namespace.
func InNetNS(ns netns.NsHandle, fn func() error) error {
	if !ns.IsOpen() {
		return fn()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	if err != nil {
		return fmt.Errorf("get current network namespace: %w", err)
	}
	defer orig.Close()
	if err := netns.Set(ns); err != nil {
		return fmt.Errorf("enter network namespace: %w", err)
	}
	ferr := fn()
	if err := netns.Set(orig); err != nil {
		// The thread is in the wrong namespace: keep it locked so that it
		// dies with the goroutine instead of being reused.
		runtime.LockOSThread()
		return fmt.Errorf("return to original network namespace: %w", err)
	}
	return ferr
}

// NetlinkHandleIn returns a rtnetlink handle whose sockets live in ns; a
// closed handle (netns.None) means the caller's own namespace.
func NetlinkHandleIn(ns netns.NsHandle) (*netlink.Handle, error) {
	if ns.IsOpen() {
		h, err := netlink.NewHandleAt(ns)
		if err != nil {
			return nil, fmt.Errorf("netlink handle in namespace: %w", err)
		}
		return h, nil
	}
	h, err := netlink.NewHandle()
	if err != nil {
		return nil, fmt.Errorf("netlink handle: %w", err)
	}
	return h, nil
}

// NetNSInode returns the inode of a network namespace (the caller's own for a
// closed handle): with the ifindex, it names an interface host-wide.
func NetNSInode(ns netns.NsHandle) (uint64, error) {
	h := ns
	if !ns.IsOpen() {
		var err error
		if h, err = netns.Get(); err != nil {
			return 0, fmt.Errorf("get current network namespace: %w", err)
		}
		defer h.Close()
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(h), &st); err != nil {
		return 0, fmt.Errorf("stat network namespace: %w", err)
	}
	return st.Ino, nil
}

// NetlinkHandleFor opens an rtnetlink handle in ns.
func NetlinkHandleFor(ns NetNS) (*netlink.Handle, error) {
	if ns == "" {
		h, err := netlink.NewHandle()
		if err != nil {
			return nil, fmt.Errorf("netlink handle: %w", err)
		}
		return h, nil
	}
	nsh, err := ns.Open()
	if err != nil {
		return nil, err
	}
	defer nsh.Close()
	h, err := netlink.NewHandleAt(nsh)
	if err != nil {
		return nil, fmt.Errorf("netlink handle in %s: %w", ns, err)
	}
	return h, nil
}

// NetlinkConfig is the mdlayher/netlink socket configuration that dials
// into namespace h (a closed handle: the caller's own, no setns).
func NetlinkConfig(h netns.NsHandle) *mdnetlink.Config {
	cfg := &mdnetlink.Config{}
	if h.IsOpen() {
		cfg.NetNS = int(h)
	}
	return cfg
}

// DialIn runs dial (netlink.Dial, genetlink.Dial) with the configuration
// of namespace n ("" the caller's own): the namespace is open only while
// dial runs, the socket it returns stays in it.
func DialIn[C any](n NetNS, dial func(*mdnetlink.Config) (C, error)) (C, error) {
	if n == "" {
		return dial(&mdnetlink.Config{})
	}
	h, err := n.Open()
	if err != nil {
		var zero C
		return zero, err
	}
	defer h.Close()
	return dial(NetlinkConfig(h))
}
