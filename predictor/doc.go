// Package predictor chooses a port's power-down threshold t_PDT from the
// port's history (docs/model.md §2). Every predictor implements [Predictor]:
//
//   - [Fixed]: a constant t_PDT (docs/model.md §2.1).
//   - [PerfBound]: a histogram of idle periods searched for the lowest
//     threshold whose expected wake-ups fit a degradation bound (docs/model.md §2.2,
//     paper 000 §2.4 and §3.2, after Saravanan & Carpenter 2018).
//   - [PerfBoundCorrect]: PerfBound lengthened by a factor learnt from recent
//     mispredictions (docs/model.md §2.3, paper 000 §3.4).
//   - [NGram]: the classes of the last n idle periods predict the next
//     one's; a confident "long" sleeps at once, a confident "short" stays
//     awake, anything else falls back to PerfBound (paper 003, adapted).
//   - [PerfBoundCorrectWeighted]: PerfBoundCorrect whose correction factor
//     weighs recent outcomes more (paper 000's future work).
//
// In hybrid mode (Config.Hybrid set: Fast Wake after t_PDT, Deep Sleep after
// a further hold) PerfBound and the two PerfBoundCorrect kinds also choose
// the hold, from the same budget with each state's wake cost; they
// implement [HoldChooser]. Fixed and NGram use the caller's configured hold.
//
// Predictors know nothing of ports, clocks or I/O: the caller passes time in
// (as a [time.Duration] since an arbitrary origin) and tells them what
// happened. They are deterministic, and a decision ([Predictor.Predict])
// allocates nothing.
package predictor
