// Package plot draws the figures of a parameter sweep (lpictl sweep plot)
// from the sweep's output directory: DIR/results.csv, DIR/plan.json and
// DIR/points/<id>/idle_hist.csv, with gonum.org/v1/plot.
//
// The figures follow the paper's style: "pdt-sweep" (execution-time
// overhead, energy saving and packet-latency overhead against the fixed
// power-down threshold t_PDT, one series per power mode), "predictors" (the
// same three panels against the PerfBound bound), "idle-hist" (the share of
// idle time per idle-period length bin, with its cumulative share) and
// "generic" (any columns). Rows whose status is not ok are skipped; several
// seeds of one x and series are drawn as their mean with min–max error bars.
//
// The package reads results.csv by column name and does not depend on the
// sweep runner. Outputs (.png or .svg) are written atomically and are
// byte-identical for the same input.
package plot
