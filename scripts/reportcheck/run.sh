#!/usr/bin/env bash
# run.sh (make report-check): the HTML report rendered by a real browser. Packs the shipped Mooncake
# sample, replays it 40x faster against aiperf-mock on loopback (jittered latencies, 3 % HTTP 500s,
# 2 % connections reset, so that every chart has data) with --html, installs Debian's chromium
# when missing (apt-get update once), renders the page headless to a PNG and checks with
# scripts/reportcheck that every chart is on it with drawn content. The page and the PNG stay in
# $REPORT_CHECK_DIR (default bin/report-check). Stops only the mock it started, by pid.
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
# 1280 px wide: two charts a row; tall enough for the whole page at scale 1 (the check fails,
# naming the count, when a chart falls below the window).
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --force-device-scale-factor=1 \
	--window-size=1280,3600 --screenshot="$OUT/report.png" "file://$OUT/report.html" 2> "$OUT/chromium.log" ||
	{ cat "$OUT/chromium.log"; exit 2; }
echo "screenshot: $OUT/report.png ($(stat -c %s "$OUT/report.png") bytes)"
go run ./scripts/reportcheck "$OUT/report.html" "$OUT/report.png"
