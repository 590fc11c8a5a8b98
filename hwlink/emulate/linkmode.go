package emulate

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"

	"github.com/lpictl/lpictl/bpf"
	"github.com/lpictl/lpictl/hwlink"
)

// emuLinkSubdir is the links' folder inside the bpffs (link mode,
// bpf/eeeemu.c "Link mode"): one directory per link name holding the
// shared lpi_link map (state) and one claim directory per attached end
// (end0, end1), made with mkdir so that two attaches never take one end.
const emuLinkSubdir = "lpictl/emulate-links"

// ErrLinkFull: both ends of the named link are attached already.
var ErrLinkFull = errors.New("link has both ends attached")

// linkDirOf is the directory of the link name in the bpffs that holds the
// port pin directory portDir (<bpffs>/lpictl/emulate/ns…-if…).
func linkDirOf(portDir, name string) string {
	bpffs := filepath.Dir(filepath.Dir(filepath.Dir(portDir)))
	return filepath.Join(bpffs, emuLinkSubdir, name)
}

// linkEnd is this port's place in its link: the link's directory, the end
// it claimed and the pinned link map it joins (nil: it creates the link).
type linkEnd struct {
	dir    string
	end    int
	shared *ebpf.Map
}

func endClaim(dir string, end int) string { return filepath.Join(dir, fmt.Sprintf("end%d", end)) }

// joinLink claims a free end of cfg.Link under bpffs and opens the link's
// map if the other end made it, refusing one whose preset, mode, scale,
// rate or handshake differ from pl's (bad input).
func joinLink(bpffs string, cfg Config, pl *emuPlan) (*linkEnd, error) {
	j := &linkEnd{dir: filepath.Join(bpffs, emuLinkSubdir, cfg.Link), end: -1}
	if err := os.MkdirAll(j.dir, 0o700); err != nil {
		return nil, fmt.Errorf("link %s: %w", cfg.Link, err)
	}
	for end := range 2 {
		err := os.Mkdir(endClaim(j.dir, end), 0o700)
		if err == nil {
			j.end = end
			break
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("link %s: claim end %d: %w", cfg.Link, end, err)
		}
	}
	if j.end < 0 {
		return nil, fmt.Errorf("link %s: %w (detach one of them first)", cfg.Link, ErrLinkFull)
	}
	m, err := ebpf.LoadPinnedMap(filepath.Join(j.dir, "state"), nil)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return j, nil
	case err != nil:
		err = fmt.Errorf("link %s: open its state: %w", cfg.Link, hwlink.ClassifyBPFErr(err))
	default:
		j.shared = m
		err = checkLinkPeer(m, cfg.Link, pl)
	}
	if err != nil {
		return nil, errors.Join(err, j.leave())
	}
	return j, nil
}

// checkLinkPeer compares the link's recorded configuration with pl's.
func checkLinkPeer(m *ebpf.Map, name string, pl *emuPlan) error {
	if vs := m.ValueSize(); uintptr(vs) != unsafe.Sizeof(bpf.EeeemuEmuLink{}) {
		return fmt.Errorf("link %s: state of %d bytes, this lpictl's %d (made by another version?)", name, vs, unsafe.Sizeof(bpf.EeeemuEmuLink{}))
	}
	var lk bpf.EeeemuEmuLink
	if err := m.LookupWithFlags(uint32(0), &lk, ebpf.LookupLock); err != nil {
		return fmt.Errorf("link %s: read its state: %w", name, hwlink.ClassifyBPFErr(err))
	}
	c := &pl.cfg
	var diff []string
	for _, f := range []struct {
		name      string
		have, own any
	}{
		{"layout version", lk.Version, c.Version}, {"preset", cString(lk.Preset[:]), cString(c.Preset[:])},
		{"mode", Mode(lk.Mode), Mode(c.Mode)}, {"scale ×1000", lk.ScaleMilli, c.ScaleMilli},
		{"rate (bit/s)", lk.RateBps, c.RateBps}, {"handshake", time.Duration(lk.HandshakeNs), time.Duration(c.HandshakeNs)},
		{"t_s, t_w (ns)", [4]uint64{lk.SleepFwNs, lk.WakeFwNs, lk.SleepDsNs, lk.WakeDsNs},
			[4]uint64{c.SleepFwNs, c.WakeFwNs, c.SleepDsNs, c.WakeDsNs}},
	} {
		if f.have != f.own {
			diff = append(diff, fmt.Sprintf("%s %v, this end %v", f.name, f.have, f.own))
		}
	}
	if len(diff) > 0 {
		return fmt.Errorf("link %s: the other end differs: %s (both ends of a link need one preset, mode, scale, rate and handshake)", name, strings.Join(diff, "; "))
	}
	return nil
}

// newLink writes a new link's state into m (the port's own lpi_link map,
// not yet attached): idle since now, owned by end, whose slot is armed
// with c's registers; the other slot waits for its end (epoch 0) and
// keeps the link free to sleep until then.
func newLink(m *ebpf.Map, c *bpf.EeeemuEmuConfig, end int, armedMode uint32, now uint64) error {
	lk := bpf.EeeemuEmuLink{Owner: uint32(end), T0Ns: now, BusyUntilNs: now, ReadyAtNs: now,
		HandshakeNs: c.HandshakeNs, ScaleMilli: c.ScaleMilli, RateBps: c.RateBps, SleepFwNs: c.SleepFwNs,
		WakeFwNs: c.WakeFwNs, SleepDsNs: c.SleepDsNs, WakeDsNs: c.WakeDsNs, Mode: c.Mode, Version: c.Version}
	lk.Preset = c.Preset
	lk.End[end] = bpf.EeeemuEmuEnd{EpochNs: c.AttachedNs, FreeAtNs: now, ArmedPdtNs: c.PdtNs, ArmedMode: armedMode,
		HoldNs: c.HoldNs, LedgerStartNs: c.LedgerStartNs}
	lk.End[1-end] = bpf.EeeemuEmuEnd{ArmedMode: c.Mode}
	return m.Update(uint32(0), &lk, ebpf.UpdateAny)
}

// pinLink makes the link known to the other end: a new link's map is
// pinned as its state (a concurrent creator of the same link loses here).
func (j *linkEnd) pinLink(own *ebpf.Map) error {
	if j.shared != nil {
		return nil
	}
	if err := own.Pin(filepath.Join(j.dir, "state")); err != nil {
		return fmt.Errorf("pin link state: %w", err)
	}
	return nil
}

// leave releases the end's claim; the last end removes the link's state
// and folders.
func (j *linkEnd) leave() error {
	var errs []error
	if j.shared != nil {
		errs = append(errs, j.shared.Close())
		j.shared = nil
	}
	if j.end >= 0 {
		if err := os.Remove(endClaim(j.dir, j.end)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
		j.end = -1
	}
	if _, err := os.Stat(endClaim(j.dir, 0)); err == nil {
		return errors.Join(errs...)
	}
	if _, err := os.Stat(endClaim(j.dir, 1)); err == nil {
		return errors.Join(errs...)
	}
	if err := os.Remove(filepath.Join(j.dir, "state")); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	dir := j.dir
	for range 3 { // the link's folder, emulate-links, lpictl: when empty
		if os.Remove(dir) != nil {
			break
		}
		dir = filepath.Dir(dir)
	}
	return errors.Join(errs...)
}

// readLink reads the link's state under its lock.
func (p *Port) readLink(lk *bpf.EeeemuEmuLink) error {
	if p.lkMap == nil {
		return fmt.Errorf("%s: link %s: no link state (closed, or its pin under %s was removed: detach the port and attach it again)",
			p.ifname, p.LinkName(), emuLinkSubdir)
	}
	if err := p.lkMap.LookupWithFlags(uint32(0), lk, ebpf.LookupLock); err != nil {
		return fmt.Errorf("%s: read link state: %w", p.ifname, hwlink.ClassifyBPFErr(err))
	}
	return nil
}

// LPI is the port's symmetry.
func (p *Port) LPI() LPI { return LPI(p.cfg.Lpi) }

// LinkName is the name of the link the port is an end of ("" per
// direction).
func (p *Port) LinkName() string { return cString(p.cfg.Link[:]) }

// openLink opens the pinned state of the port's link (link mode).
func (p *Port) openLink() error {
	if p.LPI() != PerLink {
		return nil
	}
	dir := linkDirOf(p.dir, p.LinkName())
	p.link = &linkEnd{dir: dir, end: int(p.cfg.LinkEnd)}
	m, err := ebpf.LoadPinnedMap(filepath.Join(dir, "state"), nil)
	if errors.Is(err, os.ErrNotExist) {
		// Its state was removed by hand: the port can still be detached;
		// its status says what is missing (readLink).
		return nil
	}
	if err != nil {
		return fmt.Errorf("open link %s: %w", p.LinkName(), hwlink.ClassifyBPFErr(err))
	}
	p.lkMap = m
	return nil
}

// overlayLink gives st the end's view of its link (link mode): the end's
// counters and ledger from its slot (as its next packet will find it), the
// link's state times from the link's creation. lk's slot is updated to
// that view too.
func (p *Port) overlayLink(st *bpf.EeeemuEmuState, lk *bpf.EeeemuEmuLink) {
	e := int(p.cfg.LinkEnd & 1)
	me := p.ownSlot(lk.End[e])
	lk.End[e] = me
	*st = bpf.EeeemuEmuState{ArmedMode: me.ArmedMode, ArmedPdtNs: me.ArmedPdtNs, T0Ns: lk.T0Ns, FreeAtNs: me.FreeAtNs,
		TimeNs: lk.TimeNs, Packets: me.Packets, Bytes: me.Bytes, IdlePeriods: me.IdlePeriods, Hits: me.Hits,
		Misses: me.Misses, Wakeups: me.Wakeups, Deepens: me.Deepens, Delayed: me.Delayed, DelayNs: me.DelayNs,
		DelayMaxNs: me.DelayMaxNs, TstampKept: me.TstampKept, SpinCapped: me.SpinCapped, EventsLost: st.EventsLost,
		LedgerStartNs: me.LedgerStartNs, LedgerSpentNs: me.LedgerSpentNs, LedgerHeld: me.LedgerHeld,
		LedgerOverruns: me.LedgerOverruns}
}

// linkState is the link's status and the tail of its idle period in
// progress by the program's rule (the owner's t_PDT from the later
// departure, raised by either end's ledger, then 2H); lk as overlayLink
// left it.
func (p *Port) linkState(lk *bpf.EeeemuEmuLink) (tailView, *LinkStatus) {
	e := int(p.cfg.LinkEnd & 1)
	ls := &LinkStatus{Name: p.LinkName(), End: e, Owner: int(lk.Owner & 1), Handshake: time.Duration(lk.HandshakeNs),
		BusyUntil: time.Duration(lk.BusyUntilNs), ReadyAt: time.Duration(lk.ReadyAtNs), Wakeups: lk.Wakeups, Deepens: lk.Deepens}
	if p.link != nil {
		_, err := os.Stat(endClaim(p.link.dir, 1-e))
		ls.PeerAttached = err == nil
	}
	tv := tailView{t: p.timing(), freeAt: lk.BusyUntilNs, transitions: 2*lk.Wakeups + lk.Deepens}
	tv.mode, tv.pdt, tv.t.hold = linkExpiry(lk, p.cfg.HandshakeNs)
	return tv, ls
}

// ownSlot is the end's slot as its next packet will find it: a slot of
// another epoch starts over (end_enter), and the ledger is the end's
// configuration now.
func (p *Port) ownSlot(me bpf.EeeemuEmuEnd) bpf.EeeemuEmuEnd {
	led, rate, reserve, start := p.ledgerConfig()
	if me.EpochNs != p.cfg.AttachedNs {
		me = bpf.EeeemuEmuEnd{EpochNs: p.cfg.AttachedNs, FreeAtNs: p.cfg.AttachedNs, ArmedPdtNs: p.cfg.PdtNs,
			ArmedMode: p.cfg.Mode, LedgerStartNs: start}
		if p.regs().flags() != emuFlagEEE|emuFlagTxLPI {
			me.ArmedMode = uint32(ModeAlwaysOn)
		}
	}
	if me.LedgerStartNs != start {
		me.LedgerStartNs, me.LedgerSpentNs, me.LedgerHeld, me.LedgerOverruns = start, 0, 0, 0
	}
	me.HoldNs = uint64(p.Hold())
	me.Ledger = 0
	if led.On && rate > 0 {
		me.Ledger = 1
	}
	me.LedgerRateQ32, me.LedgerReserveNs = min(rate, q32One), reserve
	return me
}

// linkExpiry is the link's idle period in progress as emuTail takes it:
// the mode (always-on if either end's is), the time from the link's idle
// start to going down (the owner's t_PDT, raised by either end's ledger,
// plus the handshake's round trip) and the owner's hybrid hold.
func linkExpiry(lk *bpf.EeeemuEmuLink, hs uint64) (Mode, uint64, uint64) {
	own := &lk.End[lk.Owner&1]
	mode := Mode(own.ArmedMode)
	if lk.End[0].ArmedMode == uint32(ModeAlwaysOn) || lk.End[1].ArmedMode == uint32(ModeAlwaysOn) {
		mode = ModeAlwaysOn
	}
	t := satAdd(lk.BusyUntilNs, own.ArmedPdtNs)
	for _, x := range &lk.End {
		if x.Ledger != 0 && x.LedgerRateQ32 > 0 {
			t = max(t, ledgerAllow(x.LedgerSpentNs, x.LedgerReserveNs, x.LedgerRateQ32, x.LedgerStartNs))
		}
	}
	return mode, satAdd(t-lk.BusyUntilNs, 2*hs), own.HoldNs
}

func satAdd(a, b uint64) uint64 {
	if a+b < a {
		return math.MaxUint64
	}
	return a + b
}
