#!/usr/bin/env bash
# replay.sh: aiperf-replay against vegeta on loopback, same bodies, same server, same run, interleaved.
#
#   1. sustained requests/s with 16-chunk SSE streams, 64 in flight, and client CPU per request
#   2. p99 send lateness of aiperf-replay at half its sustained rate (constant arrivals)
#   3. client overhead in TTFT at low load: median TTFT of aiperf-replay minus a bare net/http
#      client's, one request at a time against aiperf-mock --ttft 20ms --itl 1ms
#   4. RSS of aiperf-replay over RSS_REQUESTS requests (default 1,000,000), sampled every 10 s
#
# Method of 1 (the same for both clients; docs/bench.md "Replay" says the same):
#   - server: SERVER=bare (default) is `replaybench serve`, a net/http server that reads each body and
#     answers with the same bytes every time: the stream aiperf-mock --fast sent for the first body
#     (captured at setup), written as the mock writes it (headers flushed, one write and flush per
#     content event, then finish + usage + [DONE] in one write). It costs the shared cores less than
#     the mock (no JSON parse, no prompt tokenizing), so more of them is left to the client being
#     measured. SERVER=mock uses aiperf-mock --fast itself (the same stream shape, per-request ids).
#   - vegeta v12.13.0 with its documented maximum-throughput settings: `attack -rate=0 -workers=C
#     -max-workers=C` (a fixed set of C workers, each waiting for its response before the next
#     request), `-max-body=0` (read every body to the end but keep none of it), `-keepalive` (the
#     default; `-connections` stays at its 10,000 idle per host), non-lazy JSON targets (decoded
#     before the attack), results written to a file with `-output` and turned into figures only after
#     the attack (`vegeta encode -to csv`), never piped into `vegeta report` on the same cores.
#   - aiperf-replay: `--schedule concurrency --concurrency C`, and `--request-count` equal to the
#     number of requests vegeta completed in the same round (vegeta runs first, for DURATION;
#     it has no request count of its own short of -lazy targets, which would decode per request).
#   - requests/s = successful completed requests / span, the span running from the first request
#     started to the last one completed: vegeta's first result timestamp (taken before it dials or
#     writes) to the latest timestamp + latency (its body read); aiperf-replay's first sent_ns to its
#     latest end_ns. Connections are dialled inside the span for both: aiperf-replay dials its first
#     C connections before its clock starts, so with SERVER=bare the span starts at the earlier of
#     the client's first send and the server's first accepted connection of the run (both clients
#     alike). SERVER=mock cannot report that, and the span starts at the client's first send.
#   - CPU per request = the client's whole-process CPU time (user + system, all threads, sampled
#     every 10 ms from /proc/PID/task/*/schedstat, interpolated at both ends) over that same span,
#     divided by the same request count. The whole-process rusage to exit is printed beside it
#     (it adds start-up, and aiperf-replay's summary and exports after the last response).
#   - PIN=1 pins the server to CPU 0 and each client to CPU 1 (taskset; Go then runs with
#     GOMAXPROCS=1 in both clients); PIN=0 (default) pins nothing. Either way, the same for both.
#   - The epoll floor (FLOOR=1, the default; bare server only): `replaybench floor`, the least client
#     that reads the same stream as it arrives (one locked thread, a level-triggered epoll loop, one
#     write a request, one read a readiness with its timestamp, no parsing), runs third in each round
#     with the same request count and the same span and CPU rules. Its CPU is, near enough, what this
#     machine's kernel charges for the segments, reads and wake-ups alone. Every client's CPU a
#     request follows its reads a response (printed): a client that keeps up with the server reads
#     the 19 writes of a stream one by one, one that fell behind takes them in one read.
#   - The io_uring floor (URING=1, the default with FLOOR=1): `replaybench uring`, the same least
#     client on io_uring (one multishot receive a connection into a provided-buffer ring, sends as
#     SQEs, one io_uring_enter a batch, SINGLE_ISSUER|DEFER_TASKRUN), runs fourth in each round. It
#     makes no read(2) and no epoll_wait: whether a client built on io_uring would pay the kernel
#     less for the same stream.
#   - ROUNDS rounds, vegeta then aiperf-replay (then the floor) in each; medians of the rounds, the ratio of the
#     medians, and the median of each round's ratio (steadier when the other tenants' load moves).
#
# Targets (issue 14): req/s ratio >= 1.2 on this setup, CPU <= 45 us a request; issue 9's: p99
# lateness <= 1 ms, TTFT overhead <= 0.2 ms, RSS <= 150 MB and flat. The machine is shared: medians.
# vegeta v12.13.0 is installed with `go install` into $BENCH_CACHE (default ~/.cache/aiperf-bench).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10s}
CONC=${CONC:-64}
TTFT_N=${TTFT_N:-200}
RSS_REQUESTS=${RSS_REQUESTS:-1000000}
SERVER=${SERVER:-bare}
PIN=${PIN:-0}
FLOOR=${FLOOR:-1} # 1: part 1 also runs replaybench floor, the least client, in each round (bare server only)
URING=${URING:-$FLOOR} # 1: part 1 also runs replaybench uring, the least client on io_uring (bare server only)
SKIP=${SKIP:-} # e.g. SKIP="2 4": leave those parts out
CACHE=${BENCH_CACHE:-$HOME/.cache/aiperf-bench}
DIR=${BENCH_DIR:-$(mktemp -d /tmp/aiperf-replay-bench.XXXXXX)}
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; rm -rf "$DIR"; }
trap cleanup EXIT
. scripts/bench/common.sh
case $SERVER in bare | mock) ;; *) echo "SERVER is bare or mock, not $SERVER"; exit 2 ;; esac
SPIN=() CPIN=()
if [ "$PIN" = 1 ]; then SPIN=(taskset -c 0) CPIN=(taskset -c 1); fi
skip() { [[ " $SKIP " == *" $1 "* ]]; }

make -s build BINS="aiperf-pack aiperf-mock aiperf-replay" >/dev/null
go build -o "$DIR/replaybench" ./scripts/bench/replaybench
RB=$DIR/replaybench
VEGETA=$CACHE/bin/vegeta
if [ ! -x "$VEGETA" ]; then
	echo "installing vegeta v12.13.0 into $CACHE/bin"
	GOBIN=$CACHE/bin go install github.com/tsenart/vegeta/v12@v12.13.0
fi

# 1,000 chat bodies of ~1.5 KB asking for 16 tokens, streamed with a usage chunk.
"$RB" records 1000 1500 16 > "$DIR/records.jsonl"
bin/aiperf-pack --model bench --streaming --include-usage -o "$DIR/s.aipk" "$DIR/records.jsonl"

# wait_url FILE: wait for a server's URL line in FILE.
wait_url() {
	for _ in $(seq 200); do [ -s "$1" ] && return; sleep 0.05; done
	echo "a server did not start"; cat "$DIR/mock.log"; exit 2
}
# start_mock FILE ARGS...: an aiperf-mock on a free loopback port; its URL goes to FILE.
start_mock() {
	local out=$1
	shift
	"${SPIN[@]}" bin/aiperf-mock --listen 127.0.0.1:0 "$@" > "$out" 2>> "$DIR/mock.log" &
	PIDS+=($!)
	wait_url "$out"
}
start_mock "$DIR/fast.url" --fast
FAST=$(head -1 "$DIR/fast.url")
SPID=
if [ "$SERVER" = bare ]; then
	"$RB" capture "$DIR/s.aipk" "$FAST" "$DIR/stream.sse"
	"${SPIN[@]}" "$RB" serve "$DIR/stream.sse" > "$DIR/bare.out" 2>> "$DIR/mock.log" &
	SPID=$!
	PIDS+=($SPID)
	wait_url "$DIR/bare.out"
	TURL=$(head -1 "$DIR/bare.out")
	echo "server: replaybench serve at $TURL, every answer the $(wc -c < "$DIR/stream.sse")-byte stream aiperf-mock --fast sent for body 1"
else
	TURL=$FAST
	echo "server: aiperf-mock --fast at $TURL"
fi
"$RB" targets "$DIR/s.aipk" "$TURL" > "$DIR/targets.json"
echo "1,000 bodies of ~1.6 KB, 16 tokens each (16 content chunks, finish, usage, [DONE]); $CONC in flight; pinned: $([ "$PIN" = 1 ] && echo 'server CPU 0, client CPU 1' || echo no)"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"

# accepted: the first accepted connection (Unix ns) since the last call, from the bare server; 0
# with the mock.
accepted() {
	[ -n "$SPID" ] || { echo 0; return; }
	local n
	n=$(wc -l < "$DIR/bare.out")
	kill -USR1 "$SPID"
	for _ in $(seq 100); do [ "$(wc -l < "$DIR/bare.out")" -gt "$n" ] && break; sleep 0.02; done
	tail -1 "$DIR/bare.out" | awk '{print $2}'
}
# measure NAME STATS CPU_SAMPLES ACCEPT: appends "rps cpu_us_span cpu_us_process ok errors span reads" to
# $DIR/NAME.fig (reads: that returned bytes, a response; "-" for vegeta, which does not say).
measure() {
	local ok errs first last start cpu
	read -r ok errs first last reads < <(awk '{for (i = 1; i < NF; i++) v[$i] = $(i + 1); print v["ok"], v["errors"], v["first_ns"], v["last_ns"], (v["reads_per_request"] == "" ? "-" : v["reads_per_request"])}' "$2")
	start=$first
	if [ "$4" != 0 ] && [ "$4" -lt "$start" ]; then start=$4; fi
	cpu=$("$RB" cpuspan "$3" "$start" "$last")
	awk -v ok="$ok" -v e="$errs" -v s="$start" -v l="$last" -v c="$cpu" -v rd="$reads" 'BEGIN {
		split(c, f, " "); printf "%.1f %.2f %.2f %d %d %.3f %s\n", ok / ((l - s) / 1e9), f[2] / 1e3 / ok, f[4] / 1e3 / ok, ok, e, (l - s) / 1e9, rd }' >> "$DIR/$1.fig"
}

# 1. Sustained requests/s and CPU per request.
: > "$DIR/v.fig"; : > "$DIR/r.fig"; : > "$DIR/f.fig"; : > "$DIR/u.fig"; : > "$DIR/r.runcpu"
for r in $(seq "$ROUNDS"); do
	skip 1 && break
	accepted > /dev/null
	"$RB" cpuwatch "$DIR/v.cpu" -- "${CPIN[@]}" "$VEGETA" attack -format=json -targets="$DIR/targets.json" \
		-rate=0 -workers="$CONC" -max-workers="$CONC" -max-body=0 -keepalive=true -duration="$DURATION" -output="$DIR/v.bin"
	va=$(accepted)
	"$VEGETA" encode -to csv < "$DIR/v.bin" > "$DIR/v.csv"
	"$RB" vstats "$DIR/v.csv" > "$DIR/v.stats"
	measure v "$DIR/v.stats" "$DIR/v.cpu" "$va"
	vn=$(awk '{print $4 + $5}' < <(tail -1 "$DIR/v.fig"))

	rm -rf "$DIR/out"
	"$RB" cpuwatch "$DIR/r.cpu" -- "${CPIN[@]}" bin/aiperf-replay --url "$TURL" --schedule concurrency \
		--concurrency "$CONC" --request-count "$vn" -o "$DIR/out" "$DIR/s.aipk" 2> "$DIR/replay.err"
	ra=$(accepted)
	"$RB" stats "$DIR/out/results.jsonl" > "$DIR/r.stats"
	measure r "$DIR/r.stats" "$DIR/r.cpu" "$ra"
	grep -o 'client CPU [0-9.]* ' "$DIR/replay.err" | awk '{print $3}' >> "$DIR/r.runcpu"
	who=(v r)
	if [ "$FLOOR" = 1 ] && [ "$SERVER" = bare ]; then
		"$RB" cpuwatch "$DIR/f.cpu" -- "${CPIN[@]}" "$RB" floor "$DIR/s.aipk" "$TURL" "$CONC" "$vn" > "$DIR/f.stats"
		measure f "$DIR/f.stats" "$DIR/f.cpu" "$(accepted)"
		who+=(f)
	fi
	if [ "$URING" = 1 ] && [ "$SERVER" = bare ]; then
		if "$RB" cpuwatch "$DIR/u.cpu" -- "${CPIN[@]}" "$RB" uring "$DIR/s.aipk" "$TURL" "$CONC" "$vn" > "$DIR/u.stats"; then
			measure u "$DIR/u.stats" "$DIR/u.cpu" "$(accepted)"
			who+=(u)
		else
			echo "the io_uring floor did not run (kernel before 6.0, or io_uring disabled); left out"
			URING=0
		fi
	fi
	for w in "${who[@]}"; do
		read -r rps cs cp ok e span rd < <(tail -1 "$DIR/$w.fig")
		printf 'round %d  %-13s %6d ok (%d failed) in %.3f s: %7.0f req/s, CPU %5.1f us a request over the span (%5.1f us whole process), %s reads a response\n' \
			"$r" "$(case $w in v) echo vegeta: ;; r) echo aiperf-replay: ;; f) echo epoll floor: ;; u) echo io_uring floor: ;; esac)" "$ok" "$e" "$span" "$rps" "$cs" "$cp" "$rd"
	done
	echo "          load average $(cut -d' ' -f1-3 /proc/loadavg); aiperf-replay's own figure for its sending phase: $(tail -1 "$DIR/r.runcpu") us CPU a request"
done
if ! skip 1; then
	col() { awk -v c="$1" '{print $c}' "$2" | median; }
	RPS=$(col 1 "$DIR/r.fig"); VRPS=$(col 1 "$DIR/v.fig")
	PAIRED=$(paste -d' ' "$DIR/r.fig" "$DIR/v.fig" | awk '{print $1 / $8}' | median)
	printf 'sustained req/s, 16-chunk streams, %s in flight, %s server: aiperf-replay %.0f, vegeta %.0f: ratio %s, median of the rounds'"'"' ratios %.2f (target >= 1.2)\n' \
		"$CONC" "$SERVER" "$RPS" "$VRPS" "$(ratio "$RPS" "$VRPS")" "$PAIRED"
	printf 'client CPU per request over the span: aiperf-replay %.1f us, vegeta %.1f us (target <= 45); whole process: %.1f us, %.1f us; aiperf-replay sending phase %.1f us\n' \
		"$(col 2 "$DIR/r.fig")" "$(col 2 "$DIR/v.fig")" "$(col 3 "$DIR/r.fig")" "$(col 3 "$DIR/v.fig")" "$(median < "$DIR/r.runcpu")"
	if [ -s "$DIR/f.fig" ]; then
		printf 'the epoll floor (replaybench floor: one thread, one read a readiness, no parsing), same rounds: %.0f req/s, CPU %.1f us a request over the span; aiperf-replay / floor CPU %s, median of the rounds'"'"' ratios %.2f; reads a response: aiperf-replay %s, floor %s\n' \
			"$(col 1 "$DIR/f.fig")" "$(col 2 "$DIR/f.fig")" "$(ratio "$(col 2 "$DIR/r.fig")" "$(col 2 "$DIR/f.fig")")" \
			"$(paste -d' ' "$DIR/r.fig" "$DIR/f.fig" | awk '{print $2 / $9}' | median)" "$(col 7 "$DIR/r.fig")" "$(col 7 "$DIR/f.fig")"
	fi
	if [ -s "$DIR/u.fig" ]; then
		printf 'the io_uring floor (replaybench uring: multishot receives, one enter a batch, no parsing), same rounds: %.0f req/s, CPU %.1f us a request over the span; io_uring floor / epoll floor CPU, median of the rounds'"'"' ratios %.2f; completions a response %s\n' \
			"$(col 1 "$DIR/u.fig")" "$(col 2 "$DIR/u.fig")" "$(paste -d' ' "$DIR/u.fig" "$DIR/f.fig" | awk '{print $2 / $9}' | median)" "$(col 7 "$DIR/u.fig")"
	fi
fi
# Parts 2 and 4 use the same server as part 1.
FAST=$TURL
RPS=${RPS:-4000}

# 2. Send lateness at half the sustained rate, beside the machine's floor in the same round: a bare
#    Go loop sleeping to the same deadlines and sending nothing (on a loaded machine, the wake-up
#    latency the kernel gives any process bounds what a client can do).
HALF=${HALF:-$(awk -v r="$RPS" 'BEGIN{printf "%.0f", r / 2}')}
: > "$DIR/late"; : > "$DIR/late50"; : > "$DIR/floor"; : > "$DIR/floor50"
for r in $(seq "$ROUNDS"); do
	skip 2 && break
	rm -rf "$DIR/out"
	bin/aiperf-replay -q --url "$FAST" --schedule rate --rate "$HALF" --arrival constant --duration "$DURATION" -o "$DIR/out" "$DIR/s.aipk"
	"$DIR/replaybench" stats "$DIR/out/results.jsonl" > "$DIR/stats"
	awk '{print $12 / 1e6}' "$DIR/stats" >> "$DIR/late"
	awk '{print $10 / 1e6}' "$DIR/stats" >> "$DIR/late50"
	"$DIR/replaybench" ticker "$HALF" "$DURATION" > "$DIR/tick"
	awk '{print $6 / 1e6}' "$DIR/tick" >> "$DIR/floor"
	awk '{print $4 / 1e6}' "$DIR/tick" >> "$DIR/floor50"
	printf 'round %d  rate %s/s: %s\n          bare Go sleep loop, same deadlines: %s  (load %s)\n' "$r" "$HALF" "$(cat "$DIR/stats")" \
		"$(cat "$DIR/tick")" "$(cut -d' ' -f1 /proc/loadavg)"
done
skip 2 || printf 'send lateness at %s req/s (half the sustained rate), constant arrivals, median of rounds: p50 %.3f ms, p99 %.3f ms (target <= 1 ms); bare Go sleep loop p50 %.3f ms, p99 %.3f ms\n' \
	"$HALF" "$(median < "$DIR/late50")" "$(median < "$DIR/late")" "$(median < "$DIR/floor50")" "$(median < "$DIR/floor")"

# 3. TTFT overhead at low load against a mock with real latencies. Both clients' clocks start at the
#    same point: when the request holds a connection, before its first byte is written (aiperf-replay's
#    sent_ns; the bare client's httptrace GotConn), and stop at the first content event.
skip 3 || start_mock "$DIR/slow.url" --ttft 20ms --itl 1ms
SLOW=$(cat "$DIR/slow.url" 2>/dev/null || true)
: > "$DIR/r.ttft"; : > "$DIR/b.ttft"
for r in $(seq "$ROUNDS"); do
	skip 3 && break
	rm -rf "$DIR/out"
	bin/aiperf-replay -q --url "$SLOW" --schedule concurrency --concurrency 1 --request-count "$TTFT_N" -o "$DIR/out" "$DIR/s.aipk"
	rt=$("$DIR/replaybench" stats "$DIR/out/results.jsonl" | awk '{print $8 / 1e6}')
	bt=$("$DIR/replaybench" bare "$DIR/s.aipk" "$SLOW" "$TTFT_N" | median | awk '{print $1 / 1e6}')
	echo "$rt" >> "$DIR/r.ttft"; echo "$bt" >> "$DIR/b.ttft"
	printf 'round %d  median TTFT: aiperf-replay %.3f ms, bare net/http client %.3f ms\n' "$r" "$rt" "$bt"
done
if ! skip 3; then
	RT=$(median < "$DIR/r.ttft"); BT=$(median < "$DIR/b.ttft")
	printf 'client overhead in TTFT (mock TTFT 20 ms, one request at a time, both from holding a connection): %.3f ms - %.3f ms = %.3f ms (target <= 0.2 ms)\n' \
		"$RT" "$BT" "$(awk "BEGIN{print $RT - $BT}")"
fi

# 4. RSS over many requests.
if ! skip 4 && [ "$RSS_REQUESTS" -gt 0 ]; then
	rm -rf "$DIR/out"
	bin/aiperf-replay -q --url "$FAST" --schedule concurrency --concurrency "$CONC" --request-count "$RSS_REQUESTS" \
		-o "$DIR/out" "$DIR/s.aipk" &
	rp=$!
	PIDS+=($rp)
	echo "RSS of aiperf-replay over $RSS_REQUESTS requests (MB; the records file's size beside it):"
	while kill -0 "$rp" 2>/dev/null; do
		if [ -r "/proc/$rp/status" ]; then
			awk -v mb="$(du -cm "$DIR"/out/.results.jsonl.tmp-* 2>/dev/null | tail -1 | cut -f1)" \
				'/^VmRSS/ {rss=$2} /^RssAnon/ {anon=$2} /^VmHWM/ {hwm=$2} END {if (rss) printf "  VmRSS %.1f  RssAnon %.1f  VmHWM %.1f  records %s MB\n", rss/1024, anon/1024, hwm/1024, mb}' \
				"/proc/$rp/status" 2>/dev/null || true
		fi
		sleep 10
	done
	wait "$rp"
	echo "  done: $(grep -c sent_unix_ns "$DIR/out/results.jsonl") records"
fi
