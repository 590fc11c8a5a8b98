// Package emulate turns any netdev's egress into an emulated EEE port
// (docs/hil.md): the eeeemu eBPF program of package bpf holds each packet
// for as long as a port with the chosen low-power mode, t_PDT and power
// preset would (docs/model.md §1), and accounts the time in each power
// state and the energy.
//
// [Attach] installs it ([Check] says what it would replace, changing
// nothing), [Open], [List] and [Detach] find and remove it by its pins
// under a bpffs, so a port outlives the process that attached it; one
// emulator per device whatever the bpffs, and only virtual devices
// ([VirtualKinds]) unless AllowPhysical. [Backend] is the eeectl.EEEBackend
// of emulated ports: an eeectl.Actuator drives an emulated port exactly as
// it drives a NIC, with the refusals, rounding and clamping of the driver
// profile chosen at attach (eeectl.DriverProfile). [Observer] reports the
// port's own idle periods with their outcome (an observe.Observer, method
// emulated); [Port.Status] its state times, transitions and energy;
// [Ledger] is its delay ledger.
//
// A port is per direction unless Config.LPI is PerLink: then two ports
// attached with the same Config.Link are the two ends of one emulated
// link sharing its power state through a pinned map (docs/model.md §1.2,
// bpf/eeeemu.c "Link mode"; linkmode.go).
//
// The Go model of the state machine (model.go, with the reference port and
// link of the tests) is what the eBPF
// program is tested against. emulate must not decide policy (the
// controller and the agent set t_PDT) nor touch devices it did not attach
// to.
package emulate
