package eeectl

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lpictl/lpictl/hwlink/hwlinktest"
	"github.com/lpictl/lpictl/hwlink/internal/golden"
)

func TestDecodeEEENotificationGolden(t *testing.T) {
	if *golden.Update {
		golden.Check(t, "eee_ntf.golden", "ETHTOOL_MSG_EEE_NTF (genl header + attributes): eth0 index 2, compact bitsets, enabled, tx LPI off, 1000 us",
			genlMessage(t, unix.ETHTOOL_MSG_EEE_NTF, kernelReplyCompact(t)))
	}
	m := hwlinktest.ParseGenl(t, golden.Read(t, "testdata/eee_ntf.golden"))
	if m.Header.Command != unix.ETHTOOL_MSG_EEE_NTF {
		t.Fatalf("command %d, want ETHTOOL_MSG_EEE_NTF", m.Header.Command)
	}
	ev, err := decodeEEENotification(m.Data)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Index != 2 || ev.Name != "eth0" || !ev.State.Enabled || ev.State.Active || ev.State.TxLPIEnabled ||
		ev.State.TxLPITimer != time.Millisecond || len(ev.State.Advertised) != 2 {
		t.Errorf("%+v", ev)
	}
	if _, err := decodeEEENotification(hwlinktest.NlAttr(unix.ETHTOOL_A_EEE_TX_LPI_TIMER, hwlinktest.U32(5))); err == nil {
		t.Error("notification without device accepted")
	}
}

func FuzzDecodeEEENotification(f *testing.F) {
	f.Add(golden.Read(f, "testdata/eee_ntf.golden")[4:])
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = decodeEEENotification(b)
	})
}
