#!/usr/bin/env bash
# run.sh: the peak resident memory of aiperf-replay against hostile servers (issue 30 item 31),
# measured with GNU time, not asserted (a figure, not a test):
#   1. STREAMS (default 8) requests at once against streams without end: each must stop at
#      --max-response (default 64 MiB) with ResponseTooLargeError;
#   2. the scrape agent of a run (aiperf-replay's hidden scrape-agent, as a run starts it:
#      GOMAXPROCS=1) scraping TARGETS (default 4) /metrics pages of SERIES (default 1,000,000)
#      series each, for SCRAPE_SECONDS (default 10).
# Prints "streams: peak RSS N MiB" and "agent: peak RSS N MiB". Stops only the server it started.
set -euo pipefail
cd "$(dirname "$0")/../.."
STREAMS=${STREAMS:-8}
TARGETS=${TARGETS:-4}
SERIES=${SERIES:-1000000}
SCRAPE_SECONDS=${SCRAPE_SECONDS:-10}
OUT=${MEMBOUND_DIR:-bin/membound}
rm -rf "$OUT" && mkdir -p "$OUT"
go build -o "$OUT/" ./cmd/aiperf-replay ./cmd/aiperf-pack ./scripts/membound

srvpid=
trap '[ -n "$srvpid" ] && kill "$srvpid" 2>/dev/null && wait "$srvpid" 2>/dev/null; true' EXIT
"$OUT/membound" --series "$SERIES" > "$OUT/server.url" 2> "$OUT/server.log" &
srvpid=$!
for _ in $(seq 600); do [ -s "$OUT/server.url" ] && break; sleep 0.05; done
read -r url pagebytes < "$OUT/server.url"
echo "server on $url (pid $srvpid), /metrics page $pagebytes bytes, $SERIES series"

for i in $(seq "$STREAMS"); do
	echo "{\"v\":1,\"line\":$i,\"session_id\":\"s$i\",\"turn\":0,\"input_tokens\":3,\"max_tokens\":4,\"prompt\":\"q\"}"
done > "$OUT/records.jsonl"
echo "{\"v\":1,\"end\":true,\"records\":$STREAMS}" >> "$OUT/records.jsonl"
"$OUT/aiperf-pack" --model m --streaming -o "$OUT/s.aipk" "$OUT/records.jsonl"

/usr/bin/time -f '%M' -o "$OUT/streams.rss" "$OUT/aiperf-replay" -q --url "$url" --concurrency "$STREAMS" \
	--tokenizer none -o "$OUT/run" "$OUT/s.aipk" > /dev/null 2> "$OUT/streams.log" || true
errs=$(grep -c '"type":"ResponseTooLargeError"' "$OUT/run/results.jsonl" || true)
echo "streams: $STREAMS at once, $errs ResponseTooLargeError of $STREAMS; peak RSS $(( $(cat "$OUT/streams.rss") / 1024 )) MiB"

targets=()
for i in $(seq "$TARGETS"); do targets+=("$url/metrics/$i"); done
(sleep "$SCRAPE_SECONDS"; echo stop) | AIPERF_REPLAY_SCRAPE_AGENT=1 GOMAXPROCS=1 \
	/usr/bin/time -f '%M' -o "$OUT/agent.rss" "$OUT/aiperf-replay" scrape-agent --interval 1s -- "${targets[@]}" \
	3> "$OUT/agent.jsonl" > "$OUT/agent.out" 2> "$OUT/agent.log" || true
scrapes=$(wc -l < "$OUT/agent.jsonl")
failed=$(grep -c '"error"' "$OUT/agent.jsonl" || true)
echo "agent: $TARGETS targets of $SERIES series, $scrapes scrapes ($failed failed: $(grep -o '"error":"[^"]*"' "$OUT/agent.jsonl" | head -1)); peak RSS $(( $(cat "$OUT/agent.rss") / 1024 )) MiB"
