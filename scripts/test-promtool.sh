#!/bin/bash
# test-promtool.sh [BINARY] — check and unit-test the shipped alerting rules
# (configs/prometheus/lpictl-alerts.yaml with `promtool check rules` and `promtool test rules`),
# and lint a real scrape: the simulator agent (configs/agent-sim.yaml) is started on a free
# loopback port for a few seconds and its /metrics goes through `promtool check metrics`.
# BINARY: lpictl to run (default: built into a temporary directory).
# Without promtool: installs it with apt-get (package prometheus) when root, else skips
# (exit 0, "SKIP:").
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v promtool >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "promtool missing: installing it (apt-get install prometheus)" >&2
		export DEBIAN_FRONTEND=noninteractive
		apt-get install -y --no-install-recommends prometheus >/dev/null 2>&1 ||
			{ apt-get update >/dev/null && apt-get install -y --no-install-recommends prometheus >/dev/null; }
	else
		echo "SKIP: promtool not found and not root to install it (apt-get install prometheus)"
		exit 0
	fi
fi

promtool check rules configs/prometheus/lpictl-alerts.yaml
(cd configs/prometheus && promtool test rules lpictl-alerts_test.yaml)

tmp=$(mktemp -d)
pid=
cleanup() {
	if [ -n "$pid" ]; then kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT
bin=${1:-}
if [ -z "$bin" ]; then
	go build -o "$tmp/lpictl" ./cmd/lpictl
	bin=$tmp/lpictl
fi

# Port 0: the kernel picks a free port; the agent logs which.
"$bin" agent -c configs/agent-sim.yaml --set metrics.listen=127.0.0.1:0 \
	--set "state_dir=$tmp/state" --set log.format=text 2>"$tmp/agent.log" &
pid=$!
port=
for _ in $(seq 100); do
	if grep -q 'msg="agent running"' "$tmp/agent.log"; then
		port=$(sed -n 's/.*msg="metrics listening" addr=127\.0\.0\.1:\([0-9]*\).*/\1/p' "$tmp/agent.log" | head -n 1)
		break
	fi
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
if [ -z "$port" ]; then
	echo "FAIL: the simulator agent did not start:" >&2
	cat "$tmp/agent.log" >&2
	exit 1
fi
sleep 2 # a few decision rounds

# GET /metrics over bash's /dev/tcp (HTTP/1.0: no chunking; the server closes).
exec 3<>"/dev/tcp/127.0.0.1/$port"
printf 'GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
cat <&3 >"$tmp/response"
exec 3<&-
head -n 1 "$tmp/response" | grep -q ' 200 ' || { echo "FAIL: scrape: $(head -n 1 "$tmp/response")" >&2; exit 1; }
# The body follows the first empty line.
sed '1,/^\r\{0,1\}$/d' "$tmp/response" >"$tmp/metrics"
for m in lpictl_agent_ready lpictl_config_last_reload_successful \
	lpictl_config_last_reload_success_timestamp_seconds lpictl_port_settings_changed lpictl_port_quarantined; do
	grep -q "^$m" "$tmp/metrics" || { echo "FAIL: scrape lacks $m" >&2; exit 1; }
done
promtool check metrics <"$tmp/metrics"
echo "ok: scrape of the simulator agent ($(grep -c '^lpictl_' "$tmp/metrics") lpictl_ samples) passes promtool check metrics"
