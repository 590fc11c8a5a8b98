package network

import (
	"context"
	"testing"
	"time"

	"github.com/lpictl/lpictl/controller"
	"github.com/lpictl/lpictl/predictor"
	"github.com/lpictl/lpictl/sim/eee"
)

// TestSetPortController: node0's own controller configuration (a 4 µs
// register rounding up) makes it arm 8 µs for the network's fixed 5 µs;
// the other ports keep the network's configuration and arm 5 µs.
func TestSetPortController(t *testing.T) {
	const d = 5 * time.Microsecond
	for _, override := range []bool{false, true} {
		n := extNet(t, table6(eee.DeepSleep, d))
		names := []string{"node0", "node7", "sw0p0"}
		if override {
			cfg := controller.Config{Register: controller.Register{WidthBits: 16, Resolution: predictor.Duration(4 * time.Microsecond)}}
			if err := n.SetPortController(mustPort(t, n, "node0"), cfg); err != nil {
				t.Fatal(err)
			}
		}
		for _, name := range names {
			if err := n.Watch(mustPort(t, n, name)); err != nil {
				t.Fatal(err)
			}
		}
		if err := n.Run(context.Background(), 0, nil); err != nil {
			t.Fatal(err)
		}
		if err := n.SetPortController(mustPort(t, n, "node7"), controller.Config{}); err == nil {
			t.Error("SetPortController after the run: no error")
		}
		for _, name := range names {
			want := int64(5 * us)
			if override && name == "node0" {
				want = 8 * us
			}
			obs := drainAll(n, mustPort(t, n, name))
			if len(obs) == 0 {
				t.Fatalf("%s: no idle periods", name)
			}
			for _, o := range obs {
				if o.PDT != want {
					t.Fatalf("override %v, %s: t_PDT %d ps, want %d", override, name, o.PDT, want)
				}
			}
		}
	}
}

// TestOpenIdle: a port whose controller was idle before its start
// (controller.Rounds.Idle) observes that period at its first packet; the
// outcome, by hand (table6: Deep Sleep t_s 2 µs, t_w 4.48 µs; Fast Wake
// t_s 200 ns, t_w 375 ns; hybrid hold 10 µs; per link, handshake H = 64 B
// at 400 Gb/s + 10 ns = 11.28 ns, going down takes 2H + t_s).
func TestOpenIdle(t *testing.T) {
	initial := predictor.Duration(time.Microsecond)
	n := extNet(t, table6(eee.DeepSleep, 5*time.Microsecond))
	id := mustPort(t, n, "node0")
	if err := n.SetPortController(id, controller.Config{Rounds: &controller.Rounds{Interval: predictor.Duration(time.Millisecond),
		Initial: &initial, Idle: predictor.Duration(300 * time.Microsecond)}}); err != nil {
		t.Fatal(err)
	}
	ctl := n.ports[id].ctl
	if start, armed, ok := ctl.OpenIdle(); !ok || start != -300*time.Microsecond || armed != time.Microsecond {
		t.Fatalf("OpenIdle = %v %v %v", start, armed, ok)
	}
	// Its round at 0 wrote the fixed 5 µs: the timer at time 0.
	if n.ports[id].pdt != 5*us {
		t.Errorf("node0 starts with t_PDT %d ps, want 5 µs", n.ports[id].pdt)
	}
	if err := n.Run(context.Background(), 0, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := ctl.OpenIdle(); ok {
		t.Error("node0 did not observe its open idle period")
	}

	const h = 11280 // ps
	for _, c := range []struct {
		mode        eee.Mode
		length, pdt int64
		missed      bool
		wait        int64
	}{
		{eee.DeepSleep, 4 * us, 5 * us, false, 0},                   // a hit
		{eee.DeepSleep, 5 * us, 5 * us, true, 2*us + 2*h + 4480*ns}, // at t_PDT: 2H, all of t_s, then t_w
		{eee.DeepSleep, 6 * us, 5 * us, true, 1*us + 2*h + 4480*ns}, // going down: the rest of t_s
		{eee.DeepSleep, 300 * us, 1 * us, true, 4480 * ns},          // asleep
		{eee.FastWake, 300 * us, 1 * us, true, 375 * ns},            // asleep in Fast Wake
		{eee.Hybrid, 1*us + 200*ns + 9*us, 1 * us, true, 375 * ns},  // within the hold
		{eee.Hybrid, 300 * us, 1 * us, true, 4480 * ns},             // deepened
		{eee.DeepSleep, 300 * us, eee.Never, false, 0},              // never goes down
	} {
		n := extNet(t, table6(c.mode, 5*time.Microsecond))
		n.p.EEE.Prepare()
		missed, wait := n.openWait(n.ctlFor(0), c.length, c.pdt)
		if missed != c.missed || wait != c.wait {
			t.Errorf("%v, length %d, t_PDT %d: missed %v, wait %d; want %v, %d", c.mode, c.length, c.pdt, missed, wait, c.missed, c.wait)
		}
	}
}
