#!/bin/sh
# version.sh — the package version from `git describe`, sanitised for Debian (native package,
# so no hyphen): v1.2.3 → 1.2.3; v1.2.3-4-gabc1234-dirty → 1.2.3+4.gabc1234.dirty; without a
# v<digit> tag → 0.0~git<hash>[.dirty] (sorts before any release); outside git → 0.0~dev.
set -eu
cd "$(dirname "$0")/.."
if d=$(git describe --tags --dirty --match 'v[0-9]*' 2>/dev/null); then
	v=$(printf '%s\n' "${d#v}" | sed -e 's/-/+/' -e 's/-/./g')
elif h=$(git describe --always --dirty 2>/dev/null); then
	v=0.0~git$(printf '%s\n' "$h" | sed 's/-/./g')
else
	v=0.0~dev
fi
# Anything Debian does not allow in an upstream version becomes a dot.
printf '%s\n' "$v" | sed 's/[^A-Za-z0-9.+~]/./g'
