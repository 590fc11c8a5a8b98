// Package scenario reads simulator scenario files (docs/scenario.md) and
// runs them: it decodes YAML strictly (unknown keys are errors, --set
// overrides apply to the node tree before decoding so errors still name
// the key), fills the defaults of docs/model.md §3 Table 6, checks every field,
// builds the topology (sim/topo), the power preset and mode (sim/power,
// docs/model.md §1), the predictor and controller of every port (docs/model.md §2) and the
// workload, runs the network model (sim/network) and writes the reports
// of docs/model.md §4: summary.json, perf.json, ports.csv and idle_hist.csv, and
// the comparison table of `lpictl sim compare`.
package scenario
