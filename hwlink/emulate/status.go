package emulate

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/lpictl/lpictl/bpf"
	"github.com/lpictl/lpictl/hwlink"
	"github.com/lpictl/lpictl/hwlink/observe"
)

// StateTimes holds one value per port power state.
type StateTimes[T any] struct {
	Wake      T `json:"wake"`
	GoingDown T `json:"going_down"`
	FastWake  T `json:"fast_wake"`
	DeepSleep T `json:"deep_sleep"`
	GoingUp   T `json:"going_up"`
}

func newStateTimes[T any](v [numEmulatedStates]T) StateTimes[T] {
	return StateTimes[T]{Wake: v[StateWake], GoingDown: v[StateGoingDown], FastWake: v[StateFastWake],
		DeepSleep: v[StateDeepSleep], GoingUp: v[StateGoingUp]}
}

// Timing is a low-power state of an emulated port as configured:
// times after the scale factor.
type Timing struct {
	Present bool          `json:"present"`
	PowerW  float64       `json:"power_w"`
	Wake    time.Duration `json:"wake_time_ns"`
	Sleep   time.Duration `json:"sleep_time_ns"`
}

// Status is what an emulated port has done since it was attached
// (`lpictl emulate status`). Times are in ns; the state times include the
// idle period in progress, accounted lazily up to Now by the program's
// own rule, so they sum to Elapsed.
type Status struct {
	Device      string `json:"device"`
	Ifindex     int    `json:"ifindex"`
	NetNSInode  uint64 `json:"netns_inode"`
	PinDir      string `json:"pin_dir"`
	AttachedVia string `json:"attached_via"`
	// Attached is false when the program's TCX link lost its interface
	// (the interface or its namespace went away); always true with clsact.
	Attached bool `json:"attached"`
	// Delay is how packets are held: edt (fq), spin or none.
	Delay       string `json:"delay"`
	FQAdded     bool   `json:"fq_added"`
	ClsactAdded bool   `json:"clsact_added"`
	Preset      string `json:"preset"`
	Mode        string `json:"mode"`
	Driver      string `json:"driver"`
	// EEE registers.
	EEEEnabled   bool          `json:"eee_enabled"`
	TxLPIEnabled bool          `json:"tx_lpi_enabled"`
	TxLPITimer   time.Duration `json:"tx_lpi_timer_ns"`
	// ArmedPDT is the t_PDT of the idle period in progress (the timer in
	// force when the last transmission ended).
	ArmedPDT time.Duration `json:"armed_pdt_ns"`
	// Sleeps: the port goes down at all (mode, EEE and tx LPI enabled).
	Sleeps     bool          `json:"sleeps"`
	RateBps    uint64        `json:"rate_bps"`
	Scale      float64       `json:"scale"`
	HybridHold time.Duration `json:"hybrid_hold_ns"`
	WakePowerW float64       `json:"wake_power_w"`
	FastWake   Timing        `json:"fast_wake"`
	DeepSleep  Timing        `json:"deep_sleep"`
	// AttachedAt and Now are CLOCK_MONOTONIC; Elapsed = the span the state
	// times cover: from AttachedAt to Now, or to the last departure the
	// program has scheduled if that is later.
	AttachedAt time.Duration `json:"attached_at_ns"`
	Now        time.Duration `json:"now_ns"`
	Elapsed    time.Duration `json:"elapsed_ns"`
	// LastDeparture is when the last transmission ends (CLOCK_MONOTONIC).
	LastDeparture time.Duration             `json:"last_departure_ns"`
	State         string                    `json:"state"`
	Times         StateTimes[time.Duration] `json:"time_ns"`
	Fractions     StateTimes[float64]       `json:"fraction"`
	Packets       uint64                    `json:"packets"`
	Bytes         uint64                    `json:"bytes"`
	IdlePeriods   uint64                    `json:"idle_periods"`
	Hits          uint64                    `json:"hits"`
	Misses        uint64                    `json:"misses"`
	// Transitions counts state changes (going down, going up, hybrid
	// Fast Wake → Deep Sleep); Wakeups the going-up ones.
	Transitions uint64 `json:"transitions"`
	Wakeups     uint64 `json:"wakeups"`
	// Delayed packets waited for the power state or behind other packets
	// (DelayTotal, DelayMax: that wait, serialisation excluded).
	Delayed    uint64        `json:"delayed_packets"`
	DelayTotal time.Duration `json:"delay_total_ns"`
	DelayMax   time.Duration `json:"delay_max_ns"`
	// SpinCapped counts waits cut to the spin limit (delay spin).
	SpinCapped uint64 `json:"spin_capped"`
	// EventsLost counts ended idle periods whose event found the events
	// ring buffer full (its reader, e.g. the agent, did not keep up).
	EventsLost uint64 `json:"events_lost"`
	// EnergyJ = Σ state time × that state's port power (docs/model.md §3.3);
	// AlwaysOnJ the same span at wake power; Saving = 1 − EnergyJ/AlwaysOnJ.
	EnergyJ   float64 `json:"energy_j"`
	AlwaysOnJ float64 `json:"energy_always_on_j"`
	Saving    float64 `json:"energy_saving"`
	// Ledger is the port's delay ledger (Ledger), its budget at
	// Now.
	Ledger LedgerStatus `json:"ledger"`
	// LPI is the port's symmetry (docs/model.md §1.2): per-direction, or
	// per-link with Link the link's shared state (null per direction).
	// Per link the state times, fractions, energy and transitions are the
	// link's, the same on both ends, from the link's creation; the
	// counters and the ledger are the end's own.
	LPI  string      `json:"lpi"`
	Link *LinkStatus `json:"link"`
}

// LinkStatus is the shared state of an emulated link (link mode).
type LinkStatus struct {
	Name string `json:"name"`
	// End is this port's end (0 or 1); PeerAttached says whether the
	// other end is attached.
	End          int  `json:"end"`
	PeerAttached bool `json:"peer_attached"`
	// Owner is the end that transmitted last: its timer runs.
	Owner     int           `json:"owner"`
	Handshake time.Duration `json:"handshake_ns"`
	// BusyUntil is the later end's last departure (the link idles from
	// there); ReadyAt the end of its last wake-up (CLOCK_MONOTONIC).
	BusyUntil time.Duration `json:"busy_until_ns"`
	ReadyAt   time.Duration `json:"ready_at_ns"`
	// Wakeups and Deepens are the link's (both ends' packets).
	Wakeups uint64 `json:"wakeups"`
	Deepens uint64 `json:"deepens"`
}

func (p *Port) timing() emuTiming {
	c := p.cfg
	return emuTiming{sleepFW: c.SleepFwNs, wakeFW: c.WakeFwNs, sleepDS: c.SleepDsNs, wakeDS: c.WakeDsNs, hold: c.HoldNs}
}

// readState reads the program's state under its spin lock (a consistent
// snapshot).
func (p *Port) readState(st *bpf.EeeemuEmuState) error {
	var lk bpf.EeeemuEmuLink
	return p.readView(st, &lk)
}

// readView reads the program's state and, in link mode, the link's (lk),
// and gives st the end's view of it (overlayLink).
func (p *Port) readView(st *bpf.EeeemuEmuState, lk *bpf.EeeemuEmuLink) error {
	if err := p.readOwnState(st); err != nil {
		return err
	}
	if p.LPI() != PerLink {
		return nil
	}
	if err := p.readLink(lk); err != nil {
		return err
	}
	p.overlayLink(st, lk)
	return nil
}

// readOwnState reads the program's own state map (per link, only its
// events_lost counts).
func (p *Port) readOwnState(st *bpf.EeeemuEmuState) error {
	if p.stMap == nil {
		return fmt.Errorf("%s: %w", p.ifname, os.ErrClosed)
	}
	if err := p.stMap.LookupWithFlags(uint32(0), st, ebpf.LookupLock); err != nil {
		return fmt.Errorf("%s: read emulator state: %w", p.ifname, hwlink.ClassifyBPFErr(err))
	}
	return nil
}

// Status reports the port's counters, state times and energy up to now
// (CLOCK_MONOTONIC, e.g. MonotonicNow()).
func (p *Port) Status(now time.Duration) (Status, error) {
	var st bpf.EeeemuEmuState
	var lk bpf.EeeemuEmuLink
	if err := p.readView(&st, &lk); err != nil {
		return Status{}, err
	}
	var lv tailView
	var ls *LinkStatus
	if p.LPI() == PerLink {
		lv, ls = p.linkState(&lk)
	}
	c := p.cfg
	r := p.regs()
	s := Status{
		Device: p.ifname, Ifindex: p.ifindex, NetNSInode: p.nsIno, PinDir: p.dir,
		AttachedVia: p.AttachedVia().String(), Attached: true,
		Delay: Delay(c.Delay).String(), FQAdded: c.Setup&emuAddedFQ != 0, ClsactAdded: c.Setup&emuAddedClsact != 0,
		Preset: cString(c.Preset[:]), Mode: Mode(c.Mode).String(), Driver: p.Driver(),
		EEEEnabled: r.eeeEnabled, TxLPIEnabled: r.txLPIEnabled, TxLPITimer: r.timer,
		ArmedPDT: time.Duration(st.ArmedPdtNs),
		Sleeps:   Mode(c.Mode) != ModeAlwaysOn && r.eeeEnabled && r.txLPIEnabled,
		RateBps:  c.RateBps, Scale: float64(c.ScaleMilli) / 1000, HybridHold: time.Duration(c.HoldNs),
		WakePowerW: float64(c.PowerWakeUw) / 1e6,
		FastWake: Timing{Present: c.WakeFwNs > 0, PowerW: float64(c.PowerFwUw) / 1e6,
			Wake: time.Duration(c.WakeFwNs), Sleep: time.Duration(c.SleepFwNs)},
		DeepSleep: Timing{Present: c.WakeDsNs > 0, PowerW: float64(c.PowerDsUw) / 1e6,
			Wake: time.Duration(c.WakeDsNs), Sleep: time.Duration(c.SleepDsNs)},
		AttachedAt: time.Duration(st.T0Ns), Now: now, LastDeparture: time.Duration(st.FreeAtNs),
		Packets: st.Packets, Bytes: st.Bytes, IdlePeriods: st.IdlePeriods, Hits: st.Hits, Misses: st.Misses,
		Wakeups: st.Wakeups, Delayed: st.Delayed,
		DelayTotal: time.Duration(st.DelayNs), DelayMax: time.Duration(st.DelayMaxNs), SpinCapped: st.SpinCapped,
		EventsLost: st.EventsLost, LPI: p.LPI().String(), Link: ls,
	}
	if s.AttachedVia == observe.AttachTCX.String() {
		s.Attached = p.linkAlive()
	}
	led, rate, reserve, start := p.ledgerConfig()
	s.Ledger = LedgerStatus{Ledger: led, Held: st.LedgerHeld, Overruns: st.LedgerOverruns}
	if st.LedgerStartNs == start { // else the program has not seen the new start yet: S is 0
		s.Ledger.Spent = time.Duration(min(st.LedgerSpentNs, math.MaxInt64))
	} else {
		s.Ledger.Held, s.Ledger.Overruns = 0, 0
	}
	if n := uint64(max(now, 0)); n > start && rate > 0 {
		s.Ledger.Budget = time.Duration(min(mulQ32(n-start, min(rate, q32One)), math.MaxInt64))
	}
	tv := lv
	if ls == nil {
		tv = p.dirTail(&st, led, rate, reserve, start)
	}
	times := st.TimeNs
	until := max(uint64(max(now, 0)), tv.freeAt)
	tail, cur, downs, deepens := emuTail(tv.t, tv.mode, tv.pdt, tv.freeAt, until)
	for i := range times {
		times[i] += tail[i]
	}
	s.State = cur.String()
	if until > tv.freeAt {
		// A packet that comes later pays; until then the tail's
		// transitions have happened.
		s.Transitions = downs + deepens
	}
	s.Transitions += tv.transitions
	s.Elapsed = time.Duration(until - st.T0Ns)
	s.addEnergy(times, until-st.T0Ns)
	return s, nil
}

// addEnergy sets the state times, their fractions and the energy from
// times, which cover span ns (= Elapsed).
func (s *Status) addEnergy(times [numEmulatedStates]uint64, span uint64) {
	var d [numEmulatedStates]time.Duration
	var f [numEmulatedStates]float64
	power := [numEmulatedStates]float64{s.WakePowerW, s.WakePowerW, s.FastWake.PowerW, s.DeepSleep.PowerW, s.WakePowerW}
	// Time at each distinct power is summed in integer ns first, so that a
	// port that never left full power has EnergyJ == AlwaysOnJ exactly
	// (saving 0, not a rounding residue of ±1e-16).
	var atWakeNs uint64
	for i, t := range times {
		d[i] = time.Duration(t)
		if s.Elapsed > 0 {
			f[i] = float64(t) / float64(s.Elapsed)
		}
		if power[i] == s.WakePowerW {
			atWakeNs += t
		} else {
			s.EnergyJ += float64(t) / 1e9 * power[i]
		}
	}
	s.EnergyJ += float64(atWakeNs) / 1e9 * s.WakePowerW
	s.Times, s.Fractions = newStateTimes(d), newStateTimes(f)
	s.AlwaysOnJ = float64(span) / 1e9 * s.WakePowerW
	if s.AlwaysOnJ > 0 {
		s.Saving = 1 - s.EnergyJ/s.AlwaysOnJ
	}
}

// tailView is what the idle period in progress follows from: the
// timing, the mode and t_PDT armed for it (raised by the ledger, plus the
// handshake per link), when it began, and the transitions before it.
type tailView struct {
	t           emuTiming
	mode        Mode
	pdt, freeAt uint64
	transitions uint64
}

// dirTail is the tail of a port per direction.
func (p *Port) dirTail(st *bpf.EeeemuEmuState, led Ledger, rate, reserve, start uint64) tailView {
	pdt := st.ArmedPdtNs
	if led.On && rate > 0 && Mode(st.ArmedMode) != ModeAlwaysOn && st.LedgerStartNs == start {
		// The idle period in progress goes down when the ledger lets it,
		// as the program will account it.
		if allow := ledgerAllow(st.LedgerSpentNs, reserve, min(rate, q32One), start); allow > st.FreeAtNs+pdt {
			pdt = allow - st.FreeAtNs
		}
	}
	// Each miss is a power-down and a wake-up.
	return tailView{t: p.timing(), mode: Mode(st.ArmedMode), pdt: pdt, freeAt: st.FreeAtNs,
		transitions: st.Misses + st.Wakeups + st.Deepens}
}

// linkAlive reports whether the pinned TCX link still has its interface.
func (p *Port) linkAlive() bool {
	l := p.lnk
	if l == nil {
		var err error
		if l, err = link.LoadPinnedLink(filepath.Join(p.dir, "link"), nil); err != nil {
			return !errors.Is(err, os.ErrNotExist)
		}
		defer l.Close()
	}
	info, err := l.Info()
	if err != nil {
		return true
	}
	if tcx := info.TCX(); tcx != nil {
		return tcx.Ifindex != 0
	}
	return true
}

// mulQ32 is floor(x × rate / 2^32) for rate ≤ 2^32, without overflow.
func mulQ32(x, rate uint64) uint64 {
	return (x>>32)*rate + ((x&(q32One-1))*rate)>>32
}
