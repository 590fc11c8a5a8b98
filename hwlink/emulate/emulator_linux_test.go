package emulate

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/lpictl/lpictl/bpf"
	"github.com/lpictl/lpictl/hwlink/eeectl"
	"github.com/lpictl/lpictl/hwlink/hwlinktest"
	"github.com/lpictl/lpictl/hwlink/observe"
)

// __sk_buff offsets used through BPF_PROG_TEST_RUN's context.
const (
	skbCtxSize    = 192
	skbOffTstamp  = 152
	skbOffGsoSegs = 164
)

// testTiming: distinct transition times (ns) so that a wrong branch shows.
var testTiming = emuTiming{sleepFW: 200, wakeFW: 375, sleepDS: 2000, wakeDS: 4480, hold: 10_000}

// ipv4Frame is an Ethernet + IPv4 frame of n bytes (bpf_skb_set_tstamp
// takes IP packets only).
func ipv4Frame(n int) []byte {
	b := make([]byte, max(n, 34))
	binary.BigEndian.PutUint16(b[12:], 0x0800)
	b[14] = 0x45
	binary.BigEndian.PutUint16(b[16:], uint16(len(b)-14))
	b[22] = 64 // TTL
	b[23] = 17 // UDP
	return b
}

// newTestEmulator loads the program for BPF_PROG_TEST_RUN with the given
// timing, mode and t_PDT, its state starting idle at t0.
func newTestEmulator(tb testing.TB, tm emuTiming, mode Mode, pdt, q16, t0 uint64) *Port {
	tb.Helper()
	hwlinktest.RequireBPF(tb)
	objs, err := Load()
	if err != nil {
		tb.Fatal(err)
	}
	p, err := newTestEmulatedPort(objs)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { p.Close() })
	if p.drv, err = emulatedDriver("st_gmac"); err != nil {
		tb.Fatal(err)
	}
	flags := uint32(emuFlagEEE | emuFlagTxLPI)
	if mode == ModeAlwaysOn {
		flags = 0
	}
	*p.cfg = bpf.EeeemuEmuConfig{PdtNs: pdt, SleepFwNs: tm.sleepFW, WakeFwNs: tm.wakeFW, SleepDsNs: tm.sleepDS,
		WakeDsNs: tm.wakeDS, HoldNs: tm.hold, NsPerByteQ16: q16, Mode: uint32(mode), Flags: flags, Version: emuLayoutVersion}
	setCString(p.cfg.Driver[:], "st_gmac")
	st := bpf.EeeemuEmuState{T0Ns: t0, FreeAtNs: t0, ArmedPdtNs: pdt, ArmedMode: uint32(mode)}
	if err := p.stMap.Update(uint32(0), &st, ebpf.UpdateAny); err != nil {
		tb.Fatal(err)
	}
	return p
}

// runEmu runs the program once at clock now on an n-byte IPv4 frame whose
// skb->tstamp is in (realtime type), and returns the verdict and tstamp.
func runEmu(tb testing.TB, p *Port, now uint64, n int, segs uint32, in uint64) (uint32, uint64) {
	tb.Helper()
	p.setClock(now)
	ctxIn := make([]byte, skbCtxSize)
	binary.NativeEndian.PutUint64(ctxIn[skbOffTstamp:], in)
	binary.NativeEndian.PutUint32(ctxIn[skbOffGsoSegs:], segs)
	ctxOut := make([]byte, skbCtxSize)
	ret, err := p.prog.Run(&ebpf.RunOptions{Data: ipv4Frame(n), Context: ctxIn, ContextOut: ctxOut})
	if err != nil {
		tb.Fatalf("BPF_PROG_TEST_RUN: %v", err)
	}
	return ret, binary.NativeEndian.Uint64(ctxOut[skbOffTstamp:])
}

// TestEmulatorMatchesModel drives the program through BPF_PROG_TEST_RUN
// with a controlled clock and checks every packet's departure time and the
// final state times and counters against refPort, in every mode, with and
// without serialisation, across t_PDT and tx LPI changes made through
// SetEEE (the memory-mapped configuration) and on idle periods placed on
// the boundaries (back to back, exactly t_PDT, exactly t_PDT + t_s, the
// hybrid hold).
func TestEmulatorMatchesModel(t *testing.T) {
	hwlinktest.RequireBPF(t)
	for _, mode := range []Mode{ModeAlwaysOn, ModeFastWake, ModeDeepSleep, ModeHybrid} {
		for _, rate := range []uint64{0, 1_000_000_000} {
			t.Run(mode.String()+"/"+map[bool]string{true: "rate", false: "no-rate"}[rate > 0], func(t *testing.T) {
				const t0 = 1_000_000_000_000
				pdt := uint64(1000)
				q16 := observe.SpeedQ16(rate)
				p := newTestEmulator(t, testTiming, mode, pdt, q16, t0)
				obs := newTestObserver(t, p)
				ref := newRefPort(testTiming, q16, t0, pdt, mode)
				rng := rand.New(rand.NewPCG(7, uint64(mode)))
				now := uint64(t0)
				lpi := true
				ts, tw := testTiming.sleepFW, testTiming.wakeFW
				if mode == ModeDeepSleep {
					ts, tw = testTiming.sleepDS, testTiming.wakeDS
				}
				span := pdt + ts + tw + testTiming.hold
				for i := range 3000 {
					switch i {
					case 1000:
						d := 3 * time.Microsecond
						if err := p.SetEEE(eeectl.EEESet{TxLPITimer: &d}); err != nil {
							t.Fatal(err)
						}
						pdt = 3000
						span += 2000
					case 1500, 1700:
						lpi = !lpi
						if err := p.SetEEE(eeectl.EEESet{TxLPIEnabled: &lpi}); err != nil {
							t.Fatal(err)
						}
					}
					var gap uint64
					switch rng.IntN(8) {
					case 0:
						gap = 0 // back to back with the last departure
					case 1:
						gap = pdt // exactly t_PDT: a miss
					case 2:
						gap = pdt + ts // going down just ended
					case 3:
						gap = pdt + testTiming.sleepFW + testTiming.hold // hybrid step
					default:
						gap = rng.Uint64N(3 * span)
					}
					next := ref.freeAt + gap
					if rng.IntN(10) == 0 {
						next = ref.freeAt - rng.Uint64N(2000) // arrives while busy
					}
					now = max(now, next)
					n := 60 + rng.IntN(1400)
					segs := uint32(rng.IntN(3))
					in := uint64(0)
					if rng.IntN(5) == 0 {
						in = uint64(time.Now().UnixNano()) // a realtime stamp: not a departure time
					}
					eff := mode
					if !lpi {
						eff = ModeAlwaysOn
					}
					end := ref.send(now, 0, uint32(n), segs, eff, pdt)
					ret, out := runEmu(t, p, now, n, segs, in)
					if ret != 0xFFFFFFFF {
						t.Fatalf("packet %d: verdict %#x, want -1", i, ret)
					}
					want := in
					if end > now {
						want = end
					}
					if out != want {
						t.Fatalf("packet %d (gap %d): tstamp %d, want %d (departure %d, now %d)", i, gap, out, want, end, now)
					}
				}
				var st bpf.EeeemuEmuState
				if err := p.readState(&st); err != nil {
					t.Fatal(err)
				}
				if st.TimeNs != ref.times || st.FreeAtNs != ref.freeAt || st.Packets != ref.packets || st.Bytes != ref.bytes ||
					st.IdlePeriods != ref.idle || st.Hits != ref.hits || st.Misses != ref.misses ||
					st.Wakeups != ref.wakeups || st.Deepens != ref.deepens || st.Delayed != ref.delayed ||
					st.DelayNs != ref.delayNs || st.DelayMaxNs != ref.delayMax {
					t.Fatalf("state\n%+v\nwant\n%+v", st, *ref)
				}
				var sum uint64
				for _, v := range st.TimeNs {
					sum += v
				}
				if sum != st.FreeAtNs-t0 {
					t.Errorf("state times sum to %d, want %d", sum, st.FreeAtNs-t0)
				}
				if mode != ModeAlwaysOn && (st.Misses == 0 || st.Hits == 0) {
					t.Errorf("hits %d, misses %d: the sequence missed a branch", st.Hits, st.Misses)
				}
				if mode == ModeHybrid && st.Deepens == 0 {
					t.Error("hybrid never reached Deep Sleep")
				}
				// Every ended idle period was exported, in order, as the
				// model saw it.
				checkEvents(t, obs, ref.events)
				// Status accounts the idle period in progress up to now.
				later := time.Duration(st.FreeAtNs + pdt + 50_000)
				s, err := p.Status(later)
				if err != nil {
					t.Fatal(err)
				}
				total := s.Times.Wake + s.Times.GoingDown + s.Times.FastWake + s.Times.DeepSleep + s.Times.GoingUp
				if total != s.Elapsed || s.Elapsed != later-t0 {
					t.Errorf("status: times sum %v, elapsed %v, want %v", total, s.Elapsed, later-t0)
				}
			})
		}
	}
}

// newTestObserver opens an observer on a test port's maps.
func newTestObserver(tb testing.TB, p *Port) *Observer {
	tb.Helper()
	var maps [3]*ebpf.Map
	for i, m := range []*ebpf.Map{p.cfgMap, p.stMap, p.evMap} {
		c, err := m.Clone()
		if err != nil {
			tb.Fatal(err)
		}
		maps[i] = c
	}
	shared, err := newEmulatedPort(maps[0], maps[1], maps[2])
	if err != nil {
		tb.Fatal(err)
	}
	shared.ifname = p.ifname
	if p.lkMap != nil {
		if shared.lkMap, err = p.lkMap.Clone(); err != nil {
			tb.Fatal(err)
		}
	}
	o, err := newEmulatedObserver(shared)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { o.Close() })
	return o
}

// checkEvents drains obs and compares its samples with want, one by one.
func checkEvents(t *testing.T, obs *Observer, want []Event) {
	t.Helper()
	var got []observe.GapSample
	buf := make([]observe.GapSample, 100)
	for {
		n, err := obs.DrainGaps(buf)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, buf[:n]...)
		if n < len(buf) {
			break
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d idle periods exported, model %d", len(got), len(want))
	}
	for i, w := range want {
		if g := got[i]; g != w.GapSample() {
			t.Fatalf("idle period %d: exported %+v, model %+v", i+1, g, w.GapSample())
		}
	}
	var st observe.GapStats
	if err := obs.ReadStats(observe.Egress, &st); err != nil {
		t.Fatal(err)
	}
	if st.Gaps != uint64(len(want)) || st.Samples != uint64(len(want)) || st.SamplesLost != 0 || obs.Lost() != 0 {
		t.Errorf("observer stats %+v, lost %d; want %d periods, none lost", st, obs.Lost(), len(want))
	}
}

// TestEmulatorWaits checks the waits of docs/model.md §1.1 one by one at scale 1
// with the 400 G preset's Deep Sleep figures: low power t_w, going down
// the t_s remainder + t_w, queued packets behind the wake-up, a hit, and
// t_PDT = 0.
func TestEmulatorWaits(t *testing.T) {
	tm := emuTiming{sleepDS: 2000, wakeDS: 4480}
	const t0 = 1_000_000
	p := newTestEmulator(t, tm, ModeDeepSleep, 10_000, 0, t0)
	type step struct {
		at   uint64 // clock
		want uint64 // departure (tstamp), 0 = none
		what string
	}
	for _, s := range []step{
		{t0 + 5_000, 0, "idle 5 µs < t_PDT 10 µs: a hit, no delay"},
		{t0 + 5_000 + 10_000 + 500, t0 + 5_000 + 10_000 + 2_000 + 4_480, "arrives 0.5 µs into going down: t_s remainder + t_w"},
		{t0 + 5_000 + 10_000 + 600, t0 + 5_000 + 10_000 + 2_000 + 4_480, "queued behind the waking port: same departure"},
		{t0 + 100_000, t0 + 100_000 + 4_480, "finds Deep Sleep: t_w"},
		{t0 + 100_000 + 4_480, 0, "back to back with the last departure: no idle period, no delay"},
	} {
		_, out := runEmu(t, p, s.at, 100, 0, 0)
		if out != s.want {
			t.Errorf("%s: departure %d, want %d", s.what, out, s.want)
		}
	}
	var st bpf.EeeemuEmuState
	if err := p.readState(&st); err != nil {
		t.Fatal(err)
	}
	if st.IdlePeriods != 3 || st.Hits != 1 || st.Misses != 2 || st.Wakeups != 2 || st.Delayed != 3 || st.Packets != 5 {
		t.Errorf("counters %+v", st)
	}
	// t_PDT 0: every idle period, however short, is a miss.
	zero := time.Duration(0)
	if err := p.SetEEE(eeectl.EEESet{TxLPITimer: &zero}); err != nil {
		t.Fatal(err)
	}
	base := uint64(t0 + 200_000)
	runEmu(t, p, base, 100, 0, 0) // arms t_PDT 0 for the next idle period
	if _, out := runEmu(t, p, base+4_480+1, 100, 0, 0); out != base+4_480+2_000+4_480 {
		t.Errorf("t_PDT 0, 1 ns after the departure: departure %d, want %d", out, base+4_480+2_000+4_480)
	}
}

// testPreset1000 has the eee-1000base-t figures (t_w 16.5 µs, t_s 182 µs).
var testPreset1000 = Preset{Name: "test-1000", RateBps: 1e9, WakePowerW: 0.5,
	DeepSleep: &LowPower{PowerW: 0.05, Wake: 16500 * time.Nanosecond, Sleep: 182 * time.Microsecond}}

// tempBPFFS mounts a private bpffs for the test's pins.
func tempBPFFS(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := unix.Mount("bpf", dir, "bpf", 0, "mode=0700"); err != nil {
		t.Skipf("needs BPF: cannot mount a bpffs: %v", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(dir, 0) })
	return dir
}

// fixedBackend answers every interface with one fixed state.
type fixedBackend struct{}

func (fixedBackend) GetEEE(context.Context, string) (eeectl.EEEState, error) {
	return eeectl.EEEState{Enabled: true, Source: "fixed"}, nil
}
func (fixedBackend) SetEEE(context.Context, string, eeectl.EEESet) error { return nil }
func (fixedBackend) DriverName(context.Context, string) (string, error)  { return "fixed", nil }
