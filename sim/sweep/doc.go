// Package sweep runs studies: a sweep file (docs/sweeps.md) names a base
// scenario, overrides and axes of values; the package expands it into a
// plan of runs (the cartesian product of the axes, times the seeds, plus
// the baselines the overheads and savings are measured against), runs them
// locally or as a Slurm job array into one output directory, and collects
// their summaries into results.csv and results.json.
//
// Runs are identified by a content hash of their resolved scenario, so a
// run that already finished (in this or an earlier plan) is never run
// again, and a baseline shared by many points runs once.
package sweep
