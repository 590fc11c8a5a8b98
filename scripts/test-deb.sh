#!/bin/sh
# test-deb.sh — build the Debian package (make deb) and check it end to end, as root:
# dpkg-deb --info/--contents (expected paths), lintian (no errors; packaging/lintian-overrides
# says why each suppressed tag cannot apply), dpkg -i, `lpictl version`, systemd-analyze verify
# on the installed unit, dpkg --purge and nothing left behind.
# Not root, or no dpkg: skips (exit 0, "SKIP:"). Installs lintian and systemd with apt-get if missing.
set -eu
cd "$(dirname "$0")/.."

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: test-deb.sh needs root (dpkg -i, dpkg --purge)"
	exit 0
fi
if ! command -v dpkg >/dev/null 2>&1 || ! command -v dpkg-deb >/dev/null 2>&1; then
	echo "SKIP: test-deb.sh needs dpkg and dpkg-deb (a Debian-based system)"
	exit 0
fi
if dpkg-query -W -f='${Status}' lpictl 2>/dev/null | grep -q 'installed'; then
	echo "SKIP: lpictl is already installed as a package here; not replacing it (dpkg --purge lpictl first)"
	exit 0
fi

start=$(date +%s)
tmp=$(mktemp -d)
installed=
cleanup() {
	[ -z "$installed" ] || dpkg --purge lpictl >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*" >&2
	exit 1
}
apt_install() { # $1: package; apt-get update only when the first attempt fails
	echo "$1 missing: installing it with apt-get" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$1" >"$tmp/apt.log" 2>&1 ||
		{ apt-get update >>"$tmp/apt.log" 2>&1 &&
			DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$1" >>"$tmp/apt.log" 2>&1; } ||
		{ cat "$tmp/apt.log" >&2; fail "apt-get install $1"; }
}

# Build.
${MAKE:-make} --no-print-directory deb >"$tmp/make.log" 2>&1 || { cat "$tmp/make.log" >&2; fail "make deb"; }
set -- out/deb/lpictl_*.deb
[ $# = 1 ] && [ -f "$1" ] || fail "make deb: want exactly one out/deb/lpictl_*.deb, have: $*"
deb=$1
echo "== $deb"

# dpkg-deb: control fields, maintainer scripts, conffiles, contents.
dpkg-deb --info "$deb"
for f in postinst prerm postrm conffiles md5sums; do
	dpkg-deb --info "$deb" "$f" >/dev/null 2>&1 || fail "control member $f missing"
done
[ "$(dpkg-deb --info "$deb" conffiles)" = /etc/lpictl/agent.yaml ] || fail "conffiles is not just /etc/lpictl/agent.yaml"
dpkg-deb --contents "$deb" >"$tmp/contents"
awk '{print $6}' "$tmp/contents" | sed 's#^\./#/#' >"$tmp/paths"
for p in /usr/bin/lpictl /lib/systemd/system/lpictl.service /etc/lpictl/agent.yaml \
	/usr/share/lpictl/grafana/lpictl.json /usr/share/lpictl/prometheus/lpictl-alerts.yaml /usr/share/doc/lpictl/copyright /usr/share/doc/lpictl/changelog.gz \
	/usr/share/doc/lpictl/examples/systemd/10-enforce.conf.example \
	/usr/share/man/man1/lpictl.1.gz /usr/share/man/man1/lpictl-agent.1.gz \
	/usr/share/bash-completion/completions/lpictl /usr/share/zsh/vendor-completions/_lpictl \
	/usr/share/fish/vendor_completions.d/lpictl.fish /usr/share/lintian/overrides/lpictl; do
	grep -qxF "$p" "$tmp/paths" || fail "$p not in the package"
done
grep -q ' root/root .* \./usr/bin/lpictl$' "$tmp/contents" && grep -q '^-rwxr-xr-x .* \./usr/bin/lpictl$' "$tmp/contents" ||
	fail "/usr/bin/lpictl is not root:root 0755"
echo "ok: dpkg-deb --contents: $(grep -vc '/$' "$tmp/paths") files, expected paths present"

# lintian: no errors (warnings are printed, not fatal).
command -v lintian >/dev/null 2>&1 || apt_install lintian
lintian --version
st=0
lintian --fail-on error --display-level '>=warning' "$deb" >"$tmp/lintian" 2>&1 || st=$?
grep -v 'running with root privileges' "$tmp/lintian" || true
[ "$st" = 0 ] || fail "lintian reported errors (above; exit $st)"
echo "ok: lintian: no errors"

# Install, run, verify the unit.
dpkg -i "$deb" || fail "dpkg -i"
installed=1
/usr/bin/lpictl version || fail "lpictl version"
[ "$(lpictl --version)" = "$(lpictl version | head -n1)" ] || fail "lpictl --version differs from lpictl version"
grep -qx 'ExecStart=/usr/bin/lpictl agent' /lib/systemd/system/lpictl.service ||
	fail "installed unit's ExecStart is not /usr/bin/lpictl agent"
dpkg-query -W -f='${Conffiles}\n' lpictl | grep -q '/etc/lpictl/agent.yaml' || fail "agent.yaml is not a conffile"
command -v systemd-analyze >/dev/null 2>&1 || apt_install systemd
out=$(systemd-analyze verify /lib/systemd/system/lpictl.service 2>&1) || true
ours=$(printf '%s\n' "$out" | grep -i lpictl || true) # verify also reports on unrelated host units
[ -z "$ours" ] || { printf '%s\n' "$ours" >&2; fail "systemd-analyze verify /lib/systemd/system/lpictl.service"; }
echo "ok: systemd-analyze verify /lib/systemd/system/lpictl.service"

# Purge: nothing of the package left.
dpkg --purge lpictl || fail "dpkg --purge"
installed=
! dpkg-query -W -f='${Status}' lpictl 2>/dev/null | grep -q 'installed' || fail "lpictl still known to dpkg after purge"
left=
for p in $(grep -v '/$' "$tmp/paths") /etc/lpictl /usr/share/lpictl /usr/share/doc/lpictl /var/lib/lpictl /var/lib/private/lpictl; do
	[ ! -e "$p" ] && [ ! -L "$p" ] || left="$left $p"
done
[ -z "$left" ] || fail "left after dpkg --purge:$left"
echo "ok: dpkg -i, lpictl version, dpkg --purge: nothing left"
echo "PASS: test-deb.sh ($(($(date +%s) - start))s)"
