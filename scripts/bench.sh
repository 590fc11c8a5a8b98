#!/usr/bin/env bash
# Runs the Go benchmarks (make bench) and then prints a summary of the
# simulator's acceptance benchmarks, BenchmarkMegafly4160 and
# BenchmarkFatTree1024: events/s, wall seconds per simulated ms and peak RSS,
# read from the custom metrics that go test -bench reports
# (sim/network/workload_bench_test.go). The full output is kept in
# out/bench.txt.
#
#   scripts/bench.sh BENCHTIME PKG…        (GO: the go command, default go)
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: scripts/bench.sh BENCHTIME PKG…" >&2; exit 2; }
benchtime=$1
shift
go=${GO:-go}
mkdir -p out
log=out/bench.txt
# The test binaries get the profile lpictl is built with (make pgo), so
# that the figures are those of the simulator users run.
pgo=()
[ -f cmd/lpictl/default.pgo ] && pgo=(-pgo="$PWD/cmd/lpictl/default.pgo")
"$go" test "${pgo[@]}" -run '^$' -bench . -benchmem -benchtime "$benchtime" "$@" | tee "$log"

# A benchmark line: name, iterations, then value–unit pairs.
awk -v benchtime="$benchtime" '
function si(v) {
	if (v >= 1e9) return sprintf("%.2f G", v / 1e9)
	if (v >= 1e6) return sprintf("%.2f M", v / 1e6)
	if (v >= 1e3) return sprintf("%.1f k", v / 1e3)
	return sprintf("%.0f", v)
}
/^Benchmark(Megafly4160|FatTree1024)\// {
	name = $1
	sub(/^Benchmark/, "", name)
	sub(/-[0-9]+$/, "", name)
	ev = ""; wall = ""; rss = ""
	for (i = 3; i < NF; i += 2) {
		if ($(i + 1) == "events/s") ev = si($i)
		else if ($(i + 1) == "wall-s/sim-ms") wall = sprintf("%.3f s", $i)
		else if ($(i + 1) == "peak-rss-B") rss = sprintf("%.0f MiB", $i / 1048576)
	}
	rows[++n] = sprintf("  %-31s %12s %14s %10s", name, ev == "" ? "n/a" : ev, wall == "" ? "n/a" : wall, rss == "" ? "n/a" : rss)
}
END {
	if (n == 0) {
		print "bench summary: no BenchmarkMegafly4160 or BenchmarkFatTree1024 lines (are ./sim/network/ among the packages?)"
		exit
	}
	print ""
	printf "bench summary (benchtime %s; peak RSS is the test process'"'"'s high-water mark so far):\n", benchtime
	printf "  %-31s %12s %14s %10s\n", "benchmark", "events/s", "wall/sim-ms", "peak RSS"
	for (i = 1; i <= n; i++) print rows[i]
}' "$log"
