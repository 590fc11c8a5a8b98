package hwlink

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Sentinel errors. Errors returned by hwlink wrap one of these (and the
// underlying errno) where the condition is known, and name the interface.
var (
	// ErrNotSupported: the kernel, driver or hardware cannot do this on the
	// port (EOPNOTSUPP, no BPF support, a driver known to refuse). The port
	// stays observe-only for this function.
	ErrNotSupported = errors.New("not supported")
	// ErrRejected: the driver refused the value (EINVAL/ERANGE) although it
	// supports the operation in general.
	ErrRejected = errors.New("rejected by driver")
	// ErrPermission: missing capability (CAP_NET_ADMIN, CAP_BPF, …).
	ErrPermission = os.ErrPermission
	// ErrNoDevice: the interface does not exist (any more).
	ErrNoDevice = errors.New("no such device")
)

// ClassifyErrno wraps err with the sentinel matching its errno
// (EOPNOTSUPP → ErrNotSupported, EPERM → ErrPermission, ENODEV →
// ErrNoDevice, EINVAL/ERANGE → ErrRejected), keeping err in the chain.
// Fakes use it to return errors shaped like the kernel backend's.
func ClassifyErrno(err error) error {
	if err == nil {
		return nil
	}
	var sentinel error
	switch {
	case errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.ENOTSUP), errors.Is(err, unix.ENOTTY):
		sentinel = ErrNotSupported
	case errors.Is(err, unix.EPERM), errors.Is(err, unix.EACCES):
		sentinel = ErrPermission
	case errors.Is(err, unix.ENODEV), errors.Is(err, unix.ENXIO):
		sentinel = ErrNoDevice
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ERANGE):
		sentinel = ErrRejected
	default:
		return err
	}
	if errors.Is(err, sentinel) {
		return err
	}
	return fmt.Errorf("%w: %w", sentinel, err)
}

// EBPFCapabilities are the capabilities loading and attaching the idlegap
// TC program needs without root: CAP_BPF to load it and its maps,
// CAP_PERFMON for the verifier to accept its pointer arithmetic and packet
// access from a non-root user (without it the program is rejected), and
// CAP_NET_ADMIN for the TC (TCX or clsact) attachment.
const EBPFCapabilities = "CAP_BPF, CAP_PERFMON and CAP_NET_ADMIN"

// ClassifyBPFErr maps an error from loading or attaching a BPF program to
// the sentinels: missing kernel support → ErrNotSupported, EPERM/EACCES →
// ErrPermission with the capabilities needed (EBPFCapabilities).
func ClassifyBPFErr(err error) error {
	switch {
	case errors.Is(err, ebpf.ErrNotSupported):
		return fmt.Errorf("%w: %w", ErrNotSupported, err)
	case errors.Is(err, unix.EPERM), errors.Is(err, unix.EACCES):
		return fmt.Errorf("%w (needs %s): %w", ErrPermission, EBPFCapabilities, err)
	}
	return err
}

// ClassifyLinkErr maps an error from looking up a link: an unknown link is
// ErrNoDevice, anything else goes through ClassifyErrno.
func ClassifyLinkErr(err error) error {
	var nf netlink.LinkNotFoundError
	if errors.As(err, &nf) {
		return fmt.Errorf("%w: %w", ErrNoDevice, err)
	}
	return ClassifyErrno(err)
}

// IsClosedErr reports whether err says a socket was closed under its
// reader: the end of a subscription, not a failure to report.
func IsClosedErr(err error) bool {
	return errors.Is(err, os.ErrClosed) || errors.Is(err, unix.EBADF) || strings.Contains(err.Error(), "use of closed")
}
