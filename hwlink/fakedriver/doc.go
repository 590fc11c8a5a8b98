// Package fakedriver models NIC drivers' EEE behaviour for tests: an
// eeectl.EEEBackend whose ports answer the way the per-driver table
// (eeectl.LookupDriver, docs/hwlink.md) says their kernel drivers do —
// EOPNOTSUPP without EEE operations, EINVAL for drivers that refuse timer
// changes or values above their register, silent clamping or rounding
// where the hardware does that, and a link flap (two carrier changes) for
// drivers that bounce the link on a change.
//
// Wrap it in eeectl.NewActuator to exercise the real apply path; the agent's
// tests use it the same way.
package fakedriver
