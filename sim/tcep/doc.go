// Package tcep is the consolidation controller of paper 004 (TCEP, Kim,
// Choi and Kim): per fully connected subnetwork (a row of one dimension of
// a HyperX or flattened butterfly), which switch-switch links are routable
// (Active), logically off but physically on (Shadow) or gated (Inactive).
//
// It is pure logic: the caller (the simulator's network, sim/network
// consolidation.go) measures each router's egress traffic per link over an
// epoch (Use: minimally and non-minimally routed bytes and the virtual
// utilisation of links that are off), calls the epoch steps at the epoch
// boundaries and the handshake steps one control-message delay later, and
// routes around links that are not Active. Nothing here knows about time
// beyond the epoch lengths in Config.
//
// Algorithm 1 (SelectDeactivation) is the digest's implementable version:
// links sorted by neighbour id, spare capacity max(0, U_hwm − util), the
// boundary tested first with two inner links (as printed), the outer link
// with the least minimally routed traffic chosen; root links (those of the
// subnetwork's hub, its lowest id) are never chosen.
//
// Activation (ActivationEpoch) is direct (a router's own Inactive link
// with the highest virtual utilisation, or its shadow link at once) and
// indirect: a router whose detours towards a target t (PAL's choices,
// recorded with Detoured) left over a link above U_hwm asks the lowest
// router X (any other router of the subnetwork: PAL's two traffic classes
// make every intermediate deadlock-free) that is not yet an intermediate
// for t (X–t not Active, r–X Active) to activate X–t, which X does at its
// next activation epoch as if it were its own request.
// Reactivate is also PAL's Table I row 2 (a shadow minimal port and no
// room on the detour).
package tcep
