// Package hwlink connects lpictl's controller to real Linux ports: host NIC
// ports and switch ports that Linux exposes as netdevs (switchdev, DSA).
//
// It discovers ports ([Discover]), observes idle gaps ([AttachEBPF] with the
// eBPF program of package bpf, [AttachPSample] with tc sample and psample
// where a switch ASIC offloads sampling, [NewCounterObserver] where eBPF
// cannot be used or the port forwards in hardware), reads and applies the
// EEE tx LPI timer ([Actuator] over an [EEEBackend]: ethtool netlink with the
// ETHTOOL_GEEE / ETHTOOL_SEEE ioctl as fallback; DSA user ports are looked up
// by their switch's driver, [ResolveSwitchDriver]), reports link events
// ([SubscribeLinks]) and EEE changes ([SubscribeEEE]) and looks up hop counts
// for PerfBound's hop factor ([HopTable], docs/model.md §2.2). Where no EEE-capable
// NIC is at hand, [AttachEmulator] makes any netdev's egress an emulated EEE
// port (the eeeemu eBPF program of package bpf) whose tx LPI timer
// [EmulatedBackend] sets behind the same [EEEBackend] interface as the
// kernel's (docs/hil.md).
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
