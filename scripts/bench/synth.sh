#!/usr/bin/env bash
# Synthesis time of aiperf-tokenize --verify for the nine tokenizers of the
# goldens, on one Mooncake-like trace of ROWS rows (scripts/gentrace), in
# the same run: prompts are synthesized for every row and re-encoded to
# check their length. The tokenizers alternate ROUNDS times; the table shows
# each one's median wall time and CPU time (user+sys, which the other
# tenants of a shared machine disturb less), and their ratios to Qwen3's
# (issue 10's target: DeepSeek-V3 within 2x of Qwen3).
#
# usage: scripts/bench/synth.sh   (ROWS=4000 ROUNDS=3)
# Needs go; the tokenizers other than the builtin Qwen3 come from
# scripts/golden/fetch.sh (npm).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
rows=${ROWS:-4000}
rounds=${ROUNDS:-3}
fix=${AIPERF_TOKENIZER_FIXTURES:-$root/scripts/golden/fixtures}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

AIPERF_TOKENIZER_FIXTURES=$fix "$root/scripts/golden/fetch.sh"
(cd "$root" && go build -o "$work/aiperf-tokenize" ./cmd/aiperf-tokenize)
(cd "$root" && go run ./scripts/gentrace -rows "$rows") >"$work/trace.jsonl"
names="qwen3 llama2 llama3 gemma3 gemini gpt4o gptoss claude deepseek_v3"
tokens=$(awk -F'"input_length": *' '{ split($2, a, /[,}]/); s += a[1] } END { print s }' "$work/trace.jsonl")
echo "trace: $rows rows, $tokens prompt tokens (gentrace); aiperf-tokenize --verify; $rounds rounds; load $(cut -d' ' -f1-3 /proc/loadavg)"
for _ in $(seq "$rounds"); do
	for name in $names; do
		tok=$fix/$name/tokenizer.json
		[ "$name" = qwen3 ] && tok=builtin
		/usr/bin/time -o "$work/t" -f "%e %U %S" \
			"$work/aiperf-tokenize" --verify --tokenizer "$tok" "$work/trace.jsonl" >"$work/out.jsonl"
		awk -v n="$name" '{ print n, $1, $2 + $3 }' "$work/t" >>"$work/times"
	done
done
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
col() { awk -v n="$1" -v c="$2" '$1 == n { print $c }' "$work/times" | median; }
qw=$(col qwen3 2)
qc=$(col qwen3 3)
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-12s %8s %9s %8s %9s %9s\n' tokenizer "wall s" "x qwen3" "CPU s" "x qwen3" "M tok/s"
for name in $names; do
	awk -v n="$name" -v w="$(col "$name" 2)" -v c="$(col "$name" 3)" -v qw="$qw" -v qc="$qc" -v t="$tokens" \
		'BEGIN { printf "%-12s %8.2f %8.2fx %8.2f %8.2fx %9.1f\n", n, w, w / qw, c, c / qc, t / w / 1e6 }'
done
