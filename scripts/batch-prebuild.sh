#!/usr/bin/env bash
# batch-prebuild.sh: build cache entries on a batch node and ship them to where the benchmark runs.
#
#   scripts/batch-prebuild.sh (--to DIR | --ssh HOST) [-v] TRACE... [--tokenize FLAG...] [--pack FLAG...]
#   scripts/batch-prebuild.sh --import DIR
#
# Each TRACE is prepared into the local cache with scripts/prepare.sh (a hit costs a stat; a miss
# tokenizes and packs under the key's lock), then its entry is exported:
#   --to DIR    as DIR/<key hex>.aipkx, an aiperf-cache export stream (written beside and renamed:
#               a reader of DIR never sees half of one); --import DIR on the other machine
#               imports every stream of DIR into its own cache (import re-checks every digest).
#   --ssh HOST  piped straight into `aiperf-cache import` on HOST (aiperf-cache on HOST's PATH;
#               $AIPERF_SSH replaces ssh, e.g. "ssh -i key").
# Prints one line per trace: its key and where the entry went. The binaries are found on PATH, or
# in $AIPERF_BIN; the local cache is $AIPERF_CACHE_DIR (else ~/.cache/aiperf).
set -euo pipefail
[ -z "${AIPERF_BIN:-}" ] || PATH=$AIPERF_BIN:$PATH
here=$(dirname "$(readlink -f "$0")")

usage() {
	echo "usage: batch-prebuild.sh (--to DIR | --ssh HOST) [-v] TRACE... [--tokenize FLAG...] [--pack FLAG...]" >&2
	echo "       batch-prebuild.sh --import DIR" >&2
	exit 2
}

if [ "${1:-}" = --import ]; then
	[ $# -eq 2 ] || usage
	shopt -s nullglob
	n=0
	for f in "$2"/*.aipkx; do
		aiperf-cache import "$f"
		echo "imported $f"
		n=$((n + 1))
	done
	[ $n -gt 0 ] || { echo "batch-prebuild.sh: no *.aipkx stream in $2" >&2; exit 1; }
	exit 0
fi

to= host= v=()
while [ $# -gt 0 ]; do
	case $1 in
	--to) to=$2; shift 2 ;;
	--ssh) host=$2; shift 2 ;;
	-v) v=(-v); shift ;;
	-*) usage ;;
	*) break ;;
	esac
done
if { [ -n "$to" ] && [ -n "$host" ]; } || { [ -z "$to" ] && [ -z "$host" ]; }; then usage; fi
traces=()
while [ $# -gt 0 ] && [ "$1" != --tokenize ] && [ "$1" != --pack ]; do
	traces+=("$1")
	shift
done
[ ${#traces[@]} -gt 0 ] || usage
[ -z "$to" ] || mkdir -p "$to"

scratch=$(mktemp -d "${TMPDIR:-/tmp}/batch-prebuild.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
for t in "${traces[@]}"; do
	# The restored store is a hard link into the cache: the entry is what ships, the link goes.
	key=$("$here/prepare.sh" "${v[@]}" "$t" "$scratch/store.aipk" "$@")
	rm -f "$scratch/store.aipk"
	if [ -n "$to" ]; then
		out=$to/${key#sha256:}.aipkx
		aiperf-cache export -o "$out" "$key"
		echo "$key $out"
	else
		# pipefail: a failed export (a damaged entry) fails the line even when import refuses
		# the cut stream first.
		aiperf-cache export "$key" | ${AIPERF_SSH:-ssh} "$host" aiperf-cache import
		echo "$key $host"
	fi
done
