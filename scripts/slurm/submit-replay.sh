#!/usr/bin/env bash
# Submits a sharded replay to Slurm: an array of N aiperf-replay --shard i/N tasks that all start
# their schedules on one wall-clock instant (--start-at, LEAD seconds after submission, so every
# task has been scheduled and has opened the store by then), then (afterany) one
# aiperf-replay report that merges the shards into WORK/replay/merged. WORK and STORE must be on
# storage every node sees; the nodes' clocks should agree (NTP): the merged summary states the
# spread of the shards' schedule starts.
#
#   scripts/slurm/submit-replay.sh [-n N] [--bin DIR] [--lead SECONDS] [--wait] [--sbatch ARG]...
#       WORK STORE URL [--replay FLAG...] [--report FLAG...]
#
#   -n N           shards (array tasks; default 4); rate and concurrency are divided among them
#                  unless --replay --per-shard says the figures are per shard
#   --bin DIR      the folder of the aiperf binaries on the nodes (default: PATH)
#   --lead S       seconds from submission to the shared start (default 30)
#   --wait         wait for the report job and exit with its status
#   --sbatch ARG   an extra sbatch option for both jobs
#   --replay ...   aiperf-replay's flags (schedule, endpoint, ...), --report ... report's
#
# Prints the two job ids and the start instant.
set -euo pipefail
here=$(dirname "$(readlink -f "$0")")
. "$here/common.sh"

SHARDS=4 AIPERF_BIN= lead=30 wait= extra=()
while [ $# -gt 0 ]; do
	case $1 in
	-n) SHARDS=$2; shift 2 ;;
	--bin) AIPERF_BIN=$(readlink -f "$2"); shift 2 ;;
	--lead) lead=$2; shift 2 ;;
	--wait) wait=1; shift ;;
	--sbatch) extra+=("$2"); shift 2 ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "submit-replay.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
[ $# -ge 3 ] || { echo "usage: submit-replay.sh [options] WORK STORE URL [--replay FLAG...] [--report FLAG...]" >&2; exit 2; }
case $SHARDS in '' | *[!0-9]* | 0) echo "submit-replay.sh: -n wants a positive number of shards" >&2; exit 2 ;; esac
case $lead in '' | *[!0-9.]*) echo "submit-replay.sh: --lead wants seconds" >&2; exit 2 ;; esac
mkdir -p "$1"
WORK=$(readlink -f "$1") STORE=$(readlink -f "$2") URL=$3
shift 3
REPLAY=() REPORT=()
split_flags --replay REPLAY --report REPORT "$@"
[ -f "$STORE" ] || { echo "submit-replay.sh: $STORE: no such store" >&2; exit 2; }
need_cmd sbatch
mkdir -p "$WORK/logs" "$WORK/replay"
rm -rf "$WORK"/replay/shard-*-of-* "$WORK/replay/merged"
# The shared start, as RFC 3339 with nanoseconds in UTC: every task sleeps until then.
START_AT=$(date -u -d "@$(date +%s.%N | awk -v l="$lead" '{ printf "%.9f", $1 + l }')" +%Y-%m-%dT%H:%M:%S.%NZ)
write_env "$WORK" SHARDS AIPERF_BIN STORE URL START_AT REPLAY REPORT

replay=$(sbatch --parsable "${extra[@]}" --array="0-$((SHARDS - 1))" --output="$WORK/logs/%x-%A_%a.out" \
	"$here/replay-shard.sbatch" "$WORK" | cut -d';' -f1)
echo "replay $replay"
echo "start-at $START_AT"
# afterany: the report runs when every shard has ended, failed ones included, and says which
# shard is missing (a failed shard's records are still merged when they were written).
report_args=(--parsable "${extra[@]}" --dependency="afterany:$replay" --output="$WORK/logs/%x-%j.out")
if [ -n "$wait" ]; then
	set +e
	report=$(sbatch "${report_args[@]}" --wait "$here/replay-report.sbatch" "$WORK")
	rc=$?
	set -e
	echo "report ${report%%;*}"
	exit $rc
fi
report=$(sbatch "${report_args[@]}" "$here/replay-report.sbatch" "$WORK" | cut -d';' -f1)
echo "report $report"
