package hwbackend

import (
	"errors"
	"testing"
	"time"

	"github.com/lpictl/lpictl/agent"
)

func TestReadCarrierChanges(t *testing.T) {
	if _, err := readCarrierChanges("lo"); err != nil {
		t.Skipf("no sysfs carrier_changes for lo here: %v", err)
	}
	if _, err := readCarrierChanges("no-such-port0"); !errors.Is(err, agent.ErrPortGone) {
		t.Errorf("missing port: %v", err)
	}
	if _, err := readCarrierChanges("../lo"); err == nil {
		t.Error("path in a name accepted")
	}
}

func TestLPIFromStats(t *testing.T) {
	d, dOK, n, nOK := lpiFromStats(map[string]uint64{"tx_lpi_counter": 7, "rx_lpi_counter": 3, "tx_lpi_time_us": 1500, "irq_tx_path_exit_lpi_mode_n": 9})
	if !dOK || d != 1500*time.Microsecond || !nOK || n != 7 {
		t.Errorf("got %v %v %d %v", d, dOK, n, nOK)
	}
}

func TestReadErrorCounters(t *testing.T) {
	if _, err := readErrorCounters("lo"); err != nil {
		t.Skipf("no /sys/class/net/lo/statistics: %v", err)
	}
	if _, err := readErrorCounters("nonexistent-port0"); !errors.Is(err, agent.ErrPortGone) {
		t.Errorf("missing port: %v, want ErrPortGone", err)
	}
}
