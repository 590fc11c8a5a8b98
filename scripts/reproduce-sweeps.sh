#!/usr/bin/env bash
# Reproduces paper 000's fixed-t_PDT sweeps (Figs. 7, 13, 16) and its
# PerfBound vs PerfBoundCorrect comparison (Figs. 8, 14, 17) with the
# application models on the Megafly-4160 (docs/reproducing.md), then prints
# the tables of that page.
#
#   scripts/reproduce-sweeps.sh [OUT] [MODEL…]     (default: out/sweep, lammps mlwf alexnet)
#
# Each run's outputs go to OUT/<model>/<mode>-<pdt>/ (and always-on/); the
# comparisons' tables to OUT/<model>/compare-<mode>.txt. LPICTL (default: a
# binary built from ./cmd/lpictl into OUT) is the binary to use; JOBS
# (default 2) runs that many simulations at once; PDTS overrides the t_PDT
# list. A run whose summary.json (or comparison table) is already in OUT is
# not run again: delete OUT to start afresh.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-out/sweep}
shift || true
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(lammps mlwf alexnet)
jobs=${JOBS:-2}
pdts=(${PDTS:-0 10ns 100ns 1us 10us 100us 1ms 10ms 100ms 1s})
modes=(fast-wake deep-sleep)
if [ -z "${LPICTL:-}" ]; then
	mkdir -p "$out"
	go build -o "$out/lpictl" ./cmd/lpictl
	LPICTL=$out/lpictl
fi

run() { # model variant sets…
	local m=$1 v=$2
	shift 2
	[ -s "$out/$m/$v/summary.json" ] && return
	mkdir -p "$out/$m/$v"
	"$LPICTL" sim run -c "configs/sim/apps/$m.yaml" "$@" -o "$out/$m/$v" >/dev/null
	echo "done $m $v" >&2
}
compare() { # model mode
	[ -s "$out/$1/compare-$2.txt" ] && return
	"$LPICTL" sim compare -c "configs/sim/apps/$1.yaml" --set power.mode="$2" \
		--set predictor.bound=0.01 --fixed-pdt 10us >"$out/$1/compare-$2.txt"
	echo "done $1 compare $2" >&2
}
export -f run compare
export out LPICTL
for m in "${models[@]}"; do
	mkdir -p "$out/$m"
	echo "run $m always-on --set power.mode=always-on"
	for mode in "${modes[@]}"; do
		for p in "${pdts[@]}"; do
			echo "run $m $mode-$p --set power.mode=$mode --set predictor.kind=fixed --set predictor.pdt=$p"
		done
		echo "compare $m $mode"
	done
done | xargs -P "$jobs" -L 1 bash -c '"$@"' _

num() { grep -o "\"$2\": [-0-9.e+]*" "$1" | head -1 | awk '{print $2}'; }
energy() { grep -A6 '"energy_j"' "$1" | num /dev/stdin "$2"; }
latency() { grep -A2 '"latency_s"' "$1" | num /dev/stdin mean; }
pct() { awk -v a="$1" -v b="$2" -v s="$3" 'BEGIN { printf "%.2f", s * 100 * (b - a) / a }'; }
# job_links DIR: link energy of the ports that send packets in the always-on run.
job_links() {
	awk -F, 'NR == FNR { if (FNR > 1 && $15 > 0) busy[$1] = 1; next }
		FNR > 1 && ($1 in busy) { e += $12 } END { printf "%.9g", e }' "$base/ports.csv" "$1/ports.csv"
}
for m in "${models[@]}"; do
	base=$out/$m/always-on
	[ -f "$base/summary.json" ] || continue
	b=$base/summary.json
	busy=$(awk -F, 'FNR > 1 && $15 > 0' "$base/ports.csv" | wc -l)
	ports=$(($(wc -l <"$base/ports.csv") - 1))
	printf '\n**%s** (always-on: %.6g s, mean packet latency %.3g µs; %d of %d ports carry traffic)\n\n' \
		"$m" "$(num "$b" exec_time_s)" "$(awk -v s="$(latency "$b")" 'BEGIN { print s * 1e6 }')" "$busy" "$ports"
	echo "| t_PDT | FW exec +% | FW lat +% | FW job links −% | FW total −% | DS exec +% | DS lat +% | DS job links −% | DS network −% | DS total −% |"
	echo "|---|---|---|---|---|---|---|---|---|---|"
	jb=$(job_links "$base")
	for p in "${pdts[@]}"; do
		row="| $p"
		for mode in "${modes[@]}"; do
			r=$out/$m/$mode-$p/summary.json
			[ -f "$r" ] || continue
			row+=" | $(pct "$(num "$b" exec_time_s)" "$(num "$r" exec_time_s)" 1)"
			row+=" | $(pct "$(latency "$b")" "$(latency "$r")" 1)"
			row+=" | $(pct "$jb" "$(job_links "$out/$m/$mode-$p")" -1)"
			[ "$mode" = deep-sleep ] && row+=" | $(pct "$(energy "$b" network)" "$(energy "$r" network)" -1)"
			row+=" | $(pct "$(energy "$b" total)" "$(energy "$r" total)" -1)"
		done
		echo "$row |"
	done
done
echo
for m in "${models[@]}"; do
	for mode in "${modes[@]}"; do
		f=$out/$m/compare-$mode.txt
		[ -f "$f" ] && { echo "== $m $mode"; cat "$f"; }
	done
done
