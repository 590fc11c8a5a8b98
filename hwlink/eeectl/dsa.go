package eeectl

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/lpictl/lpictl/hwlink"
)

// dsaEthtoolDriver is what ETHTOOL_GDRVINFO reports for every DSA user
// port (net/dsa/user.c, dsa_user_get_drvinfo).
const dsaEthtoolDriver = "dsa"

// DefaultSysfsRoot is where sysfs is mounted.
const DefaultSysfsRoot = "/sys"

// SwitchDriver is the switch driver behind a DSA user port.
type SwitchDriver struct {
	// Driver is the switch's kernel driver ("mt7530-mdio", "an8855", …),
	// the name LookupDriver takes.
	Driver string
	// Via says how it was found: "device/driver" (the sysfs symlink of
	// the switch device the port belongs to) or "of_node/compatible" (the
	// devicetree compatible string without the vendor prefix).
	Via string
	// Conduit is the CPU-facing interface the port's traffic goes through
	// (from iflink), "" if unknown.
	Conduit string
}

// ResolveSwitchDriver finds the switch driver behind the DSA user port
// ifname, whose ethtool driver name is just "dsa". sysRoot is the sysfs
// mount ("" = /sys). ifindex, if not 0, must match the port's
// /sys/class/net/<ifname>/ifindex: sysfs shows the network namespace it was
// mounted in, which may not be the port's.
//
// DSA user ports are registered with the switch device as their parent
// (SET_NETDEV_DEV), so /sys/class/net/<ifname>/device is the switch and its
// driver symlink names the switch driver. Without one (a driver not bound
// through the device model), the devicetree compatible string of the
// switch (vendor prefix dropped: "mediatek,mt7531" → "mt7531") is used.
func ResolveSwitchDriver(sysRoot, ifname string, ifindex int) (SwitchDriver, error) {
	if err := hwlink.CheckIfname(ifname); err != nil {
		return SwitchDriver{}, err
	}
	if strings.ContainsAny(ifname, "/") || ifname == "." || ifname == ".." {
		return SwitchDriver{}, fmt.Errorf("invalid interface name %q", ifname)
	}
	if sysRoot == "" {
		sysRoot = DefaultSysfsRoot
	}
	netdir := filepath.Join(sysRoot, "class", "net", ifname)
	if ifindex != 0 {
		b, err := os.ReadFile(filepath.Join(netdir, "ifindex"))
		if err != nil {
			return SwitchDriver{}, fmt.Errorf("%s: sysfs: %w", ifname, err)
		}
		got, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || got != ifindex {
			return SwitchDriver{}, fmt.Errorf("%s: sysfs shows ifindex %q, port has %d (sysfs of another network namespace): %w",
				ifname, strings.TrimSpace(string(b)), ifindex, hwlink.ErrNoDevice)
		}
	}
	sd := SwitchDriver{Conduit: conduitOf(sysRoot, netdir)}
	dev := filepath.Join(netdir, "device")
	if _, err := os.Stat(dev); err != nil {
		return sd, fmt.Errorf("%s: no parent device in sysfs: %w", ifname, err)
	}
	if target, err := os.Readlink(filepath.Join(dev, "driver")); err == nil {
		if name := filepath.Base(target); name != "" && name != "." && name != "/" {
			sd.Driver, sd.Via = name, "device/driver"
			return sd, nil
		}
	}
	if b, err := os.ReadFile(filepath.Join(dev, "of_node", "compatible")); err == nil {
		// NUL-separated list, most specific first.
		first, _, _ := strings.Cut(string(b), "\x00")
		if _, model, ok := strings.Cut(first, ","); ok {
			first = model
		}
		if first = strings.TrimSpace(first); first != "" {
			sd.Driver, sd.Via = first, "of_node/compatible"
			return sd, nil
		}
	}
	return sd, fmt.Errorf("%s: switch driver not found under %s (no driver symlink or devicetree compatible)", ifname, dev)
}

// conduitOf returns the name of the interface whose ifindex is netdir's
// iflink (a DSA user port's conduit), or "".
func conduitOf(sysRoot, netdir string) string {
	b, err := os.ReadFile(filepath.Join(netdir, "iflink"))
	if err != nil {
		return ""
	}
	link := strings.TrimSpace(string(b))
	own, _ := os.ReadFile(filepath.Join(netdir, "ifindex"))
	if link == strings.TrimSpace(string(own)) {
		return ""
	}
	ents, err := os.ReadDir(filepath.Join(sysRoot, "class", "net"))
	if err != nil {
		return ""
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(sysRoot, "class", "net", e.Name(), "ifindex"))
		if err == nil && strings.TrimSpace(string(b)) == link {
			// A conduit has a dsa/ directory (tagging protocol).
			if _, err := os.Stat(filepath.Join(sysRoot, "class", "net", e.Name(), "dsa")); err == nil || errors.Is(err, os.ErrPermission) {
				return e.Name()
			}
			return ""
		}
	}
	return ""
}
