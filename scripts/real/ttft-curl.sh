#!/usr/bin/env bash
# ttft-curl.sh [URL MODEL]: aiperf-replay's time to first byte against curl's on the running server
# (the one ollama.sh started, by default), in pairs, so that the server's drift cancels out.
#
# Each pair sends two different prompts of the same length (AIPERF_REAL_ISL tokens, default 16;
# different so that no prefix cache serves the second), one with aiperf-replay and one with curl,
# back to back, the order swapped every pair. Both are timed from the same point: the connection
# is open and the request is about to be written.
#   aiperf-replay  first_byte_unix_ns - sent_unix_ns of its record (it dials before its clock
#                  starts; sent is taken when the request holds its connection, before the write)
#   curl           time_starttransfer - time_pretransfer (-w; pretransfer is the connection set
#                  up and the request about to go, starttransfer the first response byte)
# Each aiperf-replay request is its own run (`--schedule fixed --start-offset T --end-offset T`
# keeps only the record at trace time T), as each curl is its own process: both on a new
# connection. The bodies are the same bytes: curl sends `aiperf-pack dump --record K`.
# Prints `name: value` lines per endpoint: the medians, the paired median difference (replay
# minus curl) with its IQR, and replay's own first token minus first byte (how much later than
# the first byte the first content came: 0 when the server's first write carries the first token).
#
# Environment: AIPERF_REAL_PAIRS (default 20), AIPERF_REAL_ISL (16), AIPERF_REAL_ENDPOINTS
# ("completions chat"), AIPERF_BIN (a folder with aiperf-tokenize, aiperf-pack, aiperf-replay;
# built into a temporary folder when absent).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/common.sh"
. "$here/openai.sh"
repo=$(cd "$here/../.." && pwd)
need_cmds curl:curl jq:jq

server_args "$@"
pairs=${AIPERF_REAL_PAIRS:-20}
isl=${AIPERF_REAL_ISL:-16}
endpoints=${AIPERF_REAL_ENDPOINTS:-completions chat}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bindir=${AIPERF_BIN:-$repo/bin}
for b in aiperf-tokenize aiperf-pack aiperf-replay; do
	if [ ! -x "$bindir/$b" ]; then
		mkdir -p "$tmp/bin"
		(cd "$repo" && go build -o "$tmp/bin/" ./cmd/aiperf-tokenize ./cmd/aiperf-pack ./cmd/aiperf-replay) || exit 2
		bindir=$tmp/bin
		break
	fi
done

median() { sort -g | awk '{a[NR]=$1} END {if (NR) print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# quartile Q: the Q-quantile (0..1) of the numbers on stdin (nearest rank).
quantile() { sort -g | awk -v q="$1" '{a[NR]=$1} END {i = int(q * (NR - 1) + 0.5) + 1; print a[i]}'; }
fact() { printf '%s: %s\n' "$1" "$2"; }

# 2 x pairs prompts of isl tokens, 8 output tokens, one a second of trace time, no shared blocks.
n=$((2 * pairs))
for i in $(seq 0 $((n - 1))); do
	printf '{"timestamp":%d,"input_length":%d,"output_length":8,"hash_ids":[%s]}\n' \
		$((i * 1000)) "$isl" "$(seq -s, $((i * 4)) $((i * 4 + (isl + 511) / 512 - 1)))"
done >"$tmp/trace.jsonl"
"$bindir/aiperf-tokenize" --verify "$tmp/trace.jsonl" >"$tmp/records.jsonl" 2>"$tmp/tokenize.err" || {
	cat "$tmp/tokenize.err" >&2
	die "aiperf-tokenize failed"
}

fact machine "$(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
fact pairs "$pairs, prompts of $isl tokens, 8 output tokens, streamed with usage"
for ep in $endpoints; do
	extra=() path=/v1/completions
	if [ "$ep" = chat ]; then extra=(--legacy-max-tokens) path=/v1/chat/completions; fi
	"$bindir/aiperf-pack" --model "$model" --endpoint "$ep" --streaming --include-usage "${extra[@]}" \
		-o "$tmp/$ep.aipk" "$tmp/records.jsonl" || die "aiperf-pack ($ep) failed"
	: >"$tmp/$ep.pairs"
	for i in $(seq 0 $((pairs - 1))); do
		a=$((2 * i)) b=$((2 * i + 1))
		# replay K: aiperf-replay's first byte and first token after its send (ms) for record K.
		replay() {
			local out=$tmp/out-$ep-$1
			"$bindir/aiperf-replay" -q --url "$url" --schedule fixed --start-offset $(($1 * 1000)) \
				--end-offset $(($1 * 1000)) --timeout 120s --max-error-rate 0 -o "$out" "$tmp/$ep.aipk" ||
				die "aiperf-replay ($ep, record $1) failed"
			requests "$out/results.jsonl" | jq -r -s 'if length == 1 and .[0].status == 200 then .[0] else error("not one record of HTTP 200") end
				| "\((.first_byte_unix_ns - .sent_unix_ns) / 1e6) \((.first_token_unix_ns - .sent_unix_ns) / 1e6)"'
		}
		# curlit K: curl's first byte after the request was ready to go (ms) for record K.
		curlit() {
			local body=$tmp/body-$ep-$1 w
			printf '%s' "$("$bindir/aiperf-pack" dump --record "$1" "$tmp/$ep.aipk")" >"$body"
			w=$(curl -sS -N --max-time 120 -o "$body.out" -H 'Content-Type: application/json' -H 'Expect:' \
				--data-binary "@$body" -w '%{http_code} %{time_pretransfer} %{time_starttransfer}' "$url$path") ||
				die "curl ($ep, record $1) failed"
			grep -q '^data: \[DONE\]' "$body.out" || die "curl ($ep, record $1): no [DONE] in the stream"
			awk -v w="$w" 'BEGIN {split(w, f, " "); if (f[1] != 200) exit 1; print (f[3] - f[2]) * 1e3}' ||
				die "curl ($ep, record $1): HTTP ${w%% *}"
		}
		if [ $((i % 2)) -eq 0 ]; then
			r=$(replay "$a")
			c=$(curlit "$b")
		else
			c=$(curlit "$a")
			r=$(replay "$b")
		fi
		echo "$r $c" >>"$tmp/$ep.pairs"
	done
	# columns: replay first byte, replay first token, curl first byte (ms)
	fact "${ep}_replay_first_byte_ms_p50" "$(awk '{print $1}' "$tmp/$ep.pairs" | median)"
	fact "${ep}_curl_first_byte_ms_p50" "$(awk '{print $3}' "$tmp/$ep.pairs" | median)"
	awk '{print $1 - $3}' "$tmp/$ep.pairs" >"$tmp/$ep.diff"
	fact "${ep}_paired_diff_ms_p50" "$(median <"$tmp/$ep.diff") (replay - curl; IQR $(quantile 0.25 <"$tmp/$ep.diff") to $(quantile 0.75 <"$tmp/$ep.diff"))"
	fact "${ep}_replay_first_token_minus_first_byte_ms_p50" "$(awk '{print $2 - $1}' "$tmp/$ep.pairs" | median)"
	fact "${ep}_replay_ttft_ms_p50" "$(awk '{print $2}' "$tmp/$ep.pairs" | median)"
done
