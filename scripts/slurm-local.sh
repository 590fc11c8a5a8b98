#!/bin/bash
# slurm-local.sh start|stop|status — a throw-away single-node Slurm cluster on this machine, for
# testing `lpictl sweep submit --slurm` against a real Slurm (scripts/test-slurm.sh).
#
#   start   install slurmctld, slurmd, slurm-client and munge when missing (root, apt-get),
#           write a config, start munged, slurmctld and slurmd as background daemons and wait
#           until the node is idle in partition `debug`. Prints the SLURM_CONF to use.
#           Exit 3 when the packages are missing and cannot be installed (no apt-get, apt-get
#           failed), 1 on any other failure (the daemons' logs are printed).
#   stop    cancel the cluster's jobs, stop exactly the daemons `start` started, remove its
#           directory (and /etc/slurm/slurm.conf when this script wrote it).
#   status  the daemons' pids and `sinfo`; exit 0 when all three run, 1 otherwise.
#
# Everything lives in LPICTL_SLURM_DIR (default /run/lpictl-slurm): slurm.conf, the munge key and
# socket, state and spool directories, pid files and logs (slurmctld.log, slurmd.log,
# munge/munged.log). The daemons run as root (SlurmUser=root) with no cgroup plugins
# (proctrack/linuxproc, task/none), no accounting storage; munged is a private instance with its
# own key and socket (AuthInfo=socket=…), so a host's munged is neither needed nor touched.
# No systemd needed: the daemons are started directly.
#
# Slurm's clients read /etc/slurm/slurm.conf unless SLURM_CONF says otherwise. When that file
# does not exist (or was written by this script), start writes it too, so a plain `sinfo` works;
# an existing real config is never touched — then export SLURM_CONF=$LPICTL_SLURM_DIR/slurm.conf.
#
# Environment: LPICTL_SLURM_DIR (above), LPICTL_SLURM_PORT (slurmctld's port, default 6817;
# slurmd uses the next one), LPICTL_SLURM_TIMEOUT (seconds to wait for an idle node, default 60).
set -euo pipefail

dir=${LPICTL_SLURM_DIR:-/run/lpictl-slurm}
ctld_port=${LPICTL_SLURM_PORT:-6817}
slurmd_port=$((ctld_port + 1))
timeout=${LPICTL_SLURM_TIMEOUT:-60}
etc_conf=/etc/slurm/slurm.conf
marker="# Written by lpictl scripts/slurm-local.sh"
owner_file=$dir/.lpictl-slurm-local
conf=$dir/slurm.conf
sock=$dir/munge/munge.socket.2

log() { echo "slurm-local: $*" >&2; }
die() {
	log "$*"
	exit 1
}

need_root() {
	[ "$(id -u)" = 0 ] || die "$1 needs root (the daemons run as root and may need installing)"
}

# The packages' postinst scripts start their services with invoke-rc.d and fail when that fails
# (no systemd, no config yet); a policy-rc.d that forbids starts is Debian's way to install
# daemons without starting them. One is put in place only for the install, only if none exists.
install_packages() {
	local pkgs=(slurmctld slurmd slurm-client munge) policy=/usr/sbin/policy-rc.d ours=
	command -v apt-get >/dev/null 2>&1 || {
		log "Slurm is not installed and apt-get is missing: install ${pkgs[*]}"
		exit 3
	}
	log "installing ${pkgs[*]} (apt-get)"
	if [ ! -e "$policy" ]; then
		printf '#!/bin/sh\n# temporary, lpictl scripts/slurm-local.sh\nexit 101\n' >"$policy"
		chmod 0755 "$policy"
		ours=1
	fi
	local rc=0 aptlog
	aptlog=$(mktemp)
	{
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${pkgs[@]}" >"$aptlog" 2>&1 ||
			{ DEBIAN_FRONTEND=noninteractive apt-get update >>"$aptlog" 2>&1 &&
				DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${pkgs[@]}" >>"$aptlog" 2>&1; }
	} || rc=$?
	[ -z "$ours" ] || rm -f "$policy"
	if [ "$rc" != 0 ]; then
		tail -n 20 "$aptlog" >&2
		rm -f "$aptlog"
		log "apt-get install ${pkgs[*]} failed"
		exit 3
	fi
	rm -f "$aptlog"
}

have_packages() {
	local c
	for c in slurmctld slurmd sbatch sinfo squeue scontrol scancel munged munge unmunge; do
		command -v "$c" >/dev/null 2>&1 || return 1
	done
}

# pid_of NAME: the recorded pid of daemon NAME (munged, slurmctld, slurmd) when that process
# still runs and is ours: its command name matches and its command line or environment names our
# directory (so a recycled pid or a host's own daemon is never signalled). Empty otherwise.
pid_of() {
	local name=$1 pid
	[ -f "$dir/pids/$name" ] || return 0
	pid=$(cat "$dir/pids/$name")
	[[ "$pid" =~ ^[0-9]+$ ]] || return 0
	[ -r "/proc/$pid/comm" ] || return 0
	[ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$name" ] || return 0
	if grep -qazF "$dir/" "/proc/$pid/cmdline" 2>/dev/null ||
		grep -qazxF "SLURM_CONF=$conf" "/proc/$pid/environ" 2>/dev/null; then
		echo "$pid"
	fi
}

# record NAME PIDFILE: wait (bounded) for a daemon's own pid file and remember the pid, since the
# daemons delete their pid files when they exit.
record() {
	local name=$1 pidfile=$2
	for _ in $(seq 100); do
		if [ -s "$pidfile" ]; then
			mkdir -p "$dir/pids"
			cat "$pidfile" >"$dir/pids/$name"
			[ -n "$(pid_of "$name")" ] && return 0
		fi
		sleep 0.1
	done
	return 1
}

show_logs() {
	local f
	for f in "$dir/munge/munged.log" "$dir/slurmctld.log" "$dir/slurmd.log"; do
		[ -f "$f" ] || continue
		echo "----- $f (last 40 lines)" >&2
		tail -n 40 "$f" >&2
	done
}

node_state() { SLURM_CONF=$conf sinfo -h -N -n "$node" -o %T 2>/dev/null | head -n 1; }

write_conf() {
	# `slurmd -C`: this machine as slurmd sees it, e.g.
	# NodeName=vm CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=24105
	local hw
	hw=$(slurmd -C 2>/dev/null | sed -n 's/^NodeName=[^ ]* //p' | head -n 1)
	[[ "$hw" == *CPUs=*RealMemory=* ]] || die "slurmd -C did not describe this machine: $(slurmd -C 2>&1 | head -n 3)"
	cat >"$conf" <<EOF
$marker for a throw-away single-node cluster in $dir.
# Stop it with: scripts/slurm-local.sh stop
ClusterName=lpictl-local
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
# Keep finished jobs visible to squeue/scontrol for an hour (there is no accounting).
MinJobAge=3600
NodeName=$node NodeAddr=127.0.0.1 $hw State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
}

start() {
	need_root start
	if [ -e "$dir" ]; then
		[ -f "$owner_file" ] || die "$dir exists and was not made by this script: set LPICTL_SLURM_DIR to another directory"
		local n running=
		for n in munged slurmctld slurmd; do [ -z "$(pid_of $n)" ] || running="$running $n"; done
		[ -z "$running" ] || die "already running ($running ) in $dir: scripts/slurm-local.sh stop first"
		rm -rf "$dir" # a stale directory of ours
	fi
	have_packages || install_packages
	have_packages || {
		log "Slurm's or munge's commands are still missing after installing"
		exit 3
	}

	node=$(hostname -s)
	mkdir -p "$dir"
	chmod 0755 "$dir"
	echo "$marker" >"$owner_file"
	mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
	# munged wants its socket directory searchable by all and writable only by itself.
	chmod 0755 "$dir/munge"
	export SLURM_CONF=$conf

	# A private munged: own key, socket, pid file and log.
	if [ ! -s "$dir/munge/munge.key" ]; then
		if command -v mungekey >/dev/null 2>&1; then
			mungekey --create --keyfile="$dir/munge/munge.key" --bits=1024
		else
			(umask 077 && head -c 128 /dev/urandom >"$dir/munge/munge.key")
		fi
	fi
	chmod 0600 "$dir/munge/munge.key"
	munged --key-file="$dir/munge/munge.key" --socket="$sock" --pid-file="$dir/munge/munged.pid" \
		--log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munged.seed" ||
		{ show_logs; die "munged did not start"; }
	record munged "$dir/munge/munged.pid" || { show_logs; die "munged did not write its pid file"; }
	munge -n -S "$sock" | unmunge -S "$sock" >/dev/null || { show_logs; die "munge round trip on $sock failed"; }

	write_conf
	# Clients without SLURM_CONF read /etc/slurm/slurm.conf: provide it unless a real one exists.
	local etc_note="export SLURM_CONF=$conf"
	if [ ! -e "$etc_conf" ] || head -n 1 "$etc_conf" | grep -qF "$marker"; then
		mkdir -p "$(dirname "$etc_conf")"
		cp "$conf" "$etc_conf"
		etc_note="$etc_conf written too; or $etc_note"
	else
		log "$etc_conf belongs to another Slurm: left alone; clients need SLURM_CONF=$conf"
	fi

	slurmctld || { show_logs; die "slurmctld did not start"; }
	record slurmctld "$dir/slurmctld.pid" || { show_logs; die "slurmctld did not stay up"; }
	slurmd -N "$node" || { show_logs; die "slurmd did not start"; }
	record slurmd "$dir/slurmd.pid" || { show_logs; die "slurmd did not stay up"; }

	local deadline=$((SECONDS + timeout)) state=
	while [ "$SECONDS" -lt "$deadline" ]; do
		state=$(node_state)
		case "$state" in
		idle) break ;;
		drain* | down*) scontrol update nodename="$node" state=resume >/dev/null 2>&1 || true ;;
		esac
		for n in munged slurmctld slurmd; do
			[ -n "$(pid_of $n)" ] || { show_logs; die "$n exited while starting (logs above)"; }
		done
		sleep 0.5
	done
	if [ "$state" != idle ]; then
		show_logs
		die "node $node not idle after ${timeout}s (state: ${state:-unknown}); logs above; clean up with: $0 stop"
	fi
	log "up: node $node ($(sed -n 's/.*\(CPUs=[0-9]*\).*\(RealMemory=[0-9]*\).*/\1 \2/p' "$conf")), partition debug; logs in $dir"
	log "$etc_note"
}

stop() {
	need_root stop
	if [ ! -e "$dir" ]; then
		log "not running ($dir does not exist)"
		return 0
	fi
	[ -f "$owner_file" ] || die "$dir was not made by this script: not touching it"
	export SLURM_CONF=$conf
	local ctld n pid
	ctld=$(pid_of slurmctld)
	if [ -n "$ctld" ] && [ -n "$(pid_of slurmd)" ]; then
		# Cancel the cluster's jobs first, so no job step outlives slurmd.
		local jobs
		jobs=$(squeue -h -o %A 2>/dev/null | sort -u | tr '\n' ' ')
		if [ -n "${jobs// /}" ]; then
			log "cancelling jobs: $jobs"
			# shellcheck disable=SC2086 # one argument per job id
			scancel $jobs 2>/dev/null || true
			for _ in $(seq 40); do
				[ -z "$(squeue -h -o %A 2>/dev/null)" ] && break
				sleep 0.25
			done
		fi
	fi
	for n in slurmd slurmctld munged; do
		pid=$(pid_of $n)
		[ -n "$pid" ] || continue
		kill -TERM "$pid" 2>/dev/null || true
		for _ in $(seq 100); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			log "$n (pid $pid) ignored SIGTERM for 10s: SIGKILL"
			kill -KILL "$pid" 2>/dev/null || true
		fi
		log "stopped $n (pid $pid)"
	done
	if [ -f "$etc_conf" ] && head -n 1 "$etc_conf" | grep -qF "$marker" && grep -qF "$dir/" "$etc_conf"; then
		rm -f "$etc_conf"
	fi
	rm -rf "$dir"
	log "removed $dir"
}

status() {
	if [ ! -f "$owner_file" ]; then
		echo "slurm-local: not running ($dir has no cluster of this script)"
		return 1
	fi
	local n pid ok=0
	for n in munged slurmctld slurmd; do
		pid=$(pid_of $n)
		if [ -n "$pid" ]; then
			echo "$n: running (pid $pid)"
		else
			echo "$n: not running"
			ok=1
		fi
	done
	echo "SLURM_CONF=$conf"
	if [ "$ok" = 0 ]; then
		SLURM_CONF=$conf sinfo || ok=1
	fi
	return $ok
}

case "${1:-}" in
start) start ;;
stop) stop ;;
status) status ;;
*)
	echo "usage: $0 start|stop|status" >&2
	exit 2
	;;
esac
