package emulate

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/eeectl"
)

// TestEmulatedDriver checks the EEE interface's driver profiles: the
// table's ranges, units and refusals, as fakedriver models them.
func TestEmulatedDriver(t *testing.T) {
	d := func(v time.Duration) *time.Duration { return &v }
	on, off := true, false
	cur := emuRegs{timer: 250 * time.Microsecond, eeeEnabled: true, txLPIEnabled: true}
	tests := []struct {
		driver string
		set    eeectl.EEESet
		want   time.Duration
		lpi    bool
		err    error
	}{
		{"st_gmac", eeectl.EEESet{TxLPITimer: d(1234567 * time.Nanosecond)}, 1234 * time.Microsecond, true, nil},
		{"st_gmac", eeectl.EEESet{TxLPITimer: d(0x100000 * time.Microsecond)}, 0, false, hwlink.ErrRejected},
		{"mvneta", eeectl.EEESet{TxLPITimer: d(255 * time.Microsecond)}, 255 * time.Microsecond, true, nil},
		{"mvneta", eeectl.EEESet{TxLPITimer: d(256 * time.Microsecond)}, 0, false, hwlink.ErrRejected},
		{"mvpp2", eeectl.EEESet{TxLPITimer: d(time.Second)}, 255 * time.Microsecond, true, nil},
		{"an8855", eeectl.EEESet{TxLPITimer: d(7 * time.Microsecond)}, 6 * time.Microsecond, true, nil},
		{"bnx2x", eeectl.EEESet{TxLPITimer: d(10 * time.Microsecond)}, 0, false, hwlink.ErrRejected},
		{"igc", eeectl.EEESet{TxLPITimer: d(10 * time.Microsecond)}, 0, false, hwlink.ErrRejected},
		{"igc", eeectl.EEESet{TxLPITimer: d(250 * time.Microsecond)}, 250 * time.Microsecond, true, nil},
		{"r8169", eeectl.EEESet{TxLPITimer: d(10 * time.Microsecond)}, 250 * time.Microsecond, true, nil},
		{"veth", eeectl.EEESet{TxLPITimer: d(10 * time.Microsecond)}, 0, false, hwlink.ErrNotSupported},
		{"tg3", eeectl.EEESet{TxLPIEnabled: &off}, 250 * time.Microsecond, false, nil},
		{"tg3", eeectl.EEESet{TxLPITimer: d(-time.Microsecond)}, 0, false, hwlink.ErrRejected},
		{"igc", eeectl.EEESet{TxLPIEnabled: &on}, 250 * time.Microsecond, true, nil},
	}
	for _, tc := range tests {
		drv, err := emulatedDriver(tc.driver)
		if err != nil {
			t.Fatalf("%s: %v", tc.driver, err)
		}
		got, err := drv.apply("emu0", cur, tc.set)
		if tc.err != nil {
			if !errors.Is(err, tc.err) || !strings.HasPrefix(err.Error(), "emu0: ") {
				t.Errorf("%s %+v: error %v, want %v", tc.driver, tc.set, err, tc.err)
			}
			if got != cur {
				t.Errorf("%s: a refused set changed the registers: %+v", tc.driver, got)
			}
			continue
		}
		if err != nil || got.timer != tc.want || got.txLPIEnabled != tc.lpi || !got.eeeEnabled {
			t.Errorf("%s %+v: %+v, %v; want timer %v, tx LPI %v", tc.driver, tc.set, got, err, tc.want, tc.lpi)
		}
	}
	if _, err := emulatedDriver("no-such-driver"); err == nil || !strings.Contains(err.Error(), "driver table") {
		t.Errorf("unknown profile: %v", err)
	}
}
