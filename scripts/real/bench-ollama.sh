#!/usr/bin/env bash
# bench-ollama.sh [URL MODEL]: measures the running server (the one ollama.sh started, by default)
# and probes where it differs from an idealised OpenAI server. Prints one `name: value` line per
# figure or fact on stdout. Client-side times from curl plus bash's EPOCHREALTIME (a few ms of
# curl start-up are included in every TTFT). Medians of AIPERF_REAL_REPS runs (default 5).
#
#   ttft_short_s, ttft_2000_s      median TTFT, /v1/completions streaming, 16- and 2,000-token
#                                  prompts (every 2,000-token prompt is new: no prefix-cache hit)
#   stream1_tok_s                  one stream, 256 tokens: completion_tokens / (end - start)
#   stream1_decode_tok_s           the same after the first token: (tokens - 1) / (end - first)
#   parallel4_tok_s                4 streams at once, 256 tokens each: all tokens / wall time
#   ...and the probes (see each one's comment).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/common.sh"
. "$here/openai.sh"
repo=$(cd "$here/../.." && pwd)
need_cmds curl:curl jq:jq

server_args "$@"
reps=${AIPERF_REAL_REPS:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tokenize=${AIPERF_TOKENIZE:-$repo/bin/aiperf-tokenize}
if [ ! -x "$tokenize" ]; then
	(cd "$repo" && go build -o "$tmp/aiperf-tokenize" ./cmd/aiperf-tokenize) || exit 2
	tokenize=$tmp/aiperf-tokenize
fi

median() { sort -g | awk '{a[NR]=$1} END {if (NR) print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
fact() { printf '%s: %s\n' "$1" "$2"; }

# req TAG ENDPOINT JSON-EXTRA PROMPTFILE: a streaming request; prints its summary (sse_summary +
# t0, status, and the raw chunks' role/usage facts).
req() {
	local tag=$1 ep=$2 extra=$3 pf=$4 path t0
	[ "$ep" = chat ] && path=/v1/chat/completions || path=/v1/completions
	jq -n --arg m "$model" --rawfile p "$pf" --arg ep "$ep" --argjson x "$extra" '
		{model: $m, stream: true}
		+ (if $ep == "chat" then {messages: [{role: "user", content: $p}]} else {prompt: $p} end) + $x' >"$tmp/$tag.req"
	t0=$(post_sse "$url$path" "$tmp/$tag.req" "$tmp/$tag" "${AIPERF_REAL_REQUEST_TIMEOUT:-120}" 2>/dev/null) || true
	sse_summary "$tmp/$tag" | jq -c --argjson t0 "$t0" --arg code "$(http_status "$tmp/$tag")" \
		--argjson roles "$(cut -f2- "$tmp/$tag" | sed -n 's/^data: *//p' | grep -v '^\[DONE\]' |
			jq -s '[.[] | select(.choices[0].delta.role != null)] | length' 2>/dev/null || echo null)" \
		'del(.text) + {t0: $t0, status: ($code | tonumber? // 0), role_chunks: $roles}'
}

prompt_of_length "$tokenize" 16 1 >"$tmp/p16"

# TTFT, short prompt (a new one each time: seed r).
for r in $(seq "$reps"); do
	prompt_of_length "$tokenize" 16 "$((10 + r))" >"$tmp/ps$r"
	req "short$r" completions '{"max_tokens":8,"stream_options":{"include_usage":true}}' "$tmp/ps$r" |
		jq -r '.t_first - .t0'
done | median >"$tmp/ttft_short"
fact ttft_short_s "$(cat "$tmp/ttft_short")"

for r in $(seq "$reps"); do
	prompt_of_length "$tokenize" 2000 "$((20 + r))" >"$tmp/pl$r"
	req "long$r" completions '{"max_tokens":8,"stream_options":{"include_usage":true}}' "$tmp/pl$r" >"$tmp/long$r.s"
	jq -r '.t_first - .t0' "$tmp/long$r.s"
done | median >"$tmp/ttft_long"
fact ttft_2000_s "$(cat "$tmp/ttft_long")"
fact ttft_2000_prompt_tokens "$(jq -r '.usage.prompt_tokens' "$tmp/long1.s")"

# One stream, 256 tokens.
for r in $(seq "$reps"); do
	req "one$r" completions '{"max_tokens":256,"stream_options":{"include_usage":true}}' "$tmp/p16" >"$tmp/one$r.s"
done
fact stream1_tok_s "$(for r in $(seq "$reps"); do jq -r '.usage.completion_tokens / (.t_last - .t0)' "$tmp/one$r.s"; done | median)"
fact stream1_decode_tok_s "$(for r in $(seq "$reps"); do jq -r '(.usage.completion_tokens - 1) / (.t_last - .t_first)' "$tmp/one$r.s"; done | median)"

# Four streams at once, 256 tokens each (two chat, two completions).
for r in $(seq "$reps"); do
	for i in 1 2 3 4; do
		ep=completions
		[ $((i % 2)) -eq 0 ] && ep=chat
		req "par$r-$i" "$ep" '{"max_tokens":256,"stream_options":{"include_usage":true}}' "$tmp/p16" >"$tmp/par$r-$i.s" &
	done
	wait
	jq -s -r '(map(.usage.completion_tokens) | add) / ((map(.t_last) | max) - (map(.t0) | min))' "$tmp"/par"$r"-?.s
done | median >"$tmp/par"
fact parallel4_tok_s "$(cat "$tmp/par")"

# Probes: how the stream looks.
s=$(req probe_comp completions '{"max_tokens":64,"stream_options":{"include_usage":true}}' "$tmp/p16")
fact completions_usage_chunks "$(jq -r '"\(.usage_chunks) of \(.events - 1) chunks carry usage, \(.zero_usage_chunks) of them zeros; the last usage: \(.usage | tostring)"' <<<"$s")"
fact completions_text_chunks_for_64_tokens "$(jq -r '.content_chunks' <<<"$s")"
s=$(req probe_chat chat '{"max_tokens":64,"stream_options":{"include_usage":true}}' "$tmp/p16")
fact chat_usage_chunks "$(jq -r '"\(.usage_chunks) of \(.events - 1) chunks carry usage; the last usage: \(.usage | tostring)"' <<<"$s")"
fact chat_text_chunks_for_64_tokens "$(jq -r '.content_chunks' <<<"$s")"
fact chat_chunks_with_delta_role "$(jq -r '"\(.role_chunks) of \(.events - 1)"' <<<"$s")"
fact chat_finish_chunk "$(cut -f2- "$tmp/probe_chat" | grep '"finish_reason":"' | head -n 1 | cut -c1-300)"
fact chat_usage_chunk "$(cut -f2- "$tmp/probe_chat" | grep '"usage"' | tail -n 1 | cut -c1-300)"
fact chat_headers "$(tr -d '\r' <"$tmp/probe_chat.h" | grep -iE '^(content-type|transfer-encoding|cache-control|connection):' | paste -sd ';' -)"
# Multi-token chunks: text chunks against completion_tokens over the 256-token streams.
fact text_chunks_vs_tokens_256 "$(jq -s -r '[.[] | "\(.content_chunks)/\(.usage.completion_tokens)"] | join(" ")' "$tmp"/one*.s)"
s=$(req probe_nousage completions '{"max_tokens":8}' "$tmp/p16")
fact completions_without_include_usage "$(jq -r '"usage chunks: \(.usage_chunks), last usage: \(.usage | tostring)"' <<<"$s")"
s=$(req probe_nousage_chat chat '{"max_tokens":8}' "$tmp/p16")
fact chat_without_include_usage "$(jq -r '"usage chunks: \(.usage_chunks), last usage: \(.usage | tostring)"' <<<"$s")"
# max_completion_tokens alone (bounded: the model never stops by itself).
s=$(AIPERF_REAL_REQUEST_TIMEOUT=30 req probe_mct chat '{"max_completion_tokens":8,"stream_options":{"include_usage":true}}' "$tmp/p16")
fact max_completion_tokens_8 "$(jq -r 'if .done then "completion_tokens: \(.usage.completion_tokens), finish: \(.finish_reason)" else "still streaming when cut at 30 s: \(.content_chunks) text chunks, no finish_reason" end' <<<"$s")"
# No max_tokens at all.
s=$(AIPERF_REAL_REQUEST_TIMEOUT=60 req probe_nomax completions '{"stream_options":{"include_usage":true}}' "$tmp/p16")
fact no_max_tokens "$(jq -r 'if .done then "completion_tokens: \(.usage.completion_tokens), finish: \(.finish_reason)" else "still streaming when cut at 60 s: \(.content_chunks) text chunks, no finish_reason" end' <<<"$s")"
# A prompt longer than the context (num_ctx 8192).
prompt_of_length "$tokenize" 9000 7 >"$tmp/p9000"
s=$(req probe_long completions '{"max_tokens":4,"stream_options":{"include_usage":true}}' "$tmp/p9000")
fact prompt_9000_tokens "$(jq -r '"HTTP \(.status), usage \(.usage | tostring), finish: \(.finish_reason)"' <<<"$s")"
# Chat: a system and a user message, each 16 tokens: what prompt_tokens says with this template.
jq -n --arg m "$model" --rawfile p "$tmp/p16" '{model: $m, max_tokens: 4, messages: [{role: "system", content: $p}, {role: "user", content: $p}]}' >"$tmp/sys.req"
fact chat_system_plus_user_16_16 "prompt_tokens $(curl -sS --max-time 60 "$url/v1/chat/completions" -d @"$tmp/sys.req" | jq -r '.usage.prompt_tokens')"
# n=2.
jq -n --arg m "$model" '{model: $m, max_tokens: 4, n: 2, prompt: "Hello"}' >"$tmp/n2.req"
fact n_2 "$(curl -sS --max-time 60 "$url/v1/completions" -d @"$tmp/n2.req" | jq -c '{choices: (.choices | length), usage}')"
# Errors and other routes.
fact unknown_model "$(curl -sS --max-time 10 -w ' HTTP %{http_code}' "$url/v1/chat/completions" -d '{"model":"no-such-model","messages":[{"role":"user","content":"x"}]}')"
fact bad_json "$(curl -sS --max-time 10 -w ' HTTP %{http_code}' "$url/v1/chat/completions" -d '{"model":')"
fact get_v1_models "$(curl -sS --max-time 10 -w ' HTTP %{http_code}' "$url/v1/models" | cut -c1-200)"
fact get_health "$(curl -sS --max-time 10 -o /dev/null -w 'HTTP %{http_code}' "$url/health"); GET /: $(curl -sS --max-time 10 -w ' HTTP %{http_code}' "$url/")"
