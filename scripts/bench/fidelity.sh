#!/usr/bin/env bash
# fidelity.sh: how true aiperf-replay's timings are, against the server's own account of them.
#
#   MODE=fidelity (default; make bench-fidelity): vllm-bench's ground-truth setup (vllm-project/vllm-bench
#     bench-overhead/README.md): aiperf-mock at TTFT 50 ms, ITL 10 ms, 100 tokens, streamed, at LEVELS
#     streams (default 1 10 100 500 1000). The mock logs, per request, its arrival and every event's
#     write and due time (aiperf-mock --log); scripts/bench/fidelity joins that log with results.jsonl
#     by X-Request-ID (the id aiperf-replay sends on every request and records as x_request_id) and
#     splits the client's TTFT error into its parts:
#       client TTFT - 50 ms = send side (client sent -> server arrival)
#                           + the server's lateness (first write - its due time)
#                           + read side (server's first write -> client's read of the first token)
#     ITL: the client's gaps between content chunks, and their error against the server's gaps between
#     the writes of the same events. CPU: the client's user + system over its wall time (GNU time),
#     the server's from /proc/PID/stat over the same run, each in % of one core. Before each round, the
#     machine's wake-up floor at that moment: a bare Go loop sleeping to 1,000 deadlines a second for 2 s
#     (replaybench ticker; Go timers wake on whole milliseconds, so its p50 is ~1 ms; its p99 is how
#     long this machine keeps a runnable process waiting, a bound no client here can beat).
#   MODE=throughput (make bench-one-token): aiperf's one-token setup (docs/specs/global-exact-dispatch.md):
#     ISL ~550, OSL 1, not streamed, concurrency 512, against aiperf-mock --fast. Per round: aiperf-replay
#     and a plain net/http http.Client loop (replaybench loop, 512 goroutines), same store, same server,
#     same request count; req/s over the span (first send to last end), client CPU a request over the
#     span (replaybench cpuwatch/cpuspan, /proc/PID/task/*/schedstat), req/s per client core = 1 s / CPU a
#     request, and the ratio of the two clients.
#
# The machine is shared: the load average is printed, and every figure is the median of ROUNDS rounds.
set -euo pipefail
cd "$(dirname "$0")/../.."
MODE=${MODE:-fidelity}
ROUNDS=${ROUNDS:-3}
LEVELS=${LEVELS:-1 10 100 500 1000}
DURATION=${DURATION:-10s}
TTFT=${TTFT:-50}
ITL=${ITL:-10}
TOKENS=${TOKENS:-100}
CONC=${CONC:-512}
REQUESTS=${REQUESTS:-100000}
ISL_BYTES=${ISL_BYTES:-2200}
DIR=${BENCH_DIR:-$(mktemp -d /tmp/aiperf-fidelity.XXXXXX)}
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; [ -n "${KEEP:-}" ] || rm -rf "$DIR"; }
trap cleanup EXIT
. scripts/bench/common.sh

make -s build BINS="aiperf-pack aiperf-mock aiperf-replay" >/dev/null
go build -o "$DIR/fidelity" ./scripts/bench/fidelity
go build -o "$DIR/replaybench" ./scripts/bench/replaybench
RB=$DIR/replaybench
load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "machine: $(nproc) cores, load average $(load) (shared with other engineers' jobs: a loaded machine)"

# start_mock ARGS...: an aiperf-mock on a free loopback port; sets URL and MPID.
start_mock() {
	: > "$DIR/url"
	bin/aiperf-mock --listen 127.0.0.1:0 --tokenizer none "$@" > "$DIR/url" 2>> "$DIR/mock.err" &
	MPID=$!
	PIDS+=($MPID)
	for _ in $(seq 200); do [ -s "$DIR/url" ] && break; sleep 0.05; done
	[ -s "$DIR/url" ] || { echo "aiperf-mock did not start"; cat "$DIR/mock.err"; exit 2; }
	URL=$(head -1 "$DIR/url")
}
stop_mock() { kill -TERM "$MPID"; wait "$MPID" || true; }
# ticks PID: the process's user + system CPU in clock ticks (/proc/PID/stat fields 14 and 15).
ticks() { awk '{sub(/.*\) /, ""); print $12 + $13}' "/proc/$1/stat"; }

fidelity() {
	"$RB" records 1000 200 "$TOKENS" > "$DIR/records.jsonl"
	bin/aiperf-pack --model bench --streaming --include-usage -o "$DIR/s.aipk" "$DIR/records.jsonl" > /dev/null
	local hz
	hz=$(getconf CLK_TCK)
	echo "mock: TTFT $TTFT ms, ITL $ITL ms, $TOKENS tokens streamed, --tokenizer none; a fresh mock a level and round; $DURATION of sending a level; $ROUNDS rounds"
	for c in $LEVELS; do
		: > "$DIR/level-$c"
		for r in $(seq "$ROUNDS"); do
			floor=$("$RB" ticker 1000 2s | awk '{printf "floor_p50 %.3f floor_p99 %.3f", $4 / 1e6, $6 / 1e6}')
			start_mock --ttft "${TTFT}ms" --itl "${ITL}ms" --log "$DIR/mock.log"
			rm -rf "$DIR/out"
			s0=$(ticks "$MPID")
			/usr/bin/time -f '%e %U %S' -o "$DIR/time" bin/aiperf-replay -q --force --url "$URL" --schedule concurrency \
				--concurrency "$c" --request-count 1000000 --duration "$DURATION" -o "$DIR/out" "$DIR/s.aipk" 2> "$DIR/replay.err" ||
				{ echo "aiperf-replay failed:"; tail -5 "$DIR/replay.err"; }
			s1=$(ticks "$MPID")
			stop_mock
			read -r wall u s < "$DIR/time"
			fig=$("$DIR/fidelity" level "$DIR/out/results.jsonl" "$DIR/mock.log" "$TTFT")
			ev=$(echo "$fig" | awk '{for (i = 1; i < NF; i += 2) if ($i == "chunks") print $(i + 1)}')
			cpu=$(awk -v w="$wall" -v u="$u" -v s="$s" -v a="$s0" -v b="$s1" -v hz="$hz" -v ev="$ev" -v c="$c" -v t="$TTFT" -v itl="$ITL" -v n="$TOKENS" \
				'BEGIN {cu = 1e6 * (u + s) / ev; su = 1e6 * (b - a) / hz / ev
				printf "client_cpu %.1f server_cpu %.1f client_us_event %.2f server_us_event %.2f cores_needed %.3f", 100 * (u + s) / w, 100 * (b - a) / hz / w, cu, su, (cu + su) * c * n / ((t + (n - 1) * itl) / 1e3) / 1e6}')
			line="streams $c $fig $cpu $floor"
			echo "$line" >> "$DIR/level-$c"
			echo "$line" | awk -v c="$c" -v r="$r" -v l="$(load)" '{for (i = 1; i < NF; i += 2) v[$i] = $(i + 1)
				printf "streams %4d round %d: %d joined (%d unmatched, %d failed); TTFT p50 %.2f ms, error p50 %.2f = send %.2f + server late %.2f + read %.2f (p50s); read p99 %.2f; ITL p99 %.2f sd %.3f (err sd %.3f); CPU client %s%% server %s%% (%s + %s us an event: %s cores at the schedule); sleep loop p99 %s ms; load %s\n",
				c, r, v["joined"], v["unmatched"], v["failed"], v["ttft_p50"], v["ttft_err_p50"], v["send_p50"], v["late_p50"], v["read_p50"], v["read_p99"], v["itl_p99"], v["itl_sd"], v["itl_err_sd"], v["client_cpu"], v["server_cpu"], v["client_us_event"], v["server_us_event"], v["cores_needed"], v["floor_p99"], l}'
		done
	done
	echo
	"$DIR/fidelity" table $(for c in $LEVELS; do echo "$DIR/level-$c"; done)
	echo "load average at the end: $(load)"
}

throughput() {
	"$RB" records 1000 "$ISL_BYTES" 1 > "$DIR/records.jsonl"
	bin/aiperf-pack --model bench -o "$DIR/s.aipk" "$DIR/records.jsonl" > /dev/null
	start_mock --fast
	local isl
	isl=$(curl -s -H 'Content-Type: application/json' --data-binary "$(sed -n 1p "$DIR/records.jsonl" | sed 's/.*"messages":\(.*\)}$/{"model":"bench","max_tokens":1,"messages":\1}/')" "$URL/v1/chat/completions" |
		grep -o '"prompt_tokens":[0-9]*' | cut -d: -f2 || true)
	echo "server: aiperf-mock --fast --tokenizer none at $URL; bodies of ~$ISL_BYTES bytes (${isl:-?} prompt tokens by the mock's 4-bytes-a-token count), max_tokens 1, not streamed; $CONC in flight; $REQUESTS requests a client a round; $ROUNDS rounds"
	: > "$DIR/r.fig"; : > "$DIR/n.fig"
	for r in $(seq "$ROUNDS"); do
		rm -rf "$DIR/out"
		"$RB" cpuwatch "$DIR/r.cpu" -- bin/aiperf-replay -q --force --url "$URL" --schedule concurrency --concurrency "$CONC" \
			--request-count "$REQUESTS" -o "$DIR/out" "$DIR/s.aipk" 2> "$DIR/replay.err"
		"$RB" stats "$DIR/out/results.jsonl" > "$DIR/r.stats"
		"$RB" cpuwatch "$DIR/n.cpu" -- "$RB" loop "$DIR/s.aipk" "$URL" "$CONC" "$REQUESTS" > "$DIR/n.stats"
		for w in r n; do
			read -r ok errs first last < <(awk '{for (i = 1; i < NF; i++) v[$i] = $(i + 1); print v["ok"], v["errors"], v["first_ns"], v["last_ns"]}' "$DIR/$w.stats")
			cpu=$("$RB" cpuspan "$DIR/$w.cpu" "$first" "$last" | awk '{print $2}')
			awk -v ok="$ok" -v e="$errs" -v f="$first" -v l="$last" -v c="$cpu" 'BEGIN {
				printf "%.0f %.2f %.0f %d %d\n", ok / ((l - f) / 1e9), c / 1e3 / ok, 1e9 * ok / c, ok, e }' >> "$DIR/$w.fig"
			read -r rps us pc ok e < <(tail -1 "$DIR/$w.fig")
			printf 'round %d  %-15s %6d ok (%d failed): %7.0f req/s, client CPU %6.2f us a request, %7.0f req/s per client core\n' \
				"$r" "$([ $w = r ] && echo aiperf-replay: || echo net/http loop:)" "$ok" "$e" "$rps" "$us" "$pc"
		done
		echo "          load average $(load)"
	done
	stop_mock
	col() { awk -v c="$1" '{print $c}' "$2" | median; }
	echo
	echo "| client | req/s | client CPU a request | req/s per client core |"
	echo "|---|---|---|---|"
	printf '| aiperf-replay | %.0f | %.1f µs | %.0f |\n' "$(col 1 "$DIR/r.fig")" "$(col 2 "$DIR/r.fig")" "$(col 3 "$DIR/r.fig")"
	printf '| net/http http.Client loop | %.0f | %.1f µs | %.0f |\n' "$(col 1 "$DIR/n.fig")" "$(col 2 "$DIR/n.fig")" "$(col 3 "$DIR/n.fig")"
	printf '| aiperf Rust, quoted (276.8 k req/s on 144 cores) | | | ~1,900 |\n'
	printf '\nratio aiperf-replay / net/http, req/s per client core: %s (median of the rounds'"'"' ratios %.2f); goal >= 20,000 req/s per core (<= 50 µs a request)\n' \
		"$(ratio "$(col 3 "$DIR/r.fig")" "$(col 3 "$DIR/n.fig")")" "$(paste -d' ' "$DIR/r.fig" "$DIR/n.fig" | awk '{print $3 / $8}' | median)"
	echo "load average at the end: $(load)"
}

case $MODE in
fidelity) fidelity ;;
throughput) throughput ;;
*) echo "MODE is fidelity or throughput, not $MODE"; exit 2 ;;
esac
