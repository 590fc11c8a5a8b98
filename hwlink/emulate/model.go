package emulate

import (
	"fmt"
	"strings"
)

// Mode is the low-power mode of an emulated EEE port (docs/model.md §1):
// the values of bpf/eeeemu.c's MODE_* and of sim/eee.Mode.
type Mode uint32

// Emulated low-power modes.
const (
	ModeAlwaysOn Mode = iota
	ModeFastWake
	ModeDeepSleep
	ModeHybrid
)

var emulatedModeNames = [...]string{"always-on", "fast-wake", "deep-sleep", "hybrid"}

func (m Mode) String() string {
	if int(m) < len(emulatedModeNames) {
		return emulatedModeNames[m]
	}
	return fmt.Sprintf("mode(%d)", uint32(m))
}

// ParseMode reads a mode name (the names of sim/power.Mode).
func ParseMode(s string) (Mode, error) {
	name := strings.ToLower(strings.TrimSpace(s))
	for i, n := range emulatedModeNames {
		if n == name {
			return Mode(i), nil
		}
	}
	return 0, fmt.Errorf("unknown mode %q (want always-on, fast-wake, deep-sleep or hybrid)", s)
}

// State is a power state of an emulated port, in the order of the
// program's per-state times (bpf/eeeemu.c ST_*, sim/eee.State).
type State int

// Port power states (docs/model.md §1).
const (
	StateWake State = iota
	StateGoingDown
	StateFastWake
	StateDeepSleep
	StateGoingUp
	numEmulatedStates
)

var emulatedStateNames = [...]string{"wake", "going_down", "fast_wake", "deep_sleep", "going_up"}

func (s State) String() string {
	if s >= 0 && int(s) < len(emulatedStateNames) {
		return emulatedStateNames[s]
	}
	return fmt.Sprintf("state(%d)", int(s))
}

// emuTiming is what the state machine needs besides its state: the
// transition times (scaled) in ns.
type emuTiming struct {
	sleepFW, wakeFW, sleepDS, wakeDS, hold uint64
}

// emuTail accounts an idle period in progress lazily, with the rule the
// program applies when the next packet comes (bpf/eeeemu.c; sim/eee's
// Link.Finish): the port was last free at freeAt with t_PDT pdt and mode
// armed; at now (> freeAt) it has spent add[s] in each state and is in
// state cur. downs and deepens count the transitions the idle period has
// made so far (a power-down, a hybrid Fast Wake → Deep Sleep step).
func emuTail(t emuTiming, mode Mode, pdt, freeAt, now uint64) (add [numEmulatedStates]uint64, cur State, downs, deepens uint64) {
	if now <= freeAt {
		return add, StateWake, 0, 0
	}
	gap := now - freeAt
	if mode == ModeAlwaysOn || gap <= pdt {
		// Until the timer expires at freeAt+pdt the port is awake; at the
		// instant itself nothing has gone down yet.
		add[StateWake] = gap
		return add, StateWake, 0, 0
	}
	ts, low := t.sleepFW, StateFastWake
	if mode == ModeDeepSleep {
		ts, low = t.sleepDS, StateDeepSleep
	}
	add[StateWake] = pdt
	rest := gap - pdt
	downs = 1
	if rest <= ts {
		add[StateGoingDown] = rest
		return add, StateGoingDown, downs, 0
	}
	add[StateGoingDown] = ts
	rest -= ts
	if mode == ModeHybrid && rest > t.hold {
		add[StateFastWake] = t.hold
		add[StateDeepSleep] = rest - t.hold
		return add, StateDeepSleep, downs, 1
	}
	add[low] = rest
	return add, low, downs, 0
}
