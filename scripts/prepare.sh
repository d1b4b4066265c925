#!/usr/bin/env bash
# prepare.sh: a trace and its settings in, a cached store out.
#
#   scripts/prepare.sh [-v] TRACE STORE [--tokenize FLAG...] [--pack FLAG...]
#
# The same flags reach all three tools: aiperf-hash key (the store's cache key and its --explain),
# aiperf-tokenize and aiperf-pack. On a hit the cached store is restored to STORE (a hard link,
# O(1)); on a miss `aiperf-tokenize | aiperf-pack` builds it under the key's lock, aiperf-cache
# checks the settings the store records against the key's description, caches it and restores
# it. STORE's folder must exist. The cache is $AIPERF_CACHE_DIR (else ~/.cache/aiperf); the
# binaries are found on PATH, or in $AIPERF_BIN. Prints the key on stdout.
#
#   scripts/prepare.sh trace.jsonl store.aipk --tokenize --seed 1 --pack --model m --streaming
#
# Exit status: aiperf-cache ensure's (0, 2 for bad input or settings that do not match, the
# build's own status when it fails, 130 interrupted); nothing half-written is left at STORE.
set -euo pipefail
[ -z "${AIPERF_BIN:-}" ] || PATH=$AIPERF_BIN:$PATH

usage() {
	echo "usage: prepare.sh [-v] TRACE STORE [--tokenize FLAG...] [--pack FLAG...]" >&2
	exit 2
}

# parse TRACE STORE [--tokenize ...] [--pack ...] into trace, store, tokenize[], pack[].
parse() {
	[ $# -ge 2 ] || usage
	trace=$1 store=$2
	shift 2
	tokenize=() pack=()
	local into=
	for a; do
		case $a in
		--tokenize) into=t ;;
		--pack) into=p ;;
		*)
			case $into in
			t) tokenize+=("$a") ;;
			p) pack+=("$a") ;;
			*) echo "prepare.sh: $a: flags go after --tokenize or --pack" >&2; exit 2 ;;
			esac
			;;
		esac
	done
}

# The build, as aiperf-cache ensure runs it on a miss: this script again, told so by --build, with
# $AIPERF_CACHE_OUT naming where to write. pipefail makes a failed tokenize fail the build (pack
# also refuses records without their end line).
if [ "${1:-}" = --build ]; then
	shift
	parse "$@"
	: "${AIPERF_CACHE_OUT:?--build runs under aiperf-cache ensure}"
	aiperf-tokenize "${tokenize[@]}" "$trace" | aiperf-pack -o "$AIPERF_CACHE_OUT" "${pack[@]}"
	exit 0
fi

v=()
if [ "${1:-}" = -v ]; then
	v=(-v)
	shift
fi
parse "$@"
[ -e "$trace" ] || { echo "prepare.sh: $trace: no such trace" >&2; exit 2; }

explain=$(mktemp "${TMPDIR:-/tmp}/prepare.explain.XXXXXX")
trap 'rm -f "$explain"' EXIT
aiperf-hash key --explain "${tokenize[@]}" "${pack[@]}" "$trace" >"$explain"
key=$(aiperf-hash key "${tokenize[@]}" "${pack[@]}" "$trace")
self=$(readlink -f "$0")
aiperf-cache "${v[@]}" ensure --explain-file "$explain" "$key" "$store" -- \
	"$self" --build "$trace" "$store" --tokenize "${tokenize[@]}" --pack "${pack[@]}"
echo "$key"
