// Package eee is the power state machine of one link (docs/model.md §1, §1.1): Wake,
// going down, Fast Wake or Deep Sleep, going up; the modes always-on,
// fast-wake, deep-sleep and hybrid; the power-down handshake with its
// refusal rule; the waits of a packet that finds the link low or going
// down; and the time spent in every state, from which energy follows
// (docs/model.md §3.3).
//
// It evaluates states lazily (docs/model.md §1.1 performance hint): no PDT timer is
// ever scheduled. A link remembers when it last became idle, which end
// transmitted last (that end owns the PDT timer) and that end's t_PDT; the
// state at any later time follows from these, and is resolved only when a
// packet next needs the link ([Link.Need]) or the run ends ([Link.Finish]).
// docs/simulator.md gives the timeline and the readings of the paper.
package eee
