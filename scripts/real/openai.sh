# Helpers for talking to an OpenAI-compatible server with curl and jq (sourced, not run).
# Needs bash 5 (EPOCHREALTIME), curl and jq.

# post_sse URL BODYFILE OUT [MAXTIME]: POST BODYFILE (JSON) to URL and record the response:
# OUT.h gets the headers, OUT every body line prefixed with its arrival time (epoch seconds,
# microseconds) and a tab. Prints the time the request was started. Bounded by MAXTIME seconds
# (default 120). The exit status is curl's.
post_sse() {
	local url=$1 body=$2 out=$3 maxtime=${4:-120} t0 line
	rm -f "$out.err"
	t0=$EPOCHREALTIME
	{
		curl -sS -N --max-time "$maxtime" -D "$out.h" -H 'Content-Type: application/json' \
			--data-binary "@$body" "$url" || echo "curl-exit:$?" >"$out.err"
	} | while IFS= read -r line || [ -n "$line" ]; do
		printf '%s\t%s\n' "$EPOCHREALTIME" "$line"
	done >"$out"
	echo "$t0"
	[ ! -f "$out.err" ]
}

# http_status OUT: the status code of the last response in OUT.h (curl -D).
http_status() { awk '/^HTTP\// {code=$2} END {print code}' "$1.h"; }

# content_type OUT: the Content-Type of the response in OUT.h.
content_type() { tr -d '\r' <"$1.h" | awk 'tolower($1)=="content-type:" {sub(/^[^:]*: */, ""); ct=$0} END {print ct}'; }

# sse_events OUT: the response in OUT (from post_sse) as SSE events, one a line: the arrival
# time of the event's first data line, a tab, its data. Per the SSE format: lines end in LF,
# CRLF or CR; an empty line ends an event; a line starting with ':' is a comment; only `data`
# fields matter here ("data:x" and "data: x" are the same value). An event's data lines are
# joined with a space where the format joins them with LF: the same JSON either way, and it keeps
# one event a line.
sse_events() {
	cut -f2- "$1" | tr -d '\r' >"$1.body"
	cut -f1 "$1" | paste - "$1.body" | awk -F '\t' '
		function flush() { if (have) print t "\t" data; have = 0; data = "" }
		$2 == "" { flush(); next }
		substr($2, 1, 1) == ":" { next }
		{
			f = $2; v = ""
			i = index(f, ":")
			if (i) { v = substr(f, i + 1); f = substr(f, 1, i - 1); sub(/^ /, "", v) }
			if (f != "data") next
			if (!have) { t = $1; have = 1; data = v } else data = data " " v
		}
		END { flush() }'
	rm -f "$1.body"
}

# sse_summary OUT: a JSON object describing the streamed response in OUT:
#   events         SSE events with data
#   done           the last event is [DONE]; done_count: how many [DONE] events there were
#   bad            events that are neither [DONE] nor a JSON object
#   usage          the LAST usage object seen (ollama's /v1/completions sends zeros in every
#                  chunk and the real counts in a last chunk with no choices)
#   usage_chunks   chunks carrying a usage object; zero_usage_chunks: those with completion_tokens 0
#   finish_reason  the last non-null finish_reason; finish_count: chunks that carry one
#   content_chunks chunks with non-empty text (chat delta.content or reasoning_content, or text)
#   text           all the text, in order
#   t_first        arrival time of the first chunk with text; t_last: of the last event
sse_summary() {
	sse_events "$1" | jq -R -s '
		[split("\n")[] | select(length > 0) | {t: (.[0:index("\t")] | tonumber), d: .[index("\t") + 1:]}] as $ev
		| [$ev[] | select(.d != "[DONE]") | .j = (.d | try fromjson catch null)] as $ch
		| def txt: [.choices[]? | (.delta.content, .delta.reasoning_content, .text) | strings] | add // "";
		  [$ch[] | select(.j | type == "object")] as $ok
		| [$ok[] | select(.j | txt | length > 0)] as $tc
		| {
			events: ($ev | length),
			done: (($ev | length) > 0 and $ev[-1].d == "[DONE]"),
			done_count: ([$ev[] | select(.d == "[DONE]")] | length),
			bad: ([$ch[] | select(.j | type != "object")] | length),
			usage: ([$ok[].j.usage | objects] | last),
			usage_chunks: ([$ok[].j.usage | objects] | length),
			zero_usage_chunks: ([$ok[].j.usage | objects | select(.completion_tokens == 0)] | length),
			finish_reason: ([$ok[].j.choices[]?.finish_reason | strings] | last),
			finish_count: ([$ok[].j.choices[]?.finish_reason | strings] | length),
			content_chunks: ($tc | length),
			text: ([$tc[].j | txt] | add // ""),
			t_first: ($tc[0].t // null),
			t_last: ($ev[-1].t // null)
		}'
}

# prompt_of_length TOKENIZE N SEED: a prompt of exactly N tokens (Qwen3), made by aiperf-tokenize
# (the binary at TOKENIZE) from a one-row Mooncake trace; SEED varies the text.
prompt_of_length() {
	local tok=$1 n=$2 seed=$3 blocks ids
	blocks=$(((n + 511) / 512))
	ids=$(seq -s, "$((seed * 64))" "$((seed * 64 + blocks - 1))")
	printf '{"timestamp":0,"input_length":%d,"output_length":1,"hash_ids":[%s]}\n' "$n" "$ids" |
		"$tok" --seed "$seed" | jq -j 'select(.prompt) | .prompt'
}

# server_args [URL MODEL]: sets url and model from the two arguments, or, with none, from the
# server that `ollama.sh start` recorded; usage error (exit 2) otherwise. The URL loses a
# trailing slash.
server_args() {
	if [ $# -eq 2 ]; then
		url=$1 model=$2
	elif [ $# -eq 0 ]; then
		local st
		st=$("$here/ollama.sh" status) || exit 2
		url=$(sed -n 's/^URL=//p' <<<"$st")
		model=$(sed -n 's/^MODEL=//p' <<<"$st")
	else
		echo "usage: ${0##*/} [URL MODEL]" >&2
		exit 2
	fi
	url=${url%/}
}
