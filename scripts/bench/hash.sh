#!/usr/bin/env bash
# hash.sh: aiperf-hash digest against its peers, same run, interleaved.
#   1. a 2 GiB random file: aiperf-hash digest --no-memo vs sha256sum (target ratio <= 0.25)
#      and vs b3sum when installed (BLAKE3, report only); the digest must equal sha256sum's;
#   2. the warm rerun of the same file through the memo (target <= 10 ms wall, whole process);
#   3. a directory of 64 files of 32 MiB on both cores vs one core (taskset -c 0).
# All inputs are page-cached (read once first), so these measure CPU, not the disk; COLD=1 adds
# the directory read cold (each file's pages dropped with dd iflag=nocache before the run).
# Times are whole-process wall clock ($EPOCHREALTIME, no fork for the clock); medians of ROUNDS.
# Needs ~4.2 GB in $BENCH_DIR.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-5}
WARM=${WARM:-20} # warm reruns per round
DIR=${BENCH_DIR:-$(mktemp -d /tmp/aiperf-bench.XXXXXX)}
trap 'rm -rf "$DIR"' EXIT
make -s build BINS=aiperf-hash >/dev/null
H=$PWD/bin/aiperf-hash
. scripts/bench/common.sh

# t OUT CMD...: append CMD's wall time in seconds to OUT (stdout discarded).
t() {
	local out=$1 t0 t1
	shift
	t0=$EPOCHREALTIME
	"$@" >/dev/null
	t1=$EPOCHREALTIME
	awk "BEGIN{print $t1 - $t0}" >>"$out"
}

big=$DIR/big
head -c $((2 << 30)) /dev/urandom >"$big"
mkdir -p "$DIR/tree"
for i in $(seq -w 0 63); do head -c $((32 << 20)) /dev/urandom >"$DIR/tree/f$i"; done
cat "$big" "$DIR"/tree/* >/dev/null

ours=$("$H" digest --no-memo "$big" | cut -c1-64)
theirs=$(sha256sum "$big" | cut -c1-64)
[ "$ours" = "$theirs" ] || { echo "2 GiB file: aiperf-hash $ours, sha256sum $theirs" >&2; exit 1; }
echo "2 GiB file: digest equals sha256sum's ($ours)"

# The memo is learned from a stat made after the file is older than the timestamp granularity.
sleep 0.1
"$H" digest --dir "$DIR/cache" "$big" >/dev/null
"$H" digest -v --dir "$DIR/cache" "$big" 2>&1 >/dev/null | grep -q 'from the memo' || { echo "memo not used" >&2; exit 1; }

b3=$(command -v b3sum || true)
: >"$DIR/ah.t"; : >"$DIR/sha.t"; : >"$DIR/b3.t"; : >"$DIR/warm.t"; : >"$DIR/dir2.t"; : >"$DIR/dir1.t"
: >"$DIR/cold2.t"; : >"$DIR/cold1.t"; : >"$DIR/cat.t"
cold() { for f in "$DIR"/tree/*; do dd if="$f" iflag=nocache count=0 status=none; done; }
for r in $(seq "$ROUNDS"); do
	t "$DIR/ah.t" "$H" digest --no-memo "$big"
	t "$DIR/sha.t" sha256sum "$big"
	[ -n "$b3" ] && t "$DIR/b3.t" "$b3" "$big"
	for _ in $(seq "$WARM"); do t "$DIR/warm.t" "$H" digest --dir "$DIR/cache" "$big"; done
	t "$DIR/dir2.t" "$H" digest --no-memo "$DIR/tree"
	t "$DIR/dir1.t" taskset -c 0 "$H" digest --no-memo "$DIR/tree"
	t "$DIR/cat.t" taskset -c 0 sh -c 'cat "$@" >/dev/null' sh "$DIR"/tree/*
	if [ -n "${COLD:-}" ]; then
		cold; t "$DIR/cold2.t" "$H" digest --no-memo "$DIR/tree"
		cold; t "$DIR/cold1.t" taskset -c 0 "$H" digest --no-memo "$DIR/tree"
		cat "$DIR"/tree/* >/dev/null
	fi
done

a=$(median <"$DIR/ah.t"); s=$(median <"$DIR/sha.t")
printf '2 GiB file    aiperf-hash %.3fs (%.2f GB/s)  sha256sum %.3fs: ratio %s (target <= 0.25)\n' \
	"$a" "$(awk "BEGIN{print 2147483648 / $a / 1e9}")" "$s" "$(ratio "$a" "$s")"
if [ -n "$b3" ]; then
	b=$(median <"$DIR/b3.t")
	printf '              b3sum %.3fs: aiperf-hash/b3sum %s (BLAKE3, another digest: report only)\n' "$b" "$(ratio "$a" "$b")"
fi
w=$(median <"$DIR/warm.t")
printf 'warm rerun    aiperf-hash (memo) %.1f ms median of %d, max %.1f ms (target <= 10 ms)\n' \
	"$(awk "BEGIN{print $w * 1000}")" "$(wc -l <"$DIR/warm.t")" "$(sort -g "$DIR/warm.t" | tail -1 | awk '{print $1 * 1000}')"
d2=$(median <"$DIR/dir2.t"); d1=$(median <"$DIR/dir1.t")
rd=$(median <"$DIR/cat.t")
printf '64 x 32 MiB   two cores %.3fs  one core %.3fs: ratio %s (target <= 0.6)\n' "$d2" "$d1" "$(ratio "$d2" "$d1")"
printf '              reading alone (cat, one core) %.3fs, so hashing alone about %.3fs: with one SHA-256 stream\n' "$rd" "$(awk "BEGIN{print $d1 - $rd}")"
printf '              over the tree, two cores can at best hide the reads: bound ratio %s\n' "$(ratio "$(awk "BEGIN{print $d1 - $rd}")" "$d1")"
if [ -n "${COLD:-}" ]; then
	c2=$(median <"$DIR/cold2.t"); c1=$(median <"$DIR/cold1.t")
	printf '  cold cache  two cores %.3fs  one core %.3fs: ratio %s\n' "$c2" "$c1" "$(ratio "$c2" "$c1")"
fi
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
