// Package estimate is the shadow EEE estimator of issue 17 ("What would
// EEE save here?"): given the idle periods a port actually showed, it
// estimates, for several policies at once, what the port's EEE would have
// done — misses, wake-ups, time in low power, the delay added to packets
// and the energy saved against an always-on port.
//
// Model (no new physics: docs/model.md §1, §1.1, §3.3). Every policy × low-power
// mode is one port whose state machine is sim/eee's (eee.Link, the same
// lazily evaluated model the simulator runs), with one end only: a host
// sees its own side of the link, not the peer's traffic, so the peer is
// assumed idle and never refuses a power-down. The handshake before
// going down is Config.Handshake (default 0: a host sees no peer
// handshake; set it to compare with the simulator, whose handshake is a
// control message's serialisation plus the propagation).
//
// At an idle period's start the port arms t_PDT: always-on never, eee 0,
// fixed and driver-default their PDT, predictor the answer of the
// policy's own controller.Port (Decide at the start; IdleEnded after the
// period with the outcome the model computed; no hop counts are reported,
// so PerfBound takes h = 1). The period's end is a packet needing the
// port (eee.Link.Need): a hit if the period was shorter than t_PDT, a
// miss otherwise (an idle period of exactly t_PDT is a miss; a period of
// 0 is no idle period and is ignored, docs/model.md §1.1). A miss costs the packet
// the t_s remainder and t_w (AddedDelay).
//
// Assumption: the wait shifts nothing else. The observed idle periods are
// what they are: packets arrive and the port's queue empties when they
// were observed to. The only exception keeps the timeline possible: an
// idle period that starts while the modelled port is still waking up
// (the busy time after a miss was shorter than the wait) starts when the
// port is ready, and one that ends by then is no idle period for that
// port (Result.Absorbed; its packet's extra wait is in AddedDelay).
//
// Energy is Σ state time × the preset's port power for that state (Wake,
// going down and going up at wake power; Fast Wake and Deep Sleep at
// theirs), the time between idle periods (busy) being Wake. Always-on is
// P_wake × Elapsed; the saving is their difference.
package estimate
