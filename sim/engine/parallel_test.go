package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// parModel is a model for the parallel engine's tests, built to catch any
// difference from the sequential order. Objects belong to groups; an
// object's events follow up on objects of its own group at a delay of 0,
// 1 or 7 ps, on objects of other groups at least the lookahead later, and
// on the driver, a late object, with no delay. An object may share a link
// with an object of another group: both ends' events read and rewrite the
// link's value with no delay, and what they read steers their follow-ups,
// so that one access out of order changes the rest of the run. The driver
// answers with events for the objects, a late lookahead (one to four
// lookaheads: the late events then run during the next window) later,
// and timers.
type parModel struct {
	groups   []int32 // object → group
	link     []int32 // object → its link (−1: none)
	ends     [][2]int32
	initial  []Event // At, Kind, Obj, Arg of the set-up's events
	depth    int32
	look     int64
	lateLook int64 // the driver's delay to an object: the lookahead, or up to 4 times it
	objects  int32
	withLate bool
}

// parState is the model's state, shared by the partitions' handlers: each
// object's counter, each link's value, the driver's counter.
type parState struct {
	obj    []uint64
	link   []uint64
	driver uint64
}

// parRecord is what an event did: what it saw and when it ran.
type parRecord struct {
	at        int64
	kind      uint8
	obj, arg  int32
	sawObj    uint64
	sawLink   uint64
	sawDriver uint64
}

// parHandler runs the model's events on one engine (a partition's, the
// late engine or the sequential one) and logs them.
type parHandler struct {
	m   *parModel
	st  *parState
	e   *Engine
	log []parEntry
}

type parEntry struct {
	seq uint64
	rec parRecord
}

const (
	kindLocal  uint8 = 1
	kindRemote uint8 = 2
	kindDriver uint8 = 3
)

func mix(x uint64) uint64 {
	x ^= x >> 31
	x *= 0x9e3779b97f4a7c15
	x ^= x >> 29
	return x
}

func (h *parHandler) Handle(ev Event) {
	m, st := h.m, h.st
	rec := parRecord{at: ev.At, kind: ev.Kind, obj: ev.Obj, arg: ev.Arg}
	var x uint64
	if ev.Kind == kindDriver {
		st.driver = mix(st.driver ^ ev.Seq)
		rec.sawDriver = st.driver
		x = st.driver
	} else {
		o := ev.Obj
		st.obj[o] = mix(st.obj[o] ^ ev.Seq)
		rec.sawObj = st.obj[o]
		x = st.obj[o]
		if l := m.link[o]; l >= 0 && ev.Seq%3 != 0 {
			// Most of its events touch the link (Sync first), not all.
			h.e.Sync()
			rec.sawLink = st.link[l]
			st.link[l] = mix(st.link[l] ^ uint64(o)<<32 ^ ev.Seq)
			x ^= rec.sawLink
		}
	}
	h.log = append(h.log, parEntry{ev.Seq, rec})
	if ev.Arg >= m.depth {
		return
	}
	x = mix(x)
	if ev.Kind == kindDriver {
		// A message for an object, a lookahead or more later, and a
		// timer for itself.
		h.e.Schedule(ev.At+m.lateLook+int64(x%5), kindRemote, int32(x>>8%uint64(m.objects)), ev.Arg+1)
		if x>>16&3 == 0 {
			h.e.Schedule(ev.At+int64(x>>20%2)*3, kindDriver, 0, ev.Arg+1)
		}
		return
	}
	o := ev.Obj
	// In its group, at 0, 1 or 7 ps.
	var same []int32
	for p, g := range m.groups {
		if g == m.groups[o] {
			same = append(same, int32(p))
		}
	}
	h.e.Schedule(ev.At+[]int64{0, 1, 7}[x%3], kindLocal, same[x>>4%uint64(len(same))], ev.Arg+1)
	if x>>12&1 == 0 {
		h.e.Schedule(ev.At+m.look+int64(x>>16%3), kindRemote, int32(x>>20%uint64(m.objects)), ev.Arg+1)
	}
	if m.withLate && x>>28&3 == 0 {
		h.e.Schedule(ev.At, kindDriver, 0, ev.Arg+1)
	}
}

// randomParModel draws a model: 2–6 groups of 1–4 objects, some links
// between groups, a few events at the same few picoseconds.
func randomParModel(r *rand.Rand) *parModel {
	m := &parModel{depth: int32(3 + r.IntN(4)), look: int64(2 + r.IntN(9)), withLate: r.IntN(4) != 0}
	m.lateLook = m.look * int64(1+r.IntN(4))
	groups := 2 + r.IntN(5)
	for g := range groups {
		for range 1 + r.IntN(4) {
			m.groups = append(m.groups, int32(g))
		}
	}
	m.objects = int32(len(m.groups))
	m.link = make([]int32, m.objects)
	for i := range m.link {
		m.link[i] = -1
	}
	for range r.IntN(int(m.objects)) {
		a, b := int32(r.IntN(int(m.objects))), int32(r.IntN(int(m.objects)))
		if m.groups[a] == m.groups[b] || m.link[a] >= 0 || m.link[b] >= 0 {
			continue
		}
		m.link[a], m.link[b] = int32(len(m.ends)), int32(len(m.ends))
		m.ends = append(m.ends, [2]int32{a, b})
	}
	for range 1 + r.IntN(12) {
		ev := Event{At: r.Int64N(4), Kind: kindLocal, Obj: int32(r.IntN(int(m.objects)))}
		if r.IntN(3) == 0 {
			ev.Kind = kindRemote
		}
		m.initial = append(m.initial, ev)
	}
	if m.withLate {
		m.initial = append(m.initial, Event{At: r.Int64N(4), Kind: kindDriver})
	}
	return m
}

// engine returns an engine for the model with its lanes, owners and late
// kind, and the initial events scheduled.
func (m *parModel) engine(lanes bool) *Engine {
	e := New(NewHeap(0), nil)
	if lanes {
		e.UseLane(kindLocal)
		e.UseLane(kindRemote)
	}
	e.SetOwner(kindDriver, uint32(m.objects)+1, false)
	e.SetLate(kindDriver)
	for _, ev := range m.initial {
		e.Schedule(ev.At, ev.Kind, ev.Obj, 0)
	}
	return e
}

// plan partitions the groups round robin over parts; the links' ends in
// different partitions conflict. Only kindRemote crosses partitions (the
// late driver's events are late); half the models say so.
func (m *parModel) plan(parts int) Plan {
	pl := Plan{Parts: parts, Lookahead: m.look, LateLookahead: m.lateLook, Part: make([]uint8, m.objects+2), Conflict: make([]uint64, m.objects+2)}
	if m.depth%2 == 0 {
		pl.Crossing = []uint8{kindRemote}
	}
	for o, g := range m.groups {
		pl.Part[1+o] = uint8(int(g) % parts)
	}
	for _, ends := range m.ends {
		a, b := ends[0], ends[1]
		if pa, pb := pl.Part[1+a], pl.Part[1+b]; pa != pb {
			pl.Conflict[1+a] |= 1 << pb
			pl.Conflict[1+b] |= 1 << pa
		}
	}
	return pl
}

func (m *parModel) state() *parState {
	return &parState{obj: make([]uint64, m.objects), link: make([]uint64, len(m.ends))}
}

// parRun is a run's outcome: every event's record by key, each object's
// events in the order they ran, the final state and the engine's counts.
type parRun struct {
	byKey   map[uint64]parRecord
	order   map[int32][]uint64 // object (−1: the driver) → keys
	st      *parState
	events  uint64
	now     int64
	pending int
}

func collect(st *parState, e *Engine, logs ...[]parEntry) parRun {
	r := parRun{byKey: map[uint64]parRecord{}, order: map[int32][]uint64{}, st: st, events: e.Events(), now: e.Now(), pending: e.Pending()}
	for _, log := range logs {
		for _, le := range log {
			r.byKey[le.seq] = le.rec
			o := le.rec.obj
			if le.rec.kind == kindDriver {
				o = -1
			}
			r.order[o] = append(r.order[o], le.seq)
		}
	}
	return r
}

func (m *parModel) runSequential(step int64) parRun {
	st := m.state()
	e := m.engine(true)
	h := &parHandler{m: m, st: st, e: e}
	e.SetHandler(h)
	runSteps(step, e.Run)
	return collect(st, e, h.log)
}

func (m *parModel) runParallel(parts int, lanes bool, step int64) parRun {
	st := m.state()
	e := m.engine(lanes)
	p, err := NewParallel(e, m.plan(parts))
	if err != nil {
		panic(err)
	}
	var hs []*parHandler
	for i := range parts {
		h := &parHandler{m: m, st: st, e: p.Part(i)}
		p.Part(i).SetHandler(h)
		hs = append(hs, h)
	}
	lh := &parHandler{m: m, st: st, e: p.Late()}
	p.Late().SetHandler(lh)
	hs = append(hs, lh)
	runSteps(step, func(until int64, _ uint64) bool { return p.Run(until) })
	var logs [][]parEntry
	for _, h := range hs {
		logs = append(logs, h.log)
	}
	return collect(st, e, logs...)
}

// runSteps runs to the end in one call (step 0) or in calls step ps apart.
func runSteps(step int64, run func(until int64, max uint64) bool) {
	if step == 0 {
		run(Forever, 0)
		return
	}
	for until := step; run(until, 0); until += step {
	}
}

func sameRun(want, got parRun) error {
	if got.events != want.events || got.now != want.now || got.pending != want.pending {
		return fmt.Errorf("events %d, now %d, pending %d; sequential %d, %d, %d", got.events, got.now, got.pending, want.events, want.now, want.pending)
	}
	for k, w := range want.byKey {
		if g, ok := got.byKey[k]; !ok || g != w {
			return fmt.Errorf("event %#x (source %d): %+v, sequential %+v", k, (&Event{Seq: k}).Source(), g, w)
		}
	}
	if len(got.byKey) != len(want.byKey) {
		return fmt.Errorf("%d events, sequential %d", len(got.byKey), len(want.byKey))
	}
	for o, w := range want.order {
		if !slices.Equal(got.order[o], w) {
			return fmt.Errorf("object %d ran its events in another order", o)
		}
	}
	if !slices.Equal(got.st.obj, want.st.obj) || !slices.Equal(got.st.link, want.st.link) || got.st.driver != want.st.driver {
		return fmt.Errorf("final state differs")
	}
	return nil
}

// TestParallelMatchesSequential is the parallel engine's property (doc.go,
// "Parallel runs"): over thousands of random models, with links shared at
// zero delay across partitions and a late driver, a run on 1, 2, 3 and 4
// partitions runs every event the sequential engine runs, each seeing the
// same state, every object's events in the same order, to the same final
// state, whether it runs to the end at once or in steps.
func TestParallelMatchesSequential(t *testing.T) {
	cases := 2000
	if testing.Short() {
		cases = 200
	}
	r := rand.New(rand.NewPCG(26, 1))
	for c := range cases {
		m := randomParModel(r)
		step := []int64{0, 0, 5, 13}[c%4]
		want := m.runSequential(step)
		if want.events == 0 {
			t.Fatalf("case %d: nothing ran", c)
		}
		for _, parts := range []int{1, 2, 3, 4} {
			got := m.runParallel(parts, c%2 == 0, step)
			if err := sameRun(want, got); err != nil {
				t.Fatalf("case %d (%d objects, %d links, lookahead %d, step %d), %d partitions: %v", c, m.objects, len(m.ends), m.look, step, parts, err)
			}
		}
	}
}

// TestParallelConflictsMatter checks that the property test can fail:
// without the conflict masks, the links' ends run unordered and some
// model's run differs from the sequential one.
func TestParallelConflictsMatter(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 2))
	for range 2000 {
		m := randomParModel(r)
		if len(m.ends) == 0 {
			continue
		}
		want := m.runSequential(0)
		st := m.state()
		e := m.engine(true)
		pl := m.plan(2)
		pl.Conflict = nil
		p, err := NewParallel(e, pl)
		if err != nil {
			t.Fatal(err)
		}
		hs := []*parHandler{{m: m, st: st, e: p.Part(0)}, {m: m, st: st, e: p.Part(1)}, {m: m, st: st, e: p.Late()}}
		p.Part(0).SetHandler(hs[0])
		p.Part(1).SetHandler(hs[1])
		p.Late().SetHandler(hs[2])
		// Run the partitions' windows one after the other instead of at
		// once, partition 1 first: still no race, but no order either.
		p.serialReversed = true
		p.Run(Forever)
		if sameRun(want, collect(st, e, hs[0].log, hs[1].log, hs[2].log)) != nil {
			return
		}
	}
	t.Fatal("no model's run changed without the conflicts: the property test would not see a wrong order")
}

// TestLateEvents checks SetLate: a late event runs after every other
// event of its time whatever the keys, late events among themselves in
// key order.
func TestLateEvents(t *testing.T) {
	var ran []Event
	var e *Engine
	e = New(NewHeap(0), handlerFunc(func(ev Event) {
		ran = append(ran, ev)
		if ev.Kind == 1 && ev.Arg == 0 {
			e.Schedule(ev.At, 1, ev.Obj, 1) // a follow-up at the same time
		}
	}))
	e.SetLate(2)
	e.Schedule(5, 2, 0, 0)
	e.Schedule(5, 1, 0, 0)
	e.Schedule(5, 2, 1, 0)
	e.Schedule(4, 2, 2, 0)
	e.Schedule(5, 1, 3, 0)
	e.Run(Forever, 0)
	var got []string
	for _, ev := range ran {
		got = append(got, fmt.Sprintf("%d:%d/%d", ev.At, ev.Kind, ev.Obj))
		if ev.Late() != (ev.Kind == 2) || ev.Source() != Outside && ev.Source() != uint32(1+ev.Obj) {
			t.Errorf("event %+v: late %v, source %d", ev, ev.Late(), ev.Source())
		}
	}
	// The follow-ups (keyed by objects 1 and 4) come after the set-up's
	// events (keyed by Outside), before the late ones.
	want := []string{"4:2/2", "5:1/0", "5:1/3", "5:1/0", "5:1/3", "5:2/0", "5:2/1"}
	if !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

// TestParallelLookaheadViolation: an event across partitions sooner than
// the lookahead is a wrong plan, reported whatever the partitions' timing.
func TestParallelLookaheadViolation(t *testing.T) {
	// Object 1 (Obj 0, partition 0) sends to object 2 (Obj 1, partition 1)
	// 10 ps ahead: inside the plan's 1000 ps.
	wrongPlanPanics(t, Plan{Parts: 2, Lookahead: 1000, Part: []uint8{0, 0, 1}},
		"no panic on an event across partitions sooner than the lookahead")
}

// TestParallelCrossingChecked: in a race-detector build, an event for
// another partition of a kind Plan.Crossing leaves out is a wrong plan.
func TestParallelCrossingChecked(t *testing.T) {
	if !raceEnabled {
		t.Skip("the check runs in race-detector builds only (go test -race)")
	}
	// Kind 1 for object 2 (Obj 1, partition 1) from partition 0, 10 ps
	// ahead (the lookahead), with only kind 2 crossing.
	wrongPlanPanics(t, Plan{Parts: 2, Lookahead: 10, Part: []uint8{0, 0, 1}, Crossing: []uint8{2}},
		"no panic on a kind left out of Plan.Crossing sent across partitions")
}

// wrongPlanPanics runs, under pl, object 1's event at 0, which schedules
// kind 1 for object 2 10 ps later, and fails with msg unless the run
// panics.
func wrongPlanPanics(t *testing.T, pl Plan, msg string) {
	t.Helper()
	e := New(NewHeap(0), nil)
	e.Schedule(0, 1, 0, 0)
	p, err := NewParallel(e, pl)
	if err != nil {
		t.Fatal(err)
	}
	p.Part(0).SetHandler(handlerFunc(func(ev Event) { p.Part(0).Schedule(ev.At+10, 1, 1, 0) }))
	p.Part(1).SetHandler(handlerFunc(func(Event) {}))
	defer func() {
		if recover() == nil {
			t.Error(msg)
		}
	}()
	p.serialReversed = true // on this goroutine: the panic reaches the test
	p.Run(Forever)
}

// TestNewParallelErrors: plans the engine cannot run.
func TestNewParallelErrors(t *testing.T) {
	e := New(NewHeap(0), nil)
	for name, pl := range map[string]Plan{
		"no partitions":   {Parts: 0, Lookahead: 1},
		"too many":        {Parts: MaxParts + 1, Lookahead: 1},
		"no lookahead":    {Parts: 2},
		"object past end": {Parts: 2, Lookahead: 1, Part: []uint8{0, 2}},
	} {
		if _, err := NewParallel(e, pl); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
