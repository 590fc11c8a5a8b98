#!/usr/bin/env bash
# Reproduces paper 000 Fig. 1 and the §4.4–4.7 observations with the
# application models on the Megafly-4160 (docs/reproducing.md): every model
# of configs/sim/apps/ under always-on and under deep sleep with a fixed
# t_PDT of 0, each run's outputs in OUT/<model>/<variant>/, then a table.
# The always-on run tracks the scenario's port (node 0's NIC: rank 0's
# sends); a second always-on run (always-on-leaf) tracks PORT2 (default
# 4160: on the Megafly-4160 the first switch port, leaf 0's port to node 0,
# which carries everything rank 0 receives).
#
#   scripts/reproduce-fig1.sh [OUT] [MODEL…]      (default: out/fig1, all six)
#
# LPICTL (default: a binary built from ./cmd/lpictl into OUT) is the binary
# to use; JOBS (default 2) runs that many simulations at once.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-out/fig1}
shift || true
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(lammps patmos mlwf alexnet stencil alltoall)
jobs=${JOBS:-2}
port2=${PORT2:-4160}
if [ -z "${LPICTL:-}" ]; then
	go build -o "$out/lpictl" ./cmd/lpictl
	LPICTL=$out/lpictl
fi

run() { # model variant sets…
	local m=$1 v=$2
	shift 2
	mkdir -p "$out/$m/$v"
	"$LPICTL" sim run -c "configs/sim/apps/$m.yaml" "$@" -o "$out/$m/$v" >"$out/$m/$v/table.txt"
	echo "done $m $v ($(grep -o '"wall_s": [0-9.]*' "$out/$m/$v/perf.json"))" >&2
}
export -f run
export out LPICTL
for m in "${models[@]}"; do
	echo "$m always-on --set power.mode=always-on"
	echo "$m always-on-leaf --set power.mode=always-on --set output.idle_hist_port=$port2"
	echo "$m deep-sleep-pdt0 --set power.mode=deep-sleep --set predictor.kind=fixed --set predictor.pdt=0"
done | xargs -P "$jobs" -L 1 bash -c 'run "$@"' _

# The table: execution time and energy of both variants; from the always-on
# runs (the application's own gaps), the share of idle periods of all ports
# and of the two tracked ports below t_w of Fast Wake (375 ns), below 1 µs,
# in [1 µs, 1 ms) and at least 1 ms, and the share of idle time in periods
# of at least 1 ms.
json() { grep -o "\"$2\": [-0-9.e+]*" "$1" | head -1 | awk '{print $2}'; }
shares() { # idle_log.csv class → "<375ns <1us 1us-1ms >=1ms time>=1ms" (percent)
	awk -F, -v c="$2" '$1 == c {
		n += $4; t += $5
		if ($3 <= 375) a += $4 # idle_log.csv is in ns
		if ($3 <= 1000) b += $4
		else if ($3 <= 1e6) m += $4
		if ($2 >= 1e6) { l += $4; lt += $5 }
	} END { if (n) printf "%.1f %.1f %.1f %.1f %.1f", 100*a/n, 100*b/n, 100*m/n, 100*l/n, 100*lt/t; else printf "- - - - -" }' "$1"
}
printf '%-9s %12s %12s %8s %8s %8s | %-30s | %-30s | %-30s\n' model exec_on_s exec_pdt0_s exec_+% energy_-% net_-% \
	"all ports: <375ns <1us 1us-1ms >=1ms t>=1ms" "port0 (node 0 NIC): same" "port$port2 (leaf 0 to node 0): same"
for m in "${models[@]}"; do
	a=$out/$m/always-on/summary.json d=$out/$m/deep-sleep-pdt0/summary.json
	[ -f "$a" ] && [ -f "$d" ] || continue
	ea=$(json "$a" exec_time_s) ed=$(json "$d" exec_time_s)
	ta=$(grep -A6 '"energy_j"' "$a" | json /dev/stdin total) td=$(grep -A6 '"energy_j"' "$d" | json /dev/stdin total)
	na=$(grep -A6 '"energy_j"' "$a" | json /dev/stdin network) nd=$(grep -A6 '"energy_j"' "$d" | json /dev/stdin network)
	printf '%-9s %12.6g %12.6g %8.2f %8.2f %8.2f | %-30s | %-30s | %-30s\n' "$m" "$ea" "$ed" \
		"$(awk -v a="$ea" -v b="$ed" 'BEGIN{print 100*(b-a)/a}')" \
		"$(awk -v a="$ta" -v b="$td" 'BEGIN{print 100*(a-b)/a}')" \
		"$(awk -v a="$na" -v b="$nd" 'BEGIN{print 100*(a-b)/a}')" \
		"$(shares "$out/$m/always-on/idle_log.csv" all)" "$(shares "$out/$m/always-on/idle_log.csv" port0)" \
		"$(shares "$out/$m/always-on-leaf/idle_log.csv" "port$port2" 2>/dev/null || echo "- - - - -")"
done
