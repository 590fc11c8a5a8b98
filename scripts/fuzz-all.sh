#!/bin/sh
# fuzz-all.sh [FUZZTIME] — run every Go fuzz target of the module (or of PKGS, e.g.
# PKGS=./hwlink/...) for FUZZTIME each (default 20s).
# Targets are found by name (func FuzzXxx in *_test.go); each runs alone, as go test requires.
set -eu
cd "$(dirname "$0")/.."
fuzztime=${1:-20s}
status=0
for pkg in $(go list ${PKGS:-./...}); do
	dir=$(go list -f '{{.Dir}}' "$pkg")
	for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
		echo "== $pkg $target ($fuzztime)"
		go test -run '^$' -fuzz "^$target\$" -fuzztime "$fuzztime" "$pkg" || status=1
	done
done
exit $status
