#!/usr/bin/env bash
# run.sh (make report-check): the HTML report rendered by a real browser. Packs the shipped Mooncake
# sample, replays it 40x faster against aiperf-mock on loopback (jittered latencies, 3 % HTTP 500s,
# 2 % connections reset, so that every chart has data) with --html, installs Debian's chromium
# when missing (apt-get update once), renders the page headless to a PNG and checks with
# scripts/reportcheck that every chart is on it with drawn content. Chromium also dumps the DOM of a
# copy of the page with probe.js at its end: reportcheck fails when a text is cut at the right edge
# of the 1280-px window (or of a box that clips it), or when a warning the command printed (its
# "warning:" lines, the summary's boxed panels) is not visible above the page's summary. The pages,
# the console output and the PNGs stay in $REPORT_CHECK_DIR (default bin/report-check). Then a run
# made to print warning panels (replies shorter than asked: --extra max_tokens=3 against records
# asking 10; every token at once: --itl 0), the page of two trials of it (--trials --html), and the page of a sweep (aiperf-replay sweep --html)
# against a mock of known capacity (--slots, --token-rate), on a store of 40 short requests. Stops
# only the mocks it started, by pid.
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
"$BIN/aiperf-replay" --url "$url" --speedup 40 -o "$OUT/run" --html "$OUT/report.html" "$OUT/store.aipk" \
	> "$OUT/report.out" 2> "$OUT/report.err"
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
# shoot NAME [CONSOLE...]: renders $OUT/NAME.html to $OUT/NAME.png, dumps the DOM of a copy with
# probe.js run in it to $OUT/NAME.dom.html, and checks both against the CONSOLE files (the command's
# stdout and stderr); CHARTS=0 leaves the charts unchecked. 1280 px wide: two charts a row; tall enough for the whole page at scale 1 (the
# check fails, naming the count, when a chart falls below the window).
shoot() {
	local name=$1
	shift
	local chrome=(chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --force-device-scale-factor=1 --window-size=1280,4000)
	"${chrome[@]}" --screenshot="$OUT/$name.png" "file://$OUT/$name.html" 2> "$OUT/chromium.log" ||
		{ cat "$OUT/chromium.log"; exit 2; }
	echo "screenshot: $OUT/$name.png ($(stat -c %s "$OUT/$name.png") bytes)"
	{ sed '/<\/body>/,$d' "$OUT/$name.html"; printf '<script>\n'; cat scripts/reportcheck/probe.js; printf '</script>\n</body>\n</html>\n'; } > "$OUT/$name.probe.html"
	"${chrome[@]}" --dump-dom "file://$OUT/$name.probe.html" > "$OUT/$name.dom.html" 2> "$OUT/chromium.log" ||
		{ cat "$OUT/chromium.log"; exit 2; }
	local shot="$OUT/$name.png"
	[ "${CHARTS:-1}" = 1 ] || shot=-
	go run ./scripts/reportcheck "$OUT/$name.html" "$shot" "$OUT/$name.dom.html" "$@"
}
shoot report "$OUT/report.out" "$OUT/report.err"

# A store of 40 short requests (10 tokens each) for the last two pages.
for i in $(seq 0 39); do
	printf '{"v":1,"line":%d,"session_id":"s%d","turn":0,"max_tokens":10,"prompt":"hello %d"}\n' $((i + 1)) "$i" "$i"
done > "$OUT/short.jsonl"
echo '{"v":1,"end":true,"records":40}' >> "$OUT/short.jsonl"
"$BIN/aiperf-pack" --model m --streaming --include-usage -o "$OUT/short.aipk" "$OUT/short.jsonl"

# A run whose summary prints a warning panel: the mock sends every token of a reply at once
# (--itl 0), so the tokens after the first arrive with it (the "ITL ~ 0" panel).
"$BIN/aiperf-mock" --listen 127.0.0.1:0 --ttft 5ms --ttft-jitter 4ms --itl 0s --seed 1 > "$OUT/warnmock.url" 2> "$OUT/warnmock.log" &
mockpid=$!
for _ in $(seq 200); do [ -s "$OUT/warnmock.url" ] && break; sleep 0.05; done
url=$(cat "$OUT/warnmock.url")
[ -n "$url" ] || { echo "aiperf-mock did not start:"; cat "$OUT/warnmock.log"; exit 2; }
"$BIN/aiperf-replay" --url "$url" --request-count 200 -o "$OUT/warnrun" --html "$OUT/warn.html" "$OUT/short.aipk" \
	> "$OUT/warn.out" 2> "$OUT/warn.err"
# and the page of two trials of it (--trials --html): the table across the trials at the top, each
# trial's warning panels in its section, its charts collapsed (so they are not checked)
"$BIN/aiperf-replay" --url "$url" --request-count 100 --trials 2 -o "$OUT/trials" --html "$OUT/trials.html" "$OUT/short.aipk" \
	> "$OUT/trials.out" 2> "$OUT/trials.err"
kill "$mockpid" 2>/dev/null; wait "$mockpid" 2>/dev/null || true
mockpid=
panels=$(cat "$OUT/warn.out" "$OUT/warn.err" | grep -c "^╭" || true)
echo "warning panels the run printed: $panels"
[ "$panels" -gt 0 ] || { echo "make report-check: the run meant to print a warning panel printed none"; exit 2; }
# (its charts are not checked: a mock with no ITL leaves the ITL and lateness charts on their axes)
CHARTS=0 shoot warn "$OUT/warn.out" "$OUT/warn.err"
grep -q '<h2>Across 2 trials</h2>' "$OUT/trials.html" || { echo "make report-check: the trials page has no table across the trials"; exit 1; }
CHARTS=0 shoot trials "$OUT/trials.out" "$OUT/trials.err"

# The sweep's page: 4 slots of 200 tokens/s, TTFT 5 ms, 10-token replies (55 ms a slot: about
# 73 requests/s flat out), an SLO of TTFT 100 ms.
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
