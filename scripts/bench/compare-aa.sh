#!/usr/bin/env bash
# compare-aa.sh: the run-to-run spread of ordinary runs, the figure compare's --min-change default
# is chosen from (docs/replay.md, "compare"). PAIRS (default 10) A/A pairs: two runs of one setting, one
# after the other, of the shipped Mooncake sample's first 200 requests at 10 a second (constant
# arrivals; RUN_FLAGS replaces these flags) against one aiperf-mock (make demo's: --ttft 20ms
# --itl 0.5ms), each pair compared with
# `aiperf-replay compare --json --min-change 0`. Prints, per row (metric and statistic), the
# largest |change| over the pairs and in how many pairs the test called it significant, then the
# largest |change| of any significant row: the A/A noise a practical threshold has to stay above.
# Stops only the mock it started, by pid. Loopback only.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${BIN:-bin}
PAIRS=${PAIRS:-10}
OUT=${AA_DIR:-bin/compare-aa}
RUN_FLAGS=${RUN_FLAGS:---schedule rate --rate 10 --arrival constant --request-count 200}
rm -rf "$OUT" && mkdir -p "$OUT"
"$BIN/aiperf-tokenize" lib/trace/testdata/mooncake_head1000.jsonl | "$BIN/aiperf-pack" --model demo-model --streaming -o "$OUT/store.aipk"
mockpid=
trap '[ -n "$mockpid" ] && kill "$mockpid" 2>/dev/null && wait "$mockpid" 2>/dev/null; true' EXIT
"$BIN/aiperf-mock" --listen 127.0.0.1:0 --ttft 20ms --itl 0.5ms --prefix-cache-blocks 1000000 > "$OUT/mock.url" 2> "$OUT/mock.log" &
mockpid=$!
for _ in $(seq 200); do [ -s "$OUT/mock.url" ] && break; sleep 0.05; done
url=$(cat "$OUT/mock.url")
[ -n "$url" ] || { echo "aiperf-mock did not start:"; cat "$OUT/mock.log"; exit 2; }
for i in $(seq "$PAIRS"); do
	for side in a b; do
		"$BIN/aiperf-replay" -q --url "$url" $RUN_FLAGS -o "$OUT/$i$side" "$OUT/store.aipk" > /dev/null
	done
	"$BIN/aiperf-replay" compare --json --min-change 0 "$OUT/${i}a" "$OUT/${i}b" > "$OUT/pair-$i.json"
	echo "pair $i of $PAIRS: $(jq '[.rows[] | select(.significant)] | length' "$OUT/pair-$i.json") significant rows" >&2
done
echo "uptime: $(uptime)"
jq -rs '
  [.[] | .rows[]] | group_by(.metric + "." + .stat) | map({
    row: (.[0].metric + "." + .[0].stat),
    max_abs_pct: (map(.delta_pct // 0 | fabs) | max),
    significant: (map(select(.significant)) | length),
    max_abs_sig_pct: ((map(select(.significant) | .delta_pct // 0 | fabs) | max) // 0)
  }) | (["row", "max |change| %", "significant in", "max |change| % when significant"] | @tsv),
  (.[] | [.row, (.max_abs_pct * 1000 | round / 1000), .significant, (.max_abs_sig_pct * 1000 | round / 1000)] | @tsv)
' "$OUT"/pair-*.json | column -t -s "$(printf '\t')"
jq -s '[.[] | .rows[] | select(.significant) | .delta_pct // 0 | fabs] | max // 0' "$OUT"/pair-*.json |
	xargs printf 'largest |change| of a significant row over %s pairs: %.3f%%\n' "$PAIRS"
