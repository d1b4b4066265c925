# Helpers shared by the bench scripts (sourced, not run).

now() { date +%s.%N; }

# median: the median of the numbers on stdin, one per line.
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# settle: flush the page cache and pause, so one timed step's writeback does not land in the
# next one's time (ext4 here is mounted with discard: freeing a big file slows the next
# allocations for a moment).
settle() { sync; sleep 1; }

# timed OUT CMD...: run CMD and append its wall time in seconds to OUT.
timed() {
	local out=$1 t0 t1
	shift
	t0=$(now)
	"$@"
	t1=$(now)
	awk "BEGIN{print $t1 - $t0}" >> "$out"
}

# timed_cp OUT_CP OUT_CP_FSYNC SRC DST: time cp SRC DST, then cp plus the fsync of DST.
timed_cp() {
	local t0 t1 t2
	rm -f "$4"; settle
	t0=$(now); cp "$3" "$4"; t1=$(now); sync "$4"; t2=$(now)
	awk "BEGIN{print $t1 - $t0}" >> "$1"
	awk "BEGIN{print $t2 - $t0}" >> "$2"
}

# ratio A B: A/B with two decimals.
ratio() { awk "BEGIN{printf \"%.2f\", $1 / $2}"; }
