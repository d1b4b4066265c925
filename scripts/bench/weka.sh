#!/usr/bin/env bash
# weka.sh: the whole public Weka agentic corpus (github.com/callanjfox/kv-cache-tester,
# traces/*.json), `aiperf-tokenize | aiperf-pack` in one pipe: wall time, each stage's peak RSS
# (GNU time -v), the store's size against the bytes its bodies send (stat --json's file_bytes and
# body_bytes), and `aiperf-tokenize --verify` over every request (VERIFY=0 skips it: it re-encodes
# ~24 GB of text). Goals: <= 10 s, <= 2 GB of store, <= 1 GB RSS. Prints the machine's load too.
#
#   CORPUS=DIR scripts/bench/weka.sh        # a directory of trace_NNNN.json
#   MIRROR=GITDIR scripts/bench/weka.sh     # or a (bare) clone of kv-cache-tester: traces/ is extracted
set -euo pipefail
cd "$(dirname "$0")/../.."
DIR=${BENCH_DIR:-$(mktemp -d /tmp/aiperf-bench.XXXXXX)}
trap 'rm -rf "$DIR"' EXIT
. scripts/bench/common.sh
if [ -z "${CORPUS:-}" ]; then
	MIRROR=${MIRROR:?set CORPUS=DIR of traces, or MIRROR=a clone of callanjfox/kv-cache-tester}
	mkdir -p "$DIR/corpus"
	git --git-dir="$MIRROR" archive HEAD traces | tar -x -C "$DIR/corpus"
	CORPUS=$DIR/corpus/traces
fi
mkdir -p "$DIR/bin"
go build -o "$DIR/bin/" ./cmd/aiperf-tokenize ./cmd/aiperf-pack
B=$DIR/bin
T=/usr/bin/time
echo "corpus: $CORPUS ($(ls "$CORPUS"/*.json | wc -l) files, $(du -sh "$CORPUS" | cut -f1)); $(nproc) cores; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
cat "$CORPUS"/*.json > /dev/null # the corpus in the page cache: the pipe's time is not the disk's
settle
: > "$DIR/pipe.t"
timed "$DIR/pipe.t" sh -c '"$1" -v -o "$2/tok.tv" "$3/aiperf-tokenize" "$4" | "$1" -v -o "$2/pack.tv" "$3/aiperf-pack" --model bench -o "$2/s.aipk"' \
	_ "$T" "$DIR" "$B" "$CORPUS"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
rss() { awk -F': ' '/Maximum resident/ {printf "%.0f MiB", $2/1024}' "$1"; }
cpu() { awk -F': ' '/User time/ {u=$2} /System time/ {s=$2} END {printf "%.1f s CPU", u+s}' "$1"; }
echo "tokenize | pack: $(cat "$DIR/pipe.t") s wall; tokenize $(cpu "$DIR/tok.tv"), peak RSS $(rss "$DIR/tok.tv"); pack $(cpu "$DIR/pack.tv"), peak RSS $(rss "$DIR/pack.tv")"
"$B/aiperf-pack" stat --json "$DIR/s.aipk" > "$DIR/stat.json"
python3 - "$DIR/stat.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print("store: %d records, %d sessions (%d subagents, %d chains), %d distinct blocks, %d prompt tokens" % (
    s["records"], s["sessions"], s["subagents"], s["chains"], s["distinct_blocks"], s["prefix_cache"]["prompt_tokens"]))
print("store file %.2f GB against %.2f GB of bodies sent (%.1fx smaller)" % (
    s["file_bytes"] / 1e9, s["body_bytes"] / 1e9, s["body_bytes"] / s["file_bytes"]))
PY
if [ "${VERIFY:-1}" != 0 ]; then
	t0=$(now)
	if "$T" -v -o "$DIR/ver.tv" "$B/aiperf-tokenize" --verify -v "$CORPUS" > /dev/null 2> "$DIR/ver.err"; then
		echo "--verify: 0 mismatches; $(grep -o '[0-9]* prompts verified' "$DIR/ver.err"), $(awk "BEGIN{print $(now) - $t0}") s, peak RSS $(rss "$DIR/ver.tv")"
	else
		echo "--verify: $(grep -o '[0-9]* of [0-9]* prompts have the wrong length' "$DIR/ver.err" || tail -1 "$DIR/ver.err")"
	fi
fi
