#!/usr/bin/env bash
# make figures: runs the figure sweeps of configs/sweeps/fig*.yaml and
# writes the PNGs that docs/reproducing.md shows into docs/figures/.
#
#   scripts/figures.sh [OUT] [FIGURE…]     (default: out/figures, every figure)
#
# Each sweep's runs go to OUT/<sweep>/ and resume there (delete OUT to start
# afresh). LPICTL (default bin/lpictl) is the binary, JOBS (default: the
# core count) the runs at once. FULL=1 runs the applications at the paper's
# scale instead of the shipped scenarios' (docs/reproducing.md: hours).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-out/figures}
shift || true
LPICTL=${LPICTL:-bin/lpictl}
jobs=${JOBS:-$(nproc)}
figdir=docs/figures
mkdir -p "$out" "$figdir"

# full APP: the --set overrides that run APP at the paper's scale.
full() {
	[ "${FULL:-0}" = 1 ] || return 0
	case $1 in
	lammps) echo "--set workload.steps=100" ;;
	alexnet) echo "--set workload.steps=970" ;; # ~97 s of 100 ms steps (§4.7)
	esac
}

# sweep NAME FIGURE [PLOT ARGS…]: runs configs/sweeps/NAME.yaml, plots it.
sweep() {
	local name=$1 figure=$2 app
	shift 2
	app=$(sed -E 's/^fig[0-9]+-([a-z]+)-.*/\1/' <<<"$name")
	# shellcheck disable=SC2046
	"$LPICTL" sweep run "configs/sweeps/$name.yaml" -o "$out/$name" -j "$jobs" $(full "$app")
	"$LPICTL" sweep plot "$out/$name" --figure "$figure" -o "$figdir/$name.png" "$@"
}

want() { [ ${#figures[@]} -eq 0 ] || [[ " ${figures[*]} " == *" $1 "* ]]; }
figures=("$@")
want fig1-idle && sweep fig1-idle idle-hist --class port
for app in lammps:7:8 patmos:10:11 mlwf:13:14 alexnet:16:17; do
	IFS=: read -r a p q <<<"$app"
	want "fig$p-$a-pdt" && sweep "fig$p-$a-pdt" pdt-sweep
	want "fig$q-$a-predictors" && sweep "fig$q-$a-predictors" predictors
done
echo "figures in $figdir/"
