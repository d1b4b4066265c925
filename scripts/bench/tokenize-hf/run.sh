#!/usr/bin/env bash
# Compares lib/tokenizer with Hugging Face's Rust tokenizers (npm
# tokenizers@0.23.2) on the same 1 MB English text, in the same run.
#
# usage: scripts/bench/tokenize-hf/run.sh [TOKENIZER_JSON] [RUNS]
#
# Without TOKENIZER_JSON it benchmarks the builtin Qwen3 tokenizer. The
# text is public-domain English (Gutenberg texts in the Go module
# github.com/eliben/go-sentencepiece@v0.6.0), repeated to just under
# 1,000,000 bytes (cut at a line end), encoded as one document: ours
# Tokenizer.Encode(text) -> []int, HF tokenizer.encode(text, null,
# {addSpecialTokens: false}) (for one document encodeBatch does the same
# work; the Node binding has no id-only call, both build the full Encoding
# with char offsets). Both run on one thread, pinned to CPU 0 (taskset).
# Each side warms up once, then reports the median of RUNS encodes (7 by
# default) and of "a"*100000; the two token counts must agree.
# Needs go, node, npm, taskset and zstd.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
runs=${2:-7}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ ! -d "$root/scripts/golden/node_modules/tokenizers" ]; then
	(cd "$root/scripts/golden" && npm ci --no-audit --no-fund >/dev/null)
fi

tok=${1:-}
if [ -z "$tok" ]; then
	tok=$work/tokenizer.json
	zstd -q -d "$root/lib/tokenizer/builtin/qwen3/tokenizer.json.zst" -o "$tok"
	gotok=builtin
else
	gotok=$tok
fi

src=$(cd "$root" && go mod download -json github.com/eliben/go-sentencepiece@v0.6.0 | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')/test
text=$work/english-1mb.txt
: >"$text"
while [ "$(stat -c %s "$text")" -lt 1000000 ]; do
	cat "$src/romeo-juliet-english.txt" "$src/pg7193_english.txt" >>"$text"
done
# Cut at 1,000,000 bytes, then back to the last newline so that no UTF-8
# sequence is split.
head -c 1000000 "$text" | sed '$d' >"$text.cut" && mv "$text.cut" "$text"

(cd "$root" && go build -o "$work/gobench" ./scripts/bench/tokenize-hf/gobench)
go_line=$(taskset -c 0 "$work/gobench" -text "$text" -tokenizer "$gotok" -runs "$runs")
hf_line=$(taskset -c 0 node "$here/bench.js" "$tok" "$text" "$runs" whole)
echo "$hf_line"
echo "$go_line"
tokens() { sed -n 's/.* tokens=\([0-9]*\) .*/\1/p' <<<"$1"; }
if [ "$(tokens "$go_line")" != "$(tokens "$hf_line")" ]; then
	echo "run.sh: token counts differ: the two tokenizers disagree on this text" >&2
	exit 1
fi
val() { sed -n "s/.*$1=\([0-9.]*\)ms.*/\1/p" <<<"$2"; }
awk -v g="$(val encode_median "$go_line")" -v h="$(val encode_median "$hf_line")" \
	-v ga="$(val a100k_median "$go_line")" -v ha="$(val a100k_median "$hf_line")" \
	'BEGIN { printf "ratio go/hf: 1MB English %.2fx, \"a\"*100000 %.2fx\n", g / h, ga / ha }'
