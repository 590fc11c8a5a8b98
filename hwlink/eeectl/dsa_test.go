package eeectl

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/lpictl/lpictl/hwlink"
)

// fakeSysfs builds a sysfs tree like a MediaTek router's: conduit eth0
// (index 2, mtk_soc_eth, with a dsa/ directory), DSA user ports lan1
// (index 5, switch device bound to mt7530-mdio) and lan2 (index 6, switch
// device without a driver link but with a devicetree node), and wan
// (index 7, no parent device).
func fakeSysfs(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	mk := func(p string) string {
		t.Helper()
		full := filepath.Join(root, p)
		if err := os.MkdirAll(full, 0o755); err != nil {
			t.Fatal(err)
		}
		return full
	}
	write := func(p, s string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(root, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, p string) {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(root, p)); err != nil {
			t.Fatal(err)
		}
	}
	mk("bus/mdio_bus/drivers/mt7530-mdio")
	mk("bus/platform/drivers/mtk_soc_eth")
	sw := "devices/platform/soc/15100000.ethernet/mdio-bus/mdio-bus:1f"
	sw2 := "devices/platform/soc/switch2"
	mk(sw)
	mk(sw2 + "/of_node")
	mk("devices/platform/soc/15100000.ethernet")
	link("../../../../../../bus/mdio_bus/drivers/mt7530-mdio", sw+"/driver")
	link("../../../../bus/platform/drivers/mtk_soc_eth", "devices/platform/soc/15100000.ethernet/driver")
	write(sw2+"/of_node/compatible", "mediatek,mt7531\x00")
	for _, p := range []struct {
		name, dev string
		index     string
	}{
		{"eth0", "devices/platform/soc/15100000.ethernet", "2"},
		{"lan1", sw, "5"},
		{"lan2", sw2, "6"},
		{"wan", "", "7"},
	} {
		dir := mk("devices/virtual/net/" + p.name)
		write("devices/virtual/net/"+p.name+"/ifindex", p.index+"\n")
		iflink := "2"
		if p.name == "eth0" {
			iflink = "2"
		}
		write("devices/virtual/net/"+p.name+"/iflink", iflink+"\n")
		if p.dev != "" {
			rel, err := filepath.Rel(dir, filepath.Join(root, p.dev))
			if err != nil {
				t.Fatal(err)
			}
			link(rel, "devices/virtual/net/"+p.name+"/device")
		}
		mk("class/net")
		link("../../devices/virtual/net/"+p.name, "class/net/"+p.name)
	}
	mk("devices/virtual/net/eth0/dsa")
	write("devices/virtual/net/eth0/dsa/tagging", "mtk\n")
	return root
}

func TestResolveSwitchDriver(t *testing.T) {
	root := fakeSysfs(t)
	sd, err := ResolveSwitchDriver(root, "lan1", 5)
	if err != nil || sd.Driver != "mt7530-mdio" || sd.Via != "device/driver" || sd.Conduit != "eth0" {
		t.Errorf("lan1: %+v %v", sd, err)
	}
	if caps, known := LookupDriver(sd.Driver); !known || !caps.TimerSettable || caps.Max == 0 {
		t.Errorf("lan1's driver %q not resolved to the mt7530 table entry: %+v", sd.Driver, caps)
	}
	sd, err = ResolveSwitchDriver(root, "lan2", 0)
	if err != nil || sd.Driver != "mt7531" || sd.Via != "of_node/compatible" {
		t.Errorf("lan2: %+v %v", sd, err)
	}
	if _, err := ResolveSwitchDriver(root, "wan", 7); err == nil {
		t.Error("wan has no parent device, resolved anyway")
	}
	// sysfs of another namespace: the index does not match.
	if _, err := ResolveSwitchDriver(root, "lan1", 42); !errors.Is(err, hwlink.ErrNoDevice) {
		t.Errorf("index mismatch: %v", err)
	}
	if _, err := ResolveSwitchDriver(root, "nosuch", 0); err == nil {
		t.Error("missing port resolved")
	}
	for _, bad := range []string{"", "../x", "..", "averyveryverylongname0"} {
		if _, err := ResolveSwitchDriver(root, bad, 0); err == nil {
			t.Errorf("name %q accepted", bad)
		}
	}
	// The conduit itself is not a DSA port: its driver link is the NIC's.
	sd, err = ResolveSwitchDriver(root, "eth0", 2)
	if err != nil || sd.Driver != "mtk_soc_eth" || sd.Conduit != "" {
		t.Errorf("eth0: %+v %v", sd, err)
	}
}

func TestDriverInfoTableName(t *testing.T) {
	if (DriverInfo{Driver: "dsa", SwitchDriver: "an8855"}).TableName() != "an8855" ||
		(DriverInfo{Driver: "igc"}).TableName() != "igc" {
		t.Error("TableName")
	}
}
