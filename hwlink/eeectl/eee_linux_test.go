package eeectl

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/hwlinktest"
)

// TestEEEVeth asks the real kernel for veth's EEE state, over netlink and
// over the ioctl: veth has no EEE operations, so both answer EOPNOTSUPP,
// which must come back as ErrNotSupported and an observe-only status.
func TestEEEVeth(t *testing.T) {
	p := hwlinktest.NewPair(t)
	ctx := context.Background()
	for _, forceIoctl := range []bool{false, true} {
		name := "netlink"
		if forceIoctl {
			name = "ioctl"
		}
		t.Run(name, func(t *testing.T) {
			be, err := NewEthtoolBackend(BackendOptions{NetNS: hwlink.NetNS(p.PathA), ForceIoctl: forceIoctl})
			if err != nil {
				t.Fatal(err)
			}
			defer be.Close()
			_, err = be.GetEEE(ctx, p.NameA)
			if !errors.Is(err, hwlink.ErrNotSupported) {
				t.Fatalf("GetEEE(%s) = %v, want ErrNotSupported", p.NameA, err)
			}
			if !strings.Contains(err.Error(), p.NameA) {
				t.Errorf("error %q does not name the interface", err)
			}
			timer := 100 * time.Microsecond
			err = be.SetEEE(ctx, p.NameA, EEESet{TxLPITimer: &timer})
			if !errors.Is(err, hwlink.ErrNotSupported) {
				t.Fatalf("SetEEE(%s) = %v, want ErrNotSupported", p.NameA, err)
			}
			if _, err := be.GetEEE(ctx, "lpinone0"); !errors.Is(err, hwlink.ErrNoDevice) {
				t.Errorf("GetEEE(missing) = %v, want ErrNoDevice", err)
			}
			drv, err := be.DriverName(ctx, p.NameA)
			if err != nil || drv != "veth" {
				t.Fatalf("DriverName = %q, %v", drv, err)
			}
			act, err := NewActuator(be, nil)
			if err != nil {
				t.Fatal(err)
			}
			c, err := act.Probe(ctx, p.NameA)
			if err != nil {
				t.Fatal(err)
			}
			if c.CanSetTimer || !strings.HasPrefix(c.Reason, "observe-only") {
				t.Errorf("Probe = %+v, want observe-only", c)
			}
			if _, err := act.SetTxLPI(ctx, p.NameA, TxLPIRequest{Timer: timer}); !errors.Is(err, hwlink.ErrNotSupported) {
				t.Errorf("SetTxLPI = %v, want ErrNotSupported", err)
			}
		})
	}
	// The kernel's answer without the table: an unknown driver name makes
	// the actuator send the request, and the kernel refuses it.
	be, err := NewEthtoolBackend(BackendOptions{NetNS: hwlink.NetNS(p.PathA)})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	act, _ := NewActuator(renamedDriver{be}, nil)
	if _, err := act.SetTxLPI(ctx, p.NameA, TxLPIRequest{Timer: time.Millisecond}); !errors.Is(err, hwlink.ErrNotSupported) {
		t.Errorf("SetTxLPI via kernel = %v, want ErrNotSupported", err)
	}
	c, err := act.Probe(ctx, p.NameA)
	if err != nil || c.CanSetTimer || !strings.Contains(c.Reason, "EOPNOTSUPP") {
		t.Errorf("Probe via kernel = %+v, %v", c, err)
	}
}

// renamedDriver hides the driver name so the table does not short-cut.
type renamedDriver struct{ *EthtoolBackend }

func (renamedDriver) DriverName(context.Context, string) (string, error) { return "unknown-test", nil }
