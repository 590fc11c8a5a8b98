// Package tcbpf runs BPF programs at a port's TC hooks through a clsact
// qdisc and direct-action cls_bpf filters, the fallback where the kernel
// has no TCX. The eBPF observer (package observe) and the EEE emulator
// (package emulate) share it; it knows nothing about either program.
//
// It must not remove what it did not add: Detach deletes its own filters,
// and the clsact qdisc only if it added it and no filter is left there.
package tcbpf
