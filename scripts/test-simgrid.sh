#!/bin/bash
# test-simgrid.sh [BINARY] — SimGrid time-independent (TI) traces through lpictl (issue 16).
# Each MPI program in scripts/simgrid/ (ring, allreduce, halo, nonblocking) is compiled with
# smpicc and traced with `smpirun -trace-ti` on a platform file it writes (8 hosts of
# 1 Gflop/s) into a temporary directory. Compute is injected with smpi_execute_flops and SMPI's
# own timing of the code between MPI calls is off (smpi/simulate-computation:no), so the traces
# are deterministic. Then, for each program:
#   1. (all programs first, so the SimGrid side runs on its own) the TI files themselves hold the per-rank compute of scripts/simgrid/expected/<prog>.txt
#      (hand-written from the program's parameters), summed here from the "compute" lines;
#   2. `lpictl workload describe --ranks --json` on a scenario with
#      `workload: {kind: ti, file: <index>, flop_rate: 1e9}` reports per rank the expected sends,
#      receives, bytes each way and compute (flops / 1e9 s exactly, in ps); on an ideal network
#      without latency and of infinite bandwidth (--ideal-latency 0 --ideal-bandwidth 0) an
#      execution time of exactly the critical path's compute, and at the ideal host's 550 ns and
#      400 Gb/s one between that and that plus its message hops (critical_hops of hop_bytes);
#   3. `lpictl sim run` replays the same scenario on a small network and delivers exactly the
#      table's messages through it.
# BINARY: lpictl to run (default: built into a temporary directory).
# Skips (exit 0, "simgrid-check: skipped: <why>") without smpicc/smpirun when not root or when
# apt-get cannot install libsimgrid-dev, and without python3. Each smpirun runs under timeout 60.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
dir=$repo/scripts/simgrid
progs=(ring allreduce halo nonblocking)

skip() {
	echo "simgrid-check: skipped: $*"
	exit 0
}
fail() {
	echo "simgrid-check: FAIL: $*" >&2
	exit 1
}

if ! command -v smpicc >/dev/null 2>&1 || ! command -v smpirun >/dev/null 2>&1; then
	if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
		skip "smpicc/smpirun not found and not root to install them (apt-get install libsimgrid-dev)"
	fi
	echo "simgrid-check: smpicc missing: installing it (apt-get install libsimgrid-dev)" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y --no-install-recommends libsimgrid-dev >/dev/null 2>&1 ||
		{ apt-get update >/dev/null 2>&1 && apt-get install -y --no-install-recommends libsimgrid-dev >/dev/null 2>&1; } ||
		skip "apt-get cannot install libsimgrid-dev"
	command -v smpicc >/dev/null 2>&1 || skip "libsimgrid-dev installed but smpicc is not on PATH"
fi
command -v python3 >/dev/null 2>&1 || skip "python3 not found (it parses lpictl's JSON and the TI files)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The SimGrid platform: one cluster of 8 hosts node-0 … node-7, 1 Gflop/s each, each with a
# private 10 GB/s link of 1 µs latency to a 10 GB/s, 1 µs backbone. The TI traces do not depend
# on these numbers except for the compute they time, and the programs inject exact flop counts
# with smpi_execute_flops.
cat >"$tmp/platform.xml" <<'XML'
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="AS0" routing="Full">
    <cluster id="c" prefix="node-" suffix="" radical="0-7" speed="1Gf" bw="10GBps" lat="1us" bb_bw="10GBps" bb_lat="1us"/>
  </zone>
</platform>
XML
for i in 0 1 2 3 4 5 6 7; do echo "node-$i"; done >"$tmp/hosts.txt"
bin=${1:-}
if [ -z "$bin" ]; then
	go build -o "$tmp/lpictl" ./cmd/lpictl
	bin=$tmp/lpictl
fi
case "$bin" in /*) ;; *) bin=$repo/$bin ;; esac
[ -x "$bin" ] || fail "$bin is not an executable"

# expected FILE KEY: the value of a "KEY value" line.
expected() { awk -v k="$2" '$1 == k { print $2; found = 1 } END { exit !found }' "$1"; }

for p in "${progs[@]}"; do
	exp=$dir/expected/$p.txt
	[ -f "$exp" ] || fail "$exp is missing"
	np=$(expected "$exp" np) || fail "$exp has no 'np' line"
	work=$tmp/$p
	mkdir -p "$work"
	smpicc -O0 -o "$work/$p" "$dir/$p.c" >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; fail "smpicc $p.c"; }
	# Relative names: the index lists its per-rank files relative to the working directory.
	rc=0
	(cd "$work" && timeout 60 smpirun -np "$np" -platform "$tmp/platform.xml" -hostfile "$tmp/hosts.txt" \
		-trace-ti --cfg=tracing/filename:"$p.ti" --cfg=smpi/host-speed:1Gf \
		--cfg=smpi/simulate-computation:no "./$p") >"$work/smpirun.log" 2>&1 || rc=$?
	if [ "$rc" != 0 ]; then
		tail -n 20 "$work/smpirun.log" >&2
		fail "smpirun $p exited $rc (124: over the 60 s timeout)"
	fi
	[ -s "$work/$p.ti" ] || fail "smpirun $p wrote no $work/$p.ti"
	n=$(grep -c . "$work/$p.ti")
	[ "$n" = "$np" ] || fail "$p.ti lists $n rank files, expected $np"

	# 1. The trace's own compute per rank equals the table (TI "compute <flops>" lines).
	(cd "$work" && python3 - "$p.ti" "$exp" <<'EOF') || fail "$p: the TI trace differs from $exp (above)"
import sys
index, exp = sys.argv[1], sys.argv[2]
rows = {int(f[1]): f[2:] for f in (l.split() for l in open(exp)) if f and f[0] == "rank"}
files = [l.strip() for l in open(index) if l.strip()]
ok = len(files) == len(rows)
for r, name in enumerate(files):
    acts = [l.split() for l in open(name)]
    flops = sum(float(f[2]) for f in acts if len(f) >= 3 and f[1] == "compute")
    if flops != float(rows[r][4]):
        print(f"rank {r}: the trace computes {flops:g} flops, the table {rows[r][4]}", file=sys.stderr)
        ok = False
    # Point-to-point only (no collective action): sends and bytes sent as SMPI recorded them
    # ("send|isend <dst> <tag> <count> <type>", "sendRecv <count> <dst> …"; type 0 is MPI_DOUBLE).
    if all(f[1] in ("init", "finalize", "compute", "send", "isend", "recv", "irecv", "sendRecv", "wait", "waitall") for f in acts):
        sends = [f for f in acts if f[1] in ("send", "isend", "sendRecv")]
        nbytes = sum(8 * int(f[2] if f[1] == "sendRecv" else f[4]) for f in sends)
        if (len(sends), nbytes) != (int(rows[r][0]), int(rows[r][2])):
            print(f"rank {r}: the trace sends {len(sends)} messages of {nbytes} bytes in all, the table {rows[r][0]} of {rows[r][2]}", file=sys.stderr)
            ok = False
sys.exit(0 if ok else 1)
EOF
	echo "simgrid-check: $p: traced on $np ranks ($(cat "$work/$p".ti_files/* | grep -c .) TI actions), compute (and point-to-point sends) per rank as in $exp"
done

# The subcommand and flag the lpictl side needs (wired for issue 16).
"$bin" workload describe --help 2>/dev/null | grep -q -- '--ranks' ||
	fail "$bin has no 'lpictl workload describe --ranks' (per-rank sends, receives, bytes, compute)"

for p in "${progs[@]}"; do
	exp=$dir/expected/$p.txt
	work=$tmp/$p
	# 2. lpictl's view of the trace.
	cat >"$work/scenario.yaml" <<EOF
name: simgrid-$p
seed: 1
topology:
  kind: megafly
  radix: 8
power:
  preset: eee-400g
  mode: deep-sleep
predictor:
  kind: perfboundcorrect
  bound: 0.01
workload:
  kind: ti
  file: $p.ti
  flop_rate: 1e9
EOF
	rc=0
	"$bin" workload describe --ranks --json -c "$work/scenario.yaml" >"$work/describe.json" 2>"$work/describe.err" || rc=$?
	# The same on an ideal network without latency and of infinite bandwidth: the execution
	# time is then exactly the compute on the critical path.
	[ "$rc" != 0 ] || "$bin" workload describe --ranks --json --ideal-latency 0 --ideal-bandwidth 0 -c "$work/scenario.yaml" \
		>"$work/describe0.json" 2>"$work/describe.err" || rc=$?
	if [ "$rc" != 0 ]; then
		cat "$work/describe.err" >&2
		fail "$p: lpictl workload describe --ranks --json exited $rc"
	fi
	python3 - "$work/describe.json" "$exp" "$p" "$work/describe0.json" <<'EOF' || fail "$p: lpictl workload describe differs from $exp (above)"
import json, sys
d = json.load(open(sys.argv[1]))
d0 = json.load(open(sys.argv[4]))
exp, prog = sys.argv[2], sys.argv[3]
rows, kv = {}, {}
for f in (l.split() for l in open(exp)):
    if not f or f[0].startswith("#"):
        continue
    if f[0] == "rank":
        rows[int(f[1])] = [int(x) for x in f[2:6]] + [float(f[6])]
    else:
        kv[f[0]] = float(f[1])
per = d.get("per_rank")
if not isinstance(per, list):
    sys.exit(f"{prog}: no per_rank array in the JSON (keys: {sorted(d)})")
ok = True
if d.get("ranks") != len(rows) or len(per) != len(rows):
    print(f"{prog}: {d.get('ranks')} ranks, {len(per)} per_rank rows; the table has {len(rows)}", file=sys.stderr)
    ok = False
for e in per:
    r = e["rank"]
    if r not in rows:
        continue
    sends, recvs, bs, br, flops = rows[r]
    got = (e["sends"], e["receives"], e["bytes_sent"], e["bytes_received"], e["compute_ps"])
    want = (sends, recvs, bs, br, round(flops * 1000))  # 1 Gflop/s: 1 flop = 1000 ps
    if got != want:
        print(f"{prog} rank {r}: sends, receives, bytes sent, bytes received, compute ps = {got}, expected {want}", file=sys.stderr)
        ok = False
crit = round(kv["critical_flops"] * 1000)
# One message hop on lpictl's ideal host (workload.NewIdealHost): 550 ns + bytes at 400 Gb/s
# (20 ps per byte).
hop = 550_000 + 20 * int(kv["hop_bytes"])
lo, hi = crit, crit + int(kv["critical_hops"]) * hop
t = d.get("ideal_exec_ps")
if t is None or not lo <= t <= hi:
    print(f"{prog}: ideal_exec_ps {t}, expected the critical path's compute {lo} ps plus at most {hi - lo} ps of hops", file=sys.stderr)
    ok = False
t0 = d0.get("ideal_exec_ps")
if t0 != crit:
    print(f"{prog}: ideal_exec_ps {t0} on a network without latency, expected exactly the critical path's compute {crit} ps", file=sys.stderr)
    ok = False
if ok:
    print(f"simgrid-check: {prog}: {len(per)} ranks' messages, bytes and compute as expected; ideal execution {t0 / 1e9:.6f} ms without latency = the compute on the critical path, {t / 1e9:.6f} ms at 550 ns per message")
sys.exit(0 if ok else 1)
EOF

	# 3. The full simulator replays it.
	rc=0
	"$bin" sim run -c "$work/scenario.yaml" --json --deterministic >"$work/sim.json" 2>"$work/sim.err" || rc=$?
	if [ "$rc" != 0 ]; then
		cat "$work/sim.err" >&2
		fail "$p: lpictl sim run exited $rc"
	fi
	# One rank per node and every message under the eager threshold: the packet network carries
	# exactly the messages of the table (no intra-node path, no RTS/CTS).
	python3 - "$work/sim.json" "$exp" "$p" <<'EOF' || fail "$p: lpictl sim run differs from $exp (above)"
import json, sys
r = json.load(open(sys.argv[1]))
want = sum(int(f[2]) for f in (l.split() for l in open(sys.argv[2])) if f and f[0] == "rank")
if r.get("messages") != want:
    sys.exit(f"{sys.argv[3]}: lpictl sim run delivered {r.get('messages')} messages, the table sends {want}")
print(f"simgrid-check: {sys.argv[3]}: lpictl sim run delivered the {want} messages, execution {r['exec_time_s'] * 1e3:.6f} ms on the Megafly")
EOF
done
echo "simgrid-check: ok: ${progs[*]} traced with SMPI and replayed by lpictl as expected"
