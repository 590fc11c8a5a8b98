package hwlink

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// ErrPortClaimed: another process (another lpictl agent) owns the port.
var ErrPortClaimed = errors.New("owned by another process")

// PortClaim is one process's ownership of a port's EEE settings (ClaimPort).
type PortClaim struct{ fd int }

// ClaimPort takes the port ifindex of ns ("" = the caller's namespace) for
// this process, or fails with ErrPortClaimed naming the owner's pid. The
// claim is an abstract unix socket, @lpictl/port/if<ifindex>, bound in the
// port's own network namespace: abstract names are per network namespace,
// so namespace and ifindex name the device whatever the state directory,
// the kernel releases it when the owner exits (even on kill -9), and it
// needs no writable folder (the unit's ProtectSystem=strict). key replaces
// the ifindex for ports that are not netdevs (a driver model's).
func ClaimPort(ns NetNS, ifindex int, key string) (*PortClaim, error) {
	name := fmt.Sprintf("@lpictl/port/if%d", ifindex)
	if key != "" {
		name = "@lpictl/port/" + key
	}
	h, err := ns.Open()
	if err != nil {
		return nil, err
	}
	if h.IsOpen() {
		defer h.Close()
	}
	fd := -1
	err = InNetNS(h, func() error {
		var err error
		fd, err = unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		if err := unix.Bind(fd, &unix.SockaddrUnix{Name: name}); err != nil {
			unix.Close(fd)
			fd = -1
			if errors.Is(err, unix.EADDRINUSE) {
				return fmt.Errorf("%w%s", ErrPortClaimed, claimOwner(name))
			}
			return err
		}
		return unix.Listen(fd, 1)
	})
	if err != nil {
		if fd >= 0 {
			unix.Close(fd)
		}
		return nil, fmt.Errorf("claim port (%s): %w", name, err)
	}
	return &PortClaim{fd: fd}, nil
}

// claimOwner names the process holding an abstract name (its peer
// credentials), or "".
func claimOwner(name string) string {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return ""
	}
	defer unix.Close(fd)
	if unix.Connect(fd, &unix.SockaddrUnix{Name: name}) != nil {
		return ""
	}
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return ""
	}
	return fmt.Sprintf(" (pid %d)", cred.Pid)
}

// Release gives the port up.
func (c *PortClaim) Release() error {
	if c == nil || c.fd < 0 {
		return nil
	}
	err := unix.Close(c.fd)
	c.fd = -1
	return err
}
