package eeectl

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
	"github.com/safchain/ethtool"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/lpictl/lpictl/hwlink"
)

// BackendOptions configure an EthtoolBackend.
type BackendOptions struct {
	// NetNS is the namespace whose interfaces are addressed ("" = own).
	NetNS hwlink.NetNS
	// ForceIoctl skips ethtool netlink and uses ETHTOOL_GEEE/SEEE.
	ForceIoctl bool
	Logger     *slog.Logger
	// SysfsRoot is where sysfs is mounted (default /sys); it is read to
	// find the switch driver behind DSA user ports.
	SysfsRoot string
}

// EthtoolBackend is the kernel EEEBackend: ethtool netlink
// (ETHTOOL_MSG_EEE_GET/SET over generic netlink), falling back to the
// ETHTOOL_GEEE/SEEE ioctl when the ethtool family is missing; driver
// information and statistics through the ethtool ioctl. Safe for
// concurrent use. Close releases its sockets.
type EthtoolBackend struct {
	ns         netns.NsHandle
	forceIoctl bool
	log        *slog.Logger
	sysRoot    string

	mu       sync.Mutex
	conn     *genetlink.Conn
	family   uint16
	nlBroken error // set once netlink turned out unusable
	et       *ethtool.Ethtool
	ioctlFD  int
}

var _ EEEBackend = (*EthtoolBackend)(nil)

// NewEthtoolBackend opens a backend for the interfaces of opts.NetNS.
// Sockets are opened lazily.
func NewEthtoolBackend(opts BackendOptions) (*EthtoolBackend, error) {
	b := &EthtoolBackend{ns: netns.None(), forceIoctl: opts.ForceIoctl, log: opts.Logger, ioctlFD: -1, sysRoot: opts.SysfsRoot}
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	ns, err := opts.NetNS.Open() // "" gives the caller's own (no handle)
	if err != nil {
		return nil, err
	}
	b.ns = ns
	return b, nil
}

// Close releases the backend's sockets and namespace handle.
func (b *EthtoolBackend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	var errs []error
	if b.conn != nil {
		errs = append(errs, b.conn.Close())
		b.conn = nil
	}
	if b.et != nil {
		b.et.Close()
		b.et = nil
	}
	if b.ioctlFD >= 0 {
		errs = append(errs, unix.Close(b.ioctlFD))
		b.ioctlFD = -1
	}
	if b.ns.IsOpen() {
		errs = append(errs, b.ns.Close())
		b.ns = netns.None()
	}
	return errors.Join(errs...)
}

// genl returns the generic netlink connection and the ethtool family id,
// dialling on first use. Callers hold b.mu.
func (b *EthtoolBackend) genl() (*genetlink.Conn, uint16, error) {
	if b.forceIoctl {
		return nil, 0, fmt.Errorf("ethtool netlink disabled: %w", hwlink.ErrNotSupported)
	}
	if b.nlBroken != nil {
		return nil, 0, b.nlBroken
	}
	if b.conn != nil {
		return b.conn, b.family, nil
	}
	c, err := genetlink.Dial(hwlink.NetlinkConfig(b.ns))
	if err != nil {
		return nil, 0, fmt.Errorf("dial generic netlink: %w", err)
	}
	fam, err := c.GetFamily(unix.ETHTOOL_GENL_NAME)
	if err != nil {
		c.Close()
		if errors.Is(err, os.ErrNotExist) {
			b.nlBroken = fmt.Errorf("generic netlink family %q: %w: %w", unix.ETHTOOL_GENL_NAME, hwlink.ErrNotSupported, err)
			return nil, 0, b.nlBroken
		}
		return nil, 0, fmt.Errorf("generic netlink family %q: %w", unix.ETHTOOL_GENL_NAME, err)
	}
	b.conn, b.family = c, fam.ID
	return c, fam.ID, nil
}

func (b *EthtoolBackend) execute(ctx context.Context, cmd uint8, data []byte, flags netlink.HeaderFlags) ([]genetlink.Message, error) {
	c, fam, err := b.genl()
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
		defer c.SetDeadline(time.Time{})
	}
	return c.Execute(genetlink.Message{
		Header: genetlink.Header{Command: cmd, Version: unix.ETHTOOL_GENL_VERSION},
		Data:   data,
	}, fam, flags)
}

// GetEEE reads ifname's EEE state.
func (b *EthtoolBackend) GetEEE(ctx context.Context, ifname string) (EEEState, error) {
	if err := ctx.Err(); err != nil {
		return EEEState{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	req, err := encodeEEEGetRequest(ifname)
	if err != nil {
		return EEEState{}, err
	}
	msgs, nlErr := b.execute(ctx, unix.ETHTOOL_MSG_EEE_GET, req, netlink.Request)
	if nlErr == nil {
		if len(msgs) == 0 {
			return EEEState{}, fmt.Errorf("%s: EEE get: empty reply", ifname)
		}
		st, _, err := decodeEEEReply(msgs[0].Data)
		if err != nil {
			return st, fmt.Errorf("%s: %w", ifname, err)
		}
		return st, nil
	}
	// Netlink failed: the ioctl is the fallback (older kernels, no ethtool
	// netlink). When both fail, the netlink error says more (extack).
	st, ioErr := b.ioctlGet(ifname)
	if ioErr == nil {
		b.log.Debug("EEE via ioctl", "device", ifname, "netlink_error", nlErr)
		return st.state(), nil
	}
	return EEEState{}, fmt.Errorf("%s: EEE get: %w", ifname, hwlink.ClassifyErrno(preferErr(nlErr, ioErr)))
}

// SetEEE writes the fields of set (never the advertisement).
func (b *EthtoolBackend) SetEEE(ctx context.Context, ifname string, set EEESet) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	req, err := encodeEEESetRequest(ifname, set)
	if err != nil {
		return err
	}
	_, nlErr := b.execute(ctx, unix.ETHTOOL_MSG_EEE_SET, req, netlink.Request|netlink.Acknowledge)
	if nlErr == nil {
		return nil
	}
	if !errors.Is(nlErr, hwlink.ErrNotSupported) && !errors.Is(nlErr, unix.EOPNOTSUPP) {
		// The kernel answered over netlink: that is the answer.
		return fmt.Errorf("%s: EEE set: %w", ifname, hwlink.ClassifyErrno(nlErr))
	}
	// Read-modify-write over the ioctl; the advertisement is written back
	// as read.
	cur, ioErr := b.ioctlGet(ifname)
	if ioErr == nil {
		if set.TxLPITimer != nil {
			us, err := timerMicros(*set.TxLPITimer)
			if err != nil {
				return fmt.Errorf("%s: %w", ifname, err)
			}
			cur.TxLPITimer = us
		}
		if set.TxLPIEnabled != nil {
			cur.TxLPIEnabled = uint32(boolU8(*set.TxLPIEnabled))
		}
		cur.Cmd = unix.ETHTOOL_SEEE
		ioErr = b.ioctl(ifname, &cur)
		if ioErr == nil {
			return nil
		}
	}
	return fmt.Errorf("%s: EEE set: %w", ifname, hwlink.ClassifyErrno(preferErr(nlErr, ioErr)))
}

// preferErr picks the more informative of a netlink and an ioctl error:
// the ioctl's unless netlink was simply unavailable.
func preferErr(nlErr, ioErr error) error {
	var op *netlink.OpError
	if errors.As(nlErr, &op) {
		if op.Message != "" {
			return fmt.Errorf("%w (%s)", nlErr, op.Message)
		}
		return nlErr
	}
	return ioErr
}

// ioctlGet runs ETHTOOL_GEEE. Callers hold b.mu.
func (b *EthtoolBackend) ioctlGet(ifname string) (ethtoolEEE, error) {
	v := ethtoolEEE{Cmd: unix.ETHTOOL_GEEE}
	if err := b.ioctl(ifname, &v); err != nil {
		return v, err
	}
	return v, nil
}

// ifreqData is struct ifreq with ifr_data (40 bytes on 64-bit).
type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [24 - unsafe.Sizeof(uintptr(0))]byte
}

// ioctl runs SIOCETHTOOL with v as data. Callers hold b.mu.
func (b *EthtoolBackend) ioctl(ifname string, v *ethtoolEEE) error {
	if err := hwlink.CheckIfname(ifname); err != nil {
		return err
	}
	if err := b.ioctlSocket(); err != nil {
		return err
	}
	var ifr ifreqData
	copy(ifr.name[:], ifname)
	ifr.data = unsafe.Pointer(v)
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(b.ioctlFD), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr)))
	if errno != 0 {
		return os.NewSyscallError("ioctl SIOCETHTOOL", errno)
	}
	return nil
}

// ioctlSocket opens the ioctl socket in b's namespace. Callers hold b.mu.
func (b *EthtoolBackend) ioctlSocket() error {
	if b.ioctlFD >= 0 {
		return nil
	}
	return hwlink.InNetNS(b.ns, func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("ethtool ioctl socket: %w", err)
		}
		b.ioctlFD = fd
		return nil
	})
}

// ifindex returns ifname's index in b's namespace (SIOCGIFINDEX). Callers
// hold b.mu.
func (b *EthtoolBackend) ifindex(ifname string) (int, error) {
	if err := b.ioctlSocket(); err != nil {
		return 0, err
	}
	ifr, err := unix.NewIfreq(ifname)
	if err != nil {
		return 0, err
	}
	if err := unix.IoctlIfreq(b.ioctlFD, unix.SIOCGIFINDEX, ifr); err != nil {
		return 0, hwlink.ClassifyErrno(err)
	}
	return int(ifr.Uint32()), nil
}

// ethtoolIoctl returns the safchain/ethtool handle (socket in b's
// namespace). Callers hold b.mu.
func (b *EthtoolBackend) ethtoolIoctl() (*ethtool.Ethtool, error) {
	if b.et != nil {
		return b.et, nil
	}
	err := hwlink.InNetNS(b.ns, func() error {
		et, err := ethtool.NewEthtool()
		if err != nil {
			return fmt.Errorf("ethtool socket: %w", err)
		}
		b.et = et
		return nil
	})
	return b.et, err
}

// DriverInfo is what ETHTOOL_GDRVINFO reports.
type DriverInfo struct {
	Driver   string `json:"driver"`
	Version  string `json:"version"`
	Firmware string `json:"firmware"`
	BusInfo  string `json:"bus_info"`
	// SwitchDriver is, for a DSA user port (Driver "dsa"), the driver of
	// the switch behind it, found through sysfs (ResolveSwitchDriver);
	// SwitchDriverVia says how, or why it could not be found.
	SwitchDriver    string `json:"switch_driver,omitempty"`
	SwitchDriverVia string `json:"switch_driver_via,omitempty"`
}

// TableName is the name to look the port's driver up by: the switch
// driver for a DSA user port when known, else the ethtool driver.
func (d DriverInfo) TableName() string {
	if d.SwitchDriver != "" {
		return d.SwitchDriver
	}
	return d.Driver
}

// DriverInfo reads ifname's driver information.
func (b *EthtoolBackend) DriverInfo(ctx context.Context, ifname string) (DriverInfo, error) {
	if err := ctx.Err(); err != nil {
		return DriverInfo{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	et, err := b.ethtoolIoctl()
	if err != nil {
		return DriverInfo{}, err
	}
	di, err := et.DriverInfo(ifname)
	if err != nil {
		return DriverInfo{}, fmt.Errorf("%s: driver info: %w", ifname, hwlink.ClassifyErrno(err))
	}
	out := DriverInfo{Driver: di.Driver, Version: di.Version, Firmware: di.FwVersion, BusInfo: di.BusInfo}
	if out.Driver == dsaEthtoolDriver {
		idx, err := b.ifindex(ifname)
		if err == nil {
			var sd SwitchDriver
			sd, err = ResolveSwitchDriver(b.sysRoot, ifname, idx)
			out.SwitchDriver, out.SwitchDriverVia = sd.Driver, sd.Via
		}
		if err != nil {
			out.SwitchDriverVia = "unresolved: " + err.Error()
			b.log.Debug("DSA switch driver", "device", ifname, "error", err)
		}
	}
	return out, nil
}

// DriverName implements EEEBackend: the driver name for the driver table,
// i.e. the switch driver behind a DSA user port (ethtool says only "dsa").
func (b *EthtoolBackend) DriverName(ctx context.Context, ifname string) (string, error) {
	di, err := b.DriverInfo(ctx, ifname)
	return di.TableName(), err
}

// LinkSpeed returns ifname's speed in bits per second, 0 if unknown (no
// link, or a driver that does not say).
func (b *EthtoolBackend) LinkSpeed(ctx context.Context, ifname string) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	et, err := b.ethtoolIoctl()
	if err != nil {
		return 0, err
	}
	// ETHTOOL_GSET: enough for the speed, and (unlike safchain's
	// GetLinkSettings) silent.
	var cmd ethtool.EthtoolCmd
	mbps, err := et.CmdGet(&cmd, ifname)
	if err != nil {
		return 0, fmt.Errorf("%s: link settings: %w", ifname, hwlink.ClassifyErrno(err))
	}
	if mbps == 0 || mbps == ^uint32(0) {
		return 0, nil
	}
	return uint64(mbps) * 1_000_000, nil
}

// Stats returns ifname's driver statistics (ethtool -S).
func (b *EthtoolBackend) Stats(ctx context.Context, ifname string) (map[string]uint64, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	et, err := b.ethtoolIoctl()
	if err != nil {
		return nil, err
	}
	st, err := et.Stats(ifname)
	if err != nil {
		return nil, fmt.Errorf("%s: ethtool statistics: %w", ifname, hwlink.ClassifyErrno(err))
	}
	return st, nil
}

// LPICounters returns the driver's LPI-related statistics (names
// containing "lpi", e.g. igc's tx_lpi_counter), empty if it has none.
func (b *EthtoolBackend) LPICounters(ctx context.Context, ifname string) (map[string]uint64, error) {
	st, err := b.Stats(ctx, ifname)
	if err != nil {
		return nil, err
	}
	return lpiCounters(st), nil
}

func lpiCounters(st map[string]uint64) map[string]uint64 {
	out := make(map[string]uint64)
	for k, v := range st {
		if strings.Contains(strings.ToLower(k), "lpi") {
			out[k] = v
		}
	}
	return out
}
