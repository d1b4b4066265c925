#!/usr/bin/env bash
# Encode speed of lib/tokenizer against Hugging Face's Rust tokenizers (npm
# tokenizers@0.23.2) for the nine tokenizers of the goldens, on the same
# varied multilingual text (gentext: English, CJK, Cyrillic, Arabic, Indic
# with ZWJ/ZWNJ, Thai, emoji, code, ...), in the same run, each line encoded
# on its own as a document (one call per line on both sides). For each
# tokenizer the two sides alternate ROUNDS times (each round reports the
# median of RUNS encodes after a warm-up); the table shows the medians over
# the rounds, and whether both sides produced the same ids (SHA-256).
#
# usage: scripts/bench/tokenize-hf/all.sh   (ROUNDS=3 RUNS=3 TEXT_BYTES=4000000)
# Needs go, node, npm and zstd; the tokenizers come from scripts/golden/fetch.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
rounds=${ROUNDS:-3}
runs=${RUNS:-3}
bytes=${TEXT_BYTES:-4000000}
fix=${AIPERF_TOKENIZER_FIXTURES:-$root/scripts/golden/fixtures}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ ! -d "$root/scripts/golden/node_modules/tokenizers" ]; then
	(cd "$root/scripts/golden" && npm ci --no-audit --no-fund >/dev/null)
fi
AIPERF_TOKENIZER_FIXTURES=$fix "$root/scripts/golden/fetch.sh"
src=$(cd "$root" && go mod download -json github.com/eliben/go-sentencepiece@v0.6.0 | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')/test
(cd "$root" && go run ./scripts/bench/tokenize-hf/gentext -english "$src" -bytes "$bytes") >"$work/text.txt"
(cd "$root" && go build -o "$work/gobench" ./scripts/bench/tokenize-hf/gobench)
zstd -q -d "$root/lib/tokenizer/builtin/qwen3/tokenizer.json.zst" -o "$work/qwen3.json"

field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
size=$(stat -c %s "$work/text.txt")
echo "text: $size bytes of varied multilingual text; $rounds rounds x $runs encodes per side; machine shared, figures are medians"
printf '%-12s %10s %10s %10s %8s  %s\n' tokenizer tokens "ours MB/s" "HF MB/s" ratio ids
for name in qwen3 llama2 llama3 gemma3 gemini gpt4o gptoss claude deepseek_v3; do
	if [ "$name" = qwen3 ]; then hf=$work/qwen3.json go=builtin; else hf=$fix/$name/tokenizer.json go=$hf; fi
	: >"$work/go.t"
	: >"$work/hf.t"
	for _ in $(seq "$rounds"); do
		g=$("$work/gobench" -lines -text "$work/text.txt" -tokenizer "$go" -runs "$runs")
		h=$(node "$here/bench.js" "$hf" "$work/text.txt" "$runs" lines)
		field encode_median "$g" | tr -d ms >>"$work/go.t"
		field encode_median "$h" | tr -d ms >>"$work/hf.t"
	done
	same=same
	[ "$(field ids_sha256 "$g")" = "$(field ids_sha256 "$h")" ] || same=DIFFER
	gm=$(median <"$work/go.t")
	hm=$(median <"$work/hf.t")
	awk -v n="$name" -v t="$(field tokens "$g")" -v s="$size" -v g="$gm" -v h="$hm" -v same="$same" \
		'BEGIN { printf "%-12s %10d %10.1f %10.1f %7.2fx  %s\n", n, t, s / g / 1000, s / h / 1000, h / g, same }'
done
