#!/usr/bin/env bash
# make test-slurm: the shipped Slurm scripts on a real one-node Slurm (Debian's slurm-wlm, installed
# when missing), against aiperf-mock on loopback. Checks:
#   1. the sharded preparation (submit-prep.sh, 4 array tasks + a dependent pack under
#      aiperf-cache ensure) gives the store byte for byte that one aiperf-tokenize | aiperf-pack does;
#   2. the sharded replay (submit-replay.sh, 3 array tasks with one --start-at + a dependent report)
#      sends every record of the store exactly once over the shards, and the merged report counts
#      each once, with percentiles equal to those computed here (python3, numpy's linear rule) from
#      the concatenated records;
#   3. every daemon it started is stopped (by pid) and nothing of the cluster keeps running.
# Prints how long each phase took. Needs root (slurmd, munged as the munge user).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${AIPERF_BIN:-$root/bin}
trace=${TRACE:-$root/lib/trace/testdata/mooncake_head1000.jsonl}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/aiperf-slurm-test.XXXXXX")
mock_pid=

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f s", b - a }'; }
fail() { echo "test-slurm: FAIL: $*" >&2; exit 1; }

cleanup() {
	[ -z "$mock_pid" ] || { kill "$mock_pid" 2>/dev/null; wait "$mock_pid" 2>/dev/null || true; }
	"$root/scripts/slurm/cluster.sh" stop "$tmp/cluster" || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$root/scripts/slurm/cluster.sh" install
t=$(now)
# 8 CPUs on the node: the 3 replay shards must run at once (they wait on sockets, not the CPU).
out=$(CPUS=8 "$root/scripts/slurm/cluster.sh" start "$tmp/cluster")
eval "$out"
echo "test-slurm: one-node cluster up in $(since "$t") ($SLURM_CONF)"
pids=$(cat "$tmp"/cluster/*.pid)

# 1. Sharded preparation.
t=$(now)
"$root/scripts/slurm/submit-prep.sh" -n 4 --bin "$bin" --cache "$tmp/cache" --wait "$tmp/prep" "$trace" \
	--tokenize --seed 7 --pack --model slurm-model --streaming >"$tmp/prep.jobs" ||
	{ tail -n 5 "$tmp"/prep/logs/* >&2; fail "the sharded preparation failed"; }
echo "test-slurm: sharded prep (4 tokenize tasks, then pack): submit → store in $(since "$t")"
"$bin/aiperf-tokenize" --seed 7 "$trace" | "$bin/aiperf-pack" --model slurm-model --streaming -o "$tmp/whole.aipk"
cmp "$tmp/whole.aipk" "$tmp/prep/store.aipk" || fail "the sharded store differs from the unsharded one"
records=$("$bin/aiperf-pack" stat --json "$tmp/prep/store.aipk" | python3 -c 'import json,sys; print(json.load(sys.stdin)["records"])')
echo "test-slurm: ok: the sharded store is byte-identical to the unsharded one ($records records)"

# 2. Sharded replay against aiperf-mock.
"$bin/aiperf-mock" --listen 127.0.0.1:0 --ttft 5ms --itl 0.2ms >"$tmp/mock.url" 2>"$tmp/mock.log" &
mock_pid=$!
for _ in $(seq 100); do [ -s "$tmp/mock.url" ] && break; sleep 0.05; done
url=$(cat "$tmp/mock.url")
[ -n "$url" ] || fail "aiperf-mock did not start: $(cat "$tmp/mock.log")"
t=$(now)
"$root/scripts/slurm/submit-replay.sh" -n 3 --bin "$bin" --lead 4 --wait "$tmp/replay" "$tmp/prep/store.aipk" "$url" \
	--replay --speedup 200 >"$tmp/replay.jobs" ||
	{ tail -n 5 "$tmp"/replay/logs/* >&2; fail "the sharded replay or its report failed"; }
echo "test-slurm: sharded replay (3 tasks, one --start-at 4 s ahead, then report): submit → merged report in $(since "$t")"
merged=$tmp/replay/replay/merged
[ -s "$merged/profile_export_aiperf.json" ] || fail "no merged export in $merged"
cat "$tmp"/replay/replay/shard-*-of-3/results.jsonl >"$tmp/all.jsonl"
python3 - "$tmp/all.jsonl" "$merged/profile_export_aiperf.json" "$records" <<'EOF'
import json, sys

lines = [json.loads(l) for l in open(sys.argv[1])]
recs = [r for r in lines if not r.get("end")]  # each shard's results end with its run's end line
ends = [r for r in lines if r.get("end")]
assert len(ends) == 3 and not any(e["interrupted"] for e in ends), f"end lines: {ends}"
exp = json.load(open(sys.argv[2]))
want = int(sys.argv[3])

idx = sorted(r["record"] for r in recs)
assert idx == list(range(want)), f"records sent over the shards are not each record once: {len(idx)} lines, {len(set(idx))} distinct, want 0..{want - 1}"
shards = {(r["shard"], r["shards"]) for r in recs}
assert shards == {(0, 3), (1, 3), (2, 3)}, f"shard fields {shards}"
prof = [r for r in recs if r.get("phase", "profiling") == "profiling" and "error" not in r]
assert exp["request_count"]["avg"] == len(prof) == want, f"request_count {exp['request_count']['avg']}, {len(prof)} profiling records, want {want}"

def pct(xs, p):  # numpy's default (linear) rule
    xs = sorted(xs)
    k = (len(xs) - 1) * p / 100
    f = int(k)
    c = min(f + 1, len(xs) - 1)
    return xs[f] + (xs[c] - xs[f]) * (k - f)

metrics = {
    "time_to_first_token": [(r["first_token_unix_ns"] - r["sent_unix_ns"]) / 1e6 for r in prof if "first_token_unix_ns" in r],
    # aiperf's request_latency: the last content response (chunk) after the send
    "request_latency": [r["chunk_offsets_ns"][-1] / 1e6 for r in prof],
}
checked = 0
for name, xs in metrics.items():
    for p in (1, 5, 10, 25, 50, 75, 90, 95, 99):
        got, w = exp[name][f"p{p}"], pct(xs, p)
        assert abs(got - w) <= 1e-9 * max(1, abs(w)), f"{name} p{p}: merged {got}, from the records {w}"
        checked += 1
    assert abs(exp[name]["min"] - min(xs)) < 1e-9 and abs(exp[name]["max"] - max(xs)) < 1e-9, name
# throughput over the union of the shards' spans: earliest send to the latest last response
span = (max(r["sent_unix_ns"] + r["chunk_offsets_ns"][-1] for r in prof) - min(r["sent_unix_ns"] for r in recs)) / 1e9
rt = len(prof) / span
assert abs(exp["request_throughput"]["avg"] - rt) <= 1e-6 * rt, f"request_throughput {exp['request_throughput']['avg']}, want {rt} over {span} s"
print(f"test-slurm: ok: {want} records sent once each over 3 shards; merged count, {checked} percentiles, min/max and throughput equal those of the concatenated records")
EOF
grep -h "Shards:" "$tmp"/replay/logs/aiperf-report-*.out || fail "the merged summary does not state the shards"

# 3. Stop what was started, and check that it is gone.
t=$(now)
kill "$mock_pid" 2>/dev/null || true
wait "$mock_pid" 2>/dev/null || true
mock_pid=
"$root/scripts/slurm/cluster.sh" stop "$tmp/cluster"
for p in $pids; do
	! kill -0 "$p" 2>/dev/null || fail "pid $p of the cluster still runs"
done
echo "test-slurm: ok: daemons stopped in $(since "$t"); none of pids $(echo $pids) runs"
echo "test-slurm: PASS"
