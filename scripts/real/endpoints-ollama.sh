#!/usr/bin/env bash
# endpoints-ollama.sh [URL MODEL]: the endpoints beyond chat and completions end to end against a
# real server (the one ollama.sh started, by default; ollama serves /v1/embeddings,
# /v1/responses and /v1/messages). Six one-turn records (prompts of 3 to 200 words, 16 to 36
# output tokens) are packed for each endpoint and replayed, first against aiperf-mock (which
# proves the stores and the checks), then against the server:
#
#   embeddings   /v1/embeddings, not streamed: HTTP 200 and no error for every request, usage
#                read (prompt_tokens > 0), no output tokens, request latency > 0
#   responses    /v1/responses, streamed (response.output_text.delta, response.completed with
#                usage): HTTP 200, a first token and 1..max_tokens content chunks, output tokens
#                from usage == usage.completion_tokens == max_tokens (max_output_tokens),
#                usage.prompt_tokens > 0, sent < first token < end
#   messages     /v1/messages (Anthropic), streamed (content_block_delta, message_delta with
#                usage), sent with --api-key-env (x-api-key and anthropic-version): the same
#                checks as responses (max_tokens)
#   template     bodies rendered from a body template (aiperf's template endpoint) into a
#                streamed chat request with usage, sent to --path /v1/chat/completions: the
#                same checks as responses (max_tokens)
#
# Environment: AIPERF_BIN (folder with aiperf-pack, aiperf-replay, aiperf-mock; default bin/ of
# the repository, built into a temp folder when a binary is missing), AIPERF_REAL_OUT (keep the
# outputs there), AIPERF_REAL_REQUEST_TIMEOUT (seconds per request, default 120),
# AIPERF_REAL_EMBED_MODEL (the model of the embeddings requests, default MODEL-embed).
# Exit 0 when every check passes, 1 if any fails, 2 on trouble.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/common.sh"
. "$here/openai.sh"
. "$here/replay-common.sh"
repo=$(cd "$here/../.." && pwd)
need_cmds jq:jq

server_args "$@"
reqtimeout=${AIPERF_REAL_REQUEST_TIMEOUT:-120}
# ollama serves embeddings only from a model whose file has a pooling type: ollama.sh registers
# MODEL-embed for it.
embed_model=${AIPERF_REAL_EMBED_MODEL:-$model-embed}

replay_setup aiperf-pack aiperf-replay aiperf-mock
pack=$bindir/aiperf-pack replay=$bindir/aiperf-replay

# The records: prompts of words (no tokenizer needed), max_tokens 16..36.
words="the harbour lights came on one by one as the boats returned"
rows=6
{
	for i in $(seq 0 $((rows - 1))); do
		n=$((3 + i * 39))
		p=$(for _ in $(seq "$n"); do printf '%s ' "$words"; done | cut -d' ' -f1-"$n")
		printf '{"v":1,"line":%d,"session_id":"s%d","turn":0,"max_tokens":%d,"prompt":"%s"}\n' \
			$((i + 1)) "$i" $((16 + i * 4)) "$p"
	done
	printf '{"v":1,"end":true,"records":%d}\n' "$rows"
} >"$out/records.jsonl"

"$pack" --model "$embed_model" --endpoint embeddings -o "$out/embeddings.aipk" "$out/records.jsonl" || die "aiperf-pack (embeddings) failed"
for e in responses messages; do
	"$pack" --model "$model" --endpoint "$e" --streaming -o "$out/$e.aipk" "$out/records.jsonl" || die "aiperf-pack ($e) failed"
done
cat >"$out/template.json" <<'TMPL'
{
  "messages": [{"role": "user", "content": {{ text|tojson }}}],
  "model": {{ model|tojson }},
  "max_tokens": {{ max_tokens }},
  "stream": {{ stream|lower }},
  "stream_options": {"include_usage": true}
}
TMPL
"$pack" --model "$model" --endpoint template --template "$out/template.json" --streaming \
	-o "$out/template.aipk" "$out/records.jsonl" || die "aiperf-pack (template) failed"
"$pack" dump --record 0 "$out/template.aipk" | jq -e '.max_tokens == 16 and .stream and .stream_options.include_usage' >/dev/null ||
	die "template store: record 0 does not ask for max_tokens 16, streamed, with usage"
"$pack" dump --record 0 "$out/responses.aipk" | jq -e '.max_output_tokens == 16 and .stream and (has("stream_options") | not)' >/dev/null ||
	die "responses store: record 0 does not ask for max_output_tokens 16, streamed"
"$pack" dump --record 0 "$out/messages.aipk" | jq -e '.max_tokens == 16 and .stream and (.messages | length) == 1' >/dev/null ||
	die "messages store: record 0 does not ask for max_tokens 16, streamed"
"$pack" dump --record 0 "$out/embeddings.aipk" | jq -e '(.input | length) == 1 and (has("stream") | not)' >/dev/null ||
	die "embeddings store: record 0 is not one input"

passed=0 failed=0
# expect NAME JQ-EXPR DIR: an assertion over the records ($r) of a run in DIR.
expect() {
	if jq -n -e --slurpfile r <(requests "$3/results.jsonl") "$2" >/dev/null 2>"$tmp/jq.err"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		say "FAIL $1: want $2 $(head -c 300 "$tmp/jq.err")"
	fi
}

# run_endpoint TAG ENDPOINT URL: replay the endpoint's store, check its records and print a line
# of the endpoint's checks, replay time and latency (p50, from the run's export).
run_endpoint() {
	local p0=$passed f0=$failed t1=$SECONDS lat
	check_endpoint "$@"
	lat=$(jq -r 'def r: . * 100 | round / 100; "request_latency p50 \(.request_latency.p50 | r) ms" + (if .time_to_first_token then ", TTFT p50 \(.time_to_first_token.p50 | r) ms" else "" end) + (if .output_sequence_length then ", OSL avg \(.output_sequence_length.avg | r)" else ", no OSL" end)' \
		"$out/$1/profile_export_aiperf.json" 2>/dev/null) || lat="no export"
	echo "endpoints-ollama: $1: $rows requests, $((passed - p0)) checks passed, $((failed - f0)) failed, $((SECONDS - t1)) s; $lat"
}

# check_endpoint TAG ENDPOINT URL: replay the endpoint's store and check its records.
check_endpoint() {
	local t=$1 e=$2 u=$3 d=$out/$1 rc=0 path=()
	[ "$e" != template ] || path=(--path /v1/chat/completions)
	AIPERF_REAL_KEY=sk-endpoints-check timeout 600 "$replay" --url "$u" --timeout "${reqtimeout}s" "${path[@]}" \
		--max-error-rate 0 --concurrency 2 --api-key-env AIPERF_REAL_KEY --force -o "$d" "$out/$e.aipk" 2>"$d.stderr" || rc=$?
	if [ $rc -ne 0 ]; then
		failed=$((failed + 1))
		say "FAIL $t: aiperf-replay exited $rc:"
		tail -n 20 "$d.stderr" >&2
		return 0
	fi
	expect "$t: one record per store record" "(\$r | length) == $rows" "$d"
	expect "$t: every request succeeded (HTTP 200, no error)" 'all($r[]; .status == 200 and .error == null)' "$d"
	expect "$t: usage read: prompt_tokens > 0" 'all($r[]; .usage.prompt_tokens > 0)' "$d"
	expect "$t: request latency > 0" 'all($r[]; .end_unix_ns > .sent_unix_ns)' "$d"
	if [ "$e" = embeddings ]; then
		expect "$t: no output tokens, from usage" 'all($r[]; .output_tokens == 0 and .output_tokens_source == "usage")' "$d"
		# as aiperf's for an endpoint that produces no tokens: no output metric in the export
		if jq -e '.input_sequence_length and (has("output_sequence_length") | not) and (has("output_token_throughput") | not)' "$d/profile_export_aiperf.json" >/dev/null; then
			passed=$((passed + 1))
		else
			failed=$((failed + 1))
			say "FAIL $t: the export has output metrics, or no input_sequence_length"
		fi
		return 0
	fi
	expect "$t: stream parsed: a first token, 1..max_tokens content chunks" \
		'all($r[]; (.first_token_unix_ns // 0) > 0 and (.chunk_offsets_ns | length) >= 1 and (.chunk_offsets_ns | length) <= .max_tokens)' "$d"
	expect "$t: sent < first token < end" 'all($r[]; .sent_unix_ns < .first_token_unix_ns and .first_token_unix_ns < .end_unix_ns)' "$d"
	expect "$t: output tokens from usage == completion_tokens == max_tokens" \
		'all($r[]; .output_tokens_source == "usage" and .usage.completion_tokens == .max_tokens and .output_tokens + (.reasoning_tokens // 0) == .max_tokens)' "$d"
}

t0=$SECONDS
start_mock --ttft 20ms --itl 5ms
for e in embeddings responses messages template; do
	run_endpoint "mock-$e" "$e" "$mockurl"
done
stop_mock

for e in embeddings responses messages template; do
	run_endpoint "ollama-$e" "$e" "$url"
done

echo "endpoints-ollama: $url model $model, $rows requests an endpoint: $passed passed, $failed failed ($((SECONDS - t0)) s${AIPERF_REAL_OUT:+, outputs in $out})"
[ "$failed" -eq 0 ]
