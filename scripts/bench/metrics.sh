#!/usr/bin/env bash
# metrics.sh: the exact summary of 1,000,000 replay records (16-chunk streams, ~520 MB),
# lib/metrics.Summarize (two passes, bounded memory) against the Python aiperf's way
# (scripts/bench/metrics_peer.py: every value in memory, numpy), interleaved, same file.
# Prints per-round times and peak RSS, medians and the ratios, and checks both agree on
# the p99 request latency. Needs numpy for /usr/bin/python3 (Debian python3-numpy; installed
# here when missing) and ~1 GB in $BENCH_DIR.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-3}
DIR=${BENCH_DIR:-$(mktemp -d /tmp/aiperf-bench.XXXXXX)}
trap 'rm -rf "$DIR"' EXIT
PY=/usr/bin/python3
if ! $PY -c 'import numpy' 2>/dev/null; then
	apt-get install -y python3-numpy >/dev/null
fi
. scripts/bench/common.sh

go test -c -o "$DIR/metrics.test" ./lib/metrics
AIPERF_BENCH_WRITE="$DIR/results.jsonl" "$DIR/metrics.test" -test.run '^TestBenchWriteRecords$' >/dev/null
echo "results file: $(( $(stat -c %s "$DIR/results.jsonl") / 1000000 )) MB"
cat "$DIR/results.jsonl" > /dev/null

: > "$DIR/go.t"; : > "$DIR/py.t"; : > "$DIR/go.rss"; : > "$DIR/py.rss"; : > "$DIR/go.cpu"; : > "$DIR/py.cpu"
for r in $(seq "$ROUNDS"); do
	settle
	g=$(AIPERF_BENCH_RECORDS="$DIR/results.jsonl" "$DIR/metrics.test" -test.run '^TestBenchSummarizeFile$' | grep '^seconds=')
	settle
	p=$($PY scripts/bench/metrics_peer.py "$DIR/results.jsonl")
	echo "round $r  Summarize: $g"
	echo "         numpy peer: $p"
	field() { tr ' ' '\n' <<< "$2" | sed -n "s/^$1=//p"; }
	field seconds "$g" >> "$DIR/go.t"; field max_rss_mb "$g" >> "$DIR/go.rss"; field cpu_seconds "$g" >> "$DIR/go.cpu"
	field seconds "$p" >> "$DIR/py.t"; field max_rss_mb "$p" >> "$DIR/py.rss"; field cpu_seconds "$p" >> "$DIR/py.cpu"
	if [ "$(field p99_request_latency_ms "$g")" != "$(field p99_request_latency_ms "$p")" ]; then
		echo "p99 request latency differs: $(field p99_request_latency_ms "$g") vs $(field p99_request_latency_ms "$p")"; exit 1
	fi
done
gt=$(median < "$DIR/go.t"); pt=$(median < "$DIR/py.t"); gr=$(median < "$DIR/go.rss"); pr=$(median < "$DIR/py.rss")
gc=$(median < "$DIR/go.cpu"); pc=$(median < "$DIR/py.cpu")
printf 'median: Summarize %.2fs wall, %.2fs CPU (%.0f records/s of CPU), %.0f MB RSS\n' "$gt" "$gc" "$(awk "BEGIN{print 1000000 / $gc}")" "$gr"
printf '        numpy peer %.2fs wall, %.2fs CPU, %.0f MB RSS\n' "$pt" "$pc" "$pr"
printf 'peer/Summarize: wall %sx, CPU %sx, RSS %sx (p99 request latency equal in every round)\n' "$(ratio "$pt" "$gt")" "$(ratio "$pc" "$gc")" "$(ratio "$pr" "$gr")"
