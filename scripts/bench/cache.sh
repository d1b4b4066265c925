#!/usr/bin/env bash
# cache.sh: aiperf-cache against its peers, in one run, on one filesystem.
#   1. populate and restore of a 2 GiB store as whole processes (target <= 5 ms wall each:
#      a hard link and a manifest, O(1); the Python aiperf copies, so cp is the peer), with
#      lookup and coreutils ln (the cost of any O(1) process here) beside them;
#   2. the copy fallback (restore --copy, populate --copy) against cp and cp+fsync of the same
#      2 GiB (target <= 1.1x): restore --copy, like cp, leaves writeback to the kernel, so cp is
#      its peer; populate --copy fsyncs the copy before it writes the manifest, so cp+fsync is;
#   3. export | import of a 1 GiB entry against zstd -1 | zstd -d (and with -T0), same data.
# Rounds interleave ours and the peer's (the copies in mirrored order, ours-peer-peer-ours, so
# that neither side always follows the other's writeback); medians (and minima, for O(1) steps
# on a busy machine) are printed. Needs ~8 GB in $BENCH_DIR (default: a new folder under /var/tmp).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-21}     # O(1) steps
BIG_ROUNDS=${BIG_ROUNDS:-5} # 2 GiB copies and 1 GiB transfers
DIR=${BENCH_DIR:-$(mktemp -d /var/tmp/aiperf-bench-cache.XXXXXX)}
trap 'chmod -R u+w "$DIR" 2>/dev/null; rm -rf "$DIR"' EXIT

if ! command -v zstd >/dev/null; then
	echo "cache.sh: installing zstd (Debian package)" >&2
	SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
	$SUDO apt-get update -qq >/dev/null && $SUDO apt-get install -y -qq zstd >/dev/null
fi

make -s build BINS="aiperf-pack aiperf-cache" >/dev/null
go build -o "$DIR/genrecords" ./scripts/genrecords
. scripts/bench/common.sh
A=bin/aiperf-cache
C="$DIR/cache"

# ms: milliseconds since $1 (an $EPOCHREALTIME), with microseconds. No fork: bash's clock.
ms() { awk "BEGIN{printf \"%.3f\\n\", ($EPOCHREALTIME - $1) * 1000}"; }
# tms OUT CMD...: run CMD, append its wall time in ms to OUT.
tms() {
	local out=$1 t0
	shift
	t0=$EPOCHREALTIME
	"$@"
	ms "$t0" >> "$out"
}
minimum() { sort -g | head -1; }

echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $(uname -r); bench folder $DIR ($(df -T "$DIR" | awk 'NR==2{print $2}'))"
echo "making a 2 GiB store and a 1 GiB store (genrecords | aiperf-pack)..."
"$DIR/genrecords" -n 8192 -size 262144 | bin/aiperf-pack --model bench -o "$DIR/big.aipk"
"$DIR/genrecords" -n 4096 -size 262144 -seed 2 | bin/aiperf-pack --model bench -o "$DIR/one.aipk"
BIG=$(stat -c %s "$DIR/big.aipk"); ONE=$(stat -c %s "$DIR/one.aipk")
$A --dir "$C" ls >/dev/null
cat "$DIR/big.aipk" "$DIR/one.aipk" > /dev/null

# 1. O(1) steps.
for f in pop res look ln hello; do : > "$DIR/$f.t"; done
for r in $(seq "$ROUNDS"); do
	k=bench-$r
	tms "$DIR/pop.t" $A --dir "$C" populate "$k" "$DIR/big.aipk"
	tms "$DIR/res.t" $A --dir "$C" restore "$k" "$DIR/dest.aipk"
	tms "$DIR/look.t" $A --dir "$C" lookup "$k" > /dev/null
	tms "$DIR/ln.t" ln "$DIR/big.aipk" "$DIR/lnk"
	rm -f "$DIR/dest.aipk" "$DIR/lnk"
	$A --dir "$C" rm "$k"
done
printf '1. 2 GiB store (%d bytes), %d rounds, whole processes, wall ms: median (min)\n' "$BIG" "$ROUNDS"
for f in pop:populate res:restore look:lookup ln:"ln (coreutils)"; do
	printf '   %-15s %8.2f (%6.2f)\n' "${f#*:}" "$(median < "$DIR/${f%%:*}.t")" "$(minimum < "$DIR/${f%%:*}.t")"
done

# 2. Copies: ours (copy_file_range and a rename; populate fsyncs too) against cp and cp + fsync.
$A --dir "$C" populate keep "$DIR/big.aipk"
for f in rcopy pcopy cp cps; do : > "$DIR/$f.t"; done
ours_copies() {
	rm -f "$DIR/dest.aipk"; settle
	tms "$DIR/rcopy.t" $A --dir "$C" restore --copy keep "$DIR/dest.aipk"
	rm -f "$DIR/dest.aipk"; settle
	tms "$DIR/pcopy.t" $A --dir "$C" populate --copy "copy-$1" "$DIR/big.aipk"
	$A --dir "$C" rm "copy-$1"
}
for r in $(seq "$BIG_ROUNDS"); do
	ours_copies "$r-a"
	timed_cp "$DIR/cp.t" "$DIR/cps.t" "$DIR/big.aipk" "$DIR/dest.aipk"
	timed_cp "$DIR/cp.t" "$DIR/cps.t" "$DIR/big.aipk" "$DIR/dest.aipk"
	ours_copies "$r-b"
done
rm -f "$DIR/dest.aipk"
cp_s=$(median < "$DIR/cp.t"); cps_s=$(median < "$DIR/cps.t")
cp_ms=$(awk "BEGIN{print $cp_s * 1000}"); cps_ms=$(awk "BEGIN{print $cps_s * 1000}")
rc=$(median < "$DIR/rcopy.t"); pc=$(median < "$DIR/pcopy.t")
printf '2. copy fallback of the 2 GiB store, %d runs of each, wall ms (median)\n' "$((2 * BIG_ROUNDS))"
printf '   cp %.0f   cp+fsync %.0f   (the Python aiperf copies: this is its populate and restore)\n' "$cp_ms" "$cps_ms"
printf '   restore --copy  %.0f: %sx cp (its peer: no fsync), %sx cp+fsync\n' "$rc" "$(ratio "$rc" "$cp_ms")" "$(ratio "$rc" "$cps_ms")"
printf '   populate --copy %.0f: %sx cp+fsync (its peer: it fsyncs), %sx cp\n' "$pc" "$(ratio "$pc" "$cps_ms")" "$(ratio "$pc" "$cp_ms")"
printf '   O(1) populate %.2f ms and restore %.2f ms against cp: %sx and %sx faster\n' \
	"$(median < "$DIR/pop.t")" "$(median < "$DIR/res.t")" "$(ratio "$cp_ms" "$(median < "$DIR/pop.t")")" "$(ratio "$cp_ms" "$(median < "$DIR/res.t")")"
$A --dir "$C" rm keep

# 3. export | import of a 1 GiB entry against zstd -1 | zstd -d.
C2="$DIR/cache2"
$A --dir "$C" populate one "$DIR/one.aipk"
$A --dir "$C2" ls > /dev/null
for f in xi z zt zs; do : > "$DIR/$f.t"; done
for r in $(seq "$BIG_ROUNDS"); do
	settle
	tms "$DIR/xi.t" sh -c "$A --dir '$C' export one | $A --dir '$C2' import"
	$A --dir "$C2" rm one
	rm -f "$DIR/z.out"; settle
	tms "$DIR/z.t" sh -c "zstd -q -1 -c '$DIR/one.aipk' | zstd -q -d -c > '$DIR/z.out'"
	rm -f "$DIR/z.out"; settle
	tms "$DIR/zs.t" sh -c "zstd -q -1 -c '$DIR/one.aipk' | zstd -q -d -c > '$DIR/z.out' && sync '$DIR/z.out'"
	rm -f "$DIR/z.out"; settle
	tms "$DIR/zt.t" sh -c "zstd -q -1 -T0 -c '$DIR/one.aipk' | zstd -q -d -c > '$DIR/z.out'"
done
$A --dir "$C" export -o "$DIR/one.tar.zst" one
zstd -q -1 -c "$DIR/one.aipk" > "$DIR/one.zst"
xi=$(median < "$DIR/xi.t"); z=$(median < "$DIR/z.t"); zs=$(median < "$DIR/zs.t"); zt=$(median < "$DIR/zt.t")
printf '3. export | import of a 1 GiB entry (%d bytes), %d rounds, wall ms (median)\n' "$ONE" "$BIG_ROUNDS"
printf '   aiperf-cache export | import   %6.0f  (%.0f MB/s; import re-hashes and fsyncs before publishing)\n' "$xi" "$(awk "BEGIN{print $ONE / $xi / 1000}")"
printf '   zstd -1 | zstd -d               %6.0f  ratio %sx\n' "$z" "$(ratio "$xi" "$z")"
printf '   zstd -1 | zstd -d, then sync    %6.0f  ratio %sx\n' "$zs" "$(ratio "$xi" "$zs")"
printf '   zstd -1 -T0 | zstd -d           %6.0f  ratio %sx\n' "$zt" "$(ratio "$xi" "$zt")"
printf '   stream size: export %d bytes, zstd -1 %d bytes (%sx)\n' "$(stat -c %s "$DIR/one.tar.zst")" "$(stat -c %s "$DIR/one.zst")" \
	"$(ratio "$(stat -c %s "$DIR/one.tar.zst")" "$(stat -c %s "$DIR/one.zst")")"
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
