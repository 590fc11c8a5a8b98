package emulate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/eeectl"
	"github.com/lpictl/lpictl/hwlink/hwlinktest"
	"github.com/lpictl/lpictl/hwlink/observe"
)

// assertNoEmulator checks that detach left nothing: no program (TCX or
// tc), no clsact qdisc, no fq root qdisc of lpictl, no pins.
func assertNoEmulator(t *testing.T, pair *hwlinktest.Pair, bpffs string) {
	t.Helper()
	hwlinktest.AssertDetached(t, pair.NSA, pair.IndexA)
	h, err := hwlink.NetlinkHandleIn(pair.NSA)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	root, err := emuRootQdisc(h, pair.IndexA)
	if err != nil {
		t.Fatal(err)
	}
	if root != nil && root.Type() == "fq" {
		t.Errorf("fq root qdisc left behind: %+v", root.Attrs())
	}
	if _, err := os.Stat(filepath.Join(bpffs, "lpictl")); !errors.Is(err, os.ErrNotExist) {
		entries, _ := filepath.Glob(filepath.Join(bpffs, "lpictl", "*", "*"))
		t.Errorf("pins left behind: %v %v", err, entries)
	}
}

// TestEmulatorAttachDetach attaches over TCX and over clsact, checks the
// qdiscs, the pins, the EEE interface through the backend and an
// Actuator, and that detach (from a fresh handle, as another process
// would) leaves nothing.
func TestEmulatorAttachDetach(t *testing.T) {
	hwlinktest.RequireBPF(t)
	for _, mode := range []observe.AttachMode{observe.AttachAuto, observe.AttachTC} {
		t.Run(mode.String(), func(t *testing.T) {
			pair := hwlinktest.NewPair(t)
			bpffs := tempBPFFS(t)
			ctx := context.Background()
			pdt := 300 * time.Microsecond
			cfg := Config{Interface: pair.NameA, NetNS: hwlink.NetNS(pair.PathA), Attach: mode,
				Preset: testPreset1000, Mode: ModeDeepSleep, PDT: &pdt, Scale: 2, Driver: "mvneta", BPFFS: bpffs}
			p, err := Attach(ctx, cfg)
			if errors.Is(err, hwlink.ErrNotSupported) && strings.Contains(err.Error(), "CONFIG_NET_SCH_FQ") {
				// No fq on this kernel: the refusal must leave nothing
				// behind; go on with the spin method.
				assertNoEmulator(t, pair, bpffs)
				t.Logf("edt: %v; testing with delay spin", err)
				cfg.Delay = DelaySpin
				p, err = Attach(ctx, cfg)
			}
			if err != nil {
				t.Fatal(err)
			}
			p.Close()
			withFQ := cfg.Delay == DelayEDT
			wantVia := observe.AttachTCX
			if mode == observe.AttachTC {
				wantVia = observe.AttachTC
			}
			ports, err := List(bpffs)
			if err != nil || len(ports) != 1 {
				t.Fatalf("List: %v, %d ports", err, len(ports))
			}
			s, err := ports[0].Status(observe.MonotonicNow())
			if err := ports[0].Detach(); err == nil || !strings.Contains(err.Error(), "outside its network namespace") {
				t.Errorf("detach of a port listed from another namespace: %v", err)
			}
			ports[0].Close()
			if err != nil {
				t.Fatal(err)
			}
			if s.Device != pair.NameA || s.Ifindex != pair.IndexA || s.AttachedVia != wantVia.String() || !s.Attached ||
				s.FQAdded != withFQ || s.Delay != cfg.Delay.String() || s.ClsactAdded != (mode == observe.AttachTC) || s.Preset != "test-1000" || s.Mode != "deep-sleep" ||
				s.Driver != "mvneta" || s.TxLPITimer != 255*time.Microsecond || s.DeepSleep.Wake != 33*time.Microsecond ||
				s.DeepSleep.Sleep != 364*time.Microsecond || s.Scale != 2 || !s.Sleeps {
				t.Errorf("status %+v", s)
			}
			h, _ := hwlink.NetlinkHandleIn(pair.NSA)
			root, _ := emuRootQdisc(h, pair.IndexA)
			h.Close()
			if isFQ := root != nil && root.Type() == "fq"; isFQ != withFQ {
				t.Errorf("root qdisc %v, fq wanted: %v", root, withFQ)
			}
			if _, err := Attach(ctx, Config{Interface: pair.NameA, NetNS: hwlink.NetNS(pair.PathA),
				Preset: testPreset1000, Mode: ModeDeepSleep, Delay: cfg.Delay, BPFFS: bpffs}); !errors.Is(err, ErrAlreadyEmulated) {
				t.Errorf("second attach: %v, want ErrAlreadyEmulated", err)
			}

			// The EEE interface, as the agent would drive it.
			be, err := NewBackend(BackendOptions{NetNS: hwlink.NetNS(pair.PathA), BPFFS: bpffs})
			if err != nil {
				t.Fatal(err)
			}
			defer be.Close()
			act, _ := eeectl.NewActuator(be, nil)
			c, err := act.Probe(ctx, pair.NameA)
			if err != nil || !c.CanSetTimer || c.Caps.Driver != "mvneta" {
				t.Errorf("probe: %+v, %v", c, err)
			}
			res, err := act.SetTxLPI(ctx, pair.NameA, eeectl.TxLPIRequest{Timer: 100*time.Microsecond + 400})
			if err != nil || res.Applied != 100*time.Microsecond || !res.Rounded {
				t.Errorf("SetTxLPI 100.4 µs: %+v, %v", res, err)
			}
			big := time.Millisecond
			if err := be.SetEEE(ctx, pair.NameA, eeectl.EEESet{TxLPITimer: &big}); !errors.Is(err, hwlink.ErrRejected) {
				t.Errorf("mvneta above 255 µs: %v, want ErrRejected", err)
			}
			st, err := be.GetEEE(ctx, pair.NameA)
			if err != nil || st.TxLPITimer != 100*time.Microsecond || !st.Enabled || !st.Active || !st.TxLPIEnabled ||
				st.Source != "emulated" || len(st.Supported) != 1 || st.Supported[0] != "1000baseT/Full" {
				t.Errorf("GetEEE %+v, %v", st, err)
			}
			if _, err := be.GetEEE(ctx, pair.NameB); !errors.Is(err, hwlink.ErrNoDevice) {
				t.Errorf("GetEEE of a device in another namespace: %v", err)
			}
			if be.Emulated(ctx, "lo") {
				t.Error("lo reported as emulated")
			}
			if _, err := be.GetEEE(ctx, "lo"); !errors.Is(err, hwlink.ErrNotSupported) {
				t.Errorf("GetEEE(lo): %v, want ErrNotSupported", err)
			}
			if s, err := be.Status(ctx, pair.NameA, observe.MonotonicNow()); err != nil || s.Device != pair.NameA || s.TxLPITimer != 100*time.Microsecond {
				t.Errorf("backend status: %+v, %v", s, err)
			}
			// Interfaces that are not emulated go to the fallback.
			fb, err := NewBackend(BackendOptions{NetNS: hwlink.NetNS(pair.PathA), BPFFS: bpffs, Fallback: fixedBackend{}})
			if err != nil {
				t.Fatal(err)
			}
			defer fb.Close()
			if d, err := fb.DriverName(ctx, "lo"); err != nil || d != "fixed" {
				t.Errorf("fallback driver: %q, %v", d, err)
			}
			if d, err := fb.DriverName(ctx, pair.NameA); err != nil || d != "mvneta" {
				t.Errorf("emulated driver with a fallback: %q, %v", d, err)
			}

			if err := Detach(ctx, Ref{Interface: pair.NameA, NetNS: hwlink.NetNS(pair.PathA), BPFFS: bpffs}); err != nil {
				t.Fatal(err)
			}
			assertNoEmulator(t, pair, bpffs)
			if be.Emulated(ctx, pair.NameA) {
				t.Error("still emulated after detach")
			}
			if err := Detach(ctx, Ref{Interface: pair.NameA, NetNS: hwlink.NetNS(pair.PathA), BPFFS: bpffs}); !errors.Is(err, ErrNotEmulated) {
				t.Errorf("second detach: %v, want ErrNotEmulated", err)
			}
		})
	}
}
