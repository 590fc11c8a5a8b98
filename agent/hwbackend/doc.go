// Package hwbackend is the agent's hardware backend: an adapter that makes
// hwlink's real Linux ports satisfy agent.Backend. Ports come from
// netdev.Discover; idle gaps from the idlegap eBPF program (observe.AttachEBPF)
// or polled interface counters (observe.NewCounterObserver); the tx LPI
// timer is read and set through eeectl.Actuator, which never touches the
// EEE advertisement and fits values to the driver's range; carrier changes
// (to detect link flaps caused by a change) come from rtnetlink link events.
//
// ModelFile replaces the kernel's EEE interface with hwlink/fakedriver's
// driver models kept in a JSON file (hw.eee_backend: model), so the whole
// hardware path — including crash recovery — can be tried without hardware.
//
// Emulated EEE ports (`lpictl emulate attach`): with hw.eee_backend:
// emulated, emulate.Backend is the EEE interface, an emulated port
// reports the driver "emulated/<profile>" and the capability of its driver
// profile, other ports are observe-only; with hw.observe emulated (or auto)
// an emulated port's own idle periods, with its outcome, t_PDT and wake-up
// wait, come from emulate.Observer, and its low-power time and
// entries from the emulator's status.
package hwbackend
