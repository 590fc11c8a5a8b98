//go:build !race

package engine

// raceEnabled reports a race-detector build, in which a parallel run also
// checks the model's Plan.Crossing (partState.checkLocal).
const raceEnabled = false
