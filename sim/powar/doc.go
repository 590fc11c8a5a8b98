// Package powar is the logic of POWAR, the power-aware selection function
// of paper 002 (Andújar et al., "POWAR: Power-Aware Routing in HPC
// Networks with On/Off Links", ACM TACO 15(4), 2019), apart from any
// network: the normalised power model of its Eqs. 1–7 (model.go), the
// selection function of its Algorithm 1 (select.go), the fat-tree
// selectable-port management of its Algorithm 2 (manage.go), and for a
// torus with aggregated (trunk) links Algorithm 3, a selectable prefix per
// aggregate, with Algorithm 1 whose deterministic output is an aggregate
// (aggregate.go).
//
// POWAR never switches a link on or off: the links sleep by EEE with their
// own idle timers (t_PDT). It orders the choice among the adaptive
// candidate ports (awake before sleeping, round-robin among equals) and
// restricts it to a "selectable" prefix of the switch's up ports (of each
// aggregate's members on a torus) that grows and shrinks with their
// measured utilisation (thresholds Ton, Toff), so that traffic gathers on
// few links and the others stay asleep.
//
// Everything here is pure: ports are bits of a uint64 (switch-local
// indices below 64), state is passed in and returned, nothing allocates.
// sim/network calls it for routing.kind: powar; docs/simulator.md
// ("POWAR") gives the readings of the paper that the simulator uses.
package powar
