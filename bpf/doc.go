// Package bpf holds lpictl's eBPF programs and their bpf2go-generated Go
// bindings.
//
// idlegap.c is attached by package hwlink at TCX (or clsact/cls_bpf) egress
// and, optionally, ingress of one interface. Per direction it keeps the
// estimated end of the last transmission (map state, shared by all CPUs),
// idle-gap counters and a log-linear histogram of idle gaps (map stats, one
// copy per CPU, summed by the reader) and a ring buffer of exact gap
// samples above a configurable floor. It never drops or alters traffic.
//
// The generated files (idlegap_bpfel.go/.o, idlegap_bpfeb.go/.o) are
// committed; `make generate` (go generate ./...) rebuilds them and needs
// clang and llvm-strip. The C source needs no kernel or libbpf headers.
//
// This package contains nothing but the program and its bindings: loading,
// attaching and decoding live in hwlink.
package bpf
