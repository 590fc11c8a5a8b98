// Package netdev lists the ports of a network namespace and what lpictl can
// do on each, and reports what happens to them.
//
// [Discover] reads rtnetlink (links, switchdev attributes), ethtool (driver,
// speed, EEE state) and what the kernel supports, and plans per port how its
// idle gaps would be observed ([ObservationPlan]: eBPF, psample, hardware or
// interface counters) and whether its tx LPI timer can be set
// ([PortInfo].Actuation). It changes nothing. [SubscribeLinks] reports
// links added, removed, renamed and carrier changes, and with EEE set also
// EEE changes (eeectl.SubscribeEEE).
//
// netdev composes packages observe and eeectl, which is why it is not the
// root package (they import hwlink). It must not attach, set or decide
// anything: it describes.
package netdev
