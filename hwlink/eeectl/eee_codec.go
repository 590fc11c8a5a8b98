package eeectl

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/lpictl/lpictl/hwlink"
)

// This file encodes and decodes ethtool-netlink EEE messages (the attribute
// payload after the generic netlink header) and the legacy struct
// ethtool_eee of the ETHTOOL_GEEE/SEEE ioctl. It does no I/O.

// encodeEEEGetRequest returns the attributes of ETHTOOL_MSG_EEE_GET for
// ifname. Bitsets are requested in verbose form, which carries mode names.
func encodeEEEGetRequest(ifname string) ([]byte, error) {
	if err := hwlink.CheckIfname(ifname); err != nil {
		return nil, err
	}
	ae := netlink.NewAttributeEncoder()
	ae.Nested(unix.ETHTOOL_A_EEE_HEADER, func(nae *netlink.AttributeEncoder) error {
		nae.String(unix.ETHTOOL_A_HEADER_DEV_NAME, ifname)
		return nil
	})
	return ae.Encode()
}

// encodeEEESetRequest returns the attributes of ETHTOOL_MSG_EEE_SET for
// ifname. Only the fields in set are sent: never ETHTOOL_A_EEE_MODES_OURS
// (the advertisement) nor ETHTOOL_A_EEE_ENABLED.
func encodeEEESetRequest(ifname string, set EEESet) ([]byte, error) {
	if err := hwlink.CheckIfname(ifname); err != nil {
		return nil, err
	}
	if set.TxLPITimer == nil && set.TxLPIEnabled == nil {
		return nil, fmt.Errorf("%s: EEE set with nothing to change", ifname)
	}
	ae := netlink.NewAttributeEncoder()
	ae.Nested(unix.ETHTOOL_A_EEE_HEADER, func(nae *netlink.AttributeEncoder) error {
		nae.String(unix.ETHTOOL_A_HEADER_DEV_NAME, ifname)
		return nil
	})
	if set.TxLPIEnabled != nil {
		ae.Uint8(unix.ETHTOOL_A_EEE_TX_LPI_ENABLED, boolU8(*set.TxLPIEnabled))
	}
	if set.TxLPITimer != nil {
		us, err := timerMicros(*set.TxLPITimer)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ifname, err)
		}
		ae.Uint32(unix.ETHTOOL_A_EEE_TX_LPI_TIMER, us)
	}
	return ae.Encode()
}

func boolU8(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// timerMicros converts a timer to the kernel's u32 microseconds.
func timerMicros(d time.Duration) (uint32, error) {
	if d < 0 || d > MaxTxLPITimer {
		return 0, fmt.Errorf("tx LPI timer %v outside 0..%v", d, MaxTxLPITimer)
	}
	return uint32(d / time.Microsecond), nil
}

// decodeEEEReply decodes the attributes of ETHTOOL_MSG_EEE_GET_REPLY (or
// ETHTOOL_MSG_EEE_NTF). It returns the state and the device name from the
// reply header ("" if absent).
func decodeEEEReply(b []byte) (EEEState, string, error) {
	st := EEEState{Source: "netlink"}
	var ifname string
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return st, "", fmt.Errorf("decode EEE reply: %w", err)
	}
	for ad.Next() {
		switch ad.Type() {
		case unix.ETHTOOL_A_EEE_HEADER:
			ad.Nested(func(nad *netlink.AttributeDecoder) error {
				for nad.Next() {
					if nad.Type() == unix.ETHTOOL_A_HEADER_DEV_NAME {
						ifname = nad.String()
					}
				}
				return nad.Err()
			})
		case unix.ETHTOOL_A_EEE_MODES_OURS:
			ad.Do(func(b []byte) error {
				bs, err := decodeBitset(b)
				if err != nil {
					return fmt.Errorf("modes ours: %w", err)
				}
				st.Advertised = bs.value
				st.Supported = bs.mask
				return nil
			})
		case unix.ETHTOOL_A_EEE_MODES_PEER:
			ad.Do(func(b []byte) error {
				bs, err := decodeBitset(b)
				if err != nil {
					return fmt.Errorf("modes peer: %w", err)
				}
				st.LinkPartner = bs.value
				return nil
			})
		case unix.ETHTOOL_A_EEE_ACTIVE:
			st.Active = ad.Uint8() != 0
		case unix.ETHTOOL_A_EEE_ENABLED:
			st.Enabled = ad.Uint8() != 0
		case unix.ETHTOOL_A_EEE_TX_LPI_ENABLED:
			st.TxLPIEnabled = ad.Uint8() != 0
		case unix.ETHTOOL_A_EEE_TX_LPI_TIMER:
			st.TxLPITimer = time.Duration(ad.Uint32()) * time.Microsecond
		}
	}
	if err := ad.Err(); err != nil {
		return st, ifname, fmt.Errorf("decode EEE reply: %w", err)
	}
	return st, ifname, nil
}

// bitset is a decoded ethtool bitset: names of the bits set in value and
// in mask (mask is nil for a NOMASK bitset).
type bitset struct {
	size  uint32
	value []string
	mask  []string
}

// maxBitsetSize bounds compact bitsets (ethtool link modes are ~120 bits).
const maxBitsetSize = 4096

// decodeBitset decodes an ETHTOOL_A_BITSET_* nest, verbose (bit list with
// names) or compact (u32 arrays; names from the legacy table or "bit<N>").
func decodeBitset(b []byte) (bitset, error) {
	var bs bitset
	nomask := false
	var compactValue, compactMask []byte
	var verbose []bitEntry
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return bs, err
	}
	for ad.Next() {
		switch ad.Type() {
		case unix.ETHTOOL_A_BITSET_NOMASK:
			nomask = true
		case unix.ETHTOOL_A_BITSET_SIZE:
			bs.size = ad.Uint32()
		case unix.ETHTOOL_A_BITSET_VALUE:
			compactValue = ad.Bytes()
		case unix.ETHTOOL_A_BITSET_MASK:
			compactMask = ad.Bytes()
		case unix.ETHTOOL_A_BITSET_BITS:
			ad.Nested(func(nad *netlink.AttributeDecoder) error {
				for nad.Next() {
					if nad.Type() != unix.ETHTOOL_A_BITSET_BITS_BIT {
						continue
					}
					nad.Nested(func(bad *netlink.AttributeDecoder) error {
						var e bitEntry
						for bad.Next() {
							switch bad.Type() {
							case unix.ETHTOOL_A_BITSET_BIT_INDEX:
								e.index = bad.Uint32()
								e.hasIndex = true
							case unix.ETHTOOL_A_BITSET_BIT_NAME:
								e.name = bad.String()
							case unix.ETHTOOL_A_BITSET_BIT_VALUE:
								e.value = true
							}
						}
						if err := bad.Err(); err != nil {
							return err
						}
						if !e.hasIndex && e.name == "" {
							return errors.New("bitset bit without index or name")
						}
						verbose = append(verbose, e)
						return nil
					})
				}
				return nad.Err()
			})
		}
	}
	if err := ad.Err(); err != nil {
		return bs, err
	}
	if compactValue != nil || compactMask != nil {
		if bs.size > maxBitsetSize {
			return bs, fmt.Errorf("bitset size %d too large", bs.size)
		}
		var err error
		if bs.value, err = compactNames(compactValue, bs.size); err != nil {
			return bs, err
		}
		if !nomask {
			if bs.mask, err = compactNames(compactMask, bs.size); err != nil {
				return bs, err
			}
		}
		return bs, nil
	}
	for _, e := range verbose {
		name := e.name
		if name == "" {
			name = linkModeName(e.index)
		}
		if nomask {
			bs.value = append(bs.value, name)
			continue
		}
		bs.mask = append(bs.mask, name)
		if e.value {
			bs.value = append(bs.value, name)
		}
	}
	return bs, nil
}

type bitEntry struct {
	index    uint32
	hasIndex bool
	name     string
	value    bool
}

// compactNames lists the bits set in a compact bitset (native-endian u32
// words), limited to size bits.
func compactNames(words []byte, size uint32) ([]string, error) {
	if len(words)%4 != 0 {
		return nil, fmt.Errorf("compact bitset of %d bytes is not whole u32 words", len(words))
	}
	var names []string
	for w := 0; w*4 < len(words); w++ {
		v := binary.NativeEndian.Uint32(words[w*4:])
		for bit := uint32(0); bit < 32; bit++ {
			idx := uint32(w)*32 + bit
			if idx >= size {
				return names, nil
			}
			if v&(1<<bit) != 0 {
				names = append(names, linkModeName(idx))
			}
		}
	}
	return names, nil
}

// legacyLinkModes are the ethtool names of link mode bits 0..31, the only
// ones struct ethtool_eee (ioctl) carries.
var legacyLinkModes = [32]string{
	"10baseT/Half", "10baseT/Full", "100baseT/Half", "100baseT/Full",
	"1000baseT/Half", "1000baseT/Full", "Autoneg", "TP", "AUI", "MII", "FIBRE", "BNC",
	"10000baseT/Full", "Pause", "Asym_Pause", "2500baseX/Full", "Backplane",
	"1000baseKX/Full", "10000baseKX4/Full", "10000baseKR/Full", "10000baseR_FEC",
	"20000baseMLD2/Full", "20000baseKR2/Full", "40000baseKR4/Full", "40000baseCR4/Full",
	"40000baseSR4/Full", "40000baseLR4/Full", "56000baseKR4/Full", "56000baseCR4/Full",
	"56000baseSR4/Full", "56000baseLR4/Full", "25000baseCR/Full",
}

func linkModeName(bit uint32) string {
	if bit < uint32(len(legacyLinkModes)) {
		return legacyLinkModes[bit]
	}
	return fmt.Sprintf("bit%d", bit)
}

// ethtoolEEE is the UAPI struct ethtool_eee (40 bytes).
type ethtoolEEE struct {
	Cmd          uint32
	Supported    uint32
	Advertised   uint32
	LPAdvertised uint32
	EEEActive    uint32
	EEEEnabled   uint32
	TxLPIEnabled uint32
	TxLPITimer   uint32
	Reserved     [2]uint32
}

const ethtoolEEESize = 40

// marshal encodes e in native byte order.
func (e *ethtoolEEE) marshal() [ethtoolEEESize]byte {
	var b [ethtoolEEESize]byte
	f := []uint32{e.Cmd, e.Supported, e.Advertised, e.LPAdvertised, e.EEEActive,
		e.EEEEnabled, e.TxLPIEnabled, e.TxLPITimer, e.Reserved[0], e.Reserved[1]}
	for i, v := range f {
		binary.NativeEndian.PutUint32(b[i*4:], v)
	}
	return b
}

// unmarshalEthtoolEEE decodes a struct ethtool_eee.
func unmarshalEthtoolEEE(b []byte) (ethtoolEEE, error) {
	if len(b) != ethtoolEEESize {
		return ethtoolEEE{}, fmt.Errorf("struct ethtool_eee: %d bytes, want %d", len(b), ethtoolEEESize)
	}
	u := func(i int) uint32 { return binary.NativeEndian.Uint32(b[i*4:]) }
	return ethtoolEEE{Cmd: u(0), Supported: u(1), Advertised: u(2), LPAdvertised: u(3),
		EEEActive: u(4), EEEEnabled: u(5), TxLPIEnabled: u(6), TxLPITimer: u(7),
		Reserved: [2]uint32{u(8), u(9)}}, nil
}

// state converts the ioctl struct to an EEEState.
func (e *ethtoolEEE) state() EEEState {
	return EEEState{
		Supported:    legacyNames(e.Supported),
		Advertised:   legacyNames(e.Advertised),
		LinkPartner:  legacyNames(e.LPAdvertised),
		Active:       e.EEEActive != 0,
		Enabled:      e.EEEEnabled != 0,
		TxLPIEnabled: e.TxLPIEnabled != 0,
		TxLPITimer:   time.Duration(e.TxLPITimer) * time.Microsecond,
		Source:       "ioctl",
	}
}

func legacyNames(mask uint32) []string {
	var names []string
	for bit := range uint32(32) {
		if mask&(1<<bit) != 0 {
			names = append(names, legacyLinkModes[bit])
		}
	}
	return names
}
