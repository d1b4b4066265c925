#!/usr/bin/env bash
# check-ollama.sh [URL MODEL]: checks a running OpenAI-compatible server (the one ollama.sh
# started, by default: its state file names URL and MODEL) the way aiperf-replay will use it.
#
# For /v1/chat/completions and /v1/completions, streaming (stream_options.include_usage) and not,
# with max_tokens=N and a prompt of a known token count: HTTP 200; every SSE data line parses;
# [DONE] arrives, once, last; usage is read from the LAST usage object and says
# completion_tokens == N and prompt_tokens == the prompt's count (Qwen3, counted by the project's
# aiperf-tokenize); finish_reason "length"; the first text arrives before the end. Then the
# same with 4 streams at once. Each check is a function taking URL and MODEL: add one to `checks`.
#
# Environment: AIPERF_REAL_MAX_TOKENS (N, default 24), AIPERF_REAL_REQUEST_TIMEOUT (seconds per
# request, default 60), AIPERF_TOKENIZE (the aiperf-tokenize binary; default bin/aiperf-tokenize,
# built into a temp folder if absent). Exit 0 when every check passes, 1 if any fails, 2 on trouble.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/common.sh"
. "$here/openai.sh"
repo=$(cd "$here/../.." && pwd)
need_cmds curl:curl jq:jq

server_args "$@"
n=${AIPERF_REAL_MAX_TOKENS:-24}
maxtime=${AIPERF_REAL_REQUEST_TIMEOUT:-60}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

tokenize=${AIPERF_TOKENIZE:-$repo/bin/aiperf-tokenize}
if [ ! -x "$tokenize" ]; then
	(cd "$repo" && go build -o "$tmp/aiperf-tokenize" ./cmd/aiperf-tokenize) || exit 2
	tokenize=$tmp/aiperf-tokenize
fi

passed=0 failed=0
# expect NAME JQ-EXPR JSON: one assertion; JQ-EXPR is evaluated on JSON and must be true.
expect() {
	if jq -e "$2" >/dev/null 2>&1 <<<"$3"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		say "FAIL $1: want $2; got $(jq -c 'if type == "object" then del(.text) else . end' <<<"$3" 2>/dev/null || head -c 300 <<<"$3")"
	fi
}

# body ENDPOINT MODEL PROMPTFILE STREAM N: a request body for chat or completions.
body() {
	local ep=$1 m=$2 pf=$3 stream=$4 n=$5
	jq -n --arg m "$m" --rawfile p "$pf" --argjson s "$stream" --argjson n "$n" --arg ep "$ep" '
		{model: $m, max_tokens: $n, stream: $s}
		+ (if $ep == "chat" then {messages: [{role: "user", content: $p}]} else {prompt: $p} end)
		+ (if $s then {stream_options: {include_usage: true}} else {} end)'
}

path_of() { if [ "$1" = chat ]; then echo /v1/chat/completions; else echo /v1/completions; fi; }

# stream_request URL MODEL ENDPOINT PROMPTFILE PROMPT_TOKENS N TAG: one streaming request and its checks.
stream_request() {
	local u=$1 m=$2 ep=$3 pf=$4 pt=$5 n=$6 tag=$7 out=$tmp/$7 t0 s
	body "$ep" "$m" "$pf" true "$n" >"$out.req"
	if ! t0=$(post_sse "$u$(path_of "$ep")" "$out.req" "$out" "$maxtime"); then
		failed=$((failed + 1))
		say "FAIL $tag: $(cat "$out.err")"
		return
	fi
	local code
	code=$(http_status "$out")
	if [ "$code" != 200 ]; then
		failed=$((failed + 1))
		say "FAIL $tag: HTTP $code: $(cut -f2- "$out" | head -c 300)"
		return
	fi
	s=$(sse_summary "$out" | jq --argjson t0 "$t0" --arg ct "$(content_type "$out")" '. + {t0: $t0, content_type: $ct}')
	expect "$tag: text/event-stream" '.content_type | startswith("text/event-stream")' "$s"
	expect "$tag: every data line parses" '.bad == 0 and .events > 1' "$s"
	expect "$tag: [DONE] once, last" '.done and .done_count == 1' "$s"
	expect "$tag: usage.completion_tokens == $n" ".usage.completion_tokens == $n" "$s"
	expect "$tag: usage.prompt_tokens == $pt" ".usage.prompt_tokens == $pt" "$s"
	expect "$tag: usage.total_tokens" '.usage.total_tokens == .usage.prompt_tokens + .usage.completion_tokens' "$s"
	expect "$tag: finish_reason length" '.finish_reason == "length"' "$s"
	expect "$tag: text in 1..N chunks" ".content_chunks >= 1 and .content_chunks <= $n and (.text | length) > 0" "$s"
	expect "$tag: TTFT < request latency" '.t_first != null and .t0 < .t_first and .t_first < .t_last' "$s"
	printf '%s\n' "$s" >"$out.summary"
}

# plain_request URL MODEL ENDPOINT PROMPTFILE PROMPT_TOKENS N TAG: one non-streaming request and its checks.
plain_request() {
	local u=$1 m=$2 ep=$3 pf=$4 pt=$5 n=$6 tag=$7 out=$tmp/$7 code r
	body "$ep" "$m" "$pf" false "$n" >"$out.req"
	code=$(curl -sS --max-time "$maxtime" -o "$out" -w '%{http_code}' -H 'Content-Type: application/json' \
		--data-binary "@$out.req" "$u$(path_of "$ep")") || {
		failed=$((failed + 1))
		say "FAIL $tag: curl failed"
		return
	}
	if [ "$code" != 200 ]; then
		failed=$((failed + 1))
		say "FAIL $tag: HTTP $code: $(head -c 300 "$out")"
		return
	fi
	r=$(jq -c '{object, finish_reason: .choices[0].finish_reason, usage,
		text: (.choices[0].message.content // .choices[0].text // "")}' "$out" 2>/dev/null) ||
		r='{"unparsed":true}'
	expect "$tag: JSON body" '.unparsed | not' "$r"
	expect "$tag: usage.completion_tokens == $n" ".usage.completion_tokens == $n" "$r"
	expect "$tag: usage.prompt_tokens == $pt" ".usage.prompt_tokens == $pt" "$r"
	expect "$tag: finish_reason length" '.finish_reason == "length"' "$r"
	expect "$tag: text" '(.text | length) > 0' "$r"
}

# check_endpoints URL MODEL: both endpoints, streaming and not, a short and a longer prompt.
check_endpoints() {
	local u=$1 m=$2 ep len
	for len in 16 600; do
		prompt_of_length "$tokenize" "$len" "$len" >"$tmp/prompt$len"
	done
	for ep in chat completions; do
		for len in 16 600; do
			stream_request "$u" "$m" "$ep" "$tmp/prompt$len" "$len" "$n" "$ep-stream-$len"
			plain_request "$u" "$m" "$ep" "$tmp/prompt$len" "$len" "$n" "$ep-plain-$len"
		done
	done
}

# check_parallel URL MODEL: 4 streams at once (ollama.sh starts the server with 4 slots), each a
# prompt of its own and 128 tokens (long enough that 4 streams served together overlap, where 4
# served one after another would not); every one must complete as above.
check_parallel() {
	local u=$1 m=$2 i pids=() n=128
	for i in 1 2 3 4; do
		prompt_of_length "$tokenize" 200 "$((100 + i))" >"$tmp/pprompt$i"
	done
	for i in 1 2 3 4; do
		local ep=chat
		[ $((i % 2)) -eq 0 ] && ep=completions
		(
			passed=0 failed=0
			stream_request "$u" "$m" "$ep" "$tmp/pprompt$i" 200 "$n" "parallel-$i"
			echo "$passed $failed" >"$tmp/parallel-$i.count"
		) &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || true; done
	for i in 1 2 3 4; do
		if [ -f "$tmp/parallel-$i.count" ]; then
			read -r p f <"$tmp/parallel-$i.count"
			passed=$((passed + p)) failed=$((failed + f))
		else
			failed=$((failed + 1))
			say "FAIL parallel-$i: no result"
		fi
	done
	# Overlap: with 4 slots the streams run together, so each one's first text comes before
	# every other one's end.
	local all
	all=$(jq -s -c 'map({t0, t_first, t_last})' "$tmp"/parallel-*.summary 2>/dev/null || echo '[]')
	expect "parallel: the 4 streams overlap" 'length == 4 and ((map(.t_first) | max) < (map(.t_last) | min))' "$all"
}

checks=(check_endpoints check_parallel)

t0=$SECONDS
for c in "${checks[@]}"; do
	"$c" "$url" "$model"
done
echo "check-ollama: $url model $model, max_tokens $n: $passed passed, $failed failed ($((SECONDS - t0)) s)"
[ "$failed" -eq 0 ]
