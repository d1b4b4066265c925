#!/usr/bin/env bash
# replay-ollama.sh [URL MODEL]: the toolkit end to end against a real server (the one ollama.sh
# started, by default: its state file names URL and MODEL). A small Mooncake-style trace is
# tokenized (--verify) and packed twice, for streaming /v1/chat/completions (--legacy-max-tokens:
# ollama ignores max_completion_tokens) and streaming /v1/completions, both with
# stream_options.include_usage; each store is replayed with aiperf-replay (chat: 4 sessions in
# flight; completions: the trace's timestamps, a fixed schedule, open loop: no ceiling, ollama
# queues what its 4 slots cannot take) and the outputs are checked:
#
#   results.jsonl             one record per store record; HTTP 200 and no error for every one;
#                             SSE parsed (a first token, 1..max_tokens content chunks, the first
#                             chunk's offset is the TTFT, offsets ordered and before the end);
#                             output tokens from usage, usage.completion_tokens == output_tokens
#                             == max_tokens == the trace's output_length, usage.prompt_tokens ==
#                             input_tokens == the trace's input_length; sent < first token < end
#   profile_export.jsonl      one line per record (same X-Request-IDs), no error, TTFT > 0 and
#                             TTFT < request_latency, output_sequence_length and
#                             usage_completion_tokens == max_tokens, input_sequence_length
#   profile_export_aiperf.json  request_count N, no errors, no OSL mismatch, p50 TTFT < p50
#                             request latency, OSL min/max/sum as the trace's
#
# The expectations come from the trace, not from the records, so a replay that loses a field
# fails. Before any of that, the checks are run on broken copies of an aiperf-mock run (a
# record dropped, a usage of zeros, a TTFT at the end, an error, a client count, an export line
# off) and each copy must fail: the checks can fail. The same stores are replayed against
# aiperf-mock too, and the differences are printed as `observe` lines (figures on stdout).
#
# Environment: AIPERF_BIN (folder with aiperf-tokenize, aiperf-pack, aiperf-replay, aiperf-mock;
# default bin/ of the repository, built into a temp folder when a binary is missing),
# AIPERF_REAL_OUT (keep the outputs there; default a temp folder, removed),
# AIPERF_REAL_REQUEST_TIMEOUT (seconds per request, default 120).
# Exit 0 when every check passes, 1 if any fails, 2 on trouble.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/common.sh"
. "$here/openai.sh"
. "$here/replay-common.sh"
repo=$(cd "$here/../.." && pwd)
need_cmds curl:curl jq:jq

server_args "$@"
reqtimeout=${AIPERF_REAL_REQUEST_TIMEOUT:-120}

replay_setup aiperf-tokenize aiperf-pack aiperf-replay aiperf-mock
tokenize=$bindir/aiperf-tokenize pack=$bindir/aiperf-pack replay=$bindir/aiperf-replay

# The trace: 12 single-turn rows, 250 ms apart, prompts of 16 to 1,500 tokens (no shared
# prefix: hash ids of their own), 16 to 64 output tokens. Small enough for a few seconds on the
# tiny model, long enough that 4 streams overlap and chunks can carry more than one token. (A
# stream whose every event lands in one read has TTFT == request latency: a client or server
# starved of CPU for a whole short stream does that, so the shortest stream is 16 tokens.)
rows=12
for i in $(seq 0 $((rows - 1))); do
	isl=$((16 + (i * 397) % 1500)) osl=$((16 + (i * 23) % 49))
	blocks=$(((isl + 511) / 512))
	printf '{"timestamp":%d,"input_length":%d,"output_length":%d,"hash_ids":[%s]}\n' \
		$((i * 250)) "$isl" "$osl" "$(seq -s, $((i * 8)) $((i * 8 + blocks - 1)))"
done >"$out/trace.jsonl"
# The expectations, by record index (row i is record i: one turn per session, packed in order).
jq -s -c 'to_entries | map({record: .key, input: .value.input_length, max: .value.output_length})' \
	"$out/trace.jsonl" >"$out/expect.json"

"$tokenize" --verify "$out/trace.jsonl" >"$out/records-in.jsonl" 2>"$out/tokenize.err" || {
	cat "$out/tokenize.err" >&2
	die "aiperf-tokenize failed"
}
"$pack" --model "$model" --endpoint chat --streaming --include-usage --legacy-max-tokens \
	-o "$out/chat.aipk" "$out/records-in.jsonl" || die "aiperf-pack (chat) failed"
"$pack" --model "$model" --endpoint completions --streaming --include-usage \
	-o "$out/completions.aipk" "$out/records-in.jsonl" || die "aiperf-pack (completions) failed"
# A third store, chat without usage: the client counts the answers' text itself.
"$pack" --model "$model" --endpoint chat --streaming --no-include-usage --legacy-max-tokens \
	-o "$out/chat-nousage.aipk" "$out/records-in.jsonl" || die "aiperf-pack (chat, no usage) failed"
# The stores ask for max_tokens, which ollama honours (max_completion_tokens it ignores).
for s in chat completions; do
	"$pack" dump --record 0 "$out/$s.aipk" | jq -e '.max_tokens == 16 and (has("max_completion_tokens") | not) and .stream_options.include_usage' >/dev/null ||
		die "$s store: record 0 does not ask for max_tokens 16 with include_usage"
done
"$pack" dump --record 0 "$out/chat-nousage.aipk" | jq -e '.max_tokens == 16 and (has("stream_options") | not)' >/dev/null ||
	die "chat-nousage store: record 0 does not ask for max_tokens 16 without stream_options"

passed=0 failed=0
# expect NAME JQ-EXPR DIR: one assertion over a run's outputs in DIR. JQ-EXPR sees $r (records),
# $p (profile_export.jsonl lines), $s (profile_export_aiperf.json), $e (the expectations) and
# $m ($e by record index, as a string) and must be true. With quiet=1 it counts only.
quiet=0
expect() {
	local ok=0
	if jq -n -e --slurpfile r <(requests "$3/results.jsonl") --slurpfile p "$3/profile_export.jsonl" \
		--slurpfile s "$3/profile_export_aiperf.json" --slurpfile e "$out/expect.json" '
		$e[0] as $e | $s[0] as $s
		| ($e | map({key: (.record | tostring), value: .}) | from_entries) as $m
		| ($r | map({key: .x_request_id, value: $m[.record | tostring]}) | from_entries) as $byid
		| '"$2" >/dev/null 2>"$tmp/jq.err"; then
		ok=1
	fi
	if [ $ok = 1 ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		[ $quiet = 1 ] || say "FAIL $1: want $2${tmp:+ $(head -c 300 "$tmp/jq.err")}"
	fi
}

# check_run TAG DIR: every check on one replay's outputs.
check_run() {
	local t=$1 d=$2
	expect "$t: one record per store record" '($r | length) == ($e | length) and ([$r[].record] | sort) == [$e[].record]' "$d"
	expect "$t: every request succeeded (HTTP 200, no error)" 'all($r[]; .status == 200 and .error == null and (.cancelled | not) and .phase == "profiling")' "$d"
	expect "$t: SSE parsed: a first token and 1..max_tokens content chunks" \
		'all($r[]; (.first_token_unix_ns // 0) > 0 and (.chunk_offsets_ns | length) >= 1 and (.chunk_offsets_ns | length) <= $m[.record | tostring].max)' "$d"
	# jq holds numbers as doubles: a *_unix_ns (~1.8e18) is exact to 256 ns, so differences of
	# two are compared within 1 µs.
	expect "$t: SSE parsed: first chunk at the TTFT, chunks in order, before the end" \
		'all($r[]; (.chunk_offsets_ns[0] - (.first_token_unix_ns - .sent_unix_ns) | fabs) < 1000 and .chunk_offsets_ns == (.chunk_offsets_ns | sort) and .sent_unix_ns + .chunk_offsets_ns[-1] <= .end_unix_ns + 1000 and .first_byte_unix_ns <= .first_token_unix_ns)' "$d"
	expect "$t: usage read: output tokens from usage, completion_tokens == max_tokens" \
		'all($r[]; .output_tokens_source == "usage" and .usage.completion_tokens == $m[.record | tostring].max and .usage.total_tokens == .usage.prompt_tokens + .usage.completion_tokens)' "$d"
	expect "$t: usage read: prompt_tokens == the trace's input_length" \
		'all($r[]; .usage.prompt_tokens == $m[.record | tostring].input and .input_tokens == $m[.record | tostring].input)' "$d"
	expect "$t: TTFT < request latency (sent < first token < end)" \
		'all($r[]; .sent_unix_ns < .first_token_unix_ns and .first_token_unix_ns < .end_unix_ns)' "$d"
	expect "$t: output tokens == max_tokens == the trace's output_length" \
		'all($r[]; .max_tokens == $m[.record | tostring].max and .output_tokens == $m[.record | tostring].max)' "$d"
	expect "$t: profile_export.jsonl: a line per record, no error" \
		'($p | length) == ($e | length) and ([$p[].metadata.x_request_id] | sort) == ([$r[].x_request_id] | sort) and all($p[]; .error == null and .metadata.benchmark_phase == "profiling")' "$d"
	expect "$t: profile_export.jsonl: 0 < TTFT < request_latency" \
		'all($p[]; .metrics.time_to_first_token.value > 0 and .metrics.time_to_first_token.value < .metrics.request_latency.value)' "$d"
	expect "$t: profile_export.jsonl: OSL == usage_completion_tokens == max_tokens, ISL" \
		'all($p[]; .metrics.output_sequence_length.value == $byid[.metadata.x_request_id].max and .metrics.usage_completion_tokens.value == $byid[.metadata.x_request_id].max and .metrics.input_sequence_length.value == $byid[.metadata.x_request_id].input)' "$d"
	expect "$t: profile_export_aiperf.json: N requests, no errors, no OSL mismatch" \
		'$s.request_count.avg == ($e | length) and ($s.error_summary | length) == 0 and ($s.error_request_count.avg // 0) == 0 and $s.osl_mismatch_count.avg == 0' "$d"
	expect "$t: profile_export_aiperf.json: p50 TTFT < p50 request latency, OSL as the trace's" \
		'$s.time_to_first_token.p50 > 0 and $s.time_to_first_token.p50 < $s.request_latency.p50 and $s.output_sequence_length.min == ([$e[].max] | min) and $s.output_sequence_length.max == ([$e[].max] | max) and $s.total_osl.avg == ([$e[].max] | add) and $s.output_token_throughput.avg > 0' "$d"
	return 0
}

# run_replay TAG STORE URL DIR ARGS...: one replay; its exit status must be 0 (--max-error-rate 0
# turns any failed request into exit 1). The summary table goes to DIR.stderr.
run_replay() {
	local t=$1 store=$2 u=$3 d=$4 rc=0
	shift 4
	timeout 600 "$replay" --url "$u" --timeout "${reqtimeout}s" --max-error-rate 0 --force -o "$d" "$@" "$store" \
		2>"$d.stderr" || rc=$?
	if [ $rc -ne 0 ]; then
		failed=$((failed + 1))
		say "FAIL $t: aiperf-replay exited $rc:"
		tail -n 20 "$d.stderr" >&2
		return 1
	fi
	passed=$((passed + 1))
	local f
	for f in results.jsonl profile_export.jsonl profile_export_aiperf.json; do
		[ -s "$d/$f" ] || {
			failed=$((failed + 1))
			say "FAIL $t: no $d/$f"
			return 1
		}
	done
}

# observe TAG DIR: figures of one run (stdout): medians, throughput, and chunks against tokens.
observe() {
	jq -n -r --arg t "$1" --slurpfile r <(requests "$2/results.jsonl") --slurpfile s "$2/profile_export_aiperf.json" '
		$s[0] as $s
		| ([$r[] | .chunk_offsets_ns | length] | add) as $chunks
		| ([$r[].output_tokens] | add) as $toks
		| [$r[] | select((.chunk_offsets_ns | length) < .output_tokens)] as $multi
		| [$r[] | select(.client_output_tokens != null and .client_output_tokens != .output_tokens)] as $cdiff
		| [$r[] | .chunk_offsets_ns as $o | range(1; $o | length) | select($o[.] == $o[. - 1])] as $same
		| ([$r[] | (.chunk_offsets_ns | length) - 1] | add) as $gaps
		| def f(x): x * 100 | round / 100;
		"observe \($t): ttft_p50_ms=\(f($s.time_to_first_token.p50)) request_latency_p50_ms=\(f($s.request_latency.p50)) itl_p50_ms=\(f($s.inter_token_latency.p50)) output_tok_s=\(f($s.output_token_throughput.avg)) request_s=\(f($s.request_throughput.avg)) send_lateness_p99_ms=\(f($s.send_lateness.p99))",
		"observe \($t): content_chunks=\($chunks) output_tokens=\($toks) records_with_multi_token_chunks=\($multi | length)/\($r | length) chunk_gaps_in_one_read=\($same | length)/\($gaps) client_count_differs_from_usage=\($cdiff | length)"'
}

# probe TAG URL STORE PATH: the store's record 0 sent with curl, raw: how many chunks carry a usage
# object, how many of those are zeros (what a client taking the first usage would report).
probe() {
	"$pack" dump --record 0 "$3" >"$tmp/probe.req"
	post_sse "$2$4" "$tmp/probe.req" "$tmp/probe" "$reqtimeout" >/dev/null || {
		say "probe $1: $(cat "$tmp/probe.err")"
		return 0
	}
	sse_summary "$tmp/probe" | jq -r --arg t "$1" '"observe \($t) raw stream of record 0: events=\(.events) content_chunks=\(.content_chunks) usage_chunks=\(.usage_chunks) zero_usage_chunks=\(.zero_usage_chunks) last_usage_completion_tokens=\(.usage.completion_tokens)"'
}

# nousage TAG URL: the chat store without usage. The output tokens are then the client's count of
# the text (Qwen3, the builtin tokenizer): every request must still succeed and be counted, but
# the count of a decoded random token stream need not equal max_tokens (re-encoding merges or
# splits tokens), so that is observed, not asserted.
nousage() {
	local t=$1 d=$out/$1
	run_replay "$t" "$out/chat-nousage.aipk" "$2" "$d" --schedule concurrency --concurrency 4 || return 0
	expect "$t: one record per store record" '($r | length) == ($e | length) and ([$r[].record] | sort) == [$e[].record]' "$d"
	expect "$t: every request succeeded (HTTP 200, no error)" 'all($r[]; .status == 200 and .error == null and (.cancelled | not))' "$d"
	expect "$t: no usage; output tokens counted by the client, > 0" 'all($r[]; .usage == null and .output_tokens_source == "client" and .output_tokens > 0 and .max_tokens == $m[.record | tostring].max)' "$d"
	expect "$t: TTFT < request latency" 'all($r[]; .sent_unix_ns < .first_token_unix_ns and .first_token_unix_ns < .end_unix_ns)' "$d"
	requests "$d/results.jsonl" | jq -s -r --arg t "$t" '"observe \($t): client-counted output_tokens=\([.[].output_tokens] | add) for max_tokens=\([.[].max_tokens] | add); records where they differ: \([.[] | select(.output_tokens != .max_tokens)] | length)/\(length), ratio min \([.[] | .output_tokens / .max_tokens] | min * 100 | round / 100) max \([.[] | .output_tokens / .max_tokens] | max * 100 | round / 100)"' || true
}

t0=$SECONDS

# The mock first: the same stores, the same checks. It proves the stores and the checks, and
# its broken copies prove that each check can fail.
# --itl 10ms: the mock keeps an absolute token clock, so a mock starved of CPU for longer than a
# whole stream catches up in one burst; 10 ms a token makes that far less likely on a loaded machine.
start_mock --ttft 20ms --itl 10ms

mockchat_ok=0
f0=$failed
run_replay mock-chat "$out/chat.aipk" "$mockurl" "$out/mock-chat" --schedule concurrency --concurrency 4 &&
	check_run mock-chat "$out/mock-chat" && [ "$failed" -eq "$f0" ] && mockchat_ok=1
run_replay mock-completions "$out/completions.aipk" "$mockurl" "$out/mock-completions" --schedule fixed &&
	check_run mock-completions "$out/mock-completions"

# The checks can fail: each broken copy of the mock's chat run must fail at least one check,
# and a copy rewritten by jq without a change (jq's doubles round the *_unix_ns) none.
# mutate NAME FILE JQ: a copy of the run with FILE (one of its outputs) rewritten by JQ.
mutate() {
	local d=$tmp/broken-$1 f=$2
	rm -rf "$d"
	cp -r "$out/mock-chat" "$d"
	if [[ $f == results.jsonl ]]; then # the requests rewritten; the end line kept, last
		jq -s -c "([.[] | select(.end != true)] | $3 | .[]), (.[] | select(.end == true))" "$out/mock-chat/$f" >"$d/$f"
	elif [[ $f == *.jsonl ]]; then
		jq -s -c "$3 | .[]" "$out/mock-chat/$f" >"$d/$f"
	else
		jq -c "$3" "$out/mock-chat/$f" >"$d/$f"
	fi
	local p0=$passed f0=$failed
	quiet=1
	check_run "broken $1" "$d"
	quiet=0
	local caught=$((failed - f0))
	passed=$p0 failed=$f0
	if [ "$1" = unchanged ]; then
		if [ "$caught" -eq 0 ]; then
			passed=$((passed + 1))
		else
			failed=$((failed + 1))
			say "FAIL self-test: $caught checks failed on an unchanged copy"
		fi
	elif [ "$caught" -gt 0 ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		say "FAIL self-test: no check caught the broken copy '$1'"
	fi
}
# (Only on a mock run that passed: broken copies of a failed run prove nothing.)
if [ $mockchat_ok = 1 ]; then
	for f in results.jsonl profile_export.jsonl profile_export_aiperf.json; do
		mutate unchanged "$f" .
	done
	mutate record-dropped results.jsonl '.[:-1]'
	mutate zero-usage results.jsonl '.[0].usage.completion_tokens = 0 | .[0].output_tokens = 0'
	mutate short-output results.jsonl '.[3].output_tokens -= 1 | .[3].usage.completion_tokens -= 1'
	mutate ttft-at-end results.jsonl '.[1].first_token_unix_ns = .[1].end_unix_ns'
	mutate http-error results.jsonl '.[2].status = 500 | .[2].error = {code: 500, type: "HTTPError", message: "x"}'
	mutate client-count results.jsonl '.[4].output_tokens_source = "client"'
	mutate no-chunks results.jsonl '.[5].chunk_offsets_ns = []'
	mutate input-lost results.jsonl '.[6].input_tokens = 0'
	mutate export-ttft profile_export.jsonl '.[0].metrics.time_to_first_token.value = .[0].metrics.request_latency.value'
	mutate export-osl profile_export.jsonl '.[7].metrics.output_sequence_length.value += 1'
	mutate export-line-dropped profile_export.jsonl '.[1:]'
	mutate summary-count profile_export_aiperf.json '.request_count.avg -= 1'
	mutate summary-errors profile_export_aiperf.json '.error_summary = [{"error_details": {"code": 500, "type": "HTTPError", "message": "x"}, "count": 1}]'
fi
nousage mock-chat-nousage "$mockurl"
# The mock's reply tokens are words that re-encode to themselves, so there the client's count is exact.
[ -s "$out/mock-chat-nousage/results.jsonl" ] &&
	expect "mock-chat-nousage: the client's count == max_tokens" 'all($r[]; .output_tokens == $m[.record | tostring].max)' "$out/mock-chat-nousage"
probe mock-completions "$mockurl" "$out/completions.aipk" /v1/completions
probe mock-chat "$mockurl" "$out/chat.aipk" /v1/chat/completions
stop_mock

# The real server.
run_replay ollama-chat "$out/chat.aipk" "$url" "$out/ollama-chat" --schedule concurrency --concurrency 4 &&
	check_run ollama-chat "$out/ollama-chat"
run_replay ollama-completions "$out/completions.aipk" "$url" "$out/ollama-completions" --schedule fixed &&
	check_run ollama-completions "$out/ollama-completions"
nousage ollama-chat-nousage "$url"

for r in mock-chat mock-completions ollama-chat ollama-completions; do
	[ -s "$out/$r/profile_export_aiperf.json" ] && { observe "$r" "$out/$r" 2>/dev/null || true; }
done
probe ollama-completions "$url" "$out/completions.aipk" /v1/completions
probe ollama-chat "$url" "$out/chat.aipk" /v1/chat/completions

echo "replay-ollama: $url model $model, $rows requests a store: $passed passed, $failed failed ($((SECONDS - t0)) s${AIPERF_REAL_OUT:+, outputs in $out})"
[ "$failed" -eq 0 ]
