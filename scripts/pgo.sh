#!/usr/bin/env bash
# Writes cmd/lpictl/default.pgo, the CPU profile Go's compiler optimises
# lpictl with (make pgo; docs/simulator.md "Profile-guided build"): go
# build uses the default.pgo of the main package's directory, so make build,
# make deb and a plain go build all get it. The profile comes from lpictl
# itself, built without one, running shipped scenarios that together cover
# what users run: synthetic traffic on the Megafly-4160 and LAMMPS replayed
# on it (each on one and two threads), the fat trees (ECMP, htsim's job) and the
# torus. Run it again after a large change to the simulator's hot code: a
# stale profile still builds and computes the same results, it only
# optimises less.
#
#   scripts/pgo.sh        (GO: the go command, default go; LAMMPS_STEPS, default 1)
set -euo pipefail
cd "$(dirname "$0")/.."
go=${GO:-go}
steps=${LAMMPS_STEPS:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# -trimpath: the profile names files by module path, not by where they are.
"$go" build -trimpath -pgo=off -o "$tmp/lpictl" ./cmd/lpictl
n=0
profile() {
	n=$((n + 1))
	echo "pgo: $*" >&2
	"$tmp/lpictl" sim run "$@" --cpuprofile "$tmp/$n.pprof" -o "$tmp/out" >/dev/null
}
profile -c configs/sim/megafly-4160.yaml --set workload.duration=100us
profile -c configs/sim/megafly-4160.yaml --set workload.duration=50us --threads 2
profile -c configs/sim/apps/lammps.yaml --set workload.steps="$steps"
profile -c configs/sim/apps/lammps.yaml --set workload.steps="$steps" --threads 2
profile -c configs/sim/fattree-ecmp-htsim.yaml
profile -c configs/sim/fattree-1024.yaml --set workload.duration=20us
profile -c configs/sim/torus-4000.yaml --set workload.duration=20us

# Merged (samples add up) beside the profile, then renamed over it: never
# half-written.
trap 'rm -rf "$tmp" cmd/lpictl/.default.pgo.new' EXIT
"$go" tool pprof -proto "$tmp"/*.pprof >cmd/lpictl/.default.pgo.new
mv cmd/lpictl/.default.pgo.new cmd/lpictl/default.pgo
echo "pgo: wrote cmd/lpictl/default.pgo ($(wc -c <cmd/lpictl/default.pgo) bytes, $n runs)" >&2
