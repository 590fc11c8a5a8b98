// Package eeectl reads and applies the EEE tx LPI timer (t_PDT,
// docs/model.md §2.2 "Hardware register") of real Linux ports.
//
// An [Actuator] implements [EEEController] over an [EEEBackend]:
// [EthtoolBackend] talks to the kernel (ETHTOOL_MSG_EEE_GET/SET over ethtool
// netlink, the ETHTOOL_GEEE / ETHTOOL_SEEE ioctl as fallback); package
// fakedriver and the emulated port of package emulate implement the same
// interface. Before a write the value is fitted to the driver's unit and
// range from the per-driver table ([LookupDriver], [DriverCaps]); drivers
// known to refuse are not written to. [ProfileFor] turns a table entry into
// a [DriverProfile], the one model of a driver's get/set behaviour that the
// fake driver and the emulator both apply. DSA user ports, which ethtool
// reports as "dsa", are looked up by their switch's driver
// ([ResolveSwitchDriver]). [SubscribeEEE] reports every EEE change the
// kernel announces (ETHTOOL_MSG_EEE_NTF).
//
// eeectl writes only the tx LPI timer (and tx LPI enable when asked), never
// the advertisement nor EEE enable; it must not decide which value to set
// (the controller and the agent do) nor observe traffic (package observe).
package eeectl
