#!/usr/bin/env bash
# tokenize.sh: (a) encode 1 MB of English, ours vs Hugging Face's Rust tokenizer (npm tokenizers),
# same run (scripts/bench/tokenize-hf); (b) `aiperf-tokenize | aiperf-pack` on a generated
# Mooncake-like trace of >= 100M prompt tokens: prompt tokens per second and the ratio against cp
# of the resulting store, same run. Prints medians.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-5}
TOKENS=${TOKENS:-100000000}
DIR=${BENCH_DIR:-$(mktemp -d /tmp/aiperf-bench.XXXXXX)}
trap 'rm -rf "$DIR"' EXIT
make -s build >/dev/null

if [ "${SKIP_HF:-0}" != 1 ] && [ -x scripts/bench/tokenize-hf/run.sh ]; then
	echo "== (a) encode 1 MB of English: lib/tokenizer vs HF tokenizers (npm) =="
	scripts/bench/tokenize-hf/run.sh || echo "(a) skipped: the HF side needs node and npm"
fi

echo "== (b) aiperf-tokenize | aiperf-pack on a generated trace of $TOKENS prompt tokens =="
go run ./scripts/gentrace -tokens "$TOKENS" > "$DIR/trace.jsonl"
. scripts/bench/common.sh
: > "$DIR/pipe.t"; : > "$DIR/cp.t"; : > "$DIR/tok.t"; : > "$DIR/cps.t"
for r in $(seq "$ROUNDS"); do
	rm -f "$DIR/s.aipk"; settle
	timed "$DIR/tok.t" sh -c 'bin/aiperf-tokenize "$1" > /dev/null' _ "$DIR/trace.jsonl"
	settle
	timed "$DIR/pipe.t" sh -c 'bin/aiperf-tokenize "$1" | bin/aiperf-pack --model bench -o "$2"' _ "$DIR/trace.jsonl" "$DIR/s.aipk"
	timed_cp "$DIR/cp.t" "$DIR/cps.t" "$DIR/s.aipk" "$DIR/copy.aipk"
done
rows=$(wc -l < "$DIR/trace.jsonl")
mb=$(( $(stat -c %s "$DIR/s.aipk") / 1000000 ))
p=$(median < "$DIR/pipe.t"); c=$(median < "$DIR/cp.t"); k=$(median < "$DIR/tok.t"); cs=$(median < "$DIR/cps.t")
printf 'trace rows=%s prompt tokens=%s store=%sMB\n' "$rows" "$TOKENS" "$mb"
printf 'tokenize alone  median %.3fs  %.1fM prompt tokens/s\n' "$k" "$(awk "BEGIN{print $TOKENS / $k / 1e6}")"
printf 'tokenize|pack   median %.3fs  %.1fM prompt tokens/s\n' "$p" "$(awk "BEGIN{print $TOKENS / $p / 1e6}")"
printf 'cp of the store median %.3fs  ratio (tokenize|pack)/cp %sx\n' "$c" "$(ratio "$p" "$c")"
printf 'cp+fsync        median %.3fs  ratio (tokenize|pack)/(cp+fsync) %sx (pack fsyncs before its rename)\n' "$cs" "$(ratio "$p" "$cs")"
