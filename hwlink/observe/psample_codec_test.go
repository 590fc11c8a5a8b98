package observe

import (
	"encoding/binary"
	"reflect"
	"testing"
	"time"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/lpictl/lpictl/hwlink/hwlinktest"
	"github.com/lpictl/lpictl/hwlink/internal/golden"
)

// psampleKernelMsg builds a PSAMPLE_CMD_SAMPLE message (generic netlink
// header + attributes) in the order net/psample/psample.c
// psample_sample_packet emits them: IIFINDEX (u16, if set), OIFINDEX (u16,
// if set), SAMPLE_RATE, ORIGSIZE, SAMPLE_GROUP, GROUP_SEQ (u32 each),
// TIMESTAMP (u64 via nla_put_u64_64bit: a PAD attribute first where the
// architecture needs 8-byte alignment), PROTO (u16), DATA, and the
// SAMPLE_PROBABILITY flag.
func psampleKernelMsg(iif, oif uint16, rate, size, group, seq uint32, ts uint64, pad bool, data []byte, prob bool) []byte {
	b := []byte{psampleCmdSample, psampleGenlVersion, 0, 0} // struct genlmsghdr
	if iif != 0 {
		b = append(b, hwlinktest.NlAttr(psampleAttrIIfIndex, hwlinktest.U16(iif))...)
	}
	if oif != 0 {
		b = append(b, hwlinktest.NlAttr(psampleAttrOIfIndex, hwlinktest.U16(oif))...)
	}
	b = append(b, hwlinktest.NlAttr(psampleAttrRate, hwlinktest.U32(rate))...)
	b = append(b, hwlinktest.NlAttr(psampleAttrOrigSize, hwlinktest.U32(size))...)
	b = append(b, hwlinktest.NlAttr(psampleAttrGroup, hwlinktest.U32(group))...)
	b = append(b, hwlinktest.NlAttr(psampleAttrGroupSeq, hwlinktest.U32(seq))...)
	if ts != 0 {
		if pad {
			b = append(b, hwlinktest.NlAttr(psampleAttrPad, nil)...)
		}
		b = append(b, hwlinktest.NlAttr(psampleAttrTimestamp, hwlinktest.U64(ts))...)
	}
	b = append(b, hwlinktest.NlAttr(psampleAttrProto, hwlinktest.U16(unix.ETH_P_IP))...)
	if len(data) > 0 {
		b = append(b, hwlinktest.NlAttr(psampleAttrData, data)...)
	}
	if prob {
		b = append(b, hwlinktest.NlAttr(psampleAttrProbabilty, nil)...)
	}
	return b
}

func TestDecodePSampleGolden(t *testing.T) {
	hdr := make([]byte, 14) // truncated copy: Ethernet header
	if *golden.Update {
		golden.Check(t, "psample_sample_egress.golden",
			"PSAMPLE_CMD_SAMPLE egress: iif 3, oif 7, rate 1, 98 bytes, group 0x4c50000e, seq 41, timestamp, 14 data bytes",
			psampleKernelMsg(3, 7, 1, 98, 0x4c50000e, 41, 1_760_000_000_123_456_789, false, hdr, false))
		golden.Check(t, "psample_sample_ingress_pad.golden",
			"PSAMPLE_CMD_SAMPLE ingress: iif 7, rate 1000, 1514 bytes, group 0x4c50000f, seq 0, PAD before timestamp",
			psampleKernelMsg(7, 0, 1000, 1514, 0x4c50000f, 0, 1_760_000_000_000_000_001, true, nil, false))
		golden.Check(t, "psample_sample_old_kernel.golden",
			"PSAMPLE_CMD_SAMPLE from a kernel without PSAMPLE_ATTR_TIMESTAMP: oif 7, rate 1, 60 bytes, group 5, seq 9",
			psampleKernelMsg(0, 7, 1, 60, 5, 9, 0, false, nil, false))
		golden.Check(t, "psample_sample_probability.golden",
			"PSAMPLE_CMD_SAMPLE with SAMPLE_PROBABILITY: rate 2^32/4 = 1 in 4",
			psampleKernelMsg(0, 7, 1<<30, 60, 5, 10, 1_000, false, nil, true))
	}
	for _, c := range []struct {
		file string
		want PSample
	}{
		{"psample_sample_egress.golden", PSample{IIfIndex: 3, OIfIndex: 7, Rate: 1, OrigSize: 98, Group: 0x4c50000e, Seq: 41,
			Timestamp: 1_760_000_000_123_456_789, HasTimestamp: true, Proto: unix.ETH_P_IP, DataLen: 14}},
		{"psample_sample_ingress_pad.golden", PSample{IIfIndex: 7, Rate: 1000, OrigSize: 1514, Group: 0x4c50000f,
			Timestamp: 1_760_000_000_000_000_001, HasTimestamp: true, Proto: unix.ETH_P_IP}},
		{"psample_sample_old_kernel.golden", PSample{OIfIndex: 7, Rate: 1, OrigSize: 60, Group: 5, Seq: 9, Proto: unix.ETH_P_IP}},
		{"psample_sample_probability.golden", PSample{OIfIndex: 7, Rate: 1 << 30, Probability: true, OrigSize: 60, Group: 5, Seq: 10,
			Timestamp: 1000, HasTimestamp: true, Proto: unix.ETH_P_IP}},
	} {
		m := hwlinktest.ParseGenl(t, golden.Read(t, "testdata/"+c.file))
		if m.Header.Command != psampleCmdSample || m.Header.Version != psampleGenlVersion {
			t.Errorf("%s: header %+v", c.file, m.Header)
		}
		got, err := decodePSample(m.Data)
		if err != nil {
			t.Errorf("%s: %v", c.file, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.file, got, c.want)
		}
	}
}

func TestPSamplePacketsPerSample(t *testing.T) {
	for _, c := range []struct {
		s    PSample
		want float64
	}{
		{PSample{Rate: 0}, 1},
		{PSample{Rate: 1}, 1},
		{PSample{Rate: 1000}, 1000},
		{PSample{Rate: 1 << 30, Probability: true}, 4},
		{PSample{Rate: 0, Probability: true}, 0},
	} {
		if got := c.s.PacketsPerSample(); got != c.want {
			t.Errorf("%+v: %v, want %v", c.s, got, c.want)
		}
	}
}

func TestDecodePSampleErrors(t *testing.T) {
	// Truncated u32 (group) and missing group.
	short := append(hwlinktest.NlAttr(psampleAttrGroup, []byte{1, 2}), hwlinktest.NlAttr(psampleAttrRate, hwlinktest.U32(1))...)
	if _, err := decodePSample(short); err == nil {
		t.Error("2-byte group accepted")
	}
	if _, err := decodePSample(hwlinktest.NlAttr(psampleAttrRate, hwlinktest.U32(1))); err == nil {
		t.Error("sample without group accepted")
	}
	if _, err := decodePSample([]byte{0xff, 0, 0}); err == nil {
		t.Error("garbage accepted")
	}
}

func FuzzDecodePSample(f *testing.F) {
	for _, name := range []string{"psample_sample_egress.golden", "psample_sample_ingress_pad.golden",
		"psample_sample_old_kernel.golden", "psample_sample_probability.golden"} {
		b := golden.Read(f, "testdata/"+name)
		f.Add(b[4:]) // attributes after the genl header
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := decodePSample(b)
		if err == nil {
			_ = s.PacketsPerSample()
			var e psampleEstimator
			e.add(Egress, s, time.Second)
			e.add(Egress, s, 2*time.Second)
		}
	})
}

func TestEncodeMatchallSampleGolden(t *testing.T) {
	f := tcFilterSpec{ifindex: 7, parent: 0xFFFFFFF3, priority: psampleFilterPriority, handle: 1}
	add, err := encodeMatchallSample(f, sampleAction{group: 0x4c50000e, rate: 1, truncSize: 64})
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "tc_matchall_sample_add.golden",
		"RTM_NEWTFILTER payload: tcmsg{ifindex 7, handle 1, parent clsact egress, prio 0xc0df, ETH_P_ALL} kind matchall, action sample rate 1 group 0x4c50000e trunc 64 control continue, flags 0",
		add)
	hw, err := encodeMatchallSample(f, sampleAction{group: 1, rate: 1000, skipSW: true})
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "tc_matchall_sample_add_skipsw.golden",
		"RTM_NEWTFILTER payload: as above, rate 1000 group 1 no truncation, flags skip_sw", hw)
	del, err := encodeFilterRef(f)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "tc_matchall_ref.golden", "RTM_DELTFILTER/RTM_GETTFILTER payload naming the filter above", del)
	if _, err := encodeMatchallSample(f, sampleAction{group: 1}); err == nil {
		t.Error("rate 0 accepted")
	}

	// Independent checks of the layout against include/uapi/linux/rtnetlink.h
	// (struct tcmsg) and pkt_cls.h / tc_sample.h.
	if got := binary.NativeEndian.Uint32(add[16:]); got != 0xC0DF<<16|0x0300 {
		t.Errorf("tcm_info %#x, want prio 0xc0df and htons(ETH_P_ALL)", got)
	}
	m, err := decodeMatchallFilter(add)
	if err != nil {
		t.Fatal(err)
	}
	if m.ifindex != 7 || m.parent != 0xFFFFFFF3 || m.priority != psampleFilterPriority || m.handle != 1 ||
		m.kind != "matchall" || m.flags != 0 || !reflect.DeepEqual(m.actions, []string{"sample"}) {
		t.Errorf("decoded own request: %+v", m)
	}
	// The sample action's parameters.
	ad, _ := netlink.NewAttributeDecoder(add[tcmsgLen:])
	var rate, group, trunc uint32
	var control int32
	for ad.Next() {
		if ad.Type() != tcaOptions {
			continue
		}
		ad.Nested(func(o *netlink.AttributeDecoder) error {
			for o.Next() {
				if o.Type() != tcaMatchallAct {
					continue
				}
				o.Nested(func(acts *netlink.AttributeDecoder) error {
					for acts.Next() {
						acts.Nested(func(act *netlink.AttributeDecoder) error {
							for act.Next() {
								if act.Type() != tcaActOptions {
									continue
								}
								act.Nested(func(opt *netlink.AttributeDecoder) error {
									for opt.Next() {
										switch opt.Type() {
										case tcaSampleParms:
											control = int32(binary.NativeEndian.Uint32(opt.Bytes()[8:]))
										case tcaSampleRate:
											rate = opt.Uint32()
										case tcaSamplePsampleGroup:
											group = opt.Uint32()
										case tcaSampleTruncSize:
											trunc = opt.Uint32()
										}
									}
									return nil
								})
							}
							return nil
						})
					}
					return nil
				})
			}
			return nil
		})
	}
	if rate != 1 || group != 0x4c50000e || trunc != 64 || control != tcActUnspec {
		t.Errorf("sample parameters rate %d group %#x trunc %d control %d", rate, group, trunc, control)
	}
}

// TestDecodeMatchallFilterInHW decodes a kernel reply (RTM_NEWTFILTER) for
// an offloaded filter: TCA_MATCHALL_FLAGS carries TCA_CLS_FLAGS_IN_HW.
func TestDecodeMatchallFilterInHW(t *testing.T) {
	tcm := tcFilterSpec{ifindex: 12, parent: 0xFFFFFFF2, priority: 0xC0DF, handle: 1}.tcmsg()
	act := hwlinktest.NlAttr(tcaActKind, []byte("sample\x00"))
	opts := append(hwlinktest.NlAttr(tcaMatchallAct|unix.NLA_F_NESTED, hwlinktest.NlAttr(1|unix.NLA_F_NESTED, act)),
		hwlinktest.NlAttr(tcaMatchallFlags, hwlinktest.U32(tcaClsFlagsInHW))...)
	msg := append(tcm, hwlinktest.NlAttr(tcaKind, []byte("matchall\x00"))...)
	msg = append(msg, hwlinktest.NlAttr(tcaOptions|unix.NLA_F_NESTED, opts)...)
	if *golden.Update {
		golden.Check(t, "tc_matchall_reply_inhw.golden", "RTM_NEWTFILTER reply: matchall on ifindex 12 clsact ingress, action sample, flags in_hw", msg)
	}
	m, err := decodeMatchallFilter(golden.Read(t, "testdata/tc_matchall_reply_inhw.golden"))
	if err != nil {
		t.Fatal(err)
	}
	if m.ifindex != 12 || m.parent != 0xFFFFFFF2 || m.flags&tcaClsFlagsInHW == 0 || m.kind != "matchall" ||
		!reflect.DeepEqual(m.actions, []string{"sample"}) {
		t.Errorf("%+v", m)
	}
	if _, err := decodeMatchallFilter(make([]byte, 10)); err == nil {
		t.Error("short tcmsg accepted")
	}
}

func FuzzDecodeMatchallFilter(f *testing.F) {
	f.Add(golden.Read(f, "testdata/tc_matchall_sample_add.golden"))
	f.Add(golden.Read(f, "testdata/tc_matchall_reply_inhw.golden"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = decodeMatchallFilter(b)
	})
}
