// Package observe reports the idle gaps of real Linux ports: the time
// between the end of one transmission and the start of the next, per
// direction, as [GapSample]s and [GapStats] behind the [Observer] interface.
//
// Methods, best first ([Method]; docs/hwlink.md "Observation methods"):
// [AttachEBPF] runs the idlegap eBPF program of package bpf at the port's
// TCX hooks (clsact as fallback) and sees every packet through the host
// stack at 1 ns; [AttachPSample] samples packets with tc sample and reads
// them from psample, offloaded to the ASIC on switch ports that forward in
// hardware; [NewCounterObserver] polls interface counters where eBPF cannot
// be used, at the poll interval's resolution. [ProbePSample] and
// [PSampleOffloads] say whether psample would work on a port.
//
// Hot paths (DrainGaps, ReadStats) allocate nothing. Observation never
// drops or alters traffic, and Close removes exactly what attaching added.
// observe must not set EEE (package eeectl does) nor decide policy: it
// reports gaps and their resolution, the controller decides what to make
// of them (docs/model.md §1).
package observe
