package emulate

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/hwlinktest"
	"github.com/lpictl/lpictl/hwlink/observe"
)

// Presets of the veth tests: the Deep Sleep figures of eee-100base-tx and
// eee-1000base-t (configs/presets), scaled so that a wake-up (150 µs, 165 µs)
// stands well above the path's own jitter on veth (a few µs, tens under
// load) and below the 1 ms probe spacing.
var (
	testPreset100 = Preset{Name: "test-100", RateBps: 100e6, WakePowerW: 0.2,
		DeepSleep: &LowPower{PowerW: 0.02, Wake: 30 * time.Microsecond, Sleep: 100 * time.Microsecond}}
)

// probeTolerance bounds each probe's measured delay against the model's
// prediction. On veth a probe's path (sender's stack, hook, qdisc, veth,
// receiver's stack to its receive timestamp) varies by a few µs on an idle
// machine; fq's timer adds up to its slack (10 µs) and the softirq that
// runs it; under a loaded CI machine some probes are late by more, hence
// the quantile below.
const probeTolerance = 50 * time.Microsecond

// probeQuantile is the share of probes that must be within probeTolerance.
const probeQuantile = 0.9

// probeMedianTolerance bounds the median error (measured here, spin: within
// 3 µs).
const probeMedianTolerance = 20 * time.Microsecond

// probe is one UDP probe's times, on CLOCK_REALTIME in ns.
type probe struct {
	sent int64 // before the send call (A)
	oneW int64 // kernel receive timestamp at B (0: lost)
}

// rxSocket opens a UDP socket in ns at addr:port with kernel receive
// timestamps (SO_TIMESTAMPNS).
func rxSocket(t *testing.T, pair *hwlinktest.Pair, inA bool, port int) *net.UDPConn {
	t.Helper()
	ns, addr := pair.NSB, pair.AddrB
	if inA {
		ns, addr = pair.NSA, pair.AddrA
	}
	var c *net.UDPConn
	if err := hwlinktest.Do(ns, func() error {
		var err error
		c, err = net.ListenUDP("udp4", &net.UDPAddr{IP: addr.AsSlice(), Port: port})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
		if serr == nil {
			// Room for a burst while the reader is descheduled.
			serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 8<<20)
		}
	}); err != nil || serr != nil {
		t.Fatalf("socket options: %v %v", err, serr)
	}
	return c
}

// readStamped reads one datagram and its kernel receive time.
func readStamped(c *net.UDPConn, buf, oob []byte) (n int, from *net.UDPAddr, rx int64, err error) {
	n, oobn, _, from, err := c.ReadMsgUDP(buf, oob)
	if err != nil {
		return 0, nil, 0, err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil {
		return 0, nil, 0, err
	}
	for _, m := range msgs {
		if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SO_TIMESTAMPNS && len(m.Data) >= 16 {
			sec := int64(binary.NativeEndian.Uint64(m.Data[0:]))
			nsec := int64(binary.NativeEndian.Uint64(m.Data[8:]))
			return n, from, sec*1e9 + nsec, nil
		}
	}
	return 0, nil, 0, errors.New("no receive timestamp")
}

// sendProbes sends count probes from A to B, interval apart (paced against
// absolute deadlines like hwlinktest.SendUDP), each carrying its sequence
// number; B records its kernel receive time. Bounded: at most 2000 probes.
func sendProbes(t *testing.T, pair *hwlinktest.Pair, count int, interval time.Duration) []probe {
	t.Helper()
	if count <= 0 || count > 2000 || interval <= 0 {
		t.Fatalf("probes out of bounds: %d × %v", count, interval)
	}
	const port = 7009
	rxB := rxSocket(t, pair, false, port)
	defer rxB.Close()
	probes := make([]probe, count)
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf, oob := make([]byte, 2048), make([]byte, 256)
		for {
			n, _, rx, err := readStamped(rxB, buf, oob)
			if err != nil {
				return
			}
			if seq := binary.BigEndian.Uint32(buf); n >= 4 && int(seq) < count {
				mu.Lock()
				probes[seq].oneW = rx
				mu.Unlock()
			}
		}
	}()
	var tx *net.UDPConn
	if err := hwlinktest.Do(pair.NSA, func() error {
		var err error
		tx, err = net.DialUDP("udp4", &net.UDPAddr{IP: pair.AddrA.AsSlice()}, &net.UDPAddr{IP: pair.AddrB.AsSlice(), Port: port})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	payload := make([]byte, 64)
	pace(count, interval, func(i int) {
		binary.BigEndian.PutUint32(payload, uint32(i))
		before := time.Now().UnixNano()
		if _, err := tx.Write(payload); err != nil {
			t.Errorf("probe %d: %v", i, err)
		}
		if i == warmUp {
			return
		}
		mu.Lock()
		probes[i].sent = before
		mu.Unlock()
	})
	time.Sleep(20 * time.Millisecond)
	rxB.Close()
	<-done
	return probes
}

// warmUp is the sequence number of the datagram pace sends first: it takes
// a new socket's cold path (route, neighbour) that would otherwise delay
// the first probe by tens of µs. Receivers ignore it.
const warmUp = -1

// pace calls send(warmUp), waits 5 ms (longer than any t_s + t_w of the
// tests, so the ports are asleep again), then calls send(i) for i < count
// at least interval apart, sleeping: the sender must not occupy a CPU of
// a small machine, whose softirqs and receivers the measurement needs.
// Go's timers overshoot by tens of µs, so the spacing is interval or a
// little more, never less.
func pace(count int, interval time.Duration, send func(i int)) {
	time.Sleep(2 * time.Millisecond)
	send(warmUp)
	time.Sleep(5 * time.Millisecond)
	last := time.Now()
	for i := range count {
		if i > 0 {
			time.Sleep(time.Until(last.Add(interval)))
		}
		last = time.Now()
		send(i)
	}
}

// echoProbes sends probes like sendProbes; B echoes each at once to A's
// socket, so that each crosses two emulated hops when both ends are
// emulated. It returns the one-way delay of each hop: A→B (A's send call
// to B's kernel receive timestamp) and B→A (B's send call to A's).
func echoProbes(t *testing.T, pair *hwlinktest.Pair, count int, interval time.Duration) (ab, ba []time.Duration) {
	t.Helper()
	if count <= 0 || count > 2000 || interval <= 0 {
		t.Fatalf("probes out of bounds: %d × %v", count, interval)
	}
	const port = 7011
	rxB, tx := rxSocket(t, pair, false, port), rxSocket(t, pair, true, port)
	defer rxB.Close()
	defer tx.Close()
	dst := &net.UDPAddr{IP: pair.AddrB.AsSlice(), Port: port}
	sent := make([]int64, count)
	atB := make([]int64, count)
	var mu sync.Mutex
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // B: stamp the echo's send time into it and send it back
		defer wg.Done()
		buf, oob := make([]byte, 2048), make([]byte, 256)
		for {
			n, from, rx, err := readStamped(rxB, buf, oob)
			if err != nil {
				return
			}
			if seq := binary.BigEndian.Uint32(buf); n >= 12 && int(seq) < count {
				mu.Lock()
				atB[seq] = rx
				mu.Unlock()
			}
			binary.BigEndian.PutUint64(buf[4:], uint64(time.Now().UnixNano()))
			_, _ = rxB.WriteToUDP(buf[:n], from)
		}
	}()
	go func() { // A: the echo's kernel receive time
		defer wg.Done()
		buf, oob := make([]byte, 2048), make([]byte, 256)
		for {
			n, _, rx, err := readStamped(tx, buf, oob)
			if err != nil {
				return
			}
			if seq := binary.BigEndian.Uint32(buf); n >= 12 && int(seq) < count {
				mu.Lock()
				ba = append(ba, time.Duration(rx-int64(binary.BigEndian.Uint64(buf[4:]))))
				mu.Unlock()
			}
		}
	}()
	payload := make([]byte, 64)
	pace(count, interval, func(i int) {
		binary.BigEndian.PutUint32(payload, uint32(i))
		now := time.Now().UnixNano()
		if _, err := tx.WriteToUDP(payload, dst); err != nil {
			t.Errorf("probe %d: %v", i, err)
		}
		if i == warmUp {
			return
		}
		mu.Lock()
		sent[i] = now
		mu.Unlock()
	})
	time.Sleep(20 * time.Millisecond)
	rxB.Close()
	tx.Close()
	wg.Wait()
	for i := range count {
		if atB[i] != 0 {
			ab = append(ab, time.Duration(atB[i]-sent[i]))
		}
	}
	return ab, ba
}

func medianOf(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

// delayMethods returns the delay methods this kernel can run: edt needs
// fq (without it, an edt subtest is skipped with the reason, after checking
// that the refused attach left nothing behind).
func delayMethods(t *testing.T, pair *hwlinktest.Pair, bpffs string) []Delay {
	t.Helper()
	p, err := Attach(context.Background(), Config{Interface: pair.NameA, NetNS: hwlink.NetNS(pair.PathA),
		Preset: testPreset100, Mode: ModeAlwaysOn, BPFFS: bpffs})
	if err == nil {
		if err := p.Detach(); err != nil {
			t.Fatal(err)
		}
		p.Close()
		return []Delay{DelayEDT, DelaySpin}
	}
	if !errors.Is(err, hwlink.ErrNotSupported) || !strings.Contains(err.Error(), "CONFIG_NET_SCH_FQ") {
		t.Fatalf("attach with fq: %v", err)
	}
	assertNoEmulator(t, pair, bpffs)
	t.Run(DelayEDT.String(), func(t *testing.T) { t.Skipf("kernel lacks fq: %v", err) })
	return []Delay{DelaySpin}
}

// attachBoth emulates both ends of the pair with the same settings.
func attachBoth(t *testing.T, pair *hwlinktest.Pair, bpffs string, cfg Config) (a, b *Port) {
	t.Helper()
	cfg.BPFFS = bpffs
	cfg.Interface, cfg.NetNS = pair.NameA, hwlink.NetNS(pair.PathA)
	a, err := Attach(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Interface, cfg.NetNS = pair.NameB, hwlink.NetNS(pair.PathB)
	b, err = Attach(context.Background(), cfg)
	if err != nil {
		a.Detach()
		t.Fatal(err)
	}
	return a, b
}

func detachAll(t *testing.T, ports ...*Port) {
	t.Helper()
	for _, p := range ports {
		if err := p.Detach(); err != nil {
			t.Errorf("detach: %v", err)
		}
		p.Close()
	}
}

// checkStateSum checks that the state times sum to the elapsed time, and
// that this is the wall-clock time since attach (within the attach call).
func checkStateSum(t *testing.T, p *Port, attachedBefore time.Duration) Status {
	t.Helper()
	now := observe.MonotonicNow()
	s, err := p.Status(now)
	if err != nil {
		t.Fatal(err)
	}
	sum := s.Times.Wake + s.Times.GoingDown + s.Times.FastWake + s.Times.DeepSleep + s.Times.GoingUp
	if sum != s.Elapsed {
		t.Errorf("%s: state times sum to %v, elapsed %v", p.Interface(), sum, s.Elapsed)
	}
	if wall := now - attachedBefore; s.Elapsed > wall || s.Elapsed < wall-50*time.Millisecond {
		t.Errorf("%s: elapsed %v, wall clock since attach %v", p.Interface(), s.Elapsed, wall)
	}
	return s
}

// TestEmulatorProbes is the emulated port on real packets: a veth pair
// between two namespaces, probes at least 1 ms apart, for each delay
// method the kernel has (edt needs fq; spin runs everywhere). Delays are
// one way, from the send call to the receiver's kernel timestamp, per hop
// (A→B through A's emulated egress, B's echo B→A through B's), against
// the same path without emulator. It checks:
//   - always-on adds no delay and no wake-up;
//   - Deep Sleep at t_PDT 0 (t_w 150 µs, t_s 500 µs: each probe finds its
//     port asleep): every probe's delay grows by t_w on each hop;
//   - with t_PDT (5 ms) longer than the spacing nothing is delayed, and the
//     only misses are the idle periods that did reach t_PDT;
//   - when probes find the port going down (t_w 165 µs, t_s 1.82 ms: the
//     t_s remainder applies), the intervals between their arrivals against
//     refPort's intervals between departures;
//   - the state times sum to the time since attach.
func TestEmulatorProbes(t *testing.T) {
	hwlinktest.RequireBPF(t)
	pair := hwlinktest.NewPair(t)
	bpffs := tempBPFFS(t)
	const n = 150
	spacing := time.Millisecond

	ab, ba := echoProbes(t, pair, n, spacing)
	baseAB, baseBA := medianOf(ab), medianOf(ba)
	baseOne := medianOf(oneWay(sendProbes(t, pair, n, spacing)))
	t.Logf("baseline without emulator: one way %v (A→B echoed: %v, B→A: %v)", baseOne, baseAB, baseBA)

	for _, delay := range delayMethods(t, pair, bpffs) {
		t.Run(delay.String(), func(t *testing.T) {
			zero := time.Duration(0)
			t.Run("always-on", func(t *testing.T) {
				before := observe.MonotonicNow()
				a, b := attachBoth(t, pair, bpffs, Config{Preset: testPreset100, Mode: ModeAlwaysOn, Delay: delay})
				defer detachAll(t, a, b)
				ab, ba := echoProbes(t, pair, n, spacing)
				checkExtra(t, "A→B", ab, baseAB, 0)
				checkExtra(t, "B→A", ba, baseBA, 0)
				for _, p := range []*Port{a, b} {
					s := checkStateSum(t, p, before)
					if s.Wakeups != 0 || s.Delayed != 0 || s.Times.Wake != s.Elapsed || s.Packets < n {
						t.Errorf("%s: %d packets, %d wake-ups, %d delayed, wake %v of %v", p.Interface(), s.Packets, s.Wakeups, s.Delayed, s.Times.Wake, s.Elapsed)
					}
				}
			})
			t.Run("deep-sleep-pdt0", func(t *testing.T) {
				before := observe.MonotonicNow()
				a, b := attachBoth(t, pair, bpffs, Config{Preset: testPreset100, Mode: ModeDeepSleep, PDT: &zero, Scale: 5, Delay: delay})
				defer detachAll(t, a, b)
				tw := 150 * time.Microsecond
				ab, ba := echoProbes(t, pair, n, spacing)
				checkExtra(t, "A→B, t_w", ab, baseAB, tw)
				checkExtra(t, "B→A, t_w", ba, baseBA, tw)
				one := oneWay(sendProbes(t, pair, n, spacing))
				checkExtra(t, "one way, t_w", one, baseOne, tw)
				for _, p := range []*Port{a, b} {
					s := checkStateSum(t, p, before)
					// Every packet woke its port. A's are sent at least
					// 1 ms apart, so each found Deep Sleep and waited t_w
					// exactly; B's echoes leave when B's receiver runs, and
					// one that follows a late one closely finds B still
					// going down.
					exact := p == a
					if s.Wakeups != s.Packets || s.Hits != 0 || s.Delayed != s.Packets || s.Times.DeepSleep == 0 ||
						s.DelayTotal < tw*time.Duration(s.Packets) ||
						exact && (s.DelayMax != tw || s.DelayTotal != tw*time.Duration(s.Packets)) {
						t.Errorf("%s: %d packets, %d wake-ups, %d hits, %d delayed, wait total %v max %v",
							p.Interface(), s.Packets, s.Wakeups, s.Hits, s.Delayed, s.DelayTotal, s.DelayMax)
					}
					t.Logf("%s: %.1f %% of the time in Deep Sleep, energy %.4g J (always-on %.4g J, saving %.1f %%)",
						p.Interface(), 100*s.Fractions.DeepSleep, s.EnergyJ, s.AlwaysOnJ, 100*s.Saving)
				}
			})
			t.Run("pdt-longer-than-spacing", func(t *testing.T) {
				before := observe.MonotonicNow()
				pdt := 5 * time.Millisecond
				a, b := attachBoth(t, pair, bpffs, Config{Preset: testPreset100, Mode: ModeDeepSleep, PDT: &pdt, Scale: 5, Delay: delay})
				defer detachAll(t, a, b)
				ab, ba := echoProbes(t, pair, n, spacing)
				// The first probe and echo find their ports asleep (idle
				// since attach), the others awake.
				checkExtra(t, "A→B", ab[1:], baseAB, 0)
				checkExtra(t, "B→A", ba[1:], baseBA, 0)
				for _, p := range []*Port{a, b} {
					s := checkStateSum(t, p, before)
					if s.Misses < 1 || s.Hits < s.IdlePeriods-s.Misses || s.Misses > 3 {
						t.Errorf("%s: %d idle periods, %d hits, %d misses", p.Interface(), s.IdlePeriods, s.Hits, s.Misses)
					}
				}
			})
			t.Run("going-down", func(t *testing.T) {
				before := observe.MonotonicNow()
				p, err := Attach(context.Background(), Config{Interface: pair.NameA, NetNS: hwlink.NetNS(pair.PathA),
					Preset: testPreset1000, Mode: ModeDeepSleep, PDT: &zero, Scale: 10, Delay: delay, BPFFS: bpffs})
				if err != nil {
					t.Fatal(err)
				}
				defer detachAll(t, p)
				s0, err := p.Status(observe.MonotonicNow())
				if err != nil {
					t.Fatal(err)
				}
				// realtime − monotonic, to put the port's state on the probes' clock.
				off := time.Now().UnixNano() - int64(observe.MonotonicNow())
				probes := sendProbes(t, pair, n, spacing)
				tm := emuTiming{sleepDS: uint64(10 * testPreset1000.DeepSleep.Sleep), wakeDS: uint64(10 * testPreset1000.DeepSleep.Wake)}
				ref := newRefPort(tm, 0, uint64(int64(s0.LastDeparture)+off), 0, ModeDeepSleep)
				// Departures chain: a probe that finds the port going down
				// leaves t_s + t_w after the previous one, whenever it came.
				// So compare the intervals between arrivals at B with the
				// model's intervals between departures (the absolute
				// offset, the unmeasured time from the send call to the
				// hook, cancels out).
				var errs []time.Duration
				remainders := 0
				var prevRx, prevDep int64
				for _, pr := range probes {
					if pr.oneW == 0 {
						prevRx = 0
						continue
					}
					dep := int64(ref.send(uint64(pr.sent), 0, 106, 1, ModeDeepSleep, 0))
					if dep-pr.sent > int64(tm.wakeDS) {
						remainders++
					}
					if prevRx != 0 {
						errs = append(errs, time.Duration((pr.oneW-prevRx)-(dep-prevDep)))
					}
					prevRx, prevDep = pr.oneW, dep
				}
				checkErrors(t, "departure intervals against the model", errs)
				if remainders < n/4 {
					t.Errorf("only %d probes paid a t_s remainder", remainders)
				}
				s := checkStateSum(t, p, before)
				t.Logf("going down: %d probes paid a t_s remainder; port: %d idle periods, %d wake-ups, %d delayed, mean wait %v",
					remainders, s.IdlePeriods, s.Wakeups, s.Delayed, s.DelayTotal/time.Duration(max(s.Delayed, 1)))
			})
		})
	}
}

func oneWay(ps []probe) []time.Duration {
	var d []time.Duration
	for _, p := range ps {
		if p.oneW != 0 {
			d = append(d, time.Duration(p.oneW-p.sent))
		}
	}
	return d
}

// checkExtra checks that delays exceed the baseline by want: the median
// error within probeMedianTolerance and probeQuantile of them within
// probeTolerance.
func checkExtra(t *testing.T, what string, d []time.Duration, base, want time.Duration) {
	t.Helper()
	errs := make([]time.Duration, len(d))
	for i, v := range d {
		errs[i] = v - base - want
	}
	checkErrors(t, what, errs)
}

func checkErrors(t *testing.T, what string, errs []time.Duration) {
	t.Helper()
	if len(errs) < 100 {
		t.Fatalf("%s: only %d probes arrived", what, len(errs))
	}
	inside := 0
	abs := make([]time.Duration, len(errs))
	for i, e := range errs {
		abs[i] = max(e, -e)
		if abs[i] <= probeTolerance {
			inside++
		}
	}
	slices.Sort(abs)
	med := medianOf(errs)
	t.Logf("%s: %d probes, error median %v, |error| p50 %v p90 %v max %v, %d within ±%v",
		what, len(errs), med, abs[len(abs)/2], abs[len(abs)*9/10], abs[len(abs)-1], inside, probeTolerance)
	if max(med, -med) > probeMedianTolerance {
		t.Errorf("%s: median error %v beyond ±%v", what, med, probeMedianTolerance)
	}
	if float64(inside) < probeQuantile*float64(len(errs)) {
		t.Errorf("%s: %d/%d probes within ±%v, want %.0f %%", what, inside, len(errs), probeTolerance, 100*probeQuantile)
	}
}

// TestEmulatorOrderUnderLoad sends two flows of back-to-back 1000-byte
// datagrams from two goroutines (two CPUs on the port's lock at once)
// through an emulated port that serialises at 100 Mb/s and sleeps at
// t_PDT 0 (t_w 165 µs, t_s 1.82 ms), and checks that each flow arrives
// complete and in order, and that the port counted every packet.
func TestEmulatorOrderUnderLoad(t *testing.T) {
	hwlinktest.RequireBPF(t)
	pair := hwlinktest.NewPair(t)
	bpffs := tempBPFFS(t)
	const perFlow, size = 1000, 1000
	for _, delay := range delayMethods(t, pair, bpffs) {
		t.Run(delay.String(), func(t *testing.T) {
			before := observe.MonotonicNow()
			zero := time.Duration(0)
			p, err := Attach(context.Background(), Config{Interface: pair.NameA, NetNS: hwlink.NetNS(pair.PathA),
				Preset: testPreset1000, Mode: ModeDeepSleep, PDT: &zero, Scale: 10, Rate: 100_000_000, Delay: delay, BPFFS: bpffs})
			if err != nil {
				t.Fatal(err)
			}
			defer detachAll(t, p)
			const port = 7013
			rx := rxSocket(t, pair, false, port)
			defer rx.Close()
			type rec struct{ flow, seq uint32 }
			var got []rec
			done := make(chan struct{})
			go func() {
				defer close(done)
				buf, oob := make([]byte, 2048), make([]byte, 256)
				for {
					n, _, _, err := readStamped(rx, buf, oob)
					if err != nil {
						return
					}
					if n >= 8 {
						got = append(got, rec{binary.BigEndian.Uint32(buf), binary.BigEndian.Uint32(buf[4:])})
					}
				}
			}()
			start := time.Now()
			var wg sync.WaitGroup
			for flow := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var tx *net.UDPConn
					if err := hwlinktest.Do(pair.NSA, func() error {
						var err error
						tx, err = net.DialUDP("udp4", &net.UDPAddr{IP: pair.AddrA.AsSlice()}, &net.UDPAddr{IP: pair.AddrB.AsSlice(), Port: port})
						return err
					}); err != nil {
						t.Error(err)
						return
					}
					defer tx.Close()
					buf := make([]byte, size)
					binary.BigEndian.PutUint32(buf, uint32(flow))
					for i := range perFlow {
						binary.BigEndian.PutUint32(buf[4:], uint32(i))
						if _, err := tx.Write(buf); err != nil {
							t.Errorf("flow %d packet %d: %v", flow, i, err)
							return
						}
					}
				}()
			}
			wg.Wait()
			// 2000 × 1066 wire bytes at 100 Mb/s: 171 ms plus wake-ups.
			deadline := time.Now().Add(5 * time.Second)
			for {
				s, err := p.Status(observe.MonotonicNow())
				if err != nil {
					t.Fatal(err)
				}
				if s.LastDeparture < observe.MonotonicNow()-10*time.Millisecond || time.Now().After(deadline) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			took := time.Since(start)
			time.Sleep(20 * time.Millisecond)
			rx.Close()
			<-done
			next := [2]uint32{}
			for i, r := range got {
				if r.flow > 1 || r.seq != next[r.flow] {
					t.Fatalf("datagram %d: flow %d seq %d, want seq %d (reordered or lost)", i, r.flow, r.seq, next[min(r.flow, 1)])
				}
				next[r.flow]++
			}
			if next != [2]uint32{perFlow, perFlow} {
				t.Errorf("received %v of %d per flow", next, perFlow)
			}
			s := checkStateSum(t, p, before)
			if s.Packets != 2*perFlow || s.Bytes != 2*perFlow*(size+42) {
				t.Errorf("port counted %d packets, %d bytes", s.Packets, s.Bytes)
			}
			if min := 2 * perFlow * (size + 42 + 24) * 8 * time.Second / 100_000_000; took < min*9/10 {
				t.Errorf("%d datagrams in %v: faster than the emulated 100 Mb/s allows (%v)", 2*perFlow, took, min)
			}
			t.Logf("%d datagrams in order in %v; port: %d idle periods, %d wake-ups, %d delayed, %.1f %% awake",
				len(got), took.Round(time.Millisecond), s.IdlePeriods, s.Wakeups, s.Delayed, 100*s.Fractions.Wake)
		})
	}
}
