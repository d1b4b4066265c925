#!/usr/bin/env bash
# run.sh (make report-check): the HTML report rendered by a real browser. Packs the shipped Mooncake
# sample, replays it 40x faster against aiperf-mock on loopback (jittered latencies, 3 % HTTP 500s,
# 2 % connections reset, so that every chart has data) with --html, installs Debian's chromium
# when missing (apt-get update once), renders the page headless to a PNG and checks with
# scripts/reportcheck that every chart is on it with drawn content. The page and the PNG stay in
# $REPORT_CHECK_DIR (default bin/report-check). Then the same for the page of a sweep
# (aiperf-replay sweep --html) against a mock of known capacity (--slots, --token-rate), on a
# store of 40 short requests. Stops only the mocks it started, by pid.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${BIN:-bin}
OUT=${REPORT_CHECK_DIR:-bin/report-check}
SAMPLE=lib/trace/testdata/mooncake_head1000.jsonl
rm -rf "$OUT" && mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

"$BIN/aiperf-tokenize" "$SAMPLE" | "$BIN/aiperf-pack" --model demo-model --streaming -o "$OUT/store.aipk"

mockpid=
trap '[ -n "$mockpid" ] && kill "$mockpid" 2>/dev/null && wait "$mockpid" 2>/dev/null; true' EXIT
"$BIN/aiperf-mock" --listen 127.0.0.1:0 --ttft 20ms --ttft-jitter 15ms --itl 0.5ms --itl-jitter 0.4ms \
	--error-rate 3 --fault reset --fault-rate 2 --seed 1 > "$OUT/mock.url" 2> "$OUT/mock.log" &
mockpid=$!
for _ in $(seq 200); do [ -s "$OUT/mock.url" ] && break; sleep 0.05; done
url=$(cat "$OUT/mock.url")
[ -n "$url" ] || { echo "aiperf-mock did not start:"; cat "$OUT/mock.log"; exit 2; }
echo "aiperf-mock on $url (pid $mockpid)"
t0=$(date +%s%N)
"$BIN/aiperf-replay" -q --url "$url" --speedup 40 -o "$OUT/run" --html "$OUT/report.html" "$OUT/store.aipk"
echo "replay with --html: $(( ($(date +%s%N) - t0) / 1000000 )) ms; page $(stat -c %s "$OUT/report.html") bytes"
kill "$mockpid" 2>/dev/null; wait "$mockpid" 2>/dev/null || true
mockpid=

if ! command -v chromium > /dev/null; then
	echo "installing Debian's chromium"
	[ "$(id -u)" = 0 ] || { echo "make report-check: chromium is missing and installing it needs root"; exit 2; }
	apt-get update -q > /dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium > /dev/null
fi
chromium --version 2> /dev/null
# shoot NAME: renders $OUT/NAME.html to $OUT/NAME.png and checks it. 1280 px wide: two charts
# a row; tall enough for the whole page at scale 1 (the check fails, naming the count, when a
# chart falls below the window).
shoot() {
	chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --force-device-scale-factor=1 \
		--window-size=1280,3600 --screenshot="$OUT/$1.png" "file://$OUT/$1.html" 2> "$OUT/chromium.log" ||
		{ cat "$OUT/chromium.log"; exit 2; }
	echo "screenshot: $OUT/$1.png ($(stat -c %s "$OUT/$1.png") bytes)"
	go run ./scripts/reportcheck "$OUT/$1.html" "$OUT/$1.png"
}
shoot report

# The sweep's page: 4 slots of 200 tokens/s, TTFT 5 ms, 10-token replies (55 ms a slot: about
# 73 requests/s flat out), an SLO of TTFT 100 ms.
for i in $(seq 0 39); do
	printf '{"v":1,"line":%d,"session_id":"s%d","turn":0,"max_tokens":10,"prompt":"hello %d"}\n' $((i + 1)) "$i" "$i"
done > "$OUT/short.jsonl"
echo '{"v":1,"end":true,"records":40}' >> "$OUT/short.jsonl"
"$BIN/aiperf-pack" --model m --streaming --include-usage -o "$OUT/short.aipk" "$OUT/short.jsonl"
"$BIN/aiperf-mock" --listen 127.0.0.1:0 --slots 4 --token-rate 200 --ttft 5ms > "$OUT/capmock.url" 2> "$OUT/capmock.log" &
mockpid=$!
for _ in $(seq 200); do [ -s "$OUT/capmock.url" ] && break; sleep 0.05; done
url=$(cat "$OUT/capmock.url")
[ -n "$url" ] || { echo "aiperf-mock --slots did not start:"; cat "$OUT/capmock.log"; exit 2; }
t0=$(date +%s%N)
"$BIN/aiperf-replay" sweep -q --url "$url" --goodput time_to_first_token:100 --arrival constant --step-requests 40 \
	--warmup 4 --max-concurrency 64 --max-lateness 250ms -o "$OUT/sweep" --html "$OUT/sweep.html" "$OUT/short.aipk" | tail -n 2
echo "sweep with --html: $(( ($(date +%s%N) - t0) / 1000000 )) ms; page $(stat -c %s "$OUT/sweep.html") bytes"
kill "$mockpid" 2>/dev/null; wait "$mockpid" 2>/dev/null || true
mockpid=
shoot sweep
