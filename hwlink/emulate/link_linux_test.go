package emulate

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/lpictl/lpictl/bpf"
	"github.com/lpictl/lpictl/hwlink/eeectl"
	"github.com/lpictl/lpictl/hwlink/hwlinktest"
	"github.com/lpictl/lpictl/hwlink/observe"
)

// newTestLinkEnd loads the link program for BPF_PROG_TEST_RUN as end
// `end` of a link, sharing shared's lpi_link map (nil: a new link, created
// as Attach does at t0). epoch is the end's attach time.
func newTestLinkEnd(tb testing.TB, shared *ebpf.Map, end int, tm emuTiming, mode Mode, pdt, q16, hs, epoch, t0 uint64) *Port {
	tb.Helper()
	var o linkObjects
	if err := loadInto(&o, shared); err != nil {
		tb.Fatal(err)
	}
	p, err := newEmulatedPort(o.Config, o.State, o.Events)
	if err != nil {
		tb.Fatal(err)
	}
	p.prog, p.lkMap, p.ifname = o.Prog, o.Link, "end"+string(rune('0'+end))
	tb.Cleanup(func() { p.Close() })
	if p.drv, err = emulatedDriver("st_gmac"); err != nil {
		tb.Fatal(err)
	}
	*p.cfg = bpf.EeeemuEmuConfig{PdtNs: pdt, SleepFwNs: tm.sleepFW, WakeFwNs: tm.wakeFW, SleepDsNs: tm.sleepDS,
		WakeDsNs: tm.wakeDS, HoldNs: tm.hold, NsPerByteQ16: q16, Mode: uint32(mode), Flags: emuFlagEEE | emuFlagTxLPI,
		Version: emuLayoutVersion, AttachedNs: epoch, Lpi: uint32(PerLink), LinkEnd: uint32(end), HandshakeNs: hs}
	setCString(p.cfg.Driver[:], "st_gmac")
	setCString(p.cfg.Link[:], "test")
	if err := p.stMap.Update(uint32(0), &bpf.EeeemuEmuState{T0Ns: epoch, FreeAtNs: epoch}, ebpf.UpdateAny); err != nil {
		tb.Fatal(err)
	}
	if shared == nil {
		if err := newLink(p.lkMap, p.cfg, end, uint32(mode), t0); err != nil {
			tb.Fatal(err)
		}
	}
	return p
}

// linkGap picks the next packet's arrival on the link: on the
// boundaries of the link's idle period (the owner's expiry, the peer's
// refusal window, going down, the hybrid step), back to back, during a
// wake-up or while an end is busy, or anywhere.
func linkGap(rng *rand.Rand, r *refLink, span uint64) uint64 {
	own := &r.end[r.owner]
	ts := r.t.sleepFW
	if own.mode == ModeDeepSleep {
		ts = r.t.sleepDS
	}
	exp := r.busy + own.pdt
	switch rng.IntN(12) {
	case 0:
		return r.busy
	case 1:
		return exp
	case 2:
		return exp + r.hs - 1 + rng.Uint64N(2)
	case 3:
		return exp + 2*r.hs
	case 4:
		return exp + 2*r.hs + ts
	case 5:
		return exp + 2*r.hs + r.t.sleepFW + r.t.hold
	case 6:
		return r.ready - min(r.ready, rng.Uint64N(1000)) // during (or after) a wake-up
	case 7:
		return r.busy - min(r.busy, rng.Uint64N(3000)) // while an end is busy
	}
	return r.busy + rng.Uint64N(3*span)
}

// TestEmulatorLinkMatchesModel drives the two ends' link programs
// (eee_egress_link, one shared lpi_link map) through BPF_PROG_TEST_RUN with
// a controlled clock and a seeded random sequence of packets on both ends
// (bursts on one end, alternation, the boundaries of the handshake), and
// checks every packet's departure, every exported idle period, the link's
// state and both ends' counters against refLink, in each sleeping mode,
// with and without serialisation, across t_PDT changes (SetEEE), one end's
// tx LPI off for a while, both ends' ledgers holding the link, and the
// second end joining after the link was made (its slot starts over).
func TestEmulatorLinkMatchesModel(t *testing.T) {
	hwlinktest.RequireBPF(t)
	for _, mode := range []Mode{ModeFastWake, ModeDeepSleep, ModeHybrid} {
		for _, rate := range []uint64{0, 1_000_000_000} {
			name := mode.String() + "/" + map[bool]string{true: "rate", false: "no-rate"}[rate > 0]
			t.Run(name, func(t *testing.T) { runLinkModel(t, mode, rate) })
		}
	}
}

func runLinkModel(t *testing.T, mode Mode, rate uint64) {
	const t0, hs = 1_000_000_000_000, 300
	q16 := observe.SpeedQ16(rate)
	cfg := [2]refEndCfg{{epoch: t0, mode: mode, pdt: 1000, hold: testTiming.hold},
		{epoch: t0 + 5, mode: mode, pdt: 2000, hold: testTiming.hold / 2}}
	p0 := newTestLinkEnd(t, nil, 0, testTiming, mode, cfg[0].pdt, q16, hs, cfg[0].epoch, t0)
	p1 := newTestLinkEnd(t, p0.lkMap, 1, testTiming, mode, cfg[1].pdt, q16, hs, cfg[1].epoch, t0)
	if err := p1.SetHold(time.Duration(cfg[1].hold)); err != nil {
		t.Fatal(err)
	}
	ports := [2]*Port{p0, p1}
	obs := [2]*Observer{newTestObserver(t, p0), newTestObserver(t, p1)}
	ref := newRefLink(testTiming, q16, hs, t0, 0, cfg[0], mode)
	rng := rand.New(rand.NewPCG(11, uint64(mode)<<8|uint64(rate>>20)))
	span := 2000 + 2*hs + testTiming.sleepDS + testTiming.wakeDS + testTiming.hold
	now, e := uint64(t0+5), 0
	for i := range 4000 {
		setLinkPhase(t, i, ports, &cfg, mode, now)
		if rng.IntN(3) == 0 { // else a burst on the same end
			e = rng.IntN(2)
		}
		now = max(now, linkGap(rng, ref, span))
		n, segs := 60+rng.IntN(1400), uint32(rng.IntN(3))
		end := ref.send(e, cfg[e], now, uint32(n), segs)
		_, out := runEmu(t, ports[e], now, n, segs, 0)
		if want := map[bool]uint64{true: end, false: 0}[end > now]; out != want {
			t.Fatalf("packet %d on end %d: tstamp %d, want %d (now %d)", i, e, out, want, now)
		}
	}
	checkLinkState(t, p0, ref)
	for e := range ports {
		checkEvents(t, obs[e], ref.end[e].events)
		if x := &ref.end[e]; x.hits == 0 || x.misses == 0 || x.ledHeld == 0 {
			t.Errorf("end %d: %d hits, %d misses, %d held: the sequence missed a branch", e, x.hits, x.misses, x.ledHeld)
		}
	}
	if mode == ModeHybrid && ref.deepens == 0 {
		t.Error("hybrid never reached Deep Sleep")
	}
	checkLinkStatus(t, ports, ref.busy+50_000)
}

// setLinkPhase changes the ends' registers at fixed packets: end 0's
// t_PDT, end 1's tx LPI off and on, and both ledgers on, then off.
func setLinkPhase(t *testing.T, i int, ports [2]*Port, cfg *[2]refEndCfg, mode Mode, now uint64) {
	t.Helper()
	switch i {
	case 1000:
		d := 3 * time.Microsecond
		if err := ports[0].SetEEE(eeectl.EEESet{TxLPITimer: &d}); err != nil {
			t.Fatal(err)
		}
		cfg[0].pdt = 3000
	case 1500, 1700:
		lpi := i == 1700
		if err := ports[1].SetEEE(eeectl.EEESet{TxLPIEnabled: &lpi}); err != nil {
			t.Fatal(err)
		}
		cfg[1].mode = map[bool]Mode{true: mode, false: ModeAlwaysOn}[lpi]
	case 2000, 3200:
		for e, p := range ports {
			l := Ledger{On: true, Rate: 0.02, Reserve: time.Duration(2500 + 3000*e), Start: time.Duration(now)}
			if i == 3200 { // off, the account kept
				l = cfg[e].led
				l.On = false
			}
			if err := p.SetLedger(l); err != nil {
				t.Fatal(err)
			}
			cfg[e].led = l
		}
	}
}

// checkLinkState compares the shared map with the model.
func checkLinkState(t *testing.T, p *Port, ref *refLink) {
	t.Helper()
	var lk bpf.EeeemuEmuLink
	if err := p.readLink(&lk); err != nil {
		t.Fatal(err)
	}
	if lk.TimeNs != ref.times || lk.BusyUntilNs != ref.busy || lk.ReadyAtNs != ref.ready || int(lk.Owner) != ref.owner ||
		lk.Wakeups != ref.wakeups || lk.Deepens != ref.deepens {
		t.Fatalf("link\n%+v\nwant\n%+v", lk, *ref)
	}
	var sum uint64
	for _, v := range lk.TimeNs {
		sum += v
	}
	if sum != lk.BusyUntilNs-lk.T0Ns {
		t.Errorf("link times sum to %d, want %d", sum, lk.BusyUntilNs-lk.T0Ns)
	}
	for e, x := range lk.End {
		r := &ref.end[e]
		got := [...]uint64{x.FreeAtNs, x.ArmedPdtNs, uint64(x.ArmedMode), x.Packets, x.Bytes, x.IdlePeriods, x.Hits, x.Misses,
			x.Wakeups, x.Deepens, x.Delayed, x.DelayNs, x.DelayMaxNs, x.LedgerSpentNs, x.LedgerHeld, x.LedgerOverruns}
		want := [...]uint64{r.freeAt, r.pdt, uint64(r.mode), r.packets, r.bytes, r.idle, r.hits, r.misses,
			r.wakeups, r.deepens, r.delayed, r.delayNs, r.delayMax, r.spent, r.ledHeld, r.overruns}
		if got != want {
			t.Errorf("end %d: %v, want %v", e, got, want)
		}
	}
}

// checkLinkStatus checks both ends' status at now: one set of state
// times (the link's) summing to the elapsed time, and the end's counters.
func checkLinkStatus(t *testing.T, ports [2]*Port, now uint64) {
	t.Helper()
	var s [2]Status
	for e, p := range ports {
		var err error
		if s[e], err = p.Status(time.Duration(now)); err != nil {
			t.Fatal(err)
		}
		x := s[e].Times
		if sum := x.Wake + x.GoingDown + x.FastWake + x.DeepSleep + x.GoingUp; sum != s[e].Elapsed {
			t.Errorf("end %d: state times sum to %v, elapsed %v", e, sum, s[e].Elapsed)
		}
		if s[e].LPI != PerLink.String() || s[e].Link == nil || s[e].Link.End != e || s[e].Link.Name != "test" {
			t.Errorf("end %d: lpi %s, link %+v", e, s[e].LPI, s[e].Link)
		}
	}
	if s[0].Times != s[1].Times || s[0].State != s[1].State || s[0].Transitions != s[1].Transitions {
		t.Errorf("the ends see two links: %+v %s, %+v %s", s[0].Times, s[0].State, s[1].Times, s[1].State)
	}
	if s[0].State == StateWake.String() {
		t.Errorf("50 µs after the last departure the link is %s, want it down", s[0].State)
	}
}

// BenchmarkEmulatorLinkPerPacket measures the link program per packet
// with BPF_PROG_TEST_RUN (ns/packet, gross), on its longest path: t_PDT 0,
// no handshake and a 1 ns t_w, so every packet on end 0 finds the link
// asleep, wakes it and gets a departure time. Events are drained between
// chunks as in BenchmarkEmulatorPerPacket; none may be lost.
func BenchmarkEmulatorLinkPerPacket(b *testing.B) {
	now := uint64(observe.MonotonicNow())
	p := newTestLinkEnd(b, nil, 0, emuTiming{wakeDS: 1}, ModeDeepSleep, 0, 0, 0, now, now)
	st := benchPackets(b, p)
	if st.Wakeups < st.Packets*9/10 || st.EventsLost != 0 {
		b.Fatalf("did not run the wake-up path, or lost events: %+v", st)
	}
}
