#!/usr/bin/env bash
# run.sh AIPERF_SRC (make test-aiperf-models): real runs' exports checked against the Python
# aiperf's own models, imported from its source tree (validate.py; nothing of aiperf is copied
# here). Packs the first 40 rows of the shipped Mooncake sample, replays it against aiperf-mock
# on loopback in each shape whose exports differ: a plain run, --goodput, the fixed schedule, a
# rate run with --request-count, --server-metrics with time slices, a sweep, --trials and a
# Responses store. The
# folders stay in $AIPERF_MODELS_DIR (default bin/aiperf-models). Python: $PYTHON, else the first
# python3 on PATH or Debian's that imports pydantic 2; Debian's python3-pydantic (2.x from
# Debian 13 on), -numpy, -scipy and -ruamel.yaml are installed when missing (root, apt-get).
# Stops only the mock it started, by pid.
set -euo pipefail
cd "$(dirname "$0")/../.."
SRC=${1:?usage: run.sh AIPERF_SRC (a checkout of github.com/ai-dynamo/aiperf)}
BIN=${BIN:-bin}
OUT=${AIPERF_MODELS_DIR:-bin/aiperf-models}
SAMPLE=lib/trace/testdata/mooncake_head1000.jsonl
[ -d "$SRC/src/aiperf" ] || [ -d "$SRC/aiperf" ] || { echo "make test-aiperf-models: $SRC holds no aiperf source (src/aiperf)"; exit 2; }
SRC=$(cd "$SRC" && pwd)

# pick a Python whose pydantic is 2.x, installing Debian's packages when none has one
has() { "$1" -c "import pydantic, sys; sys.exit(int(pydantic.VERSION.split('.')[0]) < 2)" 2> /dev/null; }
pick() {
	for p in ${PYTHON:-} python3 /usr/bin/python3; do
		if command -v "$p" > /dev/null && has "$p"; then echo "$p"; return 0; fi
	done
	return 1
}
debs=()
py=$(pick) || debs+=(python3-pydantic)
for m in numpy scipy ruamel.yaml; do
	"${py:-/usr/bin/python3}" -c "import $m" 2> /dev/null || /usr/bin/python3 -c "import $m" 2> /dev/null || debs+=("python3-${m/./-}")
done
if [ ${#debs[@]} -gt 0 ]; then
	echo "installing Debian's ${debs[*]}"
	[ "$(id -u)" = 0 ] || { echo "make test-aiperf-models: ${debs[*]} missing, and installing them needs root"; exit 2; }
	apt-get update -q > /dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${debs[@]}" > /dev/null
	py=$(pick) || { echo "make test-aiperf-models: no Python here imports pydantic 2 (Debian's python3-pydantic is 2.x from Debian 13 on; set PYTHON)"; exit 2; }
fi
echo "python: $py (pydantic $("$py" -c 'import pydantic; print(pydantic.VERSION)'))"

rm -rf "$OUT" && mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
head -n 40 "$SAMPLE" > "$OUT/trace.jsonl"
"$BIN/aiperf-tokenize" "$OUT/trace.jsonl" > "$OUT/records.jsonl"
"$BIN/aiperf-pack" --model demo-model --streaming -o "$OUT/store.aipk" "$OUT/records.jsonl"
# an endpoint aiperf 0.6.0's EndpointType lacks (written as its template endpoint)
"$BIN/aiperf-pack" --model demo-model --streaming --endpoint responses -o "$OUT/responses.aipk" "$OUT/records.jsonl"

mockpid=
trap '[ -n "$mockpid" ] && kill "$mockpid" 2>/dev/null && wait "$mockpid" 2>/dev/null; true' EXIT
"$BIN/aiperf-mock" --listen 127.0.0.1:0 --ttft 5ms --itl 0.2ms > "$OUT/mock.url" 2> "$OUT/mock.log" &
mockpid=$!
for _ in $(seq 200); do [ -s "$OUT/mock.url" ] && break; sleep 0.05; done
url=$(cat "$OUT/mock.url")
[ -n "$url" ] || { echo "aiperf-mock did not start:"; cat "$OUT/mock.log"; exit 2; }
echo "aiperf-mock on $url (pid $mockpid)"

run() { echo "aiperf-replay $*"; "$BIN/aiperf-replay" -q --url "$url" "$@" "${STORE:-$OUT/store.aipk}"; }
run --schedule concurrency --concurrency 4 -o "$OUT/plain"
run --schedule concurrency --concurrency 2 --request-count 8 --goodput 'time_to_first_token:100 request_latency:300' -o "$OUT/goodput"
run --schedule fixed --speedup 50 -o "$OUT/fixed"
run --rate 50 --request-count 10 -o "$OUT/rate"
run --schedule concurrency --concurrency 2 --request-count 8 --server-metrics "$url/metrics" --server-metrics-interval 50ms \
	--slice-duration 100ms -o "$OUT/server-metrics"
run --schedule concurrency --concurrency 2 --request-count 6 --trials 3 -o "$OUT/trials"
STORE=$OUT/responses.aipk run --schedule concurrency --concurrency 2 --request-count 6 -o "$OUT/responses"
echo "aiperf-replay sweep ... -o $OUT/sweep"
"$BIN/aiperf-replay" sweep -q --url "$url" --goodput time_to_first_token:200 --step-requests 8 --warmup 1 --min-step-duration 0 \
	--max-concurrency 8 --max-steps 3 -o "$OUT/sweep" "$OUT/store.aipk" > /dev/null || [ $? -eq 1 ] # 1: no load met the SLO
kill "$mockpid" 2>/dev/null; wait "$mockpid" 2>/dev/null || true
mockpid=

cd "$OUT" && "$py" "$OLDPWD/scripts/aiperfcheck/validate.py" --src "$SRC" plain goodput fixed rate server-metrics sweep trials responses
