package fakedriver_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/eeectl"
	"github.com/lpictl/lpictl/hwlink/fakedriver"
)

const us = time.Microsecond

// TestApplyPath drives eeectl.Actuator against modelled drivers.
func TestApplyPath(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		driver      string
		initial     time.Duration
		request     time.Duration
		wantErr     error
		sent        time.Duration
		applied     time.Duration
		clamped     bool
		rounded     bool
		unchanged   bool
		flaps       int
		canSetTimer bool
	}{
		{driver: "mvneta", initial: 250 * us, request: time.Millisecond, sent: 255 * us, applied: 255 * us, clamped: true, flaps: 2, canSetTimer: true},
		{driver: "mvneta", initial: 250 * us, request: 100 * us, sent: 100 * us, applied: 100 * us, flaps: 2, canSetTimer: true},
		{driver: "mvpp2", initial: 250 * us, request: 300 * us, sent: 255 * us, applied: 255 * us, clamped: true, flaps: 2, canSetTimer: true},
		{driver: "an8855", initial: 60 * time.Millisecond, request: 101 * us, sent: 102 * us, applied: 102 * us, rounded: true, flaps: 2, canSetTimer: true},
		{driver: "st_gmac", initial: time.Millisecond, request: 1500 * time.Nanosecond, sent: 2 * us, applied: 2 * us, rounded: true, flaps: 2, canSetTimer: true},
		{driver: "st_gmac", initial: time.Millisecond, request: 2 * time.Second, sent: 0xFFFFF * us, applied: 0xFFFFF * us, clamped: true, flaps: 2, canSetTimer: true},
		{driver: "bnx2x", initial: 0x800 * us, request: 10 * us, sent: 0x100 * us, applied: 0x100 * us, clamped: true, flaps: 2, canSetTimer: true},
		{driver: "tg3", initial: 2 * us, request: 2 * us, sent: 2 * us, applied: 2 * us, unchanged: true, canSetTimer: true},
		{driver: "bnxt_en", initial: 10 * us, request: 100 * time.Millisecond, sent: 100 * time.Millisecond, wantErr: hwlink.ErrRejected, canSetTimer: true},
		{driver: "igc", initial: 0, request: 100 * us, wantErr: hwlink.ErrNotSupported},
		{driver: "e1000e", initial: 200 * us, request: 100 * us, wantErr: hwlink.ErrNotSupported},
		{driver: "mlx5_core", request: 100 * us, wantErr: hwlink.ErrNotSupported},
		{driver: "veth", request: 100 * us, wantErr: hwlink.ErrNotSupported},
		{driver: "r8169", initial: 1000 * us, request: 100 * us, wantErr: hwlink.ErrNotSupported},
		{driver: "some-new-nic", initial: 10 * us, request: 3 * time.Second, sent: 3 * time.Second, applied: 3 * time.Second, flaps: 2, canSetTimer: true},
	}
	for _, c := range cases {
		t.Run(c.driver, func(t *testing.T) {
			m := fakedriver.New()
			m.AddPort("p0", c.driver, c.initial)
			act, err := eeectl.NewActuator(m, nil)
			if err != nil {
				t.Fatal(err)
			}
			capab, err := act.Probe(ctx, "p0")
			if err != nil {
				t.Fatal(err)
			}
			if capab.CanSetTimer != c.canSetTimer {
				t.Errorf("Probe = %+v, want CanSetTimer %v", capab, c.canSetTimer)
			}
			res, err := act.SetTxLPI(ctx, "p0", eeectl.TxLPIRequest{Timer: c.request})
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) {
					t.Fatalf("SetTxLPI = %+v, %v; want %v", res, err, c.wantErr)
				}
				p, _ := m.Port("p0")
				if p.EEE.TxLPITimer != c.initial || p.CarrierChanges != 0 {
					t.Errorf("port changed after a refusal: %+v", p)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Sent != c.sent || res.Applied != c.applied || res.Clamped != c.clamped ||
				res.Rounded != c.rounded || res.Unchanged != c.unchanged || res.Requested != c.request {
				t.Errorf("result %+v, want sent %v applied %v clamped %v rounded %v unchanged %v",
					res, c.sent, c.applied, c.clamped, c.rounded, c.unchanged)
			}
			p, _ := m.Port("p0")
			if p.CarrierChanges != c.flaps {
				t.Errorf("carrier changes %d, want %d", p.CarrierChanges, c.flaps)
			}
			if c.flaps > 0 && !res.LinkFlapExpected {
				t.Error("link flap not flagged")
			}
			if len(p.EEE.Advertised) != 2 {
				t.Errorf("advertisement touched: %v", p.EEE.Advertised)
			}
		})
	}
}

func TestKnownRefusalIsNotSent(t *testing.T) {
	m := fakedriver.New()
	m.AddPort("eth0", "igc", 0)
	act, _ := eeectl.NewActuator(m, nil)
	if _, err := act.SetTxLPI(context.Background(), "eth0", eeectl.TxLPIRequest{Timer: time.Millisecond}); !errors.Is(err, hwlink.ErrNotSupported) {
		t.Fatal(err)
	}
	if p, _ := m.Port("eth0"); p.Sets != 0 {
		t.Errorf("igc received %d set requests; the table should have stopped them", p.Sets)
	}
	if _, err := act.GetEEE(context.Background(), "nope"); !errors.Is(err, hwlink.ErrNoDevice) {
		t.Errorf("missing port: %v", err)
	}
}

func TestTxLPIEnabled(t *testing.T) {
	m := fakedriver.New()
	m.AddPort("eth0", "lan743x", 100*us)
	act, _ := eeectl.NewActuator(m, nil)
	off := false
	res, err := act.SetTxLPI(context.Background(), "eth0", eeectl.TxLPIRequest{Timer: 100 * us, TxLPIEnabled: &off})
	if err != nil || res.Unchanged {
		t.Fatalf("%+v %v", res, err)
	}
	if p, _ := m.Port("eth0"); p.EEE.TxLPIEnabled || p.CarrierChanges != 2 {
		t.Errorf("port %+v", p)
	}
}
