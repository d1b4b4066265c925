#!/usr/bin/env bash
# A one-node Slurm cluster in a folder of its own, for make test-slurm and for trying the
# shipped sbatch scripts on one machine. Debian's slurm-wlm and munge, installed when missing.
#
#   scripts/slurm/cluster.sh install          # apt-get install slurm-wlm munge (when missing)
#   scripts/slurm/cluster.sh start DIR        # prints `export SLURM_CONF=...` lines to eval
#                                             # (CPUS=N: the node offers N CPUs)
#   scripts/slurm/cluster.sh stop DIR         # stops what start started, by pid
#
# Everything lives in DIR (slurm.conf, the spool and state folders, logs, the daemons' pid files)
# but munge's key and socket, in a /tmp/aiperf-munge.* folder that munge can reach. munged runs as the munge user on its own socket (so a munged of
# the machine's is neither used nor disturbed); slurmctld and slurmd run as ordinary daemons (no
# systemd), listening on free loopback ports. The config is the smallest that works here: auth and
# credentials by munge, proctrack/linuxproc, task/none, no accounting, select/cons_tres with CR_CPU,
# and a scheduler that starts jobs at once. stop cancels every job first (slurmd then exits in
# seconds, not after a job's end), then sends SIGTERM to each daemon start started and waits for it
# (SIGKILL after 20 s): nothing started here keeps running.
set -euo pipefail

die() { echo "slurm/cluster.sh: $*" >&2; exit 2; }

install() {
	if command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v sbatch >/dev/null &&
		command -v munged >/dev/null; then
		return 0
	fi
	command -v apt-get >/dev/null || die "slurm-wlm and munge are missing and apt-get is not here to install them"
	local sudo=
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	echo "slurm/cluster.sh: installing Debian's slurm-wlm and munge" >&2
	$sudo apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq slurm-wlm munge >&2
}

# free_port prints a TCP port nothing listens on at 127.0.0.1 (by asking the kernel for one).
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# wait_for CMD... runs CMD every 0.1 s until it succeeds, for at most 30 s.
wait_for() {
	local i
	for i in $(seq 300); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

start() {
	local dir=$1
	[ "$(id -u)" -eq 0 ] || die "start needs root (slurmd runs jobs as their users; munged runs as munge)"
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	[ ! -e "$dir/slurmctld.pid" ] || die "$dir already holds a cluster (stop it first)"
	local host cpus mem
	host=$(hostname -s)
	# CPUS (default: the machine's) is what the node offers Slurm; more than the machine has lets
	# tasks that mostly wait on sockets (replay shards) run at once on a small machine
	# (SlurmdParameters=config_overrides makes slurmd take the number as given).
	cpus=${CPUS:-$(nproc)}
	mem=$(($(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 * 8 / 10))
	mkdir -p "$dir/spool" "$dir/state" "$dir/log"

	# munge: a key of its own and a socket in a folder of its own that munged (which runs as the
	# munge user) can reach whatever DIR's parents allow: /tmp/aiperf-munge.XXXXXX, owned by munge,
	# named in DIR/munge.dir and removed by stop.
	local m
	m=$(mktemp -d "${TMPDIR:-/tmp}/aiperf-munge.XXXXXX")
	chmod 0755 "$m"
	echo "$m" >"$dir/munge.dir"
	head -c 1024 /dev/urandom >"$m/munge.key"
	chmod 0400 "$m/munge.key"
	chown -R munge:munge "$m"
	runuser -u munge -- /usr/sbin/munged --key-file="$m/munge.key" \
		--socket="$m/munge.socket" --pid-file="$m/munged.pid" \
		--log-file="$m/munged.log" --seed-file="$m/munged.seed" --force
	wait_for test -s "$m/munged.pid" || die "munged did not start: $(tail -3 "$m/munged.log" 2>/dev/null)"
	cp "$m/munged.pid" "$dir/munged.pid"
	wait_for munge -S "$m/munge.socket" -n || die "munged does not answer on $m/munge.socket"

	local ctld_port slurmd_port
	ctld_port=$(free_port)
	slurmd_port=$(free_port)
	cat >"$dir/slurm.conf" <<EOF
# Written by scripts/slurm/cluster.sh: a one-node cluster on loopback.
ClusterName=aiperf
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$m/munge.socket
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
ReturnToService=2
MpiDefault=none
SlurmdParameters=config_overrides
SlurmdSpoolDir=$dir/spool
StateSaveLocation=$dir/state
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
MinJobAge=300
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
	export SLURM_CONF=$dir/slurm.conf
	/usr/sbin/slurmctld -f "$SLURM_CONF" -i
	wait_for test -s "$dir/slurmctld.pid" || die "slurmctld did not start: $(tail -5 "$dir/log/slurmctld.log")"
	/usr/sbin/slurmd -f "$SLURM_CONF"
	wait_for test -s "$dir/slurmd.pid" || die "slurmd did not start: $(tail -5 "$dir/log/slurmd.log")"
	# The node is up when sinfo says idle (slurmd registered with slurmctld).
	wait_for sh -c "sinfo -h -N -o %t | grep -qx idle" ||
		die "the node did not become idle: $(sinfo -N 2>&1 | tail -2); $(tail -3 "$dir/log/slurmd.log")"
	echo "export SLURM_CONF=$SLURM_CONF"
}

# stop_pid FILE NAME sends SIGTERM to the process FILE names, if it runs, and waits for it.
stop_pid() {
	local file=$1 name=$2 pid i
	[ -s "$file" ] || return 0
	pid=$(cat "$file")
	if kill -0 "$pid" 2>/dev/null; then
		kill "$pid" 2>/dev/null || true
		for i in $(seq 200); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			echo "slurm/cluster.sh: $name (pid $pid) ignored SIGTERM for 20 s: SIGKILL" >&2
			kill -9 "$pid" 2>/dev/null || true
		fi
	fi
	rm -f "$file"
}

stop() {
	local dir=$1
	[ -d "$dir" ] || return 0
	if [ -s "$dir/slurmctld.pid" ] && kill -0 "$(cat "$dir/slurmctld.pid")" 2>/dev/null; then
		SLURM_CONF=$dir/slurm.conf scancel --full --quiet --user="$(id -un)" 2>/dev/null || true
	fi
	stop_pid "$dir/slurmd.pid" slurmd
	stop_pid "$dir/slurmctld.pid" slurmctld
	stop_pid "$dir/munged.pid" munged
	if [ -s "$dir/munge.dir" ]; then
		case $(cat "$dir/munge.dir") in
		*/aiperf-munge.*) rm -rf "$(cat "$dir/munge.dir")" ;;
		esac
		rm -f "$dir/munge.dir"
	fi
}

case "${1:-}" in
install) install ;;
start)
	[ $# -eq 2 ] || die "usage: cluster.sh start DIR"
	start "$2"
	;;
stop)
	[ $# -eq 2 ] || die "usage: cluster.sh stop DIR"
	stop "$2"
	;;
*) die "usage: cluster.sh install | start DIR | stop DIR" ;;
esac
