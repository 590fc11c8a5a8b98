#!/usr/bin/env bash
# Runs the same scenarios on 1 and on THREADS goroutines (engine.threads),
# alternately, ROUNDS times each, and prints both wall times, peak RSS and
# the ratio, and whether the outputs (everything -o writes but perf.json)
# are byte-identical (make bench-threads; docs/simulator.md "Parallel
# runs"). The scenarios: the Megafly-4160 at 30 % uniform load
# (configs/sim/megafly-4160.yaml, 100 µs of generation) and LAMMPS on the
# Megafly-4160 (configs/sim/apps/lammps.yaml, LAMMPS_STEPS of its steps).
#
#   scripts/bench-threads.sh     (BIN, THREADS=2, ROUNDS=3, LAMMPS_STEPS=1)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${BIN:-./lpictl}
threads=${THREADS:-2}
rounds=${ROUNDS:-3}
steps=${LAMMPS_STEPS:-1}
[ -x "$bin" ] || { echo "bench-threads: $bin not built (make build)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# run NAME THREADS ARGS…: one run into $tmp/NAME-THREADS; prints "wall rss".
run() {
	local name=$1 t=$2
	shift 2
	rm -rf "$tmp/$name-$t"
	"$bin" sim run "$@" --threads "$t" -o "$tmp/$name-$t" >/dev/null
	# perf.json: "wall_s": 1.23, "peak_rss_bytes": 456
	awk -F'[:,]' '/"wall_s"/ {w=$2} /"peak_rss_bytes"/ {r=$2} END {printf "%.3f %d\n", w, r/1048576}' "$tmp/$name-$t/perf.json"
}

same() {
	local a=$1 b=$2 f
	for f in "$a"/*; do
		[ "$(basename "$f")" = perf.json ] && continue
		cmp -s "$f" "$b/$(basename "$f")" || { echo "DIFFERENT ($(basename "$f"))"; return; }
	done
	echo identical
}

bench() {
	local name=$1
	shift
	local ratios=()
	for r in $(seq "$rounds"); do
		read -r w1 m1 < <(run "$name" 1 "$@")
		read -r wn mn < <(run "$name" "$threads" "$@")
		ratio=$(awk -v a="$w1" -v b="$wn" 'BEGIN {printf "%.2f", a / b}')
		ratios+=("$ratio")
		printf '  %-14s round %d: 1 thread %8.2f s %5d MiB | %d threads %8.2f s %5d MiB | %s× | outputs %s\n' \
			"$name" "$r" "$w1" "$m1" "$threads" "$wn" "$mn" "$ratio" "$(same "$tmp/$name-1" "$tmp/$name-$threads")"
	done
	printf '  %-14s median speed-up on %d threads: %s×\n' "$name" "$threads" \
		"$(printf '%s\n' "${ratios[@]}" | sort -n | awk -f scripts/median.awk)"
}

echo "bench-threads: $bin, 1 against $threads threads, $rounds rounds alternately ($(nproc) cores)"
bench megafly-4160 -c configs/sim/megafly-4160.yaml --set workload.duration=100us
bench lammps -c configs/sim/apps/lammps.yaml --set workload.steps="$steps"
