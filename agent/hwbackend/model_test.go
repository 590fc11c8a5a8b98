package hwbackend_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lpictl/lpictl/agent/hwbackend"
	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/eeectl"
)

func TestModelFilePersists(t *testing.T) {
	path := filepath.Join(t.TempDir(), "model.json")
	st := eeectl.EEEState{Enabled: true, Active: true, TxLPIEnabled: true, TxLPITimer: 250 * time.Microsecond,
		Advertised: []string{"1000baseT/Full"}}
	if err := hwbackend.WriteModel(path, hwbackend.ModelDoc{Ports: []hwbackend.ModelPort{
		{Name: "p0", Driver: "mvneta", EEE: st, CarrierChanges: 4},
		{Name: "p1", Driver: "igc", EEE: st},
	}}); err != nil {
		t.Fatal(err)
	}
	m, err := hwbackend.OpenModel(path)
	if err != nil {
		t.Fatal(err)
	}
	act, err := eeectl.NewActuator(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, err := act.SetTxLPI(ctx, "p0", eeectl.TxLPIRequest{Timer: time.Millisecond})
	if err != nil || !res.Clamped || res.Applied != 255*time.Microsecond {
		t.Fatalf("mvneta set: %+v %v", res, err)
	}
	if _, err := act.SetTxLPI(ctx, "p1", eeectl.TxLPIRequest{Timer: time.Millisecond}); !errors.Is(err, hwlink.ErrNotSupported) {
		t.Errorf("igc set: %v", err)
	}
	doc, err := hwbackend.ReadModel(path)
	if err != nil {
		t.Fatal(err)
	}
	p0 := doc.Ports[0]
	if p0.EEE.TxLPITimer != 255*time.Microsecond || p0.CarrierChanges != 6 || p0.Sets != 1 || len(p0.EEE.Advertised) != 1 {
		t.Errorf("saved port %+v", p0)
	}
	if n, _ := m.CarrierChanges("p0"); n != 6 {
		t.Errorf("carrier changes %d", n)
	}
}

// FuzzReadModel: any driver-model file is read or refused without a panic.
func FuzzReadModel(f *testing.F) {
	f.Add([]byte(`{"ports":[{"name":"p0","driver":"mvneta","eee":{"enabled":true,"tx_lpi_timer_ns":250000}}]}`))
	f.Add([]byte(`{"ports":[{"name":"","driver":"x"}]}`))
	f.Add([]byte(`{"ports":[{"name":"p","driver":"x","behaviour":{"Max":-5,"Unit":-1}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "m.json")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		m, err := hwbackend.OpenModel(path)
		if err != nil {
			return
		}
		act, _ := eeectl.NewActuator(m, nil)
		for _, p := range m.Ports() {
			_, _ = act.Probe(context.Background(), p.Name)
			_, _ = act.SetTxLPI(context.Background(), p.Name, eeectl.TxLPIRequest{Timer: 100 * time.Microsecond})
		}
	})
}
