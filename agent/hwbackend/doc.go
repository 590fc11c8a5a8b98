// Package hwbackend is the agent's hardware backend: an adapter that makes
// hwlink's real Linux ports satisfy agent.Backend. Ports come from
// hwlink.Discover; idle gaps from the idlegap eBPF program (hwlink.AttachEBPF)
// or polled interface counters (hwlink.NewCounterObserver); the tx LPI
// timer is read and set through hwlink.Actuator, which never touches the
// EEE advertisement and fits values to the driver's range; carrier changes
// (to detect link flaps caused by a change) come from rtnetlink link events.
//
// ModelFile replaces the kernel's EEE interface with hwlink/fakedriver's
// driver models kept in a JSON file (hw.eee_backend: model), so the whole
// hardware path — including crash recovery — can be tried without hardware.
package hwbackend
