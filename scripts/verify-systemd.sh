#!/bin/sh
# verify-systemd.sh [BINARY] — run `systemd-analyze verify` on systemd/lpictl.service and on it
# with each drop-in example. verify needs ExecStart's binary to exist, so a copy of the unit
# points at BINARY (default: lpictl built into a temporary directory). A drop-in that says
# "# Needs systemd >= N" is not verified (a line says so) where systemd-analyze is older than N
# ("SKIP:" is kept for the whole check: cmd/lpictl's TestSystemdUnitVerifies skips on it).
# Without systemd-analyze: installs systemd with apt-get when root, else skips (exit 0, "SKIP:").
set -eu
cd "$(dirname "$0")/.."
unit=systemd/lpictl.service

if ! command -v systemd-analyze >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "systemd-analyze missing: installing systemd" >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y systemd >/dev/null 2>&1 ||
			{ apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y systemd >/dev/null; }
	else
		echo "SKIP: systemd-analyze not found and not root to install it (apt-get install -y systemd)"
		exit 0
	fi
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bin=${1:-}
if [ -z "$bin" ]; then
	go build -o "$tmp/lpictl" ./cmd/lpictl
	bin=$tmp/lpictl
fi

# systemd's version (e.g. 252 of "systemd 252 (252.38-1~deb12u1)").
have=$(systemd-analyze --version | sed -n '1s/^systemd \([0-9][0-9]*\).*/\1/p')

status=0
verify() { # $1: label; the unit is in $tmp/u/lpictl.service (+ .d/)
	out=$(systemd-analyze verify "$tmp/u/lpictl.service" 2>&1) || status=1
	# verify also reports on unrelated units of the host; only ours count.
	ours=$(printf '%s\n' "$out" | grep -i 'lpictl' || true)
	if [ -n "$ours" ]; then
		echo "$1:" >&2
		printf '%s\n' "$ours" >&2
		status=1
	else
		echo "ok: $1"
	fi
}

mkdir -p "$tmp/u"
sed "s#^ExecStart=/usr/local/bin/lpictl#ExecStart=$bin#" "$unit" >"$tmp/u/lpictl.service"
verify "$unit"
for d in systemd/lpictl.service.d/*.conf.example; do
	[ -e "$d" ] || continue
	need=$(sed -n 's/^# Needs systemd >= \([0-9][0-9]*\).*/\1/p' "$d")
	if [ -n "$need" ] && [ "${have:-0}" -lt "$need" ]; then
		echo "not verified here: $unit + $(basename "$d") needs systemd >= $need, systemd-analyze is ${have:-unknown}"
		continue
	fi
	rm -rf "$tmp/u/lpictl.service.d"
	mkdir -p "$tmp/u/lpictl.service.d"
	sed "s#^ExecStart=/usr/bin/lpictl#ExecStart=$bin#" "$d" >"$tmp/u/lpictl.service.d/$(basename "$d" .example)"
	verify "$unit + $(basename "$d")"
done
exit $status
