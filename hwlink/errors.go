package hwlink

import (
	"errors"
	"fmt"
	"os"

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
func ClassifyErrno(err error) error { return classifyErrno(err) }

func classifyErrno(err error) error {
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
