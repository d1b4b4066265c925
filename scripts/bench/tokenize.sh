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
now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
: > "$DIR/pipe.t"; : > "$DIR/cp.t"; : > "$DIR/tok.t"; : > "$DIR/cps.t"
for r in $(seq "$ROUNDS"); do
	# Every timed step starts with its target removed and the page cache flushed.
	rm -f "$DIR/s.aipk" "$DIR/copy.aipk"; sync; sleep 1
	t0=$(now); bin/aiperf-tokenize "$DIR/trace.jsonl" > /dev/null; t1=$(now)
	awk "BEGIN{print $t1 - $t0}" >> "$DIR/tok.t"
	sync; sleep 1
	t0=$(now); bin/aiperf-tokenize "$DIR/trace.jsonl" | bin/aiperf-pack --model bench -o "$DIR/s.aipk"; t1=$(now)
	awk "BEGIN{print $t1 - $t0}" >> "$DIR/pipe.t"
	rm -f "$DIR/copy.aipk"; sync; sleep 1
	t0=$(now); cp "$DIR/s.aipk" "$DIR/copy.aipk"; t1=$(now); sync "$DIR/copy.aipk"; t2=$(now)
	awk "BEGIN{print $t1 - $t0}" >> "$DIR/cp.t"
	awk "BEGIN{print $t2 - $t0}" >> "$DIR/cps.t"
done
rows=$(wc -l < "$DIR/trace.jsonl")
mb=$(( $(stat -c %s "$DIR/s.aipk") / 1000000 ))
p=$(median < "$DIR/pipe.t"); c=$(median < "$DIR/cp.t"); k=$(median < "$DIR/tok.t"); cs=$(median < "$DIR/cps.t")
printf 'trace rows=%s prompt tokens=%s store=%sMB\n' "$rows" "$TOKENS" "$mb"
printf 'tokenize alone  median %.3fs  %.1fM prompt tokens/s\n' "$k" "$(awk "BEGIN{print $TOKENS / $k / 1e6}")"
printf 'tokenize|pack   median %.3fs  %.1fM prompt tokens/s\n' "$p" "$(awk "BEGIN{print $TOKENS / $p / 1e6}")"
printf 'cp of the store median %.3fs  ratio (tokenize|pack)/cp %.2fx\n' "$c" "$(awk "BEGIN{print $p / $c}")"
printf 'cp+fsync        median %.3fs  ratio (tokenize|pack)/(cp+fsync) %.2fx (pack fsyncs before its rename)\n' "$cs" "$(awk "BEGIN{print $p / $cs}")"
