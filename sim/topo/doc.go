// Package topo builds the simulator's networks and their deterministic
// minimal routing (docs/model.md §3).
//
// It implements:
//   - §3.1 Megafly / Dragonfly+ (NewMegafly; the 4160-node network of paper
//     000 Table 6 is the default), with docs/model.md §3.1's global wiring and its
//     leaf → spine → leaf / leaf → owning spine → global → spine → leaf routing;
//   - §3.2 the other topologies of paper 000 Table 7 and of paper 004: the
//     3D torus (NewTorus), the RLFT and the k-ary n-tree fat trees (NewFatTree,
//     D-mod-k routing), the canonical dragonfly (NewDragonfly) and the
//     flattened butterfly, a HyperX with equal sides (kind fbfly);
//   - the HyperX of Ahn et al. (SC 2009; kind hyperx), dimension-order routing;
//   - MultiPath: every topology lists the output ports on its minimal paths
//     (MinimalPorts), for ECMP routing in the simulator;
//   - the counting convention of §3.2 / Table 7 (links = switches × radix +
//     nodes, see Table7Links) used by sim/power's §3.3 breakdown;
//   - Describe: sizes, diameter and the hop-count distribution of a network.
//
// Every topology is built from a Config (Build), is immutable and safe for
// concurrent use, and computes Route, Distance and PortPeer arithmetically:
// memory does not grow with the number of nodes, and Route and Distance
// allocate nothing. docs/topologies.md describes each wiring and routing
// rule, its tie-breaks and the figures Describe gives for the defaults.
package topo
