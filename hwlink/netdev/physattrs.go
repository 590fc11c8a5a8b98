package netdev

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/lpictl/lpictl/hwlink"
)

// physAttrs are the switchdev attributes of a link (IFLA_PHYS_SWITCH_ID,
// IFLA_PHYS_PORT_NAME), which vishvananda/netlink does not fully expose.
type physAttrs struct {
	switchID string // hex
	portName string
}

// ifinfomsgLen is sizeof(struct ifinfomsg).
const ifinfomsgLen = 16

// readPhysAttrs dumps the links of ns over rtnetlink and returns the
// switchdev attributes by ifindex.
func readPhysAttrs(ns hwlink.NetNS) (map[int]physAttrs, error) {
	c, err := hwlink.DialIn(ns, func(cfg *netlink.Config) (*netlink.Conn, error) { return netlink.Dial(unix.NETLINK_ROUTE, cfg) })
	if err != nil {
		return nil, fmt.Errorf("dial rtnetlink: %w", err)
	}
	defer c.Close()
	req := netlink.Message{
		Header: netlink.Header{Type: unix.RTM_GETLINK, Flags: netlink.Request | netlink.Dump},
		Data:   make([]byte, ifinfomsgLen),
	}
	msgs, err := c.Execute(req)
	if err != nil {
		return nil, fmt.Errorf("dump links: %w", hwlink.ClassifyErrno(err))
	}
	out := make(map[int]physAttrs, len(msgs))
	for _, m := range msgs {
		idx, pa, err := decodeLinkPhys(m.Data)
		if err != nil {
			return nil, err
		}
		out[idx] = pa
	}
	return out, nil
}

// decodeLinkPhys decodes an RTM_NEWLINK payload (ifinfomsg + attributes)
// into its ifindex and switchdev attributes.
func decodeLinkPhys(b []byte) (int, physAttrs, error) {
	var pa physAttrs
	if len(b) < ifinfomsgLen {
		return 0, pa, fmt.Errorf("RTM_NEWLINK: %d bytes, shorter than ifinfomsg", len(b))
	}
	idx := int(int32(binary.NativeEndian.Uint32(b[4:8])))
	ad, err := netlink.NewAttributeDecoder(b[ifinfomsgLen:])
	if err != nil {
		return idx, pa, fmt.Errorf("RTM_NEWLINK attributes: %w", err)
	}
	for ad.Next() {
		switch ad.Type() {
		case unix.IFLA_PHYS_SWITCH_ID:
			pa.switchID = hex.EncodeToString(ad.Bytes())
		case unix.IFLA_PHYS_PORT_NAME:
			pa.portName = ad.String()
		}
	}
	if err := ad.Err(); err != nil {
		return idx, pa, fmt.Errorf("RTM_NEWLINK attributes: %w", err)
	}
	return idx, pa, nil
}
