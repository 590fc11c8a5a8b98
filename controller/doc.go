// Package controller runs one [Port] per link end: it feeds the port's
// predictor with idle periods and hop counts, decides when to recompute
// t_PDT (when the output queue empties after traffic, as a switch would, or
// at a fixed interval, as a host agent would), rounds and clamps the answer
// to the target's PDT register (docs/model.md §2.2 "Hardware register"), applies
// hysteresis and a minimum interval between changes, and keeps statistics.
//
// The same code runs on simulated ports (package sim) and real ones
// (package agent). It reads no clock, starts no goroutine and does no I/O:
// callers pass time in, as a [time.Duration] since an origin of their choice.
package controller
