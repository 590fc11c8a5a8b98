package observe

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// This file encodes the tc messages that install a matchall filter with a
// sample action, and decodes psample generic netlink messages. It does no
// I/O. golang.org/x/sys/unix has none of these constants, so they are
// defined here from the kernel's uapi headers.

// psample generic netlink family (include/uapi/linux/psample.h).
const (
	psampleGenlName       = "psample" // PSAMPLE_GENL_NAME
	psampleGenlVersion    = 1         // PSAMPLE_GENL_VERSION
	psampleMcgrpSample    = "packets" // PSAMPLE_NL_MCGRP_SAMPLE_NAME (joining needs CAP_NET_ADMIN)
	psampleCmdSample      = 0         // PSAMPLE_CMD_SAMPLE
	psampleCmdNewGroup    = 2         // PSAMPLE_CMD_NEW_GROUP
	psampleAttrIIfIndex   = 0         // PSAMPLE_ATTR_IIFINDEX: u16
	psampleAttrOIfIndex   = 1         // PSAMPLE_ATTR_OIFINDEX: u16
	psampleAttrOrigSize   = 2         // PSAMPLE_ATTR_ORIGSIZE: u32, skb->len
	psampleAttrGroup      = 3         // PSAMPLE_ATTR_SAMPLE_GROUP: u32
	psampleAttrGroupSeq   = 4         // PSAMPLE_ATTR_GROUP_SEQ: u32, per group
	psampleAttrRate       = 5         // PSAMPLE_ATTR_SAMPLE_RATE: u32
	psampleAttrData       = 6         // PSAMPLE_ATTR_DATA: packet bytes (truncated)
	psampleAttrRefcount   = 7         // PSAMPLE_ATTR_GROUP_REFCOUNT
	psampleAttrTunnel     = 8         // PSAMPLE_ATTR_TUNNEL: nested
	psampleAttrPad        = 9         // PSAMPLE_ATTR_PAD
	psampleAttrOutTC      = 10        // PSAMPLE_ATTR_OUT_TC: u16
	psampleAttrOutTCOcc   = 11        // PSAMPLE_ATTR_OUT_TC_OCC: u64 bytes
	psampleAttrLatency    = 12        // PSAMPLE_ATTR_LATENCY: u64 ns
	psampleAttrTimestamp  = 13        // PSAMPLE_ATTR_TIMESTAMP: u64 ns (ktime_get_real)
	psampleAttrProto      = 14        // PSAMPLE_ATTR_PROTO: u16
	psampleAttrCookie     = 15        // PSAMPLE_ATTR_USER_COOKIE: binary
	psampleAttrProbabilty = 16        // PSAMPLE_ATTR_SAMPLE_PROBABILITY: flag, rate is a probability scaled to 0..U32_MAX
)

// tc constants (include/uapi/linux/pkt_cls.h, linux/pkt_sched.h,
// linux/tc_act/tc_sample.h).
const (
	tcaKind               = unix.TCA_KIND
	tcaOptions            = unix.TCA_OPTIONS
	tcaMatchallClassID    = 1 // TCA_MATCHALL_CLASSID
	tcaMatchallAct        = 2 // TCA_MATCHALL_ACT
	tcaMatchallFlags      = 3 // TCA_MATCHALL_FLAGS
	tcaActKind            = 1 // TCA_ACT_KIND
	tcaActOptions         = 2 // TCA_ACT_OPTIONS
	tcaSampleParms        = 2 // TCA_SAMPLE_PARMS: struct tc_sample
	tcaSampleRate         = 3 // TCA_SAMPLE_RATE: u32
	tcaSampleTruncSize    = 4 // TCA_SAMPLE_TRUNC_SIZE: u32
	tcaSamplePsampleGroup = 5 // TCA_SAMPLE_PSAMPLE_GROUP: u32
	// tcActUnspec (TC_ACT_UNSPEC, tc's "continue") as the sample action's
	// control: classification goes on with the next filter, so the
	// observer never changes what other filters do with the packet.
	tcActUnspec        = -1
	tcaClsFlagsSkipHW  = 1 << 0
	tcaClsFlagsSkipSW  = 1 << 1
	tcaClsFlagsInHW    = 1 << 2
	tcaClsFlagsNotInHW = 1 << 3
	// tcmsgLen is sizeof(struct tcmsg).
	tcmsgLen = 20
	// tcSampleParmsLen is sizeof(struct tc_sample) = struct tc_gen.
	tcSampleParmsLen = 20
)

// PSample is one psample message (PSAMPLE_CMD_SAMPLE) as the kernel sends
// it on the "packets" multicast group.
type PSample struct {
	// IIfIndex and OIfIndex are the input and output ports; the kernel
	// sends them as u16, 0 when unknown.
	IIfIndex, OIfIndex uint16
	Group              uint32
	// Seq counts the group's samples (per group, only while someone
	// listens); a jump means samples were lost.
	Seq uint32
	// Rate: one packet in Rate is sampled; with Probability set, Rate is
	// a probability scaled to 0..2³²−1.
	Rate        uint32
	Probability bool
	// OrigSize is the packet's length (skb->len) before truncation.
	OrigSize uint32
	// Timestamp is PSAMPLE_ATTR_TIMESTAMP (CLOCK_REALTIME in ns, taken
	// when the kernel built the sample); HasTimestamp is false on kernels
	// that do not send it.
	Timestamp    int64
	HasTimestamp bool
	// Latency (ns) and OutTC come from ASICs that report them.
	Latency    uint64
	HasLatency bool
	OutTC      uint16
	HasOutTC   bool
	Proto      uint16
	// DataLen is the number of packet bytes carried (the truncated copy).
	DataLen int
}

// PacketsPerSample is how many packets one sample stands for (1 for every
// packet).
func (s PSample) PacketsPerSample() float64 {
	if s.Probability {
		if s.Rate == 0 {
			return 0
		}
		return float64(1<<32) / float64(s.Rate)
	}
	if s.Rate == 0 {
		return 1
	}
	return float64(s.Rate)
}

var errPSampleShort = errors.New("psample: short attribute")

// decodePSample decodes the attributes of a PSAMPLE_CMD_SAMPLE message (the
// payload after the generic netlink header).
func decodePSample(b []byte) (PSample, error) {
	var s PSample
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return s, fmt.Errorf("decode psample: %w", err)
	}
	haveGroup := false
	for ad.Next() {
		v := ad.Bytes()
		need := 0
		switch ad.Type() {
		case psampleAttrIIfIndex, psampleAttrOIfIndex, psampleAttrOutTC, psampleAttrProto:
			need = 2
		case psampleAttrOrigSize, psampleAttrGroup, psampleAttrGroupSeq, psampleAttrRate:
			need = 4
		case psampleAttrTimestamp, psampleAttrLatency:
			need = 8
		}
		if len(v) < need {
			return s, fmt.Errorf("decode psample: attribute %d: %d bytes, want %d: %w", ad.Type(), len(v), need, errPSampleShort)
		}
		switch ad.Type() {
		case psampleAttrIIfIndex:
			s.IIfIndex = binary.NativeEndian.Uint16(v)
		case psampleAttrOIfIndex:
			s.OIfIndex = binary.NativeEndian.Uint16(v)
		case psampleAttrOrigSize:
			s.OrigSize = binary.NativeEndian.Uint32(v)
		case psampleAttrGroup:
			s.Group, haveGroup = binary.NativeEndian.Uint32(v), true
		case psampleAttrGroupSeq:
			s.Seq = binary.NativeEndian.Uint32(v)
		case psampleAttrRate:
			s.Rate = binary.NativeEndian.Uint32(v)
		case psampleAttrData:
			s.DataLen = len(v)
		case psampleAttrOutTC:
			s.OutTC, s.HasOutTC = binary.NativeEndian.Uint16(v), true
		case psampleAttrLatency:
			s.Latency, s.HasLatency = binary.NativeEndian.Uint64(v), true
		case psampleAttrTimestamp:
			s.Timestamp, s.HasTimestamp = int64(binary.NativeEndian.Uint64(v)), true
		case psampleAttrProto:
			s.Proto = binary.NativeEndian.Uint16(v)
		case psampleAttrProbabilty:
			s.Probability = true
		}
	}
	if err := ad.Err(); err != nil {
		return s, fmt.Errorf("decode psample: %w", err)
	}
	if !haveGroup {
		return s, errors.New("decode psample: no PSAMPLE_ATTR_SAMPLE_GROUP")
	}
	return s, nil
}

// tcFilterSpec identifies a tc filter: the port, clsact hook, priority and
// handle (protocol is always ETH_P_ALL).
type tcFilterSpec struct {
	ifindex  int
	parent   uint32
	priority uint16
	handle   uint32
}

// tcmsg returns struct tcmsg for spec.
func (f tcFilterSpec) tcmsg() []byte {
	b := make([]byte, tcmsgLen)
	b[0] = unix.AF_UNSPEC
	binary.NativeEndian.PutUint32(b[4:], uint32(int32(f.ifindex)))
	binary.NativeEndian.PutUint32(b[8:], f.handle)
	binary.NativeEndian.PutUint32(b[12:], f.parent)
	// tcm_info = TC_H_MAKE(prio << 16, htons(protocol))
	proto := uint16(unix.ETH_P_ALL)
	binary.NativeEndian.PutUint32(b[16:], uint32(f.priority)<<16|uint32(proto>>8|proto<<8))
	return b
}

// sampleAction are the parameters of the tc sample action.
type sampleAction struct {
	group, rate, truncSize uint32
	skipSW                 bool
}

// encodeMatchallSample returns the RTM_NEWTFILTER payload (tcmsg +
// attributes) for a matchall filter whose only action samples packets into
// a psample group. skip_sw is set only when asked (hardware only); by
// default the filter runs in software too, and is offloaded where the
// driver can.
func encodeMatchallSample(f tcFilterSpec, a sampleAction) ([]byte, error) {
	if a.rate == 0 {
		return nil, errors.New("sample rate 0")
	}
	ae := netlink.NewAttributeEncoder()
	ae.String(tcaKind, "matchall")
	ae.Nested(tcaOptions, func(o *netlink.AttributeEncoder) error {
		o.Nested(tcaMatchallAct, func(acts *netlink.AttributeEncoder) error {
			acts.Nested(1, func(act *netlink.AttributeEncoder) error { // action #1 (TCA_ACT_TAB order)
				act.String(tcaActKind, "sample")
				act.Nested(tcaActOptions, func(opt *netlink.AttributeEncoder) error {
					parms := make([]byte, tcSampleParmsLen) // struct tc_gen: index, capab, action, refcnt, bindcnt
					// The control action is "continue" (TC_ACT_UNSPEC), not
					// TC_ACT_PIPE: a matchall verdict ≥ 0 would end
					// classification and skip later filters.
					control := int32(tcActUnspec)
					binary.NativeEndian.PutUint32(parms[8:], uint32(control))
					opt.Bytes(tcaSampleParms, parms)
					opt.Uint32(tcaSampleRate, a.rate)
					if a.truncSize > 0 {
						opt.Uint32(tcaSampleTruncSize, a.truncSize)
					}
					opt.Uint32(tcaSamplePsampleGroup, a.group)
					return nil
				})
				return nil
			})
			return nil
		})
		var flags uint32
		if a.skipSW {
			flags |= tcaClsFlagsSkipSW
		}
		o.Uint32(tcaMatchallFlags, flags)
		return nil
	})
	attrs, err := ae.Encode()
	if err != nil {
		return nil, err
	}
	return append(f.tcmsg(), attrs...), nil
}

// encodeFilterRef returns the RTM_DELTFILTER / RTM_GETTFILTER payload
// naming exactly one matchall filter.
func encodeFilterRef(f tcFilterSpec) ([]byte, error) {
	ae := netlink.NewAttributeEncoder()
	ae.String(tcaKind, "matchall")
	attrs, err := ae.Encode()
	if err != nil {
		return nil, err
	}
	return append(f.tcmsg(), attrs...), nil
}

// matchallInfo is what a RTM_NEWTFILTER reply says about a matchall filter.
type matchallInfo struct {
	ifindex  int
	parent   uint32
	priority uint16
	handle   uint32
	kind     string
	flags    uint32 // TCA_CLS_FLAGS_*: IN_HW says the ASIC runs it
	actions  []string
}

// decodeMatchallFilter decodes a RTM_NEWTFILTER payload.
func decodeMatchallFilter(b []byte) (matchallInfo, error) {
	var m matchallInfo
	if len(b) < tcmsgLen {
		return m, fmt.Errorf("RTM_NEWTFILTER: %d bytes, shorter than tcmsg", len(b))
	}
	m.ifindex = int(int32(binary.NativeEndian.Uint32(b[4:])))
	m.handle = binary.NativeEndian.Uint32(b[8:])
	m.parent = binary.NativeEndian.Uint32(b[12:])
	m.priority = uint16(binary.NativeEndian.Uint32(b[16:]) >> 16)
	ad, err := netlink.NewAttributeDecoder(b[tcmsgLen:])
	if err != nil {
		return m, fmt.Errorf("RTM_NEWTFILTER attributes: %w", err)
	}
	for ad.Next() {
		switch ad.Type() {
		case tcaKind:
			m.kind = ad.String()
		case tcaOptions:
			ad.Nested(func(o *netlink.AttributeDecoder) error {
				for o.Next() {
					switch o.Type() {
					case tcaMatchallFlags:
						m.flags = o.Uint32()
					case tcaMatchallAct:
						o.Nested(func(acts *netlink.AttributeDecoder) error {
							for acts.Next() {
								acts.Nested(func(act *netlink.AttributeDecoder) error {
									for act.Next() {
										if act.Type() == tcaActKind {
											m.actions = append(m.actions, act.String())
										}
									}
									return nil
								})
							}
							return nil
						})
					}
				}
				return nil
			})
		}
	}
	if err := ad.Err(); err != nil {
		return m, fmt.Errorf("RTM_NEWTFILTER attributes: %w", err)
	}
	return m, nil
}
