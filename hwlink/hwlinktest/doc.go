// Package hwlinktest builds throw-away network namespaces with veth pairs
// for privileged tests of hwlink and its users, and sends paced UDP
// traffic between them. Everything it creates is removed when the test
// ends; traffic only ever goes to addresses inside those namespaces. It
// also holds the checks and netlink message builders several hwlink
// packages' tests share (AssertDetached, NlAttr, ParseGenl).
//
// Tests call RequireRoot (and RequireBPF) first: they skip with a clear
// reason when not run as root or without BPF support.
package hwlinktest
