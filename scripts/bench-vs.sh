#!/usr/bin/env bash
# Compares a simulator benchmark's events/s between the working tree and
# an older commit (make bench-vs; docs/simulator.md "Performance"): both
# test binaries are built, then each round runs them at the same time, one
# pinned to each of two cores, and swaps the cores the next round. A shared
# machine's speed swings by a quarter between runs a minute apart; two runs
# at once see the same swings, so their ratio is steadier than that of runs
# one after the other. With one core (or no taskset) the runs alternate.
# Prints each round's events/s and ratio (this tree / REV) and the median.
#
# ALTERNATE=1 runs them in turn instead, each alone on one core (the last),
# the other idle: no contention between the two, whose shared cache and
# memory favour the tree that touches fewer lines when they run at once.
# It prints each tree's best, median and mean over the rounds and their
# ratios; its rounds are cheaper, so give it more (25 moved the mean of
# the tree against itself by 1-3 % on the development VM). It also prints
# the median and quartiles of the rounds' own ratios (each round's two
# runs are a few seconds apart): a machine whose speed drifts over the
# minutes of a measurement moves both runs of a round alike, so these
# follow the drift less than the trees' separate medians do.
#
#   scripts/bench-vs.sh   (REV=fa0fa16, BENCH='Megafly4160/heap$', ROUNDS=6, ALTERNATE=, PKG=./sim/network/, GO=go)
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${REV:-fa0fa16}
bench=${BENCH:-Megafly4160/heap\$}
rounds=${ROUNDS:-6}
pkg=${PKG:-./sim/network/}
go=${GO:-go}
git rev-parse --verify -q "$rev^{commit}" >/dev/null || { echo "bench-vs: REV=$rev: no such commit" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "bench-vs: ROUNDS=$rounds: want a positive integer" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/old" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT

git worktree add --detach -q "$tmp/old" "$rev"
# Each tree's test binary is built as that tree builds lpictl: with its
# profile (cmd/lpictl/default.pgo, make pgo) if it has one.
testc() {
	local pgo=()
	[ -f cmd/lpictl/default.pgo ] && pgo=(-pgo="$PWD/cmd/lpictl/default.pgo")
	"$go" test "${pgo[@]}" -c -o "$1" "$pkg"
}
(cd "$tmp/old" && testc "$tmp/old.test")
testc "$tmp/new.test"

# events BIN CPU OUT: one run of the benchmark (pinned to CPU if set).
events() {
	local pin=()
	[ -n "$2" ] && pin=(taskset -c "$2")
	"${pin[@]}" "$1" -test.run '^$' -test.bench "$bench" -test.benchtime 1x >"$3" 2>&1 || { cat "$3" >&2; return 1; }
}
rate() { awk '{for (i = 2; i < NF; i++) if ($(i+1) == "events/s") {print $i; exit}}' "$1"; }
# both: the round's events/s of the older tree and of this one, in o and n.
both() {
	o=$(rate "$tmp/old.out") n=$(rate "$tmp/new.out")
	if [ -z "$o" ] || [ -z "$n" ]; then
		echo "bench-vs: no events/s in the output of $bench" >&2
		exit 1
	fi
}

together=
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null && [ -z "${ALTERNATE:-}" ]; then together=1; fi
if [ -n "${ALTERNATE:-}" ]; then
	last=
	command -v taskset >/dev/null && last=$(($(nproc) - 1))
	echo "bench-vs: $bench, this tree against $rev ($(git rev-parse --short "$rev")), $rounds rounds in turn${last:+ on core $last}"
	: >"$tmp/old.rates"
	: >"$tmp/new.rates"
	: >"$tmp/ratios"
	for r in $(seq "$rounds"); do
		events "$tmp/old.test" "$last" "$tmp/old.out"
		events "$tmp/new.test" "$last" "$tmp/new.out"
		both
		echo "$o" >>"$tmp/old.rates"
		echo "$n" >>"$tmp/new.rates"
		ratio=$(awk -v n="$n" -v o="$o" 'BEGIN {printf "%.4f", n / o}')
		echo "$ratio" >>"$tmp/ratios"
		printf '  round %d: %s %10.0f events/s | this tree %10.0f events/s | %.3f×\n' "$r" "$rev" "$o" "$n" "$ratio"
	done
	# summary FILE: best, median and mean of a tree's rates.
	summary() { sort -n "$1" | awk -v stats=1 -f scripts/median.awk; }
	read -r ob om oa < <(summary "$tmp/old.rates")
	read -r nb nm na < <(summary "$tmp/new.rates")
	awk -v ob="$ob" -v om="$om" -v oa="$oa" -v nb="$nb" -v nm="$nm" -v na="$na" -v rev="$rev" 'BEGIN {
		printf "  %s: best %.0f, median %.0f, mean %.0f events/s\n", rev, ob, om, oa
		printf "  this tree: best %.0f, median %.0f, mean %.0f events/s\n", nb, nm, na
		printf "  this tree / %s: best %.3f×, median %.3f×, mean %.3f×\n", rev, nb / ob, nm / om, na / oa
	}'
	# The rounds' ratios: median and quartiles (the middle half of them).
	read -r q1 med q3 < <(sort -n "$tmp/ratios" | awk -v quartiles=1 -f scripts/median.awk)
	printf "  the rounds' ratios (this tree / %s): median %.3f×, quartiles %.3f–%.3f×\n" "$rev" "$med" "$q1" "$q3"
	exit 0
fi
echo "bench-vs: $bench, this tree against $rev ($(git rev-parse --short "$rev")), $rounds rounds, $([ -n "$together" ] && echo 'both at once on cores 0 and 1, swapped each round' || echo 'alternately')"
ratios=()
for r in $(seq "$rounds"); do
	if [ -n "$together" ]; then
		a=0 b=1
		[ $((r % 2)) -eq 0 ] && a=1 b=0
		events "$tmp/old.test" $a "$tmp/old.out" &
		old=$!
		events "$tmp/new.test" $b "$tmp/new.out"
		wait "$old"
	else
		events "$tmp/old.test" "" "$tmp/old.out"
		events "$tmp/new.test" "" "$tmp/new.out"
	fi
	both
	ratio=$(awk -v n="$n" -v o="$o" 'BEGIN {printf "%.3f", n / o}')
	ratios+=("$ratio")
	printf '  round %d: %s %10.0f events/s | this tree %10.0f events/s | %s×\n' "$r" "$rev" "$o" "$n" "$ratio"
done
printf '  median: %s× the events/s of %s\n' \
	"$(printf '%s\n' "${ratios[@]}" | sort -n | awk -f scripts/median.awk)" "$rev"
