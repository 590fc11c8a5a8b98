#!/bin/bash
# test-slurm.sh [BINARY] — `lpictl sweep submit --slurm` against a real Slurm: a throw-away
# single-node cluster (scripts/slurm-local.sh) runs configs/sweeps/smoke.yaml as a job array,
# and its results.csv must equal that of the same sweep run locally (`lpictl sweep run -j 2`),
# wall-time columns aside. Each array task must be COMPLETED (exit 0) in Slurm's records and
# have its output file in DIR/slurm/. Resume goes through Slurm too: with two runs' status.json
# removed, a submit lists only those indexes in --array; with nothing pending, a submit says so
# and submits no job.
# BINARY: lpictl to run (default: built into a temporary directory).
# Skips (exit 0, "slurm-check: skipped: <why>") when not root or when the Slurm packages are
# missing and cannot be installed. Takes well under two minutes on 2 cores.
# Environment: LPICTL_SLURM_TEST_TIMEOUT (seconds the job array may take, default 90), and
# slurm-local.sh's LPICTL_SLURM_DIR / LPICTL_SLURM_PORT.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
sweep=configs/sweeps/smoke.yaml
job_timeout=${LPICTL_SLURM_TEST_TIMEOUT:-90}

skip() {
	echo "slurm-check: skipped: $*"
	exit 0
}
[ "$(id -u)" = 0 ] || skip "not root (the cluster's daemons run as root and may need apt-get install slurmctld slurmd slurm-client munge)"

tmp=$(mktemp -d)
started=
cleanup() {
	if [ -n "$started" ]; then "$repo/scripts/slurm-local.sh" stop >/dev/null 2>&1 || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT

bin=${1:-}
if [ -z "$bin" ]; then
	go build -o "$tmp/lpictl" ./cmd/lpictl
	bin=$tmp/lpictl
fi
case "$bin" in /*) ;; *) bin=$repo/$bin ;; esac
[ -x "$bin" ] || { echo "slurm-check: FAIL: $bin is not an executable" >&2; exit 1; }
[ -f "$sweep" ] || { echo "slurm-check: FAIL: $sweep is missing" >&2; exit 1; }

cluster_dir=${LPICTL_SLURM_DIR:-/run/lpictl-slurm}
# Never stop a cluster this run did not start.
before_status=$("$repo/scripts/slurm-local.sh" status 2>/dev/null || true)
if grep -q ': running' <<<"$before_status"; then
	echo "slurm-check: FAIL: a local cluster already runs in $cluster_dir (scripts/slurm-local.sh stop, or set LPICTL_SLURM_DIR and LPICTL_SLURM_PORT)" >&2
	exit 1
fi
rc=0
"$repo/scripts/slurm-local.sh" start 2>"$tmp/start.log" || rc=$?
if [ "$rc" = 3 ]; then
	skip "the Slurm packages are missing and apt-get cannot install them: $(tail -n 1 "$tmp/start.log")"
fi
started=1 # also after a failed start: stop cleans up whatever it left
if [ "$rc" != 0 ]; then
	cat "$tmp/start.log" >&2
	echo "slurm-check: FAIL: the local Slurm cluster did not start" >&2
	exit 1
fi
export SLURM_CONF=$cluster_dir/slurm.conf

d1=$tmp/D1
d2=$tmp/D2
fail() {
	echo "slurm-check: FAIL: $*" >&2
	local f
	for f in "$cluster_dir/slurmctld.log" "$cluster_dir/slurmd.log"; do
		[ -f "$f" ] || continue
		echo "----- $f (last 60 lines)" >&2
		tail -n 60 "$f" >&2
	done
	if [ -n "${job:-}" ]; then
		echo "----- scontrol show job $job" >&2
		scontrol show job -o "$job" >&2 2>&1 || true
	fi
	for f in "$d1"/slurm/*; do
		[ -f "$f" ] || continue
		echo "----- $f" >&2
		tail -n 30 "$f" >&2
	done
	[ ! -f "$d1/sweep.sbatch" ] || { echo "----- $d1/sweep.sbatch" >&2; cat "$d1/sweep.sbatch" >&2; }
	exit 1
}

# The highest job id the controller knows (finished jobs stay for MinJobAge=3600 s); 0 if none.
last_job_id() {
	{ scontrol show job -o 2>/dev/null || true; } | sed -n 's/^JobId=\([0-9]*\) .*/\1/p' | sort -n | tail -n 1 | grep . || echo 0
}

# submit OUTFILE: `lpictl sweep submit` the sweep into D1 (stdout+stderr to OUTFILE, echoed);
# sets rc to its exit status.
submit() {
	rc=0
	"$bin" sweep submit "$sweep" -o "$d1" --slurm --partition debug --time 10 --max-parallel 2 \
		>"$1" 2>&1 || rc=$?
	cat "$1"
}

# job_of OUTFILE: the job id submit printed: "… job N" on the last non-empty line ("submitted 5
# pending runs of 5 (script …) as Slurm job 12"), or that line alone when it is a bare id
# ("12" or "12;cluster").
job_of() {
	local last
	last=$(grep . "$1" | tail -n 1 || true)
	sed -n 's/.*[Jj]ob \([0-9][0-9]*\).*/\1/p; s/^\([0-9][0-9]*\)\(;.*\)\{0,1\}$/\1/p' <<<"$last" | head -n 1
}

# await JOB INDEX...: wait (bounded) until the array leaves the queue, then check that each task
# ran through Slurm: COMPLETED with exit code 0 in the controller's records (finished jobs stay
# for MinJobAge=3600 s; there is no accounting for sacct) and its output file in D1/slurm/.
await() {
	local job=$1 out rec i deadline=$((SECONDS + job_timeout))
	shift
	while :; do
		if out=$(squeue -j "$job" -h 2>&1); then
			[ -z "$out" ] && break
		else
			case "$out" in *"Invalid job id"*) break ;; esac # purged: finished
		fi
		[ "$SECONDS" -lt "$deadline" ] || fail "job $job still queued or running after ${job_timeout}s: $out"
		sleep 1
	done
	for i in "$@"; do
		rec=$(scontrol show job -o "$job" 2>/dev/null | grep " ArrayTaskId=$i " || true)
		[ -n "$rec" ] || fail "task ${job}_$i is not in Slurm's records"
		case "$rec" in *" JobState=COMPLETED "*" ExitCode=0:0 "*) ;; *)
			fail "task ${job}_$i did not complete: $(grep -o 'JobState=[^ ]*\|ExitCode=[^ ]*\|Reason=[^ ]*' <<<"$rec" | tr '\n' ' ')" ;;
		esac
		[ -f "$d1/slurm/${job}_$i.out" ] || fail "task ${job}_$i has no output file $d1/slurm/${job}_$i.out"
	done
	# No task beyond those asked for.
	local n
	n=$(scontrol show job -o "$job" 2>/dev/null | grep -c ' ArrayTaskId=' || true)
	[ "$n" = $# ] || fail "job $job has $n array tasks, expected $# (indexes $*)"
}

# expect_done: sweep status (text and --json) says every run is done.
expect_done() {
	"$bin" sweep status "$d1" >"$tmp/status.out" 2>&1 || { cat "$tmp/status.out" >&2; fail "lpictl sweep status exited non-zero"; }
	cat "$tmp/status.out"
	"$bin" sweep status "$d1" --json >"$tmp/status.json" 2>&1 || { cat "$tmp/status.json" >&2; fail "lpictl sweep status --json exited non-zero"; }
	grep -Eq "\"done\" *: *$runs([^0-9]|\$)" "$tmp/status.json" || { cat "$tmp/status.json" >&2; fail "sweep status --json does not say $runs done"; }
	if grep -Eq '"(failed|pending)" *: *[1-9]' "$tmp/status.json"; then
		cat "$tmp/status.json" >&2
		fail "sweep status --json reports failed or pending runs"
	fi
}

# 1. Submit the sweep as a job array of all its runs, at most 2 at a time.
start_s=$SECONDS
submit "$tmp/submit.out"
[ "$rc" = 0 ] || fail "lpictl sweep submit exited $rc"
job=$(job_of "$tmp/submit.out")
[ -n "$job" ] || fail "no job id in the output of lpictl sweep submit"
scontrol show job -o "$job" >/dev/null 2>&1 || fail "Slurm does not know job $job printed by lpictl sweep submit"
runs=$(grep -o '"index" *:' "$d1/plan.json" | wc -l)
[ "$runs" -ge 4 ] || fail "$d1/plan.json lists $runs runs; the check needs at least 4"
grep -qx -- "#SBATCH --array=0-$((runs - 1))%2" "$d1/sweep.sbatch" ||
	fail "$d1/sweep.sbatch has no '#SBATCH --array=0-$((runs - 1))%2' line for its $runs runs"

# 2. Every task ran through Slurm; status says all done; collect writes the table.
# shellcheck disable=SC2046 # one argument per index
await "$job" $(seq 0 $((runs - 1)))
echo "slurm-check: job array $job: $runs tasks COMPLETED (exit 0, at most 2 at a time, output in $d1/slurm/) in $((SECONDS - start_s))s"
expect_done
"$bin" sweep collect "$d1" || fail "lpictl sweep collect exited non-zero"

# 3. Resume through Slurm: with runs 1 and 3 no longer done (their status.json removed), a
# submit lists only them in --array and they run again.
for i in 1 3; do
	id=$(awk -F, -v i="$i" 'NR > 1 && $1 == i { print $2 }' "$d1/results.csv")
	[ -f "$d1/points/$id/status.json" ] || fail "run $i: no $d1/points/$id/status.json (id from results.csv)"
	rm "$d1/points/$id/status.json"
done
submit "$tmp/resume.out"
[ "$rc" = 0 ] || fail "lpictl sweep submit (resume) exited $rc"
job2=$(job_of "$tmp/resume.out")
if [ -z "$job2" ] || [ "$job2" = "$job" ]; then fail "no new job id in the output of the resuming submit"; fi
grep -qx -- "#SBATCH --array=1,3%2" "$d1/sweep.sbatch" ||
	fail "resuming submit: $d1/sweep.sbatch lacks '#SBATCH --array=1,3%2' (only the pending runs 1 and 3)"
job=$job2
await "$job" 1 3
echo "slurm-check: resume: job array $job ran exactly the pending runs 1 and 3"
expect_done
"$bin" sweep collect "$d1" || fail "lpictl sweep collect exited non-zero"

# 4. Nothing is pending: submit must say so and submit nothing.
before=$(last_job_id)
submit "$tmp/resubmit.out"
after=$(last_job_id)
[ "$after" = "$before" ] || fail "a submit into a finished $d1 submitted job(s) $((before + 1))..$after (expected: nothing pending, nothing submitted)"
[ "$rc" = 0 ] || fail "a submit into a finished $d1 exited $rc (expected 0: nothing pending)"
grep -qiE 'nothing|no (pending|runs)|all .*done|0 pending' "$tmp/resubmit.out" ||
	fail "a submit into a finished $d1 did not say that nothing is pending"
echo "slurm-check: submit into the finished $d1: nothing pending, no job submitted"

# 5. The same sweep locally; the tables must agree except for wall-time columns.
"$bin" sweep run "$sweep" -o "$d2" -j 2 >"$tmp/run.out" 2>&1 || { cat "$tmp/run.out" >&2; fail "lpictl sweep run exited non-zero"; }

# drop_wall CSV: the CSV without its wall-time columns (header names wall_s, wall, *_wall_s, …).
# Quote-aware (RFC 4180 fields may hold commas and doubled quotes); plain POSIX awk.
drop_wall() {
	awk '
	function split_csv(line, f,    n, i, c, q, cur) {
		n = 0; cur = ""; q = 0
		for (i = 1; i <= length(line); i++) {
			c = substr(line, i, 1)
			if (q) {
				if (c == "\"" && substr(line, i + 1, 1) == "\"") { cur = cur "\"\""; i++ }
				else { if (c == "\"") q = 0; cur = cur c }
			} else if (c == ",") { f[++n] = cur; cur = "" }
			else { if (c == "\"") q = 1; cur = cur c }
		}
		f[++n] = cur
		return n
	}
	{
		n = split_csv($0, f)
		if (NR == 1) for (i = 1; i <= n; i++) drop[i] = (f[i] ~ /(^|_)wall(_|$)/)
		out = ""; sep = ""
		for (i = 1; i <= n; i++) if (!drop[i]) { out = out sep f[i]; sep = "," }
		print out
	}' "$1"
}
for d in "$d1" "$d2"; do [ -s "$d/results.csv" ] || fail "$d/results.csv is missing or empty"; done
drop_wall "$d1/results.csv" >"$tmp/slurm.csv"
drop_wall "$d2/results.csv" >"$tmp/local.csv"
[ "$(head -n 1 "$d1/results.csv")" != "$(head -n 1 "$tmp/slurm.csv")" ] ||
	fail "results.csv has no wall-time column to ignore (header: $(head -n 1 "$d1/results.csv"))"
[ "$(wc -l <"$tmp/slurm.csv")" = $((runs + 1)) ] || fail "$d1/results.csv has $(($(wc -l <"$tmp/slurm.csv") - 1)) rows, plan.json $runs runs"
if ! diff -u "$tmp/local.csv" "$tmp/slurm.csv" >"$tmp/csv.diff"; then
	echo "--- local (sweep run -j 2)  +++ Slurm (sweep submit --slurm), wall-time columns removed:" >&2
	cat "$tmp/csv.diff" >&2
	fail "results.csv through Slurm differs from the local run"
fi
echo "slurm-check: ok: $runs runs through Slurm job array $job match the local run (results.csv, wall-time columns aside); total $((SECONDS - start_s))s"
