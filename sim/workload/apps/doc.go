// Package apps generates the built-in workloads as streams of VEF records
// (docs/model.md §5), lazily and in bounded memory, so they scale to the 4160 ranks
// of paper 000's Megafly.
//
// Application models follow paper 000 §4.4–4.7: lammps (the rhodopsin
// benchmark's communication, sizes derived from its geometry: input
// Bcasts and a quiet setup, then per step the halo swaps, PPPM's
// ghost-grid swaps and FFT transposes as sub-communicator Alltoalls, and
// the NPT and thermo Allreduces; Fig. 6), patmos (network only at start and end: Bcast, then
// Allreduce and Reduce; Fig. 9), mlwf (Horovod's Gather–Gatherv–Bcast–Bcast
// negotiation every 5 ms cycle, then the fused gradient Allreduce at the
// end of each step; §4.6) and alexnet (compute-heavy steps with per-layer
// gradient Allreduce bursts of AlexNet's real sizes; Fig. 15). Micro-benchmarks: stencil and
// alltoall. Synthetic open-loop traffic (papers 001 and 004): uniform,
// permutation, tornado, bit-reverse and hotspot patterns, Poisson or bursty
// ON/OFF arrivals with exponential or Pareto periods.
//
// Every record depends on its task's latest event (VEF allows one
// dependency per record), after the compute the task did since; the first
// record of a task is released at the absolute time of its initial
// compute. docs/workloads.md describes each model's structure.
package apps
