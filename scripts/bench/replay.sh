#!/usr/bin/env bash
# replay.sh: aiperf-replay against vegeta on loopback, same bodies, same mock, same run, interleaved.
#
#   1. sustained requests/s with 16-chunk SSE streams (aiperf-mock --fast, 64 in flight, DURATION
#      each round): aiperf-replay vs vegeta attack -rate=0 -max-workers=64 (vegeta reads the
#      bodies but does not parse SSE); client CPU per request for both (/usr/bin/time, whole
#      process), and aiperf-replay's own count for the sending phase
#   2. p99 send lateness of aiperf-replay at half its sustained rate (constant arrivals)
#   3. client overhead in TTFT at low load: median TTFT of aiperf-replay minus a bare net/http
#      client's, one request at a time against aiperf-mock --ttft 20ms --itl 1ms
#   4. RSS of aiperf-replay over RSS_REQUESTS requests (default 1,000,000), sampled every 10 s
#
# Targets (issue 9): req/s ratio >= 1.0, CPU <= 60 us a request, p99 lateness <= 1 ms,
# TTFT overhead <= 0.2 ms, RSS <= 150 MB and flat. The machine is shared: medians of ROUNDS.
# vegeta v12.13.0 is installed with `go install` into $BENCH_CACHE (default ~/.cache/aiperf-bench).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10s}
CONC=${CONC:-64}
TTFT_N=${TTFT_N:-200}
RSS_REQUESTS=${RSS_REQUESTS:-1000000}
CACHE=${BENCH_CACHE:-$HOME/.cache/aiperf-bench}
DIR=${BENCH_DIR:-$(mktemp -d /tmp/aiperf-replay-bench.XXXXXX)}
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; rm -rf "$DIR"; }
trap cleanup EXIT
. scripts/bench/common.sh

make -s build BINS="aiperf-pack aiperf-mock aiperf-replay" >/dev/null
go build -o "$DIR/replaybench" ./scripts/bench/replaybench
VEGETA=$CACHE/bin/vegeta
if [ ! -x "$VEGETA" ]; then
	echo "installing vegeta v12.13.0 into $CACHE/bin"
	GOBIN=$CACHE/bin go install github.com/tsenart/vegeta/v12@v12.13.0
fi

# 1,000 chat bodies of ~1.5 KB asking for 16 tokens, streamed with a usage chunk.
"$DIR/replaybench" records 1000 1500 16 > "$DIR/records.jsonl"
bin/aiperf-pack --model bench --streaming --include-usage -o "$DIR/s.aipk" "$DIR/records.jsonl"

# start_mock FILE ARGS...: an aiperf-mock on a free loopback port; its URL goes to FILE.
start_mock() {
	local out=$1
	shift
	bin/aiperf-mock --listen 127.0.0.1:0 "$@" > "$out" 2>> "$DIR/mock.log" &
	PIDS+=($!)
	for _ in $(seq 200); do [ -s "$out" ] && return; sleep 0.05; done
	echo "aiperf-mock did not start"; cat "$DIR/mock.log"; exit 2
}
start_mock "$DIR/fast.url" --fast
FAST=$(cat "$DIR/fast.url")
"$DIR/replaybench" targets "$DIR/s.aipk" "$FAST" > "$DIR/targets.json"
echo "aiperf-mock --fast at $FAST; 1,000 bodies of ~1.6 KB, 16 tokens each (16 content chunks, finish, usage, [DONE])"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"

# cpu_us TIMEFILE REQUESTS: (user+sys) / requests in microseconds, from /usr/bin/time -f '%U %S'.
cpu_us() { awk -v n="$2" '{print ($1 + $2) * 1e6 / n}' "$1"; }

: > "$DIR/r.rps"; : > "$DIR/v.rps"; : > "$DIR/r.cpu"; : > "$DIR/v.cpu"; : > "$DIR/r.runcpu"
for r in $(seq "$ROUNDS"); do
	rm -rf "$DIR/out"
	/usr/bin/time -f '%U %S' -o "$DIR/time" bin/aiperf-replay --url "$FAST" --schedule concurrency --concurrency "$CONC" \
		--duration "$DURATION" -o "$DIR/out" "$DIR/s.aipk" 2> "$DIR/replay.err"
	read -r n rps < <("$DIR/replaybench" stats "$DIR/out/records.jsonl" | awk '{print $2, $6}')
	echo "$rps" >> "$DIR/r.rps"; cpu_us "$DIR/time" "$n" >> "$DIR/r.cpu"
	grep -o 'client CPU [0-9.]* ' "$DIR/replay.err" | awk '{print $3}' >> "$DIR/r.runcpu"
	printf 'round %d  aiperf-replay: %6d requests, %7.0f req/s, %5.1f us CPU a request (process), %s us (sending phase)\n' \
		"$r" "$n" "$rps" "$(tail -1 "$DIR/r.cpu")" "$(tail -1 "$DIR/r.runcpu")"

	/usr/bin/time -f '%U %S' -o "$DIR/time" "$VEGETA" attack -format=json -targets="$DIR/targets.json" -rate=0 \
		-max-workers="$CONC" -duration="$DURATION" -output="$DIR/v.bin"
	"$VEGETA" report < "$DIR/v.bin" > "$DIR/v.txt"
	read -r vn vrps < <(awk -F'[ ,]+' '/^Requests/ {print $5, $7}' "$DIR/v.txt")
	vok=$(awk '/^Success/ {print $3}' "$DIR/v.txt")
	echo "$vrps" >> "$DIR/v.rps"; cpu_us "$DIR/time" "$vn" >> "$DIR/v.cpu"
	printf 'round %d  vegeta:        %6d requests, %7.0f req/s, %5.1f us CPU a request (process), success %s\n' \
		"$r" "$vn" "$vrps" "$(tail -1 "$DIR/v.cpu")" "$vok"
done
RPS=$(median < "$DIR/r.rps"); VRPS=$(median < "$DIR/v.rps")
printf 'sustained req/s, 16-chunk streams, %s in flight: aiperf-replay %.0f, vegeta %.0f: ratio %s (target >= 1.0)\n' \
	"$CONC" "$RPS" "$VRPS" "$(ratio "$RPS" "$VRPS")"
printf 'client CPU per request (process): aiperf-replay %.1f us, vegeta %.1f us; aiperf-replay sending phase %.1f us (target <= 60)\n' \
	"$(median < "$DIR/r.cpu")" "$(median < "$DIR/v.cpu")" "$(median < "$DIR/r.runcpu")"

# 2. Send lateness at half the sustained rate, beside the machine's floor in the same round: a bare
#    Go loop sleeping to the same deadlines and sending nothing (on a loaded machine, the wake-up
#    latency the kernel gives any process bounds what a client can do).
HALF=${HALF:-$(awk -v r="$RPS" 'BEGIN{printf "%.0f", r / 2}')}
: > "$DIR/late"; : > "$DIR/late50"; : > "$DIR/floor"; : > "$DIR/floor50"
for r in $(seq "$ROUNDS"); do
	rm -rf "$DIR/out"
	bin/aiperf-replay -q --url "$FAST" --schedule rate --rate "$HALF" --arrival constant --duration "$DURATION" -o "$DIR/out" "$DIR/s.aipk"
	"$DIR/replaybench" stats "$DIR/out/records.jsonl" > "$DIR/stats"
	awk '{print $12 / 1e6}' "$DIR/stats" >> "$DIR/late"
	awk '{print $10 / 1e6}' "$DIR/stats" >> "$DIR/late50"
	"$DIR/replaybench" ticker "$HALF" "$DURATION" > "$DIR/tick"
	awk '{print $6 / 1e6}' "$DIR/tick" >> "$DIR/floor"
	awk '{print $4 / 1e6}' "$DIR/tick" >> "$DIR/floor50"
	printf 'round %d  rate %s/s: %s\n          bare Go sleep loop, same deadlines: %s  (load %s)\n' "$r" "$HALF" "$(cat "$DIR/stats")" \
		"$(cat "$DIR/tick")" "$(cut -d' ' -f1 /proc/loadavg)"
done
printf 'send lateness at %s req/s (half the sustained rate), constant arrivals, median of rounds: p50 %.3f ms, p99 %.3f ms (target <= 1 ms); bare Go sleep loop p50 %.3f ms, p99 %.3f ms\n' \
	"$HALF" "$(median < "$DIR/late50")" "$(median < "$DIR/late")" "$(median < "$DIR/floor50")" "$(median < "$DIR/floor")"

# 3. TTFT overhead at low load against a mock with real latencies.
start_mock "$DIR/slow.url" --ttft 20ms --itl 1ms
SLOW=$(cat "$DIR/slow.url")
: > "$DIR/r.ttft"; : > "$DIR/b.ttft"
for r in $(seq "$ROUNDS"); do
	rm -rf "$DIR/out"
	bin/aiperf-replay -q --url "$SLOW" --schedule concurrency --concurrency 1 --request-count "$TTFT_N" -o "$DIR/out" "$DIR/s.aipk"
	rt=$("$DIR/replaybench" stats "$DIR/out/records.jsonl" | awk '{print $8 / 1e6}')
	bt=$("$DIR/replaybench" bare "$DIR/s.aipk" "$SLOW" "$TTFT_N" | median | awk '{print $1 / 1e6}')
	echo "$rt" >> "$DIR/r.ttft"; echo "$bt" >> "$DIR/b.ttft"
	printf 'round %d  median TTFT: aiperf-replay %.3f ms, bare net/http client %.3f ms\n' "$r" "$rt" "$bt"
done
RT=$(median < "$DIR/r.ttft"); BT=$(median < "$DIR/b.ttft")
printf 'client overhead in TTFT (mock TTFT 20 ms, one request at a time): %.3f ms - %.3f ms = %.3f ms (target <= 0.2 ms)\n' \
	"$RT" "$BT" "$(awk "BEGIN{print $RT - $BT}")"

# 4. RSS over many requests.
if [ "$RSS_REQUESTS" -gt 0 ]; then
	rm -rf "$DIR/out"
	bin/aiperf-replay -q --url "$FAST" --schedule concurrency --concurrency "$CONC" --request-count "$RSS_REQUESTS" \
		-o "$DIR/out" "$DIR/s.aipk" &
	rp=$!
	PIDS+=($rp)
	echo "RSS of aiperf-replay over $RSS_REQUESTS requests (MB; the records file's size beside it):"
	while kill -0 "$rp" 2>/dev/null; do
		if [ -r "/proc/$rp/status" ]; then
			awk -v mb="$(du -cm "$DIR"/out/.records.jsonl.tmp-* 2>/dev/null | tail -1 | cut -f1)" \
				'/^VmRSS/ {rss=$2} /^RssAnon/ {anon=$2} /^VmHWM/ {hwm=$2} END {if (rss) printf "  VmRSS %.1f  RssAnon %.1f  VmHWM %.1f  records %s MB\n", rss/1024, anon/1024, hwm/1024, mb}' \
				"/proc/$rp/status" 2>/dev/null || true
		fi
		sleep 10
	done
	wait "$rp"
	echo "  done: $(wc -l < "$DIR/out/records.jsonl") records"
fi
