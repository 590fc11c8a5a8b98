#!/usr/bin/env bash
# Prints docs/predictors.md's evaluation table from the results of the
# predictors-eval sweep (configs/sweeps/predictors-eval.yaml):
#
#   lpictl sweep run configs/sweeps/predictors-eval.yaml -o out/predictors-eval -j 2
#   scripts/predictors-table.sh out/predictors-eval/results.csv
#
# One row per run (baselines left out), grouped by application, in the
# sweep's order within each: application,
# mode, predictor, the bound's scope (port as the papers have it, port+ledger
# under the delay ledger, or end-to-end with power.end_to_end), the worst
# port's spent/budget under the ledger, then the overheads and savings against always-on that
# results.csv computed, and whether the execution-time overhead is within
# predictor.bound (1 %).
set -euo pipefail
csv=${1:-out/predictors-eval/results.csv}
[ -r "$csv" ] || { echo "predictors-table: $csv: not readable (run the sweep first)" >&2; exit 2; }
awk -F, '
NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
$col["role"] != "point" { next }
{
	app = $col["base"]; sub(/.*\//, "", app); sub(/\.yaml$/, "", app)
	scope = (col["power.end_to_end.enabled"] && $col["power.end_to_end.enabled"] == "true") ? "end-to-end" : "port"
	if (scope == "port" && col["controller.ledger"] && $col["controller.ledger"] != "off") scope = "port+ledger"
	worst = (col["ledger_worst_ratio"] && $col["ledger_worst_ratio"] != "") ? sprintf("%.3f", $col["ledger_worst_ratio"]) : "–"
	if (!(app in rows)) order[++apps] = app
	if ($col["status"] != "ok") {
		rows[app] = rows[app] sprintf("| %s | %s | %s | %s | failed: %s | | | | | |\n", app, $col["power.mode"], $col["predictor.kind"], scope, $col["error"])
		next
	}
	ex = $col["exec_overhead_pct"]
	rows[app] = rows[app] sprintf("| %s | %s | %s | %s | %.2f | %s | %s | %.2f | %.2f | %.2f |\n", app, $col["power.mode"], $col["predictor.kind"], scope,
		ex, (ex <= 1 ? "yes" : "no"), worst, $col["latency_overhead_pct"], $col["network_saving_pct"], $col["total_saving_pct"])
}
END {
	print "| application | mode | predictor | bound | exec +% | within 1 % | worst port spent/budget | latency +% | network −% | total −% |"
	print "|---|---|---|---|---|---|---|---|---|---|"
	for (i = 1; i <= apps; i++) printf "%s", rows[order[i]]
}' "$csv"
