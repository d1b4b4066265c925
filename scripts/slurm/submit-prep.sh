#!/usr/bin/env bash
# Submits the sharded preparation of a trace to Slurm: an array of N aiperf-tokenize --shard i/N
# tasks, then (afterok) one aiperf-pack of their records, cached with aiperf-cache ensure under
# the key of the whole trace and restored to WORK/store.aipk. WORK must be storage every node
# sees (the records, logs and the job's settings go there).
#
#   scripts/slurm/submit-prep.sh [-n N] [--bin DIR] [--cache DIR] [--export FILE] [--wait]
#       [--sbatch ARG]... WORK TRACE [--tokenize FLAG...] [--pack FLAG...]
#
#   -n N           shards (array tasks; default 4)
#   --bin DIR      the folder of the aiperf binaries on the nodes (default: PATH)
#   --cache DIR    the cache root (AIPERF_CACHE_DIR) on the node that packs
#   --export FILE  also export the entry there (aiperf-cache export), for an import elsewhere
#   --wait         wait for the pack job and exit with its status (sbatch --wait)
#   --sbatch ARG   an extra sbatch option for both jobs (--partition=..., --account=...)
#   --tokenize ... aiperf-tokenize's flags, --pack ... aiperf-pack's (the rest of the line)
#
# Prints the two job ids. The pack job is cancelled if a shard fails (--kill-on-invalid-dep).
set -euo pipefail
here=$(dirname "$(readlink -f "$0")")
. "$here/common.sh"

SHARDS=4 AIPERF_BIN= CACHE= EXPORT= wait= extra=()
while [ $# -gt 0 ]; do
	case $1 in
	-n) SHARDS=$2; shift 2 ;;
	--bin) AIPERF_BIN=$(readlink -f "$2"); shift 2 ;;
	--cache) CACHE=$(readlink -f "$2"); shift 2 ;;
	--export) EXPORT=$(readlink -f "$2"); shift 2 ;;
	--wait) wait=1; shift ;;
	--sbatch) extra+=("$2"); shift 2 ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "submit-prep.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
[ $# -ge 2 ] || { echo "usage: submit-prep.sh [options] WORK TRACE [--tokenize FLAG...] [--pack FLAG...]" >&2; exit 2; }
case $SHARDS in '' | *[!0-9]* | 0) echo "submit-prep.sh: -n wants a positive number of shards" >&2; exit 2 ;; esac
mkdir -p "$1"
WORK=$(readlink -f "$1") TRACE=$(readlink -f "$2")
shift 2
TOKENIZE=() PACK=()
split_flags --tokenize TOKENIZE --pack PACK "$@"
[ -e "$TRACE" ] || { echo "submit-prep.sh: $TRACE: no such trace" >&2; exit 2; }
need_cmd sbatch
mkdir -p "$WORK/logs"
rm -f "$WORK"/records/shard-*-of-*.jsonl
if [ -n "$CACHE" ]; then AIPERF_CACHE_DIR=$CACHE; else AIPERF_CACHE_DIR=${AIPERF_CACHE_DIR:-}; fi
export AIPERF_CACHE_DIR
[ -n "$AIPERF_CACHE_DIR" ] || unset AIPERF_CACHE_DIR
vars=(SHARDS AIPERF_BIN TRACE TOKENIZE PACK EXPORT)
[ -z "${AIPERF_CACHE_DIR:-}" ] || vars+=(AIPERF_CACHE_DIR)
write_env "$WORK" "${vars[@]}"

prep=$(sbatch --parsable "${extra[@]}" --array="0-$((SHARDS - 1))" --output="$WORK/logs/%x-%A_%a.out" \
	"$here/prep-shard.sbatch" "$WORK" | cut -d';' -f1)
echo "prep $prep"
pack_args=(--parsable "${extra[@]}" --dependency="afterok:$prep" --kill-on-invalid-dep=yes --output="$WORK/logs/%x-%j.out")
if [ -n "$wait" ]; then
	# --wait prints the id only at the end; the status is the pack job's.
	set +e
	pack=$(sbatch "${pack_args[@]}" --wait "$here/prep-pack.sbatch" "$WORK")
	rc=$?
	set -e
	echo "pack ${pack%%;*}"
	exit $rc
fi
pack=$(sbatch "${pack_args[@]}" "$here/prep-pack.sbatch" "$WORK" | cut -d';' -f1)
echo "pack $pack"
