package netdev

import (
	"encoding/binary"
	"testing"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

func linkMsg(t testing.TB, idx int32, switchID []byte, portName string) []byte {
	b := make([]byte, ifinfomsgLen)
	binary.NativeEndian.PutUint32(b[4:], uint32(idx))
	ae := netlink.NewAttributeEncoder()
	ae.String(unix.IFLA_IFNAME, "swp1")
	if switchID != nil {
		ae.Bytes(unix.IFLA_PHYS_SWITCH_ID, switchID)
	}
	if portName != "" {
		ae.String(unix.IFLA_PHYS_PORT_NAME, portName)
	}
	attrs, err := ae.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return append(b, attrs...)
}

func TestDecodeLinkPhys(t *testing.T) {
	idx, pa, err := decodeLinkPhys(linkMsg(t, 7, []byte{0x00, 0x11, 0x22, 0x33}, "p1"))
	if err != nil || idx != 7 || pa.switchID != "00112233" || pa.portName != "p1" {
		t.Errorf("got %d %+v %v", idx, pa, err)
	}
	if _, _, err := decodeLinkPhys(make([]byte, 8)); err == nil {
		t.Error("short message accepted")
	}
}

func FuzzDecodeLinkPhys(f *testing.F) {
	f.Add(linkMsg(f, 3, []byte{1, 2, 3, 4, 5, 6}, "p0"))
	f.Add(linkMsg(f, 1, nil, ""))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _, _ = decodeLinkPhys(b)
	})
}
