#!/usr/bin/env bash
# Encode speed of lib/tokenizer against Hugging Face's Rust tokenizers (npm
# tokenizers@0.23.2) for the nine tokenizers of the goldens, on the same
# varied multilingual text (gentext: English, CJK, Cyrillic, Arabic, Indic
# with ZWJ/ZWNJ, Thai, emoji, code, ...), in the same run, each line a
# document. The calls compared:
#   ours  Tokenizer.Encode(line) -> []int for every line (gobench -lines)
#   HF    tokenizer.encodeBatch(lines, {addSpecialTokens: false}): one call
#         for all lines, the cheapest the Node binding has (it has no
#         id-only call: encode and encodeBatch both build full Encodings
#         with char offsets; encodeBatch crosses N-API once, not per line)
# twice: on one thread each (both pinned to CPU 0 with taskset; ours
# -workers 1, so Go runs with GOMAXPROCS=1; HF with
# TOKENIZERS_PARALLELISM=false, so encodeBatch runs serially), and on all
# cores each (nothing pinned; ours -workers $(nproc) goroutines taking lines
# from a shared counter; HF's encodeBatch on rayon's pool, one thread a
# core). Only the encode calls are timed. For each tokenizer the sides
# alternate ROUNDS times (each round reports the median of RUNS encodes
# after a warm-up); the table shows the medians over the rounds, and
# whether both sides produced the same ids (SHA-256).
#
# usage: scripts/bench/tokenize-hf/all.sh   (ROUNDS=3 RUNS=3 TEXT_BYTES=4000000 TOKENIZERS="qwen3 ...")
# Needs go, node, npm, taskset and zstd; the tokenizers come from scripts/golden/fetch.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
rounds=${ROUNDS:-3}
runs=${RUNS:-3}
bytes=${TEXT_BYTES:-4000000}
names=${TOKENIZERS:-qwen3 llama2 llama3 gemma3 gemini gpt4o gptoss claude deepseek_v3}
cores=$(nproc)
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
echo "text: $size bytes of varied multilingual text, $(wc -l <"$work/text.txt") lines; $rounds rounds x $runs encodes per side; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "MB/s: ours Encode per line vs HF encodeBatch of all lines; 1 thread (both on CPU 0) and $cores cores"
printf '%-12s %10s %9s %9s %7s %9s %9s %7s  %s\n' tokenizer tokens "ours 1t" "HF 1t" ratio "ours ${cores}c" "HF ${cores}c" ratio ids
for name in $names; do
	if [ "$name" = qwen3 ]; then hf=$work/qwen3.json go=builtin; else hf=$fix/$name/tokenizer.json go=$hf; fi
	: >"$work/go1.t"; : >"$work/hf1.t"; : >"$work/goN.t"; : >"$work/hfN.t"
	same=same
	for _ in $(seq "$rounds"); do
		g1=$(taskset -c 0 "$work/gobench" -lines -workers 1 -text "$work/text.txt" -tokenizer "$go" -runs "$runs")
		h1=$(TOKENIZERS_PARALLELISM=false taskset -c 0 node "$here/bench.js" "$hf" "$work/text.txt" "$runs" batch)
		gN=$("$work/gobench" -lines -workers "$cores" -text "$work/text.txt" -tokenizer "$go" -runs "$runs")
		hN=$(node "$here/bench.js" "$hf" "$work/text.txt" "$runs" batch)
		field encode_median "$g1" | tr -d ms >>"$work/go1.t"
		field encode_median "$h1" | tr -d ms >>"$work/hf1.t"
		field encode_median "$gN" | tr -d ms >>"$work/goN.t"
		field encode_median "$hN" | tr -d ms >>"$work/hfN.t"
		for l in "$h1" "$gN" "$hN"; do [ "$(field ids_sha256 "$g1")" = "$(field ids_sha256 "$l")" ] || same=DIFFER; done
	done
	awk -v n="$name" -v t="$(field tokens "$g1")" -v s="$size" -v g1="$(median <"$work/go1.t")" -v h1="$(median <"$work/hf1.t")" \
		-v gN="$(median <"$work/goN.t")" -v hN="$(median <"$work/hfN.t")" -v same="$same" \
		'BEGIN { printf "%-12s %10d %9.1f %9.1f %6.2fx %9.1f %9.1f %6.2fx  %s\n", n, t, s / g1 / 1000, s / h1 / 1000, h1 / g1, s / gN / 1000, s / hN / 1000, hN / gN, same }'
done
