#!/usr/bin/env bash
# pack.sh: aiperf-pack throughput against cp of the resulting store, same run.
#   small: 1,000,000 records of ~200 B prompts; large: ~1 GB of ~256 KiB prompts.
# Prints medians of wall time and the pack/cp and pack/(cp+fsync) ratios (pack fsyncs its store
# before the rename, cp does not), and the CPU time (user+sys) of pack and cp: on a loaded machine
# wall times mostly measure the other tenants, CPU time much less so. Needs ~4 GB in $BENCH_DIR.
# AIPERF_CPUPROFILE=FILE (any binary) writes a CPU profile of one run for go tool pprof.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-5}
DIR=${BENCH_DIR:-$(mktemp -d /tmp/aiperf-bench.XXXXXX)}
mkdir -p "$DIR"
trap 'rm -rf "$DIR"' EXIT
make -s build BINS=aiperf-pack >/dev/null
go build -o "$DIR/genrecords" ./scripts/genrecords
"$DIR/genrecords" -n 1000000 -size 200 > "$DIR/small.jsonl"
"$DIR/genrecords" -n 4000 -size 262144 > "$DIR/large.jsonl"

. scripts/bench/common.sh

# cpu OUT CMD...: run CMD and append its user+sys CPU seconds to OUT.
cpu() {
	local out=$1
	shift
	/usr/bin/time -f '%U %S' -o "$DIR/cpu.tmp" "$@"
	awk '{print $1 + $2}' "$DIR/cpu.tmp" >> "$out"
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
for set in small large; do
	in="$DIR/$set.jsonl"
	cat "$in" > /dev/null
	: > "$DIR/pack.t"; : > "$DIR/cp.t"; : > "$DIR/cps.t"; : > "$DIR/pack.c"; : > "$DIR/cp.c"
	for r in $(seq "$ROUNDS"); do
		rm -f "$DIR/$set.aipk"; settle
		timed "$DIR/pack.t" bin/aiperf-pack --model bench -o "$DIR/$set.aipk" "$in"
		timed_cp "$DIR/cp.t" "$DIR/cps.t" "$DIR/$set.aipk" "$DIR/$set.copy"
		if [ -x /usr/bin/time ]; then
			rm -f "$DIR/$set.aipk2" "$DIR/$set.copy"
			cpu "$DIR/pack.c" bin/aiperf-pack --model bench -o "$DIR/$set.aipk2" "$in"
			cpu "$DIR/cp.c" cp "$DIR/$set.aipk2" "$DIR/$set.copy"
		fi
	done
	in_mb=$(( $(stat -c %s "$in") / 1000000 ))
	out_mb=$(( $(stat -c %s "$DIR/$set.aipk") / 1000000 ))
	recs=$(bin/aiperf-pack stat --json "$DIR/$set.aipk" | sed 's/.*"records":\([0-9]*\).*/\1/')
	p=$(median < "$DIR/pack.t"); c=$(median < "$DIR/cp.t"); cs=$(median < "$DIR/cps.t")
	printf '%-5s records=%s in=%sMB store=%sMB  pack median %.3fs (%.0f MB/s of input)\n' "$set" "$recs" "$in_mb" "$out_mb" "$p" "$(awk "BEGIN{print $in_mb / $p}")"
	printf '      cp median %.3fs: pack/cp %sx   cp+fsync median %.3fs: pack/(cp+fsync) %sx\n' \
		"$c" "$(ratio "$p" "$c")" "$cs" "$(ratio "$p" "$cs")"
	if [ -s "$DIR/pack.c" ]; then
		pc=$(median < "$DIR/pack.c"); cc=$(median < "$DIR/cp.c")
		printf '      CPU (user+sys) median: pack %.2fs, cp %.2fs: pack/cp %sx\n' "$pc" "$cc" "$(ratio "$pc" "$cc")"
	fi
	rm -f "$DIR/$set.aipk2" "$DIR/$set.copy"
done
