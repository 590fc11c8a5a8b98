#!/usr/bin/env bash
# Side-by-side benchmark of lpictl's simulator against htsim (make bench-htsim;
# docs/simulator.md "Routing: ECMP and the htsim comparison"). Both simulate
# the same 1024 flows: the permutation of configs/sim/fattree-ecmp-htsim.goal
# (one 4 MiB flow per host, all at time 0), written to htsim's connection
# matrix format, on the k = 16 fat tree at 100 Gb/s, 9000 B MTU, 1 µs cables,
# ECMP. They run alternately, ROUNDS times each, both pinned to one core
# (taskset -c CPU) for a single-core figure; the script prints each run's wall
# time and peak RSS, both completion times and the median of the per-round
# ratios htsim wall / lpictl wall. The ratio, not an absolute time, is the
# figure: the machine's speed and load cancel out.
#
#   scripts/bench-htsim.sh [HTSIM_DIR]        (default: $HTSIM)
#
# HTSIM_DIR is the directory that holds a built htsim_roce (csg-htsim's
# sim/datacenter), or a csg-htsim source tree (github.com/Broadcom/csg-htsim,
# its root or its sim/ directory), where the script builds htsim_roce with
# htsim's own Makefiles. htsim runs as a separate program; nothing of it is
# copied. Without a directory the script prints why it skips and exits 0.
#
# ROUNDS (default 3), CPU (default 0), LPICTL (default bin/lpictl; make
# bench-htsim builds it) and OUT (default out/bench-htsim: the connection
# matrix, every run's output, the build log) can be set in the environment.
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "bench-htsim: $*" >&2; exit 1; }

dir=${1:-${HTSIM:-}}
if [ -z "$dir" ]; then
	echo "bench-htsim: skipped: HTSIM is not set (make bench-htsim HTSIM=DIR, DIR: htsim's sim/datacenter with htsim_roce built, or a csg-htsim source tree to build it in)"
	exit 0
fi
rounds=${ROUNDS:-3}
core=${CPU:-0}
lpictl=${LPICTL:-bin/lpictl}
out=${OUT:-out/bench-htsim}
config=configs/sim/fattree-ecmp-htsim.yaml
goal=configs/sim/fattree-ecmp-htsim.goal

[ -d "$dir" ] || die "HTSIM=$dir is not a directory"
case $rounds in '' | *[!0-9]* | 0) die "ROUNDS=$rounds is not a positive whole number" ;; esac
[ -x /usr/bin/time ] || die "/usr/bin/time (GNU time) is missing: apt-get install time"
command -v taskset >/dev/null || die "taskset is missing: apt-get install util-linux"
[ -x "$lpictl" ] || die "no lpictl binary at $lpictl: make build, or set LPICTL"
mkdir -p "$out"
out=$(cd "$out" && pwd)

# htsim_roce: built already, or built here from a source tree.
htsim=""
for c in "$dir/htsim_roce" "$dir/datacenter/htsim_roce" "$dir/sim/datacenter/htsim_roce"; do
	if [ -x "$c" ]; then htsim=$c; break; fi
done
if [ -z "$htsim" ]; then
	src=""
	for c in "$dir/sim" "$dir" "$dir/.."; do
		if [ -f "$c/Makefile" ] && [ -f "$c/datacenter/main_roce.cpp" ]; then src=$c; break; fi
	done
	[ -n "$src" ] || die "no htsim_roce in $dir and no csg-htsim source there to build it (git clone https://github.com/Broadcom/csg-htsim)"
	log=$out/htsim-build.log
	echo "bench-htsim: building htsim_roce in $src (log: $log)"
	{ make -C "$src" -j"$(nproc)" libhtsim.a && make -C "$src/datacenter" -j"$(nproc)" htsim_roce; } >"$log" 2>&1 ||
		die "building htsim in $src failed: see $log"
	htsim=$src/datacenter/htsim_roce
	[ -x "$htsim" ] || die "htsim's build left no $htsim: see $log"
fi
htsim=$(cd "$(dirname "$htsim")" && pwd)/htsim_roce

# The htsim command line below encodes the config's network: check that the
# config still says the same.
for want in 'kind: rlft, radix: 16, levels: 3' 'kind: ecmp' 'link_rate: 100e9' 'mtu: 9000' 'propagation: 1us' 'mode: always-on'; do
	grep -qF "$want" "$config" || die "$config no longer has '$want': update htsim's command line in scripts/bench-htsim.sh to match"
done

# The permutation, read back from the GOAL file: every rank sends once, to
# a distinct other rank, at time 0. Written as htsim's connection matrix
# (datacenter/connection_matrix.cpp: "Nodes N", "Connections C", then
# "src->dst start PICOSECONDS size BYTES").
cm=$out/permutation.cm
awk '
/^num_ranks / { n = $2 }
/^rank [0-9]+ [{]/ { r = $2 }
$2 == "send" && $5 ~ /^[0-9]+$/ {
	size = $3; sub(/b$/, "", size)
	d = $5
	if (r == d || (d in seen) || (r in sent)) { bad = "rank " r " -> " d; exit 1 }
	seen[d] = 1; sent[r] = 1; c++
	line[c] = r "->" d " start 0 size " size
}
END {
	if (bad != "") { print "not a permutation at " bad > "/dev/stderr"; exit 1 }
	if (n == 0 || c != n) { print c " sends for " n " ranks" > "/dev/stderr"; exit 1 }
	print "# " FILENAME ": one flow per rank, all at time 0 (scripts/bench-htsim.sh)"
	print "Nodes " n
	print "Connections " c
	for (i = 1; i <= c; i++) print line[i]
}' "$goal" >"$cm" 2>"$out/convert.err" || die "$goal is not a one-send-per-rank permutation: $(cat "$out/convert.err")"
nodes=$(sed -n 's/^Nodes //p' "$cm")

# htsim_roce's setting: 3-tier fat tree of 1024 hosts (k = 16), 100 Gb/s
# (its default host rate, set anyway), 9000 B packets, 1 µs per hop, no
# switching latency, per-flow ECMP at every switch (ecmp_host: each switch
# hashes the flow and its path id; -paths is required by that strategy's
# argument check, htsim_roce's RoCE source draws its path id itself), PFC on
# the input queues at 16 packets (pause) and 13 (resume) as lpictl's 150/120 kB,
# output queues that never drop (-q only sets when they warn: 1000 packets keeps
# the output small), long enough (-end, µs) for every flow to finish.
htsim_args=(-nodes "$nodes" -tiers 3 -tm "$cm" -strat ecmp_host -paths 16 -linkspeed 100000 -mtu 9000
	-hop_latency 1 -switch_latency 0 -q 1000 -pfc_thresholds 13 16 -end 10000 -seed 1 -o "$out/htsim-log.dat")
lpictl_args=(sim run -c "$config" --json)

now() { date +%s%N; }
max_rss_kb() { sed -n 's/^.*Maximum resident set size (kbytes): //p' "$1"; }
cpu_s() { awk -F': ' '/User time \(seconds\)|System time \(seconds\)/ { s += $2 } END { printf "%.2f", s }' "$1"; }

# run NAME ROUND: one timed, pinned run; sets wall_ns, cpu, rss_kb, done_ms.
run() {
	local name=$1 r=$2 t0 t1 stdout=$out/$1-$2.out timefile=$out/$1-$2.time
	t0=$(now)
	if [ "$name" = lpictl ]; then
		/usr/bin/time -v -o "$timefile" taskset -c "$core" "$lpictl" "${lpictl_args[@]}" >"$stdout" 2>"$out/$name-$r.err" ||
			die "lpictl failed (round $r): $(tail -n 1 "$out/$name-$r.err")"
	else
		(cd "$out" && /usr/bin/time -v -o "$timefile" taskset -c "$core" "$htsim" "${htsim_args[@]}" >"$stdout" 2>"$out/$name-$r.err") ||
			die "htsim_roce failed (round $r): $(tail -n 1 "$stdout") $(tail -n 1 "$out/$name-$r.err")"
	fi
	t1=$(now)
	wall_ns=$((t1 - t0))
	rss_kb=$(max_rss_kb "$timefile")
	cpu=$(cpu_s "$timefile")
	if [ "$name" = lpictl ]; then
		done_ms=$(sed -n 's/^  "exec_time_s": \([0-9.e+-]*\),$/\1/p' "$stdout" | awk '{ printf "%.3f", $1 * 1e3 }')
		[ -n "$done_ms" ] || die "no exec_time_s in lpictl's output ($stdout)"
	else
		# "Flow NAME ID finished at MICROSECONDS total bytes B", one per flow.
		local finished
		finished=$(grep -c ' finished at ' "$stdout" || true)
		[ "$finished" -eq "$nodes" ] || die "htsim finished $finished of $nodes flows before -end (round $r, $stdout)"
		done_ms=$(awk '/ finished at / { if ($6 > m) m = $6 } END { printf "%.3f", m / 1e3 }' "$stdout")
	fi
}

echo "bench-htsim: $rounds rounds, lpictl then htsim, each pinned to CPU $core (taskset -c $core): a single-core figure"
echo "  lpictl: $lpictl ${lpictl_args[*]}"
echo "  htsim:  (cd $out && $htsim ${htsim_args[*]})"
rows=()
for r in $(seq 1 "$rounds"); do
	run lpictl "$r"
	lw=$wall_ns lc=$cpu lr=$rss_kb ld=$done_ms
	run htsim "$r"
	rows+=("$r $lw $lc $lr $ld $wall_ns $cpu $rss_kb $done_ms")
done

printf '%s\n' "${rows[@]}" | awk -v nodes="$nodes" '
{
	r[NR] = $1
	lw[NR] = $2 / 1e9; lc[NR] = $3; lr[NR] = $4 / 1024; ld[NR] = $5
	hw[NR] = $6 / 1e9; hc[NR] = $7; hr[NR] = $8 / 1024; hd[NR] = $9
	rw[NR] = hw[NR] / lw[NR]; rc[NR] = lc[NR] > 0 ? hc[NR] / lc[NR] : 0
}
function median(a, n,   i, j, t, s) {
	for (i = 1; i <= n; i++) s[i] = a[i]
	for (i = 2; i <= n; i++) for (j = i; j > 1 && s[j - 1] > s[j]; j--) { t = s[j]; s[j] = s[j - 1]; s[j - 1] = t }
	return n % 2 ? s[(n + 1) / 2] : (s[n / 2] + s[n / 2 + 1]) / 2
}
function row(name, a, b, c, d, e, f, g, h, i, j) {
	printf "%-6s | %6.2f s %6.2f s %4.0f MiB %6.3f ms | %6.2f s %6.2f s %4.0f MiB %6.3f ms | %5.2f %5.2f\n", name, a, b, c, d, e, f, g, h, i, j
}
END {
	n = NR
	print ""
	printf "%-6s | %-36s | %-36s | %s\n", "", "lpictl", "htsim", "htsim/lpictl"
	printf "%-6s | %8s %8s %8s %9s | %8s %8s %8s %9s | %5s %5s\n", "round", "wall", "cpu", "peak RSS", "last flow", "wall", "cpu", "peak RSS", "last flow", "wall", "cpu"
	for (i = 1; i <= n; i++) row(r[i], lw[i], lc[i], lr[i], ld[i], hw[i], hc[i], hr[i], hd[i], rw[i], rc[i])
	row("median", median(lw, n), median(lc, n), median(lr, n), median(ld, n), median(hw, n), median(hc, n), median(hr, n), median(hd, n), median(rw, n), median(rc, n))
	print ""
	printf "cpu: user + system time. last flow: lpictl'"'"'s last byte delivered, htsim'"'"'s last final ACK back at its\n"
	printf "  source (%d flows of 4 MiB); htsim_roce seeds its path ids from the clock, so its figure varies by run\n", nodes
	printf "wall per simulated ms (medians): lpictl %.3f s, htsim %.3f s\n", median(lw, n) / median(ld, n), median(hw, n) / median(hd, n)
	printf "ratio htsim wall / lpictl wall, median of %d rounds: %.2f (cpu time: %.2f)\n", n, median(rw, n), median(rc, n)
}'
