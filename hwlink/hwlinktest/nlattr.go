package hwlinktest

import (
	"encoding/binary"
	"testing"

	"github.com/mdlayher/genetlink"
)

// NlAttr builds one netlink attribute by hand (struct nlattr: u16 len, u16
// type, payload, padded to 4 bytes), independently of the encoder under
// test, following include/uapi/linux/netlink.h.
func NlAttr(typ uint16, payload []byte) []byte {
	b := make([]byte, 4, 4+len(payload)+3)
	binary.NativeEndian.PutUint16(b[0:], uint16(4+len(payload)))
	binary.NativeEndian.PutUint16(b[2:], typ)
	b = append(b, payload...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// U16, U32 and U64 are attribute payloads in native byte order.
func U16(v uint16) []byte { b := make([]byte, 2); binary.NativeEndian.PutUint16(b, v); return b }
func U32(v uint32) []byte { b := make([]byte, 4); binary.NativeEndian.PutUint32(b, v); return b }
func U64(v uint64) []byte { b := make([]byte, 8); binary.NativeEndian.PutUint64(b, v); return b }

// ParseGenl decodes a generic netlink message, failing the test if it cannot.
func ParseGenl(t testing.TB, b []byte) genetlink.Message {
	t.Helper()
	var m genetlink.Message
	if err := m.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	return m
}
