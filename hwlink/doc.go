// Package hwlink connects lpictl's controller to real Linux ports: host NIC
// ports and switch ports that Linux exposes as netdevs (switchdev, DSA).
// Its work is done by sub-packages, one per concern:
//
//   - [github.com/lpictl/lpictl/hwlink/netdev]: which ports a namespace has
//     and what each can do (Discover), and what happens to them (link
//     events, SubscribeLinks).
//   - [github.com/lpictl/lpictl/hwlink/observe]: idle-gap observation — the
//     idlegap eBPF program of package bpf (AttachEBPF), tc sample and psample
//     where a switch ASIC offloads sampling (AttachPSample), polled counters
//     where eBPF cannot be used (NewCounterObserver) — behind one Observer
//     interface.
//   - [github.com/lpictl/lpictl/hwlink/eeectl]: EEE control — the tx LPI
//     timer read and applied by an Actuator over an EEEBackend (ethtool
//     netlink with the ETHTOOL_GEEE / ETHTOOL_SEEE ioctl as fallback), the
//     per-driver table and the driver profile derived from it, DSA switch
//     driver resolution, EEE change notifications.
//   - [github.com/lpictl/lpictl/hwlink/emulate]: an emulated EEE port where
//     no EEE-capable NIC is at hand — the eeeemu eBPF program of package bpf
//     on any netdev's egress, its tx LPI timer behind the same EEEBackend
//     interface as the kernel's, its own idle periods as an Observer
//     (docs/hil.md).
//
// This package holds what they share: network namespaces ([NetNS] and the
// helpers that run code or open netlink handles in one), the sentinel errors
// and their classification ([ErrNotSupported], [ClassifyErrno],
// [ClassifyBPFErr]), one owner per device ([ClaimPort]) and hop counts for
// PerfBound's hop factor ([HopTable], docs/model.md §2.2). It imports none
// of its sub-packages; they import it.
//
// hwlink decides no policy: it reports what a port can do (observation
// method and resolution, whether and within which range the timer can be
// set, whether a change bounces the link) and does what it is told, clamping
// to the driver's range and saying so. Hardware that cannot do something
// yields errors matching [ErrNotSupported], so callers degrade to
// observe-only.
//
// docs/hwlink.md describes the observation methods, the per-driver table,
// hop-count configuration, required capabilities and measured costs.
package hwlink
